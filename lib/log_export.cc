// Export of tuning-log records to ktune JSON lines (streamed) or a T4 results document.
#include <filesystem>
#include <ostream>

#include "atomic_file.h"
#include "jsonl_format.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "sqlite_db.h"
#include "t4_format.h"

namespace ktune {

void check_output_path(const TuningLog& log, const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    if (std::filesystem::equivalent(path, log.path() + suffix, ec)) {
      throw Error(ErrorCode::invalid_argument,
                  "output '" + path + "' is the tuning log '" + log.path() + "' being read" +
                      (*suffix ? std::string(" (its ") + suffix + " file)" : "") +
                      "; choose another file");
    }
  }
  if (sqlite::is_sqlite_file(path)) {
    throw Error(ErrorCode::invalid_argument,
                "output '" + path + "' is an SQLite database (a tuning log?); refusing to "
                "replace it: choose another file or remove it first");
  }
}

namespace {

/// Kernel Tuner caches are read, never written.
void check_export_format(LogFormat format) {
  if (format == LogFormat::kernel_tuner) {
    throw Error(ErrorCode::unsupported,
                "export to Kernel Tuner caches is not supported (use jsonl or t4)");
  }
}

}  // namespace

std::size_t export_file(const TuningLog& log, const std::string& path, LogFormat format,
                        const LogFilter& filter) {
  check_export_format(format);  // before any file is created or opened (a FIFO would wait)
  check_output_path(log, path);  // never the log it reads, nor another database
  // Written whole or not at all: an interrupted export never leaves a truncated file.
  std::size_t written = 0;
  detail::write_file_atomically(path, [&](std::ostream& out) {
    written = export_records(log, out, format, filter);
  });
  return written;
}

std::size_t export_records(const TuningLog& log, std::ostream& out, LogFormat format,
                           const LogFilter& filter) {
  check_export_format(format);
  std::size_t written = 0;
  if (format == LogFormat::jsonl) {
    jsonl::write_header(out);
    log.for_each(filter, [&](const TrialRecord& r) {
      jsonl::write_record(out, r);
      ++written;
    });
  } else {
    t4::Writer writer(out);
    log.for_each(filter, [&](const TrialRecord& r) {
      writer.add(r);
      ++written;
    });
    writer.finish();
  }
  return written;
}

}  // namespace ktune
