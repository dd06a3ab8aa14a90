// RAII wrapper over the SQLite C API (see sqlite_db.h): connections, statements,
// transactions, and translation of SQLite result codes into ktune::Error.
#include "sqlite_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include <spdlog/spdlog.h>

#include "folder_check.h"
#include "ktune/error.h"

namespace ktune::sqlite {

void throw_sqlite_error(sqlite3* db, int rc, const std::string& origin, const std::string& what) {
  std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int primary = rc & 0xff;
  std::string kind;
  if (primary == SQLITE_CORRUPT) kind = " (the database file is corrupted)";
  if (primary == SQLITE_NOTADB) kind = " (the file is not an SQLite database)";
  if (primary == SQLITE_BUSY) kind = " (the database stayed locked past the busy timeout)";
  if (primary == SQLITE_FULL || primary == SQLITE_IOERR) {
    // The system's reason (no space, a file size limit, a failing disk) says what to fix. A
    // short write leaves no errno: SQLite reports only that the write was cut short.
    const int system_error = db ? sqlite3_system_errno(db) : 0;
    // A write that failed before its commit leaves the log as it was (the commit record is
    // never written); a failed sync at the commit leaves its outcome unknown.
    const bool write = primary == SQLITE_FULL || rc == SQLITE_IOERR_WRITE;
    kind = std::string(" (") +
           (system_error ? std::strerror(system_error)
                         : write ? "a write was cut short: is the disk full, or a file size limit reached?"
                                 : "the system refused the file") +
           (write ? "; the change was not committed, and the log holds what it held before" : "") + ")";
  }
  throw Error(ErrorCode::database_error,
              "tuning log '" + origin + "': " + what + " failed: " + detail + kind);
}

Statement::Statement(sqlite3* db, std::string_view sql, std::string origin)
    : db_(db), origin_(std::move(origin)), sql_(sql) {
  int rc = sqlite3_prepare_v2(db_, sql_.c_str(), static_cast<int>(sql_.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, origin_, "preparing \"" + sql_ + "\"");
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept { *this = std::move(other); }

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    origin_ = std::move(other.origin_);
    sql_ = std::move(other.sql_);
  }
  return *this;
}

void Statement::check(int rc, const char* what) const {
  if (rc != SQLITE_OK) throw_sqlite_error(db_, rc, origin_, std::string(what) + " of \"" + sql_ + "\"");
}

Statement& Statement::bind(int index, std::string_view text) {
  check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT),
        "binding");
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  check(sqlite3_bind_int64(stmt_, index, value), "binding");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check(sqlite3_bind_double(stmt_, index, value), "binding");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite_error(db_, rc, origin_, "running \"" + sql_ + "\"");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string resolved_path(const std::string& path) {
  std::error_code ec;
  const auto resolved = std::filesystem::canonical(path, ec);
  return ec ? path : resolved.string();
}

bool folder_is_writable(const std::string& file_path) {
  std::filesystem::path folder = std::filesystem::path(resolved_path(file_path)).parent_path();
  if (folder.empty()) folder = ".";
  return ::faccessat(AT_FDCWD, folder.c_str(), W_OK, AT_EACCESS) == 0;
}

std::string immutable_uri(const std::string& path) {
  // An absolute path, so that no part of it can read as a URI authority ("file://host/..."),
  // with every byte outside [A-Za-z0-9/._~-] percent-encoded ('?', '#' and '%' above all).
  std::string absolute = std::filesystem::absolute(resolved_path(path)).string();
  while (absolute.size() > 1 && absolute[0] == '/' && absolute[1] == '/') absolute.erase(0, 1);
  static const char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : absolute) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '.' || c == '_' || c == '~' || c == '-';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?immutable=1";
}

Connection::Connection(const std::string& path, Access access, int busy_timeout_ms)
    : path_(path), immutable_(access == Access::immutable) {
  int flags = access == Access::read_write ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
                                           : SQLITE_OPEN_READONLY;
  flags |= SQLITE_OPEN_NOMUTEX;  // callers serialize access to a connection
  std::string name = path;
  if (immutable_) {
    flags |= SQLITE_OPEN_URI;
    name = immutable_uri(path);
  }
  // SQLite's "unable to open database file" gives no reason, and it resolves "missing/.."
  // lexically (creating the file elsewhere than the system would look for it later): a log to
  // be created needs a folder that exists and takes new files.
  std::error_code ec;
  if (access == Access::read_write && path != ":memory:" &&  // an in-memory scratch database
      !std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
    if (const auto problem = detail::folder_problem(path))
      throw Error(ErrorCode::database_error, "tuning log '" + path + "': cannot create it: " + *problem);
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (db_) sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(ErrorCode::database_error, "tuning log '" + path + "': cannot open: " + detail);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  busy_timeout_ms_ = busy_timeout_ms;
  // SQLite falls back to read-only when the file is not writable; a writer would then fail only
  // at its first insert, after measuring a batch it cannot keep. Refuse at open instead.
  if (access == Access::read_write && sqlite3_db_readonly(db_, "main") == 1) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(ErrorCode::io_error, "tuning log '" + path +
                                         "' is read-only (file permissions): cannot record trials "
                                         "in it; make it writable or name another --db");
  }
}

Connection::~Connection() {
  if (db_) sqlite3_close_v2(db_);
}

void Connection::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    if (message) sqlite3_free(message);
    throw_sqlite_error(db_, rc, path_, "executing \"" + text + "\"");
  }
}

Statement Connection::prepare(std::string_view sql) const { return Statement(db_, sql, path_); }

std::int64_t Connection::query_int(std::string_view sql) const {
  Statement s = prepare(sql);
  return s.step() ? s.integer(0) : 0;
}

std::optional<std::string> Connection::query_text(std::string_view sql) const {
  Statement s = prepare(sql);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

Transaction::Transaction(Connection& connection) : connection_(connection) {
  connection_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) {
    try {
      connection_.exec("ROLLBACK");
    } catch (...) {
      // The transaction may already be rolled back by SQLite itself; nothing left to undo.
    }
  }
}

void Transaction::commit() {
  connection_.exec("COMMIT");
  done_ = true;
  connection_.keep_wal_bounded();
}

void Connection::set_wal_bound(std::uint64_t limit_bytes, int wait_ms) {
  wal_limit_bytes_ = limit_bytes;
  wal_wait_ms_ = wait_ms;
  next_wal_check_bytes_ = limit_bytes;
}

void Connection::keep_wal_bounded() {
  if (immutable_ || wal_limit_bytes_ == 0) return;
  const char* wal = sqlite3_filename_wal(sqlite3_db_filename(db_, "main"));
  if (wal == nullptr || *wal == '\0') return;  // an in-memory or rollback-journal database
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(wal, ec);
  if (ec || size < next_wal_check_bytes_) return;
  sqlite3_busy_timeout(db_, wal_wait_ms_);
  int frames = 0, copied = 0;
  const int rc = sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_TRUNCATE, &frames, &copied);
  sqlite3_busy_timeout(db_, busy_timeout_ms_);
  // Busy (readers or another writer outlasted the wait): the frames stay and are as safe there.
  next_wal_check_bytes_ = rc == SQLITE_OK ? wal_limit_bytes_ : size + wal_limit_bytes_;
  spdlog::debug("tuning log '{}': -wal of {} bytes checkpointed ({}): {} of {} frames copied",
                path_, size, rc == SQLITE_OK ? "truncated" : sqlite3_errstr(rc), copied, frames);
}

bool is_sqlite_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // never open a FIFO to read
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  return in && in.read(head, sizeof head) &&
         std::memcmp(head, "SQLite format 3", sizeof head) == 0;  // 15 letters and a NUL
}

}  // namespace ktune::sqlite
