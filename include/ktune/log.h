// TuningLog: the tuning-log database. Every trial (failures included) is stored with its
// context: template name and source hash, problem key, device, ktune and NVRTC versions and
// the run it belongs to. SQLite is the embedded store (one file, WAL, one transaction per
// write, many processes appending at once). Queries answer "best config for a task", "history
// of a run" and "which configs are already measured" (resume). Import/export move records
// between the database and JSON lines, the T4 results format and Kernel Tuner caches.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/trial.h"

namespace ktune {

class KernelTemplate;
struct Problem;

/// How a tuning log is opened.
enum class LogMode {
  read_only,   ///< queries only; the file must exist and is never modified
  read_write,  ///< queries and appends; creates the file (and schema) when missing
};

/// One stored trial with everything needed to interpret it later.
struct TrialRecord {
  std::int64_t id = 0;         ///< row id in the database (0 before it is stored)
  std::string template_name;   ///< KernelTemplate::name()
  std::string source_hash;     ///< Builder::source_hash of the template source
  std::string problem_key;     ///< Problem::key()
  Device device;               ///< name, cc_major/minor, sm_count, driver_version are stored
  std::string ktune_version;   ///< KTUNE_VERSION of the writer
  std::string nvrtc_version;   ///< "13.0"
  std::string run_id;          ///< the tuning run (see new_run_id())
  std::string config_text;     ///< canonical "a=1,b=2" (the authority; trial.config mirrors it)
  Trial trial;                 ///< the measurement

  /// Identity of the device used in queries: "name|sm_XY|sm_count" (same as Device::key()).
  std::string device_key() const;
  /// Builds a record for a trial of `tmpl` on `problem` and `device`, stamped with this
  /// build's ktune version and the NVRTC version.
  static TrialRecord make(const KernelTemplate& tmpl, const Problem& problem,
                          const Device& device, const Trial& trial, const std::string& run_id);
};

/// "name|sm_XY|sm_count" for a device (the device part of every task key).
std::string device_key_of(const Device& device);
/// A fresh, unique run id: "YYYYMMDD-HHMMSS-<pid hex>-<random hex>".
std::string new_run_id();
/// Parses the config text form "a=1,b=2" into a Config whose names follow the text order.
/// Strict: names are identifiers, values are decimal integers; throws Error(parse_error)
/// naming the bad item. An empty text is a config without parameters.
Config parse_config_text(const std::string& text);

/// Checks what the log relies on: check_record_names(); a config text (when given, else
/// trial.config's text) that parse_config_text accepts and that names the same config as
/// trial.config (when that is set), so that the log's own exports always import again; a
/// device name without '|' or control characters (its key must parse back) and with no
/// negative compute capability or SM count nor a minor capability past 9; and for an ok
/// trial a median that is a finite time above 0 ms. Throws Error(invalid_argument) naming
/// `where`, the template, problem and config otherwise. TuningLog's appends and every import
/// call it, so a negative, zero or infinite time never becomes a best config.
void check_record(const TrialRecord& record, const std::string& where);
/// Whether `name` holds nothing that keeps a command from naming a template back: no space,
/// control character or '|' (emptiness is check_record_names()'s concern).
bool fits_template_name(const std::string& name);
/// Throws Error(invalid_argument) naming `where` for a record whose names no command could
/// use again: a template name that fits_template_name() refuses, a problem key that
/// Problem::from_key refuses, an empty run id or one with a control character (they would
/// become tasks that `best`, `export --template` and the dispatcher cannot name).
void check_record_names(const TrialRecord& record, const std::string& where);
/// Whether `text` holds a control character (below ' ', or DEL): such a name would split the
/// lines and tables that show it.
bool has_control_character(const std::string& text);
/// Whether `name` can stand in a device key ("name|sm_XY|SMs", which must parse back): it
/// holds no '|' and no control character.
bool fits_device_key(const std::string& name);

/// For the trials of one task: per config and template source, the trial whose median is the
/// lower median of that config's trial medians, in order of first appearance; a config with
/// a failed trial among them gets none (the tuner drops a finalist that fails when measured
/// again). This is how the log judges a config measured several times (the tuner's final
/// rounds re-measure its finalists): by its typical measurement, not its luckiest one, so
/// that best(), `ktune best` and the dispatcher agree with the tuner's winner, and a default
/// that wins shows 1.00x.
std::vector<TrialRecord> config_representatives(const std::vector<TrialRecord>& records);

/// The rule config_representatives() applies to one config's trials: given their medians in
/// order of appearance, the position of the trial it picks (the lower median, ties to the
/// earlier trial). Empty input is misuse: Error(invalid_argument).
std::size_t typical_trial_position(const std::vector<double>& medians);

/// The trials of one task that a launcher ranks the task's configs by, with programmatic
/// launch on or off (`programmatic_launch`, as DispatcherOptions::programmatic_launch): its
/// ok trials timed that way (programmatic_form) when it has any, else its ok trials timed the
/// other way (a log tuned one way still serves the other); and every failed trial either way,
/// since a failure rules its config out whatever the form. Configs are never ranked across
/// the two ways: a programmatic launch times the same kernel a few percent faster, so a mixed
/// ranking would favour whichever configs happened to be timed programmatically. Log order
/// is kept.
std::vector<TrialRecord> trials_ranked_for_launch(std::vector<TrialRecord> trials,
                                                  bool programmatic_launch);

/// How TuningLog::best() ranks a task's configs, given the trials trials_ranked_for_launch()
/// keeps: config_representatives() of its trials (ok ones, and failed ones, which rule their
/// config out), fastest first, a tie going to the config that appears first; with
/// `prefer_source_hash`, the configs of that template source come before the others.
std::vector<TrialRecord> ranked_representatives(const std::vector<TrialRecord>& ok,
                                                const std::string& prefer_source_hash = "");

/// Record filter for queries and export; unset fields match everything.
struct LogFilter {
  std::optional<std::string> template_name;  ///< exact template name
  std::optional<std::string> problem_key;    ///< exact problem key
  std::optional<std::string> device_key;     ///< exact device key
  std::optional<std::string> run_id;         ///< exact run id
  std::optional<Status> status;              ///< only trials with this status
};

/// One tuning task present in a log: (template, problem, device) with counts.
struct TaskSummary {
  std::string template_name;      ///< template
  std::string problem_key;        ///< problem
  std::string device_key;         ///< device
  std::int64_t trials = 0;        ///< all trials of the task
  std::int64_t ok_trials = 0;     ///< trials with status ok
  std::optional<double> best_ms;  ///< best median among ok trials
};

/// One run present in a log.
struct RunSummary {
  std::string run_id;              ///< the run
  std::int64_t trials = 0;         ///< trials recorded
  std::int64_t first_us = 0;       ///< earliest trial timestamp
  std::int64_t last_us = 0;        ///< latest trial timestamp
};

/// The SQLite tuning-log database; thread-safe (one connection guarded by a mutex), and any
/// number of processes may append to one file at once.
class TuningLog {
 public:
  /// Opens (read_write: creates or migrates) a log. Throws Error(database_error) when the
  /// file is not an SQLite database, is corrupted, is not a ktune log, or has a newer schema
  /// than this build understands; such files are never modified. Error(not_found) when a
  /// read-only file is missing.
  explicit TuningLog(const std::string& path, LogMode mode = LogMode::read_write);
  ~TuningLog();
  TuningLog(TuningLog&&) noexcept;
  TuningLog& operator=(TuningLog&&) noexcept;

  /// The schema version this build writes.
  static int current_schema_version();
  /// The schema version of the open file.
  int schema_version() const;
  /// The file path.
  const std::string& path() const;
  /// The open mode.
  LogMode mode() const;

  /// Appends one record in its own transaction; returns its row id.
  std::int64_t append(const TrialRecord& record);
  /// Appends records in one transaction: all of them or none.
  void append_batch(const std::vector<TrialRecord>& records);
  /// Appends the records the log does not hold yet (held: a record of the same run, template,
  /// problem, device, config, status, timestamp and median; each record held answers for one
  /// equal record of the batch, so k equal records of a batch add k minus those held),
  /// checking and inserting in one write transaction, so that processes importing one file at
  /// once add it once. With a
  /// `run_family` prefix, every run whose id starts with it counts as the same run (imports
  /// whose run ids derive from the file's content: a file that grew keeps its old records).
  /// Returns the positions in `records` of those appended.
  std::vector<std::size_t> append_absent(const std::vector<TrialRecord>& records,
                                         const std::string& run_family = {});
  /// append_absent for a batch too large to hold in memory (a JSON-lines file of millions of
  /// trials). `source` hands every record of the batch to the visitor it is given, and is
  /// called twice: first to check each record and learn which runs and tasks the batch
  /// touches (nothing is written; an error leaves the log untouched), then inside the write
  /// transaction to insert the records the log does not hold. The two reads must visit the
  /// same records in the same order; a batch that changed in between throws
  /// Error(parse_error) and nothing is added. `appended(position, record)` is called for each
  /// record inserted (position: its 0-based place in the batch). Returns how many records
  /// the batch holds.
  std::size_t append_absent_streamed(
      const std::function<void(const std::function<void(const TrialRecord&)>&)>& source,
      const std::string& run_family,
      const std::function<void(std::size_t, const TrialRecord&)>& appended);

  /// The best config of a task: among config_representatives() of its ok trials, the one
  /// with the smallest median (earliest on ties), or nullopt. With `prefer_source_hash`,
  /// trials measured with that template source come first: a faster time of an older source
  /// is what that kernel did, not what the current one does. With `usable`, a config whose
  /// typical trial it refuses cannot win (e.g. a config text the dispatcher would reject, so
  /// that `ktune best` names what a deployment launches); it is asked in rank order until it
  /// accepts one. Only the trials a launcher with `programmatic_launch` on or off ranks by
  /// take part (trials_ranked_for_launch), as in the dispatcher.
  std::optional<TrialRecord> best(const std::string& template_name,
                                  const std::string& problem_key,
                                  const std::string& device_key,
                                  const std::string& prefer_source_hash = "",
                                  const std::function<bool(const TrialRecord&)>& usable = {},
                                  bool programmatic_launch = false) const;
  /// Every trial of a run in insertion order.
  std::vector<TrialRecord> run_history(const std::string& run_id) const;
  /// Config texts already measured for a task (any status), sorted, no duplicates. With a
  /// source hash, only trials of that template source count (a changed kernel is re-measured).
  std::vector<std::string> measured_configs(const std::string& template_name,
                                            const std::string& problem_key,
                                            const std::string& device_key,
                                            const std::string& source_hash = "") const;
  /// All tasks, sorted by template, problem, device. With a filter, the tasks of the trials it
  /// matches, counted over those trials (a template and device filter reads only that
  /// template's part of the index, not the whole log).
  std::vector<TaskSummary> tasks(const LogFilter& filter = {}) const;
  /// All runs, oldest first.
  std::vector<RunSummary> runs() const;
  /// Records matching a filter, in insertion order.
  std::vector<TrialRecord> records(const LogFilter& filter = {}) const;
  /// Streams records matching a filter in insertion order (no full copy in memory). The visitor
  /// may query this log (count, best, records...) but not append to it while it is streamed
  /// (an append from the visitor throws Error(invalid_argument)).
  void for_each(const LogFilter& filter,
                const std::function<void(const TrialRecord&)>& visit) const;
  /// Number of records matching a filter.
  std::int64_t count(const LogFilter& filter = {}) const;

 private:
  struct Impl;
  /// The open log; throws Error(invalid_argument) on a moved-from object.
  Impl& impl() const;
  std::unique_ptr<Impl> impl_;
};

/// File formats for import and export.
enum class LogFormat {
  jsonl,         ///< ktune JSON lines: a header line, then one trial per line (lossless)
  t4,            ///< T4 results JSON of the autotuning community (schema 1.0.0)
  kernel_tuner,  ///< Kernel Tuner cache file (.json / .json.gz), import only
};

/// Stable name ("jsonl", "t4", "kernel_tuner").
const char* to_string(LogFormat format);
/// Parses a format name; throws Error(parse_error) naming it.
LogFormat log_format_from_string(const std::string& text);
/// Guesses the format of a file from its name and first bytes; throws Error naming the file.
LogFormat detect_log_format(const std::string& path);

/// Context for formats that do not carry it (T4, Kernel Tuner caches) and overrides.
struct ImportOptions {
  std::optional<LogFormat> format;          ///< unset: detect_log_format()
  std::string template_name;                ///< T4/KT: template name ("" = KT kernel_name)
  /// T4/KT: problem ("" = from the file: a Kernel Tuner cache's problem_size, a T4 result's
  /// "ktune" object; a T4 result without one needs it given, else Error(invalid_argument)).
  std::string problem_key;
  /// T4/KT: device (unset = from the file, as for problem_key; a T4 result without a "ktune"
  /// object needs it given). An empty name keeps the name the file gives (a Kernel Tuner
  /// cache's device_name; T4 results carry none: then "offline <arch>").
  std::optional<Device> device;
  /// T4/KT: run id ("" = one derived from the file's content, so that importing the same file
  /// again adds nothing).
  std::string run_id;
  /// Called for every record read (a JSON-lines file is read twice, checked and then inserted
  /// inside the transaction, so twice per record there); a throw of any std::exception
  /// refuses the whole import with Error(parse_error), its message prefixed with the record's
  /// place, and nothing is added (`ktune import --template` checks that the records fit a
  /// template this build knows).
  std::function<void(const TrialRecord&)> check;
  /// Called between records as the file is checked and again as they are inserted: an
  /// exception it throws (of any type) abandons the import, and nothing is added (`ktune
  /// import` stops this way on Ctrl-C). A whole T4 or Kernel Tuner document is parsed without
  /// a call; its records are checked and inserted with calls between them.
  std::function<void()> poll;
};

/// What an import did.
struct ImportSummary {
  LogFormat format = LogFormat::jsonl;  ///< format read
  std::size_t records = 0;              ///< records appended
  std::size_t already_present = 0;      ///< records the log held already, not added again
  std::vector<std::string> run_ids;     ///< runs touched
};

/// Throws Error(parse_error) when `path` is a T4 results file or a Kernel Tuner cache, which a
/// reader of ktune logs (`what` names it: "replay data") cannot use: the message says to
/// import it first. Returns normally for anything else (the caller's own error stands).
void refuse_foreign_log(const std::string& path, const std::string& what);

/// Imports a file into a log in one transaction: either every new record is added or none
/// (malformed input throws Error(parse_error) naming file, line and field; so does a file of
/// no records at all, such as an export's header alone). A record the log
/// already holds (same run, task, config, status, timestamp and median) is not added again,
/// so importing a file twice changes nothing. A JSON-lines file is read twice (checked, then
/// inserted) and never held in memory. `path` "-" reads standard input; it and other inputs
/// that are not regular files (pipes) are copied to a temporary file first.
ImportSummary import_file(TuningLog& log, const std::string& path,
                          const ImportOptions& options = {});
/// Throws Error(invalid_argument) naming `path` when a file written from `log` (an export, a
/// report) would replace the log itself, its WAL / shared-memory / journal companions, or any
/// other SQLite database: tuning logs are never overwritten by their own outputs.
void check_output_path(const TuningLog& log, const std::string& path);
/// Throws Error(invalid_argument) naming `path` when it is empty, an SQLite database (a tuning
/// log, perhaps) or the -wal / -shm / -journal file beside one: what any output file of ktune is
/// checked against before it is written.
void check_output_not_database(const std::string& path);

/// What an export keeps of the records its filter matches.
struct ExportSelection {
  /// 0 (the default): every record. N > 0: a deployment log. For each task (template,
  /// problem, device), template source and launch way (with programmatic launch or without,
  /// each ranked by its own trials: trials_ranked_for_launch), the ok trials of the N configs
  /// that TuningLog::best() ranks first (each config judged by its typical trial, ties to the
  /// config measured first), with every ok trial of those configs timed that way, so that
  /// the typical trials and the ranking read back the same from the export (a Dispatcher over
  /// it picks what it picks over the whole log, down to the N-th config, either way). Other
  /// statuses, slower configs and ok
  /// trials without a possible time are left out. Tasks come in TuningLog::tasks() order, each
  /// task's trials in log order.
  std::size_t best_configs = 0;
  /// With best_configs: a config whose typical trial this refuses is neither kept nor counted
  /// among the N (`ktune export --best` passes the check `ktune best` applies, so the N are
  /// configs a Dispatcher would launch).
  std::function<bool(const TrialRecord&)> usable;
  /// With best_configs: ok trials this accepts are kept as well, whatever their config's rank
  /// (`ktune export --best` keeps each task's default config, so that `ktune best` over the
  /// export shows the same speed-up).
  std::function<bool(const TrialRecord&)> also_keep;
};

/// Exports the records of `log` that `filter` matches, all of them or those `selection` keeps,
/// to a file (jsonl or t4), written whole or not at all; returns the number written. Checks
/// `path` with check_output_path() first.
std::size_t export_file(const TuningLog& log, const std::string& path, LogFormat format,
                        const LogFilter& filter = {}, const ExportSelection& selection = {});
/// export_file() to a stream (jsonl or t4), e.g. standard output; returns the number written.
/// Kernel Tuner caches are not an export format: Error(unsupported).
std::size_t export_records(const TuningLog& log, std::ostream& out, LogFormat format,
                           const LogFilter& filter = {}, const ExportSelection& selection = {});

}  // namespace ktune
