// The "best config per task" table behind `ktune best` and `ktune report`: for every
// (template, problem, device) in a tuning log, the fastest ok trial, its speed-up over the
// template's default config (measured in the same run when possible) and, where the template
// names a vendor reference and the log holds a measurement of it, the ratio to that reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ktune/log.h"

namespace ktune::cli {

/// One row of the best table.
struct BestRow {
  std::string template_name;           ///< template
  std::string problem_key;             ///< problem
  std::string device_key;              ///< device
  std::string config;                  ///< best config text
  std::string run_id;                  ///< run that measured it
  double median_ms = 0;                ///< its median time
  LaunchForm launch = LaunchForm::unknown;  ///< how the trial giving median_ms was launched
  std::int64_t trials = 0;             ///< trials of the task (all runs)
  std::int64_t ok_trials = 0;          ///< ok trials of the task
  /// Ok trials of the task timed the other way than the best (with programmatic launch or
  /// without), which do not rank this row (trials_ranked_for_launch).
  std::int64_t unranked_ok_trials = 0;
  std::optional<double> default_ms;    ///< median of the default config (same run preferred)
  std::optional<double> speedup;       ///< default_ms / median_ms
  std::string vendor;                  ///< "copy", "cublas", "cudnn" or "" (template has none)
  std::optional<double> vendor_ms;     ///< the vendor's time for this problem (copy: at best copy bandwidth)
  std::optional<double> vendor_ratio;  ///< tuned speed / vendor speed (1 = parity)
  std::string vendor_detail;           ///< e.g. "2950 GB/s of 4100 GB/s copy"
  /// The best was measured with another version of the template's source than this build's
  /// (no trial of the current source is ok); shown as "(older source)".
  bool older_source = false;
};

/// The rows of a log, sorted by template, problem, device; tasks without an ok trial are
/// left out, and so are vendor reference tasks ("vendor:cublas"), which appear as the vendor
/// columns of the rows of their problem. `unusable` (when given) receives the tasks left out:
/// those whose ok trials name no config this build would launch, and those with only failed
/// trials (ok_trials 0).
/// Each task's configs are ranked as a Dispatcher with DispatcherOptions::programmatic_launch
/// set to `programmatic_launch` ranks them: by the trials timed that way when it has any
/// (trials_ranked_for_launch); the copy bandwidth, by the copy tasks' trials of that way.
std::vector<BestRow> best_rows(const TuningLog& log, std::vector<TaskSummary>* unusable = nullptr,
                               bool programmatic_launch = false);

/// What `ktune export --best N` keeps: per task, template source and launch way (with
/// programmatic launch or without), the N fastest configs
/// that best_rows() could name (the check it applies to a template this build knows), with
/// all their ok trials, and every ok trial of the task's default config, so that best_rows()
/// over the export gives the rows it gives over the whole log.
ExportSelection best_configs_selection(std::size_t configs);

/// The rows as a JSON array (missing numbers are null).
nlohmann::json best_rows_json(const std::vector<BestRow>& rows);

/// One line (no newline) counting the rows whose task also holds ok trials timed the other
/// way than the row's best (BestRow::unranked_ok_trials) and saying which `best` flag ranks
/// by them; "" when there are none.
std::string unranked_trials_note(const std::vector<BestRow>& rows);

/// The rows as an aligned text table ("-" for missing numbers).
std::string best_rows_text(const std::vector<BestRow>& rows);

/// The lines (no final newline) naming the tasks best_rows() left out as `unusable`: those
/// whose ok trials name no launchable config, with their ok trials, and those with only failed
/// trials (up to five tasks of each by name); "" when there are none.
std::string unusable_tasks_note(const std::vector<TaskSummary>& unusable);

}  // namespace ktune::cli
