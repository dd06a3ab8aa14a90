// Removal of a log that a failed command created (see created_log.h).
#include "created_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <filesystem>

#include "ktune/error.h"
#include "ktune/log.h"

namespace ktune::cli {

namespace {

/// The byte of a WAL database's -shm file on which every open connection of SQLite's unix VFS
/// holds a shared lock for as long as it has the database open (its "dead-man switch": lock
/// bytes start at (22 + SQLITE_SHM_NLOCK) * 4 = 120, and the switch follows the 8 lock bytes).
constexpr off_t kShmDeadManSwitch = 128;

/// Runs `remove` while holding the -shm's dead-man-switch byte exclusively, so that no other
/// process has the database open (it holds that byte shared) nor can open it meanwhile; does
/// nothing when another process has it open. Without a -shm file no WAL connection is open.
template <class Remove>
void remove_unless_open_elsewhere(const std::string& path, const Remove& remove) {
  const int fd = ::open((path + "-shm").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    remove();
    return;
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = kShmDeadManSwitch;
  lock.l_len = 1;
  if (::fcntl(fd, F_SETLK, &lock) == 0) remove();  // else: in use by another process: keep it
  ::close(fd);  // releases the lock
}

}  // namespace

CreatedLog::CreatedLog(std::string path)
    : path_(std::move(path)), exceptions_at_open_(std::uncaught_exceptions()) {
  std::error_code ec;
  existed_ = std::filesystem::exists(std::filesystem::symlink_status(path_, ec));
  try {
    log_ = std::make_unique<TuningLog>(path_, LogMode::read_write);
  } catch (...) {
    remove_if_left_empty();
    throw;
  }
}

CreatedLog::~CreatedLog() {
  if (std::uncaught_exceptions() <= exceptions_at_open_) return;  // the command succeeded
  log_.reset();  // closed first: the judgement below reads the file afresh
  remove_if_left_empty();
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
  // Another process that opened the new log after this one created it may be about to write
  // to it: removing the file then would lose what it writes.
  remove_unless_open_elsewhere(path_, [&] {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, ec);
  });
}

}  // namespace ktune::cli
