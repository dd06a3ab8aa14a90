// ReplayMeasurer: trials from recorded measurements (Kernel Tuner caches), the T1 file that
// belongs beside a data file, and the replay loop of one seeded search.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <limits>
#include <map>

#include <spdlog/spdlog.h>

#include "kernel_tuner_cache.h"
#include "ktune/error.h"
#include "ktune/replay.h"
#include "stats.h"

namespace ktune {

namespace {

}  // namespace

ReplayMeasurer::ReplayMeasurer(SearchSpace space,
                               const std::vector<std::pair<Config, RecordedResult>>& records,
                               std::string origin)
    : space_(std::move(space)), origin_(std::move(origin)) {
  add(records, "the data repeats a config");
}

void ReplayMeasurer::add(const std::vector<std::pair<Config, RecordedResult>>& records,
                         const std::string& collision) {
  std::size_t impossible = 0;
  std::string first_impossible;
  for (const auto& [config, result] : records) {
    if (!space_.contains(config) || !space_.valid(config)) {
      ++ignored_;
      continue;
    }
    RecordedResult r = result;
    if (r.status == Status::ok && !is_possible_time(r.time_ms)) {
      // A time no measurement can give: the record is a failure, not a candidate optimum
      // (`ktune import` refuses such a record).
      r.status = Status::runtime_error;
      char text[64];
      std::snprintf(text, sizeof text, "replayed time %g ms is not a positive number", r.time_ms);
      r.message = text;
      if (impossible++ == 0) first_impossible = config.str() + ": " + text;
    }
    if (!records_.emplace(space_.index_of(config), std::move(r)).second) {
      throw Error(ErrorCode::invalid_argument, origin_ + ": two records give config " +
                                                   config.str() + " (" + collision + ")");
    }
  }
  if (impossible)
    spdlog::warn("{}: {} record{} an ok time that is not a positive number and count{} as "
                 "failed (the first: {})",
                 origin_, impossible, impossible == 1 ? " has" : "s have",
                 impossible == 1 ? "s" : "", first_impossible);
}

ReplayMeasurer ReplayMeasurer::from_kernel_tuner_cache(const std::string& path,
                                                       const SearchSpace& space,
                                                       ReplayObjective objective) {
  const kt::KernelTunerCache cache = kt::read_kernel_tuner_cache(path);
  for (const auto& p : space.params()) {
    if (std::find(cache.param_names.begin(), cache.param_names.end(), p.name) == cache.param_names.end()) {
      throw Error(ErrorCode::unknown_name, path + ": the cache has no parameter '" + p.name +
                                               "' of the space");
    }
  }
  // Parameters the cache varies but the space lacks: records differing only in them collide.
  std::string extra;
  for (const auto& name : cache.param_names) {
    const auto& ps = space.params();
    if (std::none_of(ps.begin(), ps.end(), [&](const auto& p) { return p.name == name; }))
      extra += (extra.empty() ? "'" : ", '") + name + "'";
  }
  std::vector<std::pair<Config, RecordedResult>> records;
  records.reserve(cache.entries.size());
  std::size_t outside = 0;
  std::size_t without_samples = 0;  // ok records that leave the median of samples to their time
  std::string first_without_samples;
  for (const auto& e : cache.entries) {
    std::map<std::string, Value> named;
    bool in_domain = true;
    for (const auto& p : space.params()) {
      const auto at = std::find(cache.param_names.begin(), cache.param_names.end(), p.name) -
                      cache.param_names.begin();
      const Value v = e.values[static_cast<std::size_t>(at)];
      in_domain = in_domain && std::find(p.values.begin(), p.values.end(), v) != p.values.end();
      named[p.name] = v;
    }
    if (!in_domain) {
      ++outside;
      continue;
    }
    RecordedResult r;
    r.times_ms = e.times_ms;
    if (e.time_ms) {
      r.status = Status::ok;
      // A recorded time that is no time marks a broken record whatever the objective (add()
      // counts it failed); the median of its samples does not make it whole again.
      r.time_ms = objective == ReplayObjective::median_of_samples && !e.times_ms.empty() &&
                          is_possible_time(*e.time_ms)
                      ? stats::median(e.times_ms)
                      : *e.time_ms;
      if (objective == ReplayObjective::median_of_samples && e.times_ms.empty() &&
          ++without_samples == 1)
        first_without_samples = space.make(named).str();
    } else {
      // Any other text is a failure too: replay only needs to know the config gave no time.
      r.status = kt::error_status(e.error).value_or(Status::runtime_error);
      r.message = e.error;
    }
    records.emplace_back(space.make(named), std::move(r));
  }
  // Said, not hidden: such a record is scored by another statistic than the rest.
  if (without_samples)
    spdlog::warn("{}: {} record{} no samples; {} recorded time (the mean) stands in for the "
                 "median of samples (the first: {})",
                 path, without_samples, without_samples == 1 ? " has" : "s have",
                 without_samples == 1 ? "its" : "their", first_without_samples);
  ReplayMeasurer out(space, {}, path);
  out.add(records, extra.empty() ? "the cache repeats a config"
                                 : "they differ only in " + extra +
                                       ", which the space does not have; add them to the space");
  out.ignored_ += outside;
  return out;
}

std::vector<Trial> ReplayMeasurer::measure(const std::vector<Config>& batch) {
  std::vector<Trial> out;
  out.reserve(batch.size());
  for (const auto& config : batch) {
    Trial t;
    t.config = config;
    ++evaluations_;
    if (auto why = space_.violated(config)) {
      t.status = Status::invalid;
      t.message = "violates " + *why;
      out.push_back(std::move(t));
      continue;
    }
    const auto it = records_.find(space_.index_of(config));
    if (it == records_.end()) {
      throw Error(ErrorCode::not_found, origin_ + " has no record of the valid config " + config.str());
    }
    const RecordedResult& r = it->second;
    t.status = r.status;
    t.message = r.message;
    t.times_ms = r.times_ms;
    t.launch = r.launch;
    if (r.status == Status::ok) {
      summarize_times(t);
      t.median_ms = r.time_ms;  // the replay objective
      if (t.times_ms.empty()) t.min_ms = r.time_ms;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<double> ReplayMeasurer::outcome_times() const {
  std::vector<double> out;
  out.reserve(records_.size());
  for (const auto& [index, r] : records_) {
    out.push_back(r.status == Status::ok ? r.time_ms : std::numeric_limits<double>::infinity());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Config> ReplayMeasurer::configs() const {
  std::vector<Config> out;
  out.reserve(records_.size());
  for (const auto& [index, result] : records_) out.push_back(space_.at(index));
  return out;
}

double ReplayMeasurer::best_time_ms() const {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [index, r] : records_) {
    if (r.status == Status::ok) best = std::min(best, r.time_ms);
  }
  if (!std::isfinite(best)) throw Error(ErrorCode::not_found, origin_ + " has no successful record");
  return best;
}

std::vector<std::string> t1_paths_beside(const std::string& data_path) {
  namespace fs = std::filesystem;
  const fs::path p(data_path);
  std::string stem = p.filename().string();
  for (const char* ext : {".gz", ".json"}) {
    if (stem.size() > std::strlen(ext) && stem.ends_with(ext)) stem.resize(stem.size() - std::strlen(ext));
  }
  std::vector<std::string> tries = {stem};
  if (const auto cut = stem.rfind('_'); cut != std::string::npos && cut > 0) tries.push_back(stem.substr(0, cut));
  std::vector<std::string> paths;
  for (const auto& t : tries) paths.push_back((p.parent_path() / (t + ".T1.json")).string());
  return paths;
}

std::optional<std::string> find_t1_beside(const std::string& data_path) {
  for (const std::string& candidate : t1_paths_beside(data_path))
    if (std::filesystem::exists(candidate)) return candidate;
  return std::nullopt;
}

ReplayRun replay_search(Searcher& searcher, ReplayMeasurer& measurer, std::uint64_t seed,
                        std::size_t budget, std::size_t batch) {
  if (batch == 0) throw Error(ErrorCode::invalid_argument, "replay batch size must be positive");
  ReplayRun run;
  run.best_ms.reserve(budget);
  searcher.reset(measurer.space(), seed);
  double best = std::numeric_limits<double>::infinity();
  while (run.best_ms.size() < budget) {
    const auto configs = searcher.propose(std::min(batch, budget - run.best_ms.size()));
    if (configs.empty()) break;
    const auto trials = measurer.measure(configs);
    for (const auto& t : trials) {
      if (t.ok()) best = std::min(best, t.median_ms);
      else ++run.failures;
      run.best_ms.push_back(best);
    }
    searcher.observe(trials);
  }
  return run;
}

}  // namespace ktune
