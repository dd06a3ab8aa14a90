// Removal of a log that a failed command created (see created_log.h).
#include "created_log.h"

#include <filesystem>

#include "ktune/error.h"
#include "ktune/log.h"

namespace ktune::cli {

CreatedLog::CreatedLog(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  existed_ = std::filesystem::exists(std::filesystem::symlink_status(path_, ec));
}

void CreatedLog::remove_if_left_empty() const noexcept {
  if (existed_) return;
  bool empty = false;
  try {
    // Judged afresh by a reader: the failed writer's own connection may no longer read (a
    // full disk), and another process may have filled the new file meanwhile.
    empty = TuningLog(path_, LogMode::read_only).count({}) == 0;
  } catch (const Error&) {
    // No tuning log in it (the schema's transaction failed too): what remains is a file this
    // command created and nothing else could have written through the tuning log's schema.
    std::error_code ec, wal_ec;
    const auto size = std::filesystem::file_size(path_, ec);
    const auto wal = std::filesystem::file_size(path_ + "-wal", wal_ec);
    // At most SQLite's header page, and no frame in a -wal (32 bytes: its header alone).
    empty = !ec && size <= 4096 && (wal_ec || wal <= 32);
  } catch (...) {
  }
  if (!empty) return;
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, ec);
}

}  // namespace ktune::cli
