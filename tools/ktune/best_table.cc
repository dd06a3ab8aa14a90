// The best table of a tuning log (see best_table.h).
#include "best_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "recorded_trials.h"
#include "vendor_records.h"

namespace ktune::cli {

namespace {

/// Data throughput of a template's problem in GB/s at `ms`, or nullopt when unknown.
std::optional<double> bandwidth_gbs(const KernelTemplate& tmpl, const Problem& problem, double ms) {
  if (ms <= 0) return std::nullopt;
  try {
    const double bytes = tmpl.workload(problem)->bytes();
    if (bytes <= 0) return std::nullopt;
    return bytes / (ms * 1e-3) / 1e9;
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// What one pass over a task's trials tells its row beside the best.
struct TaskTally {
  /// Ok trials timed the other way than the best's (with programmatic launch or without).
  std::int64_t other_way_ok_trials = 0;
  /// The default config's time, judged as the best's (see tally_task()).
  std::optional<double> default_ms;
};

/// Reads a task's trials once. Counts its ok trials timed the other way than `best`'s, and,
/// given the task's `space`, finds the default config's time judged as the best's: its
/// config_representatives() median among the trials of the best's source timed the best's way
/// (failed trials count either way), so that a default that is the best shows 1.00x, and a
/// default with a failed trial, which could not be the best, has none. Records written before
/// the template gained parameters count, with those parameters at their defaults (the rule of
/// `tune --replay`).
TaskTally tally_task(const TuningLog& log, const TaskSummary& task, const TrialRecord& best,
                     const SearchSpace* space) {
  const bool programmatic = programmatic_form(best.trial.launch);
  const std::string default_text = space ? space->default_config().str() : "";
  LogFilter filter;
  filter.template_name = task.template_name;
  filter.problem_key = task.problem_key;
  filter.device_key = task.device_key;
  TaskTally tally;
  std::vector<TrialRecord> defaults;
  log.for_each(filter, [&](const TrialRecord& r) {
    const bool same_way = programmatic_form(r.trial.launch) == programmatic;
    if (r.trial.ok() && !same_way) {
      ++tally.other_way_ok_trials;
      return;
    }
    if (!space || r.source_hash != best.source_hash) return;
    auto config = config_in_space(*space, r.config_text);
    if (!config || config->str() != default_text) return;
    TrialRecord copy = r;
    copy.config_text = default_text;  // one group, whatever parameters the record lacked
    defaults.push_back(std::move(copy));
  });
  const auto typical = config_representatives(defaults);
  if (!typical.empty()) tally.default_ms = typical.front().trial.median_ms;
  return tally;
}

/// What `best` accepts as a task's winner, so that a hostile or damaged record the dispatcher
/// rejects (dispatcher.cc) never heads the table: for a template this build knows, a config
/// text that config_in_space() accepts (strict parse, known parameters within their domains,
/// parameters added since the recording at their defaults, constraints met for the task's
/// problem); for another template, or a problem the template rejects (its row keeps "-" for
/// the numbers it cannot compute), a text that parses strictly. The space is built once, from
/// the first record asked about.
std::function<bool(const TrialRecord&)> dispatchable(const KernelTemplate* tmpl,
                                                     const std::string& problem_key) {
  struct State {
    bool tried = false;
    std::optional<SearchSpace> space;
  };
  auto state = std::make_shared<State>();
  return [tmpl, problem_key, state](const TrialRecord& r) {
    if (tmpl && !state->tried) {
      state->tried = true;
      try {
        state->space = tmpl->space(Problem::from_key(problem_key), device_of_record(r.device));
      } catch (const Error&) {
      }
    }
    if (state->space) return config_in_space(*state->space, r.config_text).has_value();
    try {
      parse_config_text(r.config_text);
      return true;
    } catch (const Error&) {
      return false;
    }
  };
}

/// The template a task's records name, or null for one this build does not know.
std::shared_ptr<const KernelTemplate> known_template(const std::string& name) {
  try {
    return find_template(name);
  } catch (const Error&) {
    return nullptr;
  }
}

/// Best copy bandwidth (GB/s) per device key among the log's "copy" template tasks, each task
/// judged by its best config's typical trial (TuningLog::best), as its own row is.
std::map<std::string, double> copy_bandwidth_by_device(const TuningLog& log,
                                                       const std::vector<TaskSummary>& tasks,
                                                       bool programmatic_launch) {
  std::map<std::string, double> out;
  std::shared_ptr<const KernelTemplate> copy;
  try {
    copy = find_template("copy");
  } catch (const Error&) {
    return out;
  }
  const std::string source = Builder::source_hash(copy->source());
  for (const auto& t : tasks) {
    if (t.template_name != "copy" || !t.best_ms) continue;
    const auto best = log.best(t.template_name, t.problem_key, t.device_key, source,
                               dispatchable(copy.get(), t.problem_key), programmatic_launch);
    if (!best) continue;
    try {
      if (auto bw = bandwidth_gbs(*copy, Problem::from_key(t.problem_key), best->trial.median_ms))
        out[t.device_key] = std::max(out[t.device_key], *bw);
    } catch (const Error&) {
    }
  }
  return out;
}

/// Fills vendor, vendor_ratio and vendor_detail of a row.
void add_vendor_ratio(BestRow& row, const TuningLog& log, const KernelTemplate& tmpl,
                      const Problem& problem, const std::map<std::string, double>& copy_bw) {
  row.vendor = tmpl.vendor_reference();
  if (row.vendor.empty()) return;
  char detail[160];
  if (row.vendor == "copy") {
    auto it = copy_bw.find(row.device_key);
    auto bw = bandwidth_gbs(tmpl, problem, row.median_ms);
    if (it == copy_bw.end() || !bw || it->second <= 0) return;
    row.vendor_ratio = *bw / it->second;
    row.vendor_ms = row.median_ms * *row.vendor_ratio;  // the same bytes at copy bandwidth
    std::snprintf(detail, sizeof detail, "%.0f GB/s of %.0f GB/s (best copy)", *bw, it->second);
    row.vendor_detail = detail;
    return;
  }
  // A vendor library measured on the same problem and device, recorded under the reserved
  // name "vendor:cublas" (vendor_records.h); older logs used the plain name "cublas".
  auto vendor = log.best(vendor_template_name(row.vendor), row.problem_key, row.device_key);
  if (!vendor) vendor = log.best(row.vendor, row.problem_key, row.device_key);
  if (vendor) {
    row.vendor_ms = vendor->trial.median_ms;
    row.vendor_ratio = vendor->trial.median_ms / row.median_ms;
    std::snprintf(detail, sizeof detail, "%s %.4g ms", row.vendor.c_str(), vendor->trial.median_ms);
    row.vendor_detail = detail;
  }
}

std::string fixed(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

}  // namespace

std::vector<BestRow> best_rows(const TuningLog& log, std::vector<TaskSummary>* unusable,
                               bool programmatic_launch) {
  const auto tasks = log.tasks();
  const auto copy_bw = copy_bandwidth_by_device(log, tasks, programmatic_launch);
  std::vector<BestRow> rows;
  for (const auto& task : tasks) {
    if (is_vendor_template(task.template_name)) continue;
    if (!task.best_ms) {  // only failed trials: left out, and said so
      if (unusable) unusable->push_back(task);
      continue;
    }
    // A template this build knows (built-in or registered): its trials of this build's
    // source come first, and its default and vendor columns can be filled.
    const std::shared_ptr<const KernelTemplate> tmpl = known_template(task.template_name);
    const std::string current_source = tmpl ? Builder::source_hash(tmpl->source()) : "";
    auto best = log.best(task.template_name, task.problem_key, task.device_key, current_source,
                         dispatchable(tmpl.get(), task.problem_key), programmatic_launch);
    if (!best) {
      if (unusable) unusable->push_back(task);
      continue;
    }
    BestRow row;
    row.template_name = task.template_name;
    row.problem_key = task.problem_key;
    row.device_key = task.device_key;
    row.config = best->config_text;
    row.older_source = !current_source.empty() && best->source_hash != current_source;
    row.run_id = best->run_id;
    row.median_ms = best->trial.median_ms;
    row.launch = best->trial.launch;
    row.trials = task.trials;
    row.ok_trials = task.ok_trials;
    std::optional<Problem> problem;
    std::optional<SearchSpace> space;
    if (tmpl) {
      try {
        problem = Problem::from_key(task.problem_key);
        space = tmpl->space(*problem, device_of_record(best->device));
      } catch (const Error&) {
        // A problem the template rejects: numbers stay "-".
      }
    }
    const TaskTally tally = tally_task(log, task, *best, space ? &*space : nullptr);
    // Ok trials timed the other way than the best's (with programmatic launch or without):
    // they did not rank this row, and another `best --programmatic-launch` setting ranks by them.
    row.unranked_ok_trials = tally.other_way_ok_trials;
    row.default_ms = tally.default_ms;
    if (row.default_ms && row.median_ms > 0) row.speedup = *row.default_ms / row.median_ms;
    if (space) add_vendor_ratio(row, log, *tmpl, *problem, copy_bw);
    rows.push_back(std::move(row));
  }
  return rows;
}

ExportSelection best_configs_selection(std::size_t configs) {
  // Per task: the template, the check best_rows() applies, and the task's default config
  // (empty when the template or its space for the problem is unknown).
  struct TaskRules {
    std::function<bool(const TrialRecord&)> usable;
    std::optional<SearchSpace> space;
    std::string default_text;
  };
  auto rules = std::make_shared<std::map<std::string, TaskRules>>();
  auto unknown = std::make_shared<std::set<std::string>>();  // templates warned about
  auto rules_of = [rules, unknown](const TrialRecord& r) -> TaskRules& {
    const std::string key = r.template_name + '\x1f' + r.problem_key + '\x1f' + r.device_key();
    auto [it, fresh] = rules->try_emplace(key);
    if (fresh) {
      const auto tmpl = known_template(r.template_name);
      if (!tmpl && !is_vendor_template(r.template_name) && unknown->insert(r.template_name).second)
        std::fprintf(stderr,
                     "note: template %s is not known to this build, so its tasks keep no default "
                     "config's trials (a user template: name its document with --space)\n",
                     r.template_name.c_str());
      it->second.usable = dispatchable(tmpl.get(), r.problem_key);
      if (tmpl) {
        try {
          it->second.space = tmpl->space(Problem::from_key(r.problem_key), device_of_record(r.device));
          it->second.default_text = it->second.space->default_config().str();
        } catch (const Error&) {
        }
      }
    }
    return it->second;
  };
  ExportSelection selection;
  selection.best_configs = configs;
  selection.usable = [rules_of](const TrialRecord& r) { return rules_of(r).usable(r); };
  selection.also_keep = [rules_of](const TrialRecord& r) {
    const TaskRules& task = rules_of(r);
    if (!task.space) return false;
    const auto config = config_in_space(*task.space, r.config_text);  // as default_median()
    return config && config->str() == task.default_text;
  };
  return selection;
}

nlohmann::json best_rows_json(const std::vector<BestRow>& rows) {
  auto number = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"template", r.template_name},
                   {"problem", r.problem_key},
                   {"device", r.device_key},
                   {"config", r.config},
                   {"run", r.run_id},
                   {"median_ms", r.median_ms},
                   {"launch", to_string(r.launch)},
                   {"trials", r.trials},
                   {"ok_trials", r.ok_trials},
                   {"unranked_ok_trials", r.unranked_ok_trials},
                   {"default_ms", number(r.default_ms)},
                   {"speedup", number(r.speedup)},
                   {"vendor", r.vendor.empty() ? nlohmann::json() : nlohmann::json(r.vendor)},
                   {"vendor_ms", number(r.vendor_ms)},
                   {"vendor_ratio", number(r.vendor_ratio)},
                   {"vendor_detail", r.vendor_detail},
                   {"older_source", r.older_source}});
  }
  return out;
}

std::string unranked_trials_note(const std::vector<BestRow>& rows) {
  std::size_t tasks = 0, programmatic = 0;
  for (const auto& r : rows) {
    if (r.unranked_ok_trials == 0) continue;
    ++tasks;
    programmatic += !programmatic_form(r.launch);  // the unranked ones are programmatic
  }
  if (tasks == 0) return "";
  const std::size_t plain = tasks - programmatic;
  std::string note = "note: " + std::to_string(tasks) +
                     (tasks == 1 ? " task also holds" : " tasks also hold") +
                     " ok trials timed the other way, which do not rank it (a config is ranked "
                     "only against trials launched as it was, as a Dispatcher does):";
  if (programmatic)
    note += " " + std::to_string(programmatic) + " with programmatic launch (`ktune best "
            "--programmatic-launch` ranks by them)";
  if (programmatic && plain) note += ";";
  if (plain)
    note += " " + std::to_string(plain) + " without it (`ktune best` without "
            "--programmatic-launch ranks by them)";
  return note;
}

std::string best_rows_text(const std::vector<BestRow>& rows) {
  std::size_t wt = 8, wp = 7, wd = 6, wl = 6;
  for (const auto& r : rows) {
    wt = std::max(wt, r.template_name.size());
    wp = std::max(wp, r.problem_key.size());
    wd = std::max(wd, r.device_key.size());
    wl = std::max(wl, std::strlen(to_string(r.launch)));
  }
  std::string out;
  std::vector<char> line(1024);
  // snprintf into `line`, grown to the row's length: a long problem key or config is never cut.
  auto print = [&line](const char* format, auto... values) {
    int n = std::snprintf(line.data(), line.size(), format, values...);
    if (n >= 0 && static_cast<std::size_t>(n) >= line.size()) {
      line.resize(static_cast<std::size_t>(n) + 1);
      n = std::snprintf(line.data(), line.size(), format, values...);
    }
    return std::string(line.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  };
  out += print("%-*s  %-*s  %-*s  %7s  %11s  %-*s  %11s  %8s  %11s  %12s  %s\n",
                static_cast<int>(wt), "template", static_cast<int>(wp), "problem",
                static_cast<int>(wd), "device", "trials", "best ms", static_cast<int>(wl),
                "launch", "default ms", "speedup", "vendor ms", "vs vendor", "config");
  for (const auto& r : rows) {
    std::string vendor = r.vendor_ratio ? fixed(r.vendor_ratio, "%.2f") + " " + r.vendor : "-";
    out += print("%-*s  %-*s  %-*s  %7lld  %11.5g  %-*s  %11s  %8s  %11s  %12s  %s\n",
                  static_cast<int>(wt), r.template_name.c_str(), static_cast<int>(wp),
                  r.problem_key.c_str(), static_cast<int>(wd), r.device_key.c_str(),
                  static_cast<long long>(r.trials), r.median_ms, static_cast<int>(wl),
                  to_string(r.launch),
                  fixed(r.default_ms, "%.5g").c_str(), (fixed(r.speedup, "%.2f") + (r.speedup ? "x" : "")).c_str(),
                  fixed(r.vendor_ms, "%.5g").c_str(), vendor.c_str(),
                  (r.config + (r.older_source ? " (older source)" : "")).c_str());
  }
  return out;
}

std::string unusable_tasks_note(const std::vector<TaskSummary>& unusable) {
  std::vector<const TaskSummary*> unlaunchable, failed_only;
  std::size_t trials = 0;
  for (const auto& t : unusable) {
    (t.ok_trials > 0 ? unlaunchable : failed_only).push_back(&t);
    trials += static_cast<std::size_t>(t.ok_trials);
  }
  // Up to five tasks by name, then a count.
  auto named = [](const std::vector<const TaskSummary*>& tasks) {
    std::string list;
    for (std::size_t i = 0; i < tasks.size() && i < 5; ++i)
      list += (i ? "; " : " ") + tasks[i]->template_name + " " + tasks[i]->problem_key + " on " +
              tasks[i]->device_key;
    if (tasks.size() > 5) list += "; and " + std::to_string(tasks.size() - 5) + " more";
    return list;
  };
  std::string note;
  if (!unlaunchable.empty())
    note = "note: " + std::to_string(trials) + " ok trial" + (trials == 1 ? "" : "s") + " of " +
           std::to_string(unlaunchable.size()) + " task" + (unlaunchable.size() == 1 ? "" : "s") +
           " name no config this build would launch (an unknown parameter, a value outside its "
           "domain, a broken constraint, or a failed trial of the same config), so no row shows "
           "them:" + named(unlaunchable);
  if (!failed_only.empty())
    note += std::string(note.empty() ? "" : "\n") + "note: " + std::to_string(failed_only.size()) +
            " task" + (failed_only.size() == 1 ? " has" : "s have") +
            " only failed trials, so no row shows " + (failed_only.size() == 1 ? "it" : "them") +
            ":" + named(failed_only);
  return note;
}

}  // namespace ktune::cli
