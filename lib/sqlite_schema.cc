// Migrations and open-time checks of the tuning-log schema (see sqlite_schema.h). The schema
// version lives in PRAGMA user_version; meta.format identifies the file as a ktune log.
#include "sqlite_schema.h"

#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "input_file.h"
#include "ktune/error.h"

namespace ktune::sqlite {

namespace {

// Version 1: the trials table and the lookups every tool needs.
constexpr const char* kMigration1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('format', 'ktune-tuning-log');
CREATE TABLE trials(
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL,
  template TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  device_key TEXT NOT NULL,
  device_name TEXT NOT NULL,
  cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  ktune_version TEXT NOT NULL,
  nvrtc_version TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL,
  message TEXT NOT NULL,
  times_ms TEXT NOT NULL,
  median_ms REAL,
  min_ms REAL,
  spread REAL,
  error_norm REAL,
  registers INTEGER,
  shared_bytes INTEGER,
  spill_stores INTEGER,
  spill_loads INTEGER,
  stack_bytes INTEGER,
  const_bytes INTEGER,
  compile_ms REAL,
  wall_ms REAL,
  sm_clock_mhz INTEGER,
  temperature_c INTEGER,
  timestamp_us INTEGER NOT NULL
);
CREATE INDEX trials_task ON trials(template, problem_key, device_key, config);
CREATE INDEX trials_run ON trials(run_id);
)sql";

// Version 2: the "best ok trial of a task" query walks an index instead of the task.
constexpr const char* kMigration2 = R"sql(
CREATE INDEX trials_best ON trials(template, problem_key, device_key, status, median_ms);
)sql";

// Version 3: how each trial's timed runs were launched (LaunchForm's name); rows written before
// it was recorded say 'unknown'.
constexpr const char* kMigration3 = R"sql(
ALTER TABLE trials ADD COLUMN launch TEXT NOT NULL DEFAULT 'unknown';
)sql";

bool has_tables(Connection& connection) {
  return connection.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table'") > 0;
}

void refuse(const Connection& connection, const std::string& why) {
  throw Error(ErrorCode::database_error, "tuning log '" + connection.path() + "': " + why);
}

// Switching to WAL needs a moment of exclusive access; other processes opening the same file
// at once may hold it, so retry for a while.
void enable_wal(Connection& connection) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    try {
      auto mode = connection.query_text("PRAGMA journal_mode=WAL");
      if (mode && *mode == "wal") return;
      refuse(connection, "cannot enable WAL journaling (got '" + mode.value_or("") + "')");
    } catch (const Error& e) {
      bool busy = std::strstr(e.what(), "locked") != nullptr;
      if (!busy || std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

/// The column names of `connection`'s trials table, in order (none when there is no such
/// table).
std::vector<std::string> trials_column_list(const Connection& connection) {
  std::vector<std::string> names;
  Statement columns = connection.prepare("SELECT name FROM pragma_table_info('trials')");
  while (columns.step()) names.push_back(columns.text(0));
  return names;
}

/// The trials table's column names at schema `version`, as trials_column_list() gives them,
/// as its migrations make them (run on an empty in-memory database once per version).
const std::vector<std::string>& trials_columns(int version) {
  static std::mutex mutex;
  static std::map<int, std::vector<std::string>> columns;
  std::lock_guard lock(mutex);
  auto it = columns.find(version);
  if (it != columns.end()) return it->second;
  Connection scratch(":memory:", Connection::Access::read_write, 0);
  for (int v = 0; v < version; ++v) scratch.exec(schema_migrations()[v]);
  return columns[version] = trials_column_list(scratch);
}

}  // namespace

const std::vector<std::string>& schema_migrations() {
  static const std::vector<std::string> migrations = {kMigration1, kMigration2, kMigration3};
  return migrations;
}

int latest_schema_version() { return static_cast<int>(schema_migrations().size()); }

void check_sqlite_header(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) return;
  // A file this process may not read would otherwise read as 0 bytes: a "wrong header".
  detail::require_read_permission(path, "tuning log");
  static const char kHeader[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  char head[16] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  if (in.gcount() < static_cast<std::streamsize>(sizeof head) ||
      std::memcmp(head, kHeader, sizeof head) != 0) {
    // A JSON-lines export, T4 results or a Kernel Tuner cache (plain or gzip) given where a
    // database belongs: say how to get one.
    const std::string_view start(head, static_cast<std::size_t>(in.gcount()));
    const auto first = start.find_first_not_of(" \t\r\n");
    const bool json_like = first != std::string_view::npos && (start[first] == '{' || start[first] == '[');
    const bool gzip = start.size() >= 2 && start[0] == '\x1f' && start[1] == '\x8b';
    throw Error(ErrorCode::database_error,
                "tuning log '" + path + "' is not an SQLite database (wrong file header); "
                "refusing to open or overwrite it" +
                    (json_like || gzip
                         ? std::string("; it looks like ") + (gzip ? "a gzip file" : "JSON") +
                               " (an export, T4 results or a Kernel Tuner cache?): `ktune import "
                               "--db NEW.db FILE` reads such a file into a tuning log"
                         : std::string()));
  }
}

int prepare_schema(Connection& connection, bool read_only) {
  // Integrity first, before anything could write: a damaged file is reported, not "repaired".
  std::string check;
  try {
    check = connection.query_text("PRAGMA quick_check(1)").value_or("");
  } catch (const Error& e) {
    const std::string why = e.what();
    // A rollback journal left by a writer that stopped mid-transaction (a log another program
    // switched out of WAL) must be rolled back, which a read-only connection may not do.
    std::error_code ec;
    if (read_only && why.find("readonly") != std::string::npos &&
        std::filesystem::is_regular_file(connection.path() + "-journal", ec) &&
        folder_is_writable(connection.path()))
      refuse(connection, "has a rollback journal ('" + connection.path() +
                             "-journal') left by a writer that stopped mid-transaction, which a "
                             "read-only command may not roll back; a command that writes the log "
                             "(ktune import, tune) or `sqlite3 '" + connection.path() +
                             "' 'PRAGMA quick_check'` rolls it back");
    // SQLite says "readonly" where it may not write the -shm file, and "unable to open" where
    // it may not create one in a folder it cannot write (an immutable connection creates none).
    const bool cannot_write_beside =
        why.find("readonly") != std::string::npos || why.find("read-only") != std::string::npos ||
        (read_only && !connection.immutable() && why.find("unable to open") != std::string::npos &&
         !folder_is_writable(connection.path()));
    if (cannot_write_beside)
      throw CannotReadInPlace(
          ErrorCode::database_error,
          "tuning log '" + connection.path() +
              "': cannot be read where it is: its folder (or its -wal / -shm files) is "
              "read-only, and SQLite must write the -shm file of a WAL database to read what "
              "its -wal file holds; copy the log with its -wal file to a writable folder, or let "
              "its last writer close it first (" + why + ")");
    refuse(connection, std::string("is corrupted or not a database: ") + e.what());
  }
  if (check != "ok") refuse(connection, "is corrupted (integrity check: " + check + ")");

  const int latest = latest_schema_version();
  auto identify = [&](int version) {
    if (version < 0) {
      refuse(connection, "has schema version " + std::to_string(version) +
                             ", which no ktune writes (versions are 1.." +
                             std::to_string(latest) + ")");
    }
    if (version > latest) {
      refuse(connection, "has schema version " + std::to_string(version) +
                             ", newer than this ktune understands (" + std::to_string(latest) +
                             "); use a newer ktune");
    }
    if (version == 0 && has_tables(connection)) {
      refuse(connection, "is an SQLite database but not a ktune tuning log");
    }
    if (version > 0) {
      std::optional<std::string> format;
      try {
        format = connection.query_text("SELECT value FROM meta WHERE key = 'format'");
      } catch (const Error&) {
      }
      if (format != std::string(kLogFormatName)) {
        refuse(connection, "is an SQLite database but not a ktune tuning log (no meta.format)");
      }
      // A table another program dropped or altered would fail later, inside a query or a
      // migration, with SQL text; it is named here instead, and the file left as it is.
      const std::vector<std::string> have = trials_column_list(connection);
      const std::vector<std::string>& want = trials_columns(version);
      if (have != want) {
        std::string what;
        if (have.empty()) {
          what = "it has no trials table";
        } else {
          const std::set<std::string> wanted(want.begin(), want.end());
          const std::set<std::string> held(have.begin(), have.end());
          std::string missing, extra;
          for (const auto& n : wanted)
            if (!held.count(n)) missing += (missing.empty() ? "" : ", ") + n;
          for (const auto& n : held)
            if (!wanted.count(n)) extra += (extra.empty() ? "" : ", ") + n;
          what = "its trials table" + (missing.empty() ? "" : " lacks " + missing) +
                 (!missing.empty() && !extra.empty() ? " and" : "") +
                 (extra.empty() ? "" : " has " + extra + ", which it should not") +
                 (missing.empty() && extra.empty() ? " has its columns in another order" : "");
        }
        refuse(connection, "is damaged: it says schema version " + std::to_string(version) +
                               " but " + what +
                               " (changed by another program?); it is left as it is");
      }
    }
  };
  // Another process may be creating the schema right now (tables, meta and user_version are
  // committed together): the reads that identify the file share one snapshot, or a half-seen
  // creation (tables but version 0) would look like a foreign database.
  int version = 0;
  connection.exec("BEGIN");
  try {
    version = static_cast<int>(connection.query_int("PRAGMA user_version"));
    identify(version);  // before anything writes: a foreign file stays as it is
    connection.exec("COMMIT");
  } catch (...) {
    try {
      connection.exec("ROLLBACK");
    } catch (const Error&) {  // the refusal or the read error is what the caller needs
    }
    throw;
  }
  if (read_only) {
    if (version == 0) refuse(connection, "holds no tuning log (empty database)");
    return version;
  }
  enable_wal(connection);
  connection.exec("PRAGMA synchronous=NORMAL");
  if (version == latest) return version;

  Transaction tx(connection);
  version = static_cast<int>(connection.query_int("PRAGMA user_version"));  // may have moved
  identify(version);
  for (int v = version; v < latest; ++v) connection.exec(schema_migrations()[v]);
  connection.exec("PRAGMA user_version = " + std::to_string(latest));
  tx.commit();
  return latest;
}

}  // namespace ktune::sqlite
