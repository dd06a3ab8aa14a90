// Export of tuning-log records to ktune JSON lines (streamed) or a T4 results document: every
// record a filter matches, or a deployment log of each task's best configs.
#include <filesystem>
#include <map>
#include <ostream>
#include <set>

#include "atomic_file.h"
#include "jsonl_format.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "sqlite_db.h"
#include "t4_format.h"

namespace ktune {

void check_output_not_database(const std::string& path) {
  if (path.empty())
    throw Error(ErrorCode::invalid_argument, "the output path is empty; name a file ('-' for "
                                             "standard output where the command allows it)");
  if (sqlite::is_sqlite_file(path)) {
    throw Error(ErrorCode::invalid_argument,
                "output '" + path + "' is an SQLite database (a tuning log?); refusing to "
                "replace it: choose another file or remove it first");
  }
  // A database's companion files (no header of their own): a -wal may hold committed trials
  // not yet written back into the database.
  const std::string target = detail::link_target(path);
  for (const std::string suffix : {"-wal", "-shm", "-journal"}) {
    if (target.size() <= suffix.size() || !target.ends_with(suffix)) continue;
    const std::string database = target.substr(0, target.size() - suffix.size());
    if (sqlite::is_sqlite_file(database))
      throw Error(ErrorCode::invalid_argument,
                  "output '" + path + "' is the " + suffix + " file of SQLite database '" +
                      database + "' (a tuning log?); refusing to replace it: choose another file");
  }
}

void check_output_path(const TuningLog& log, const std::string& path) {
  if (path.empty()) check_output_not_database(path);  // names the empty path
  namespace fs = std::filesystem;
  // Where the write would land (through the output's links, as the writer follows them), and
  // the log's companions beside the file SQLite opens (it resolves a linked log's path).
  // Comparing resolved paths also catches companions that do not exist yet: a WAL log has no
  // -journal, a closed one no -wal / -shm.
  auto resolved = [](const std::string& p) {
    std::error_code ec;
    const fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
    return ec ? fs::path() : r;
  };
  const fs::path written = resolved(detail::link_target(path));
  std::error_code ec;
  const fs::path log_file = fs::canonical(log.path(), ec);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const bool same = fs::equivalent(path, log.path() + suffix, ec) ||
                      (!written.empty() && (written == resolved(log.path() + suffix) ||
                                            (!log_file.empty() && written == resolved(log_file.string() + suffix))));
    if (same) {
      throw Error(ErrorCode::invalid_argument,
                  "output '" + path + "' is the tuning log '" + log.path() + "' being read" +
                      (*suffix ? std::string(" (its ") + suffix + " file)" : "") +
                      "; choose another file");
    }
  }
  check_output_not_database(path);
}

namespace {

/// Kernel Tuner caches are read, never written.
void check_export_format(LogFormat format) {
  if (format == LogFormat::kernel_tuner) {
    throw Error(ErrorCode::unsupported,
                "export to Kernel Tuner caches is not supported (use jsonl or t4)");
  }
}

/// Of one task's trials (log order), the ok ones that `selection` keeps (see
/// ExportSelection), in log order; a config with a failed trial is kept neither as one of the
/// N best (ranked_representatives leaves it out) nor as the default (its ok trials alone would
/// make it look usable in the export). The N best are counted per launch way (with
/// programmatic launch or without), each way ranked by its own trials, as a Dispatcher set
/// either way ranks them (trials_ranked_for_launch).
std::vector<TrialRecord> kept_of_task(std::vector<TrialRecord> trials, const ExportSelection& selection) {
  std::erase_if(trials, [](const TrialRecord& r) { return ok_without_time(r.trial); });
  auto group = [](const TrialRecord& r) { return r.config_text + '\x1f' + r.source_hash; };
  auto way = [](const TrialRecord& r) { return programmatic_form(r.trial.launch) ? "\x1fp" : ""; };
  std::set<std::string> chosen;  // group + way
  for (const bool programmatic : {false, true}) {
    std::vector<TrialRecord> of_way;  // this way's ok trials, and every failure
    for (const TrialRecord& r : trials)
      if (!r.trial.ok() || programmatic_form(r.trial.launch) == programmatic) of_way.push_back(r);
    // TuningLog::best's ranking, counted per source.
    std::map<std::string, std::size_t> taken_per_source;
    for (const TrialRecord& r : ranked_representatives(of_way)) {
      std::size_t& taken = taken_per_source[r.source_hash];
      if (taken == selection.best_configs) continue;
      if (selection.usable && !selection.usable(r)) continue;
      chosen.insert(group(r) + way(r));
      ++taken;
    }
  }
  std::set<std::string> failed;
  for (const TrialRecord& r : trials)
    if (!r.trial.ok()) failed.insert(group(r));
  std::vector<TrialRecord> kept;
  for (auto& r : trials)
    if (r.trial.ok() && (chosen.count(group(r) + way(r)) ||
                         (selection.also_keep && selection.also_keep(r) && !failed.count(group(r)))))
      kept.push_back(std::move(r));
  return kept;
}

/// Hands `write` every record of `log` that `filter` matches and `selection` keeps.
void for_each_exported(const TuningLog& log, const LogFilter& filter,
                       const ExportSelection& selection,
                       const std::function<void(const TrialRecord&)>& write) {
  if (selection.best_configs == 0) {
    log.for_each(filter, write);
    return;
  }
  if (filter.status && *filter.status != Status::ok) return;  // only ok trials are kept
  LogFilter task_filter = filter;  // tasks with a trial of the run, if one is named, too
  task_filter.status.reset();
  for (const TaskSummary& task : log.tasks(task_filter)) {
    LogFilter one = filter;  // the run filter, if any, still applies
    one.template_name = task.template_name;
    one.problem_key = task.problem_key;
    one.device_key = task.device_key;
    one.status.reset();  // failed trials are read (they rule configs out), never written
    for (const TrialRecord& r : kept_of_task(log.records(one), selection)) write(r);
  }
}

}  // namespace

std::size_t export_file(const TuningLog& log, const std::string& path, LogFormat format,
                        const LogFilter& filter, const ExportSelection& selection) {
  check_export_format(format);  // before any file is created or opened (a FIFO would wait)
  check_output_path(log, path);  // never the log it reads, nor another database
  // Written whole or not at all: an interrupted export never leaves a truncated file.
  std::size_t written = 0;
  detail::write_file_atomically(path, [&](std::ostream& out) {
    written = export_records(log, out, format, filter, selection);
  });
  return written;
}

std::size_t export_records(const TuningLog& log, std::ostream& out, LogFormat format,
                           const LogFilter& filter, const ExportSelection& selection) {
  check_export_format(format);
  std::size_t written = 0;
  if (format == LogFormat::jsonl) {
    jsonl::write_header(out);
    for_each_exported(log, filter, selection, [&](const TrialRecord& r) {
      jsonl::write_record(out, r);
      ++written;
    });
  } else {
    t4::Writer writer(out);
    for_each_exported(log, filter, selection, [&](const TrialRecord& r) {
      writer.add(r);
      ++written;
    });
    writer.finish();
  }
  return written;
}

}  // namespace ktune
