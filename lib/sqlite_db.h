// A thin RAII layer over the SQLite C API: a connection, prepared statements with typed
// binding and reading, and transactions. Every SQLite failure becomes Error(database_error)
// naming the file and the statement; corruption is reported as such.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace ktune::sqlite {

/// A prepared statement; reset and re-bound between uses.
class Statement {
 public:
  Statement() = default;
  /// Prepares `sql` on `db`; `origin` (the file path) names errors.
  Statement(sqlite3* db, std::string_view sql, std::string origin);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;

  /// Binds text to a 1-based parameter.
  Statement& bind(int index, std::string_view text);
  /// Binds an integer.
  Statement& bind(int index, std::int64_t value);
  /// Binds an int.
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  /// Binds a real.
  Statement& bind(int index, double value);

  /// Advances; true while a row is available.
  bool step();
  /// Runs to completion (statements without rows).
  void run();
  /// Resets for reuse and clears bindings.
  void reset();

  /// Text of a 0-based column ("" for NULL).
  std::string text(int column) const;
  /// Integer of a column.
  std::int64_t integer(int column) const;
  /// Real of a column.
  double real(int column) const;
  /// True when the column is NULL.
  bool is_null(int column) const;

 private:
  void check(int rc, const char* what) const;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string origin_;
  std::string sql_;
};

/// Whether this process may create files in the folder holding `file_path` (as SQLite must,
/// for the -wal / -shm files of a WAL database), symbolic links followed as SQLite follows them.
bool folder_is_writable(const std::string& file_path);
/// `path` with its symbolic links resolved (SQLite keeps -wal / -shm beside the target), or
/// `path` itself when it cannot be resolved.
std::string resolved_path(const std::string& path);

/// The SQLite URI that opens `path` with `immutable=1` (absolute, percent-encoded).
std::string immutable_uri(const std::string& path);

/// One connection.
class Connection {
 public:
  /// How a connection opens its file.
  enum class Access {
    read_write,  ///< created when missing; refused when the file is write-protected
    read_only,   ///< never created or written (SQLite may leave an empty -wal and a -shm)
    /// SQLite's `immutable=1`: no lock, no -wal / -shm file, the file taken to be unchanging
    /// while open (a log in a folder this process cannot write).
    immutable,
  };
  /// Opens `path` as `access` says (":memory:": an in-memory database). Sets busy_timeout.
  Connection(const std::string& path, Access access, int busy_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Executes one or more statements without results.
  void exec(std::string_view sql);
  /// Prepares a statement.
  Statement prepare(std::string_view sql) const;
  /// Integer result of a single-value query (e.g. a PRAGMA).
  std::int64_t query_int(std::string_view sql) const;
  /// Text result of a single-value query, or nullopt when there is no row.
  std::optional<std::string> query_text(std::string_view sql) const;
  /// The raw handle.
  sqlite3* handle() const { return db_; }
  /// Whether the file was opened as an immutable snapshot.
  bool immutable() const { return immutable_; }
  /// The file path (for messages).
  const std::string& path() const { return path_; }

  /// Called after each commit. SQLite rewinds a -wal file only when no reader is using it, so
  /// under a steady stream of readers (a `watch ktune best` beside a tuning job) it would grow
  /// with every trial, to many times the log's size. Past `limit_bytes` this checkpoints it in
  /// TRUNCATE mode, waiting at most `wait_ms` for the readers of the moment; when they outlast
  /// that, the next try waits until the file has grown by another `limit_bytes`.
  void keep_wal_bounded();
  /// The bound keep_wal_bounded keeps (default 64 MiB, waiting up to 1 s); 0 turns it off.
  void set_wal_bound(std::uint64_t limit_bytes, int wait_ms);

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  bool immutable_ = false;
  int busy_timeout_ms_ = 0;
  std::uint64_t wal_limit_bytes_ = std::uint64_t{64} << 20;
  int wal_wait_ms_ = 1000;
  std::uint64_t next_wal_check_bytes_ = wal_limit_bytes_;
};

/// A write transaction (BEGIN IMMEDIATE ... COMMIT); rolls back unless committed.
class Transaction {
 public:
  /// Begins; waits for the write lock up to the busy timeout.
  explicit Transaction(Connection& connection);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  /// Commits.
  void commit();

 private:
  Connection& connection_;
  bool done_ = false;
};

/// Throws Error(database_error) for an SQLite result code, naming the file and action.
[[noreturn]] void throw_sqlite_error(sqlite3* db, int rc, const std::string& origin,
                                     const std::string& what);

/// True when the file at `path` starts with the SQLite database header ("SQLite format 3");
/// false for any other file, a short one, or one that cannot be read.
bool is_sqlite_file(const std::string& path);

}  // namespace ktune::sqlite
