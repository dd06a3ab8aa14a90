// Recording trials into a tuning log and resuming from it (see ktune/log_recorder.h).
#include "ktune/log_recorder.h"

#include <algorithm>
#include <set>
#include <utility>

#include "ktune/build.h"
#include "ktune/error.h"

namespace ktune {

LogRecorder::LogRecorder(TuningLog& log, std::shared_ptr<const KernelTemplate> tmpl,
                         const Problem& problem, const Device& device, Options options)
    : log_(log), tmpl_(std::move(tmpl)), problem_(problem), device_(device),
      options_(std::move(options)) {
  if (!tmpl_) throw Error(ErrorCode::invalid_argument, "LogRecorder: no template");
  if (options_.run_id.empty()) options_.run_id = new_run_id();
}

void LogRecorder::record(const Trial& trial) {
  Trial stamped = trial;
  if (stamped.timestamp_us == 0) stamped.timestamp_us = unix_time_us();
  if (!options_.note.empty())
    stamped.message = options_.note + (stamped.message.empty() ? "" : ": " + stamped.message);
  TrialRecord record = TrialRecord::make(*tmpl_, problem_, device_, stamped, options_.run_id);
  if (auto source = options_.source_of.find(trial.config.str()); source != options_.source_of.end())
    record.source_hash = source->second;
  log_.append(record);
  ++recorded_;
}

std::vector<Trial> trials_to_resume(const TuningLog& log, const KernelTemplate& tmpl,
                                    const Problem& problem, const Device& device,
                                    const SearchSpace& space,
                                    const std::map<std::string, std::string>& source_of,
                                    bool programmatic_launch, std::size_t* timed_other_way) {
  LogFilter filter;
  filter.template_name = tmpl.name();
  filter.problem_key = problem.key();
  filter.device_key = device_key_of(device);
  const std::string hash = Builder::source_hash(tmpl.source());
  std::vector<std::string> order;                   // configs in order of first appearance
  std::map<std::string, std::vector<Trial>> trials;  // config -> its trials of that source
  std::set<std::string> other_way;  // configs with an ok trial timed the other way
  log.for_each(filter, [&](const TrialRecord& r) {
    try {
      Config c = space.parse(r.config_text);
      const auto replayed = source_of.find(c.str());
      const std::string& expected = replayed != source_of.end() ? replayed->second : hash;
      if (r.source_hash != expected || !space.valid(c)) return;
      if (r.trial.ok() && programmatic_form(r.trial.launch) != programmatic_launch) {
        other_way.insert(c.str());  // measured again, this run's way
        return;
      }
      auto [it, fresh] = trials.try_emplace(c.str());
      if (fresh) order.push_back(c.str());
      Trial t = r.trial;
      t.config = std::move(c);
      it->second.push_back(std::move(t));
    } catch (const Error&) {
      // a config of another version of the space: not part of this task's resume
    }
  });
  std::vector<Trial> out;
  out.reserve(order.size());
  for (const auto& key : order) {
    std::vector<Trial>& all = trials[key];
    // A config that failed any of its trials is one the log never names: it resumes as its
    // first failure, so that the resumed run cannot name it either.
    const auto failure = std::find_if(all.begin(), all.end(), [](const Trial& t) { return !t.ok(); });
    if (failure != all.end()) {
      out.push_back(std::move(*failure));
      continue;
    }
    std::vector<double> medians;
    for (const Trial& t : all) medians.push_back(t.median_ms);
    out.push_back(std::move(all[typical_trial_position(medians)]));
  }
  if (timed_other_way)
    *timed_other_way = static_cast<std::size_t>(
        std::count_if(other_way.begin(), other_way.end(),
                      [&](const std::string& c) { return !trials.count(c); }));
  return out;
}

}  // namespace ktune
