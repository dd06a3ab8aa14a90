// Export of tuning-log records to ktune JSON lines (streamed) or a T4 results document.
#include <fstream>

#include "jsonl_format.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "t4_format.h"

namespace ktune {

std::size_t export_file(const TuningLog& log, const std::string& path, LogFormat format,
                        const LogFilter& filter) {
  if (format == LogFormat::kernel_tuner) {
    throw Error(ErrorCode::unsupported,
                "export to Kernel Tuner caches is not supported (use jsonl or t4)");
  }
  // Write to a temporary file first so an interrupted export never leaves a truncated file.
  std::string tmp = path + ".tmp";
  std::size_t written = 0;
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw Error(ErrorCode::io_error, "cannot open '" + tmp + "' for writing");
    if (format == LogFormat::jsonl) {
      jsonl::write_header(out);
      log.for_each(filter, [&](const TrialRecord& r) {
        jsonl::write_record(out, r);
        ++written;
      });
    } else {
      auto records = log.records(filter);
      t4::write(out, records);
      written = records.size();
    }
    out.flush();
    if (!out) throw Error(ErrorCode::io_error, "writing '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(ErrorCode::io_error, "cannot move '" + tmp + "' to '" + path + "'");
  }
  return written;
}

}  // namespace ktune
