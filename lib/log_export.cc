// Export of tuning-log records to ktune JSON lines (streamed) or a T4 results document.
#include <ostream>

#include "atomic_file.h"
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
  // Written whole or not at all: an interrupted export never leaves a truncated file.
  std::size_t written = 0;
  detail::write_file_atomically(path, [&](std::ostream& out) {
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
  });
  return written;
}

}  // namespace ktune
