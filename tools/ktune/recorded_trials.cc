// Replay of recorded ktune trials (see recorded_trials.h).
#include "recorded_trials.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <unordered_set>

#include "input_file.h"
#include "jsonl_format.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "sqlite_db.h"

namespace ktune::cli {

namespace {

/// True unless the file starts like an SQLite database: anything else is read as JSON lines,
/// whose reader names what is wrong with it (an empty file included).
bool is_jsonl(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary))
    throw Error(ErrorCode::not_found, "replay data '" + path + "' cannot be opened");
  return !sqlite::is_sqlite_file(path);
}

}  // namespace

std::optional<Config> config_in_space(const SearchSpace& space, const std::string& text) {
  try {
    // Parameters the template gained after the recording take their defaults (a new
    // parameter's default keeps the kernel as it was); unknown or out-of-domain ones drop it.
    Config c = space.with_changes(parse_config_text(text).values_by_name());
    if (space.valid(c)) return c;
  } catch (const Error&) {
  }
  return std::nullopt;
}

RecordedTrials read_recorded_trials(const std::string& given) {
  RecordedTrials out;
  auto keep = [&](TrialRecord r) {
    auto& task = out.by_task[{r.template_name, r.problem_key}];
    task.push_back(std::move(r));
  };
  // A pipe or process substitution (<(zcat log.jsonl.gz)) is read once into a temporary copy:
  // telling a database from JSON lines reads its start, and a pipe cannot be read again.
  // Messages name the input, not the copy.
  const detail::RereadableInput input(given, "replay data");
  const std::string& path = input.path();
  try {
    if (is_jsonl(path)) {
      try {
        // Checked as `ktune import` checks them: an ok trial without a usable time (a null or
        // negative median) is refused by its line, not replayed as a time.
        jsonl::for_each_in_file(path, [&](TrialRecord r) {
          check_record(r, given + ":" + std::to_string(r.id));
          keep(std::move(r));
        });
        return out;
      } catch (const Error&) {
        // A file import reads but replay does not: say so, instead of a JSON parser's message;
        // so too a JSON list (a tuning plan, most likely).
        refuse_foreign_log(path, "replay data");
        std::ifstream in(path);
        char first = 0;
        if (in >> first && first == '[')
          throw Error(ErrorCode::parse_error,
                      "replay data '" + path + "' is a JSON list, not a ktune database or JSON-lines "
                      "export (a ktune-trials header line, then one record per line); a tuning plan "
                      "is given as --plan");
        throw;
      }
    }
    TuningLog log(path, LogMode::read_only);
    for (auto& r : log.records()) keep(std::move(r));
    return out;
  } catch (const Error& e) {
    throw input.naming_input(e);
  }
}

Device device_of_record(const Device& recorded) {
  Device d;
  try {
    d = Device::offline("sm_" + std::to_string(recorded.cc_major) +
                        std::to_string(recorded.cc_minor));
  } catch (const Error&) {
    d.cc_major = recorded.cc_major;  // unknown arch: keep what the record says
    d.cc_minor = recorded.cc_minor;
  }
  d.name = recorded.name;
  d.sm_count = recorded.sm_count;
  d.driver_version = recorded.driver_version;
  return d;
}

ReplayTask make_replay_task(const RecordedTrials& recorded, const KernelTemplate& tmpl,
                            const Problem& problem, const std::string& origin,
                            bool programmatic_launch) {
  const std::string key = problem.key();
  static const std::vector<TrialRecord> none;
  const auto found = recorded.by_task.find({tmpl.name(), key});
  const std::vector<TrialRecord>& records = found == recorded.by_task.end() ? none : found->second;
  std::map<std::string, std::size_t> per_device;
  const TrialRecord* sample = nullptr;
  for (const auto& r : records)
    if (++per_device[r.device_key()] == 1 && !sample) sample = &r;
  if (per_device.empty()) {
    std::string known;  // what the data has instead, named in the error
    for (const auto& [task, trials] : recorded.by_task)
      known += (known.empty() ? "" : "; ") + task.first + " " + task.second;
    throw Error(ErrorCode::not_found, origin + " has no recorded trials of template " +
                                          tmpl.name() + " on " + key +
                                          (known.empty() ? " (it has no records)" : " (it has: " + known + ")"));
  }
  const auto chosen = std::max_element(per_device.begin(), per_device.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  for (const auto& r : records)
    if (r.device_key() == chosen) {
      sample = &r;
      break;
    }

  ReplayTask task;
  task.device = device_of_record(sample->device);
  const SearchSpace full = tmpl.space(problem, task.device);

  // One recorded outcome per config: the record `ktune best` would rank first, among the
  // trials launched the way it ranks by (ranked_representatives: this build's template source
  // first, then each source's typical trial, fastest first; a source with a failed trial of
  // the config is not ranked); a config with nothing ranked answers with its first failure,
  // this build's source first.
  const std::string current = Builder::source_hash(tmpl.source());
  std::vector<TrialRecord> of_device;
  for (const auto& r : records)
    if (r.device_key() == chosen) of_device.push_back(r);
  std::map<std::string, std::pair<Config, std::vector<TrialRecord>>> records_of;
  const std::vector<TrialRecord> ranked_by =
      trials_ranked_for_launch(std::move(of_device), programmatic_launch);
  task.programmatic = std::any_of(ranked_by.begin(), ranked_by.end(), [](const TrialRecord& r) {
    return r.trial.ok() && programmatic_form(r.trial.launch);
  });
  for (const auto& r : ranked_by) {
    auto config = config_in_space(full, r.config_text);
    if (!config) continue;
    auto& entry = records_of[config->str()];
    entry.first = *config;
    entry.second.push_back(r);
  }
  std::map<std::string, std::pair<Config, RecordedResult>> by_config;
  for (const auto& [text, entry] : records_of) {
    const std::vector<TrialRecord> ranked = ranked_representatives(entry.second, current);
    TrialRecord chosen_record;
    if (!ranked.empty()) {
      chosen_record = ranked.front();
    } else {
      // Not ranked: a failed trial, or an "ok" one without a usable time (a row edited outside
      // ktune), which is replayed as invalid.
      auto failed_of = [&](bool of_current) {
        return std::find_if(entry.second.begin(), entry.second.end(), [&](const TrialRecord& r) {
          return (!r.trial.ok() || ok_without_time(r.trial)) &&
                 (!of_current || r.source_hash == current);
        });
      };
      const auto of_current = failed_of(true);
      chosen_record = of_current != entry.second.end() ? *of_current : *failed_of(false);
    }
    const TrialRecord& r = chosen_record;
    task.source_of[text] = r.source_hash;
    RecordedResult result;
    result.status = r.trial.status;
    result.time_ms = r.trial.median_ms;
    result.times_ms = r.trial.times_ms;
    result.message = r.trial.message;
    if (ok_without_time(r.trial)) {
      result.status = Status::invalid;
      result.message = "recorded as ok without a usable time (median " +
                       std::to_string(r.trial.median_ms) + " ms)";
    }
    result.launch = r.trial.launch;
    by_config.emplace(text, std::make_pair(entry.first, result));
  }
  if (by_config.empty())
    throw Error(ErrorCode::not_found, origin + ": no recorded config of " + tmpl.name() + " on " +
                                          key + " is a valid config of the template's space");

  // The space narrowed to recorded values (default kept) and to recorded configs.
  auto recorded_texts = std::make_shared<std::unordered_set<std::string>>();
  SearchSpace::Builder narrowed;
  for (const auto& p : full.params()) {
    std::set<Value> seen{p.default_value};
    for (const auto& [text, entry] : by_config) seen.insert(entry.first[p.name]);
    std::vector<Value> values;
    for (Value v : p.values)
      if (seen.count(v)) values.push_back(v);
    narrowed.param(p.name, values, p.default_value);
  }
  for (const auto& [text, entry] : by_config) recorded_texts->insert(text);
  narrowed.constraint("recorded in " + origin, [recorded_texts](const Config& c) {
    return recorded_texts->count(c.str()) > 0;
  });
  task.space = narrowed.build();

  std::vector<std::pair<Config, RecordedResult>> answers;
  for (const auto& [text, entry] : by_config)
    answers.emplace_back(task.space.parse(text), entry.second);
  task.records = answers.size();
  task.origin = origin;
  task.measurer = std::make_unique<ReplayMeasurer>(task.space, answers, origin);
  return task;
}

}  // namespace ktune::cli
