// Schema of the SQLite tuning log: the versioned list of migrations, and the checks run when a
// file is opened (is it SQLite at all, is it intact, is it a ktune log, is its schema known).
#pragma once

#include <string>
#include <vector>

#include "ktune/error.h"
#include "sqlite_db.h"

namespace ktune::sqlite {

/// Value of meta.format that marks a ktune tuning log.
inline constexpr const char* kLogFormatName = "ktune-tuning-log";

/// SQL of each migration; migration i (0-based) takes the schema from version i to i + 1.
const std::vector<std::string>& schema_migrations();
/// The version this build writes (= number of migrations).
int latest_schema_version();

/// Refuses (Error(database_error)) a non-empty file that does not start with the SQLite
/// header; never touches the file.
void check_sqlite_header(const std::string& path);
/// What prepare_schema throws when SQLite cannot read a log where it lies because it may not
/// create the -wal / -shm files beside it (a folder this process cannot write).
struct CannotReadInPlace : Error {
  using Error::Error;
};

/// Verifies integrity (quick_check), identity (meta.format) and version; in read-write mode
/// enables WAL and applies pending migrations in one transaction. Returns the schema version.
int prepare_schema(Connection& connection, bool read_only);

}  // namespace ktune::sqlite
