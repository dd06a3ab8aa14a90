// The tuning log a writing command (import, vendor, tune) opens, creating it when missing: when
// the command leaves by an exception before anything was recorded, a file it created is removed
// again, so a failed command never leaves an empty database behind (docs/database.md).
#pragma once

#include <memory>
#include <string>

#include "ktune/log.h"

namespace ktune::cli {

/// Opens `path` for writing for one command; if the command unwinds (an exception, Ctrl-C),
/// closes it and removes the file when this command created it, it holds no trial (a failed
/// first write leaves at most an empty schema) and no other process has it open (one that
/// opened it since may be about to write).
class CreatedLog {
 public:
  /// Notes whether `path` exists (a link counts as there), then opens it read-write (which may
  /// write its schema); a failed open is cleaned up as above and rethrown.
  explicit CreatedLog(std::string path);
  ~CreatedLog();
  CreatedLog(const CreatedLog&) = delete;
  CreatedLog& operator=(const CreatedLog&) = delete;
  /// The open log.
  TuningLog& log() { return *log_; }

 private:
  void remove_if_left_empty() const noexcept;

  std::string path_;
  bool existed_ = true;
  int exceptions_at_open_ = 0;  // std::uncaught_exceptions() when the command opened it
  std::unique_ptr<TuningLog> log_;
};

}  // namespace ktune::cli
