// A tuning log that a writing command (import, vendor, tune) may be about to create: when the
// command fails before anything was recorded, the file it created is removed again, so a failed
// command never leaves an empty database behind (docs/database.md).
#pragma once

#include <string>

namespace ktune::cli {

/// Notes, before a command opens `path` for writing, whether a log was there already.
class CreatedLog {
 public:
  /// Looks at `path` now (a link counts as there).
  explicit CreatedLog(std::string path);
  /// Removes the log at `path` and its -wal / -shm / -journal files when this command created
  /// it, it holds no trial (a failed first write leaves at most an empty schema) and no other
  /// process has it open (one that opened it since may be about to write). Call after the
  /// command's own TuningLog is closed; never throws.
  void remove_if_left_empty() const noexcept;

 private:
  std::string path_;
  bool existed_ = true;
};

}  // namespace ktune::cli
