// Warm start from a tuning log (see warm_start.h): the best configs of the nearest tuned
// shapes, carried into a new problem's space.
#include "ktune/warm_start.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "ktune/build.h"
#include "ktune/error.h"
#include "shape_distance.h"

namespace ktune {

std::vector<Config> nearest_shape_configs(const TuningLog& log, const KernelTemplate& tmpl,
                                          const Problem& problem, const Device& device,
                                          const SearchSpace& space, std::size_t count,
                                          bool programmatic_launch) {
  std::vector<Config> out;
  if (count == 0) return out;
  const std::string device_key = device_key_of(device);
  const std::string own_key = problem.key();
  std::vector<std::tuple<double, std::string>> neighbours;  // distance, problem key
  LogFilter same_template_and_device;
  same_template_and_device.template_name = tmpl.name();
  same_template_and_device.device_key = device_key;
  for (const TaskSummary& task : log.tasks(same_template_and_device)) {
    if (task.problem_key == own_key || !task.best_ms) continue;
    try {
      if (auto d = shape_distance(problem, Problem::from_key(task.problem_key)))
        neighbours.emplace_back(*d, task.problem_key);
    } catch (const Error&) {
      // a problem key this build cannot read: not a neighbour
    }
  }
  std::sort(neighbours.begin(), neighbours.end());
  const std::string source = Builder::source_hash(tmpl.source());
  // The config a record names in this problem's space, when it is one this problem can use.
  auto carried = [&](const TrialRecord& r) -> std::optional<Config> {
    try {
      Config c = space.with_changes(r.config_text);  // parameters added since: defaults
      if (space.valid(c) && tmpl.can_implement(problem, c)) return c;
    } catch (const Error&) {
    }
    return std::nullopt;
  };
  // Neighbours often share their winner (a shape family): the nearest few are asked, not every
  // tuned problem, so that a plan of thousands of shapes does not ask the log thousands of
  // times per task.
  const std::size_t asked = count >= neighbours.size()
                               ? neighbours.size()
                               : std::min(neighbours.size(), kNeighboursAskedPerConfig * count);
  for (std::size_t i = 0; i < asked && out.size() < count; ++i) {
    const std::string& key = std::get<1>(neighbours[i]);
    const auto best = log.best(tmpl.name(), key, device_key, source,
                               [&](const TrialRecord& r) { return carried(r).has_value(); },
                               programmatic_launch);
    if (!best) continue;
    Config c = *carried(*best);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ktune
