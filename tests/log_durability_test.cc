// Tuning-log robustness: several processes appending at once, a writer killed with SIGKILL,
// a -wal kept bounded beside readers, corrupted and foreign files (reported, never
// overwritten), and a newer schema refused.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <set>

#include <catch2/catch.hpp>

#include "ktune/error.h"
#include "log_fixtures.h"
#include "sqlite_db.h"

using namespace ktune;
using ktune::test::make_record;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Opening must fail with database_error mentioning `expected`, and leave the file unchanged.
void require_refused(const std::string& path, const std::string& expected) {
  std::string before = read_bytes(path);
  for (LogMode mode : {LogMode::read_write, LogMode::read_only}) {
    try {
      TuningLog log(path, mode);
      FAIL("opened " << path);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::database_error);
      CHECK_THAT(e.what(), Catch::Contains(expected));
      CHECK_THAT(e.what(), Catch::Contains(path));
    }
  }
  CHECK(read_bytes(path) == before);
}

std::string filled_db(const test::TempDir& dir, int rows) {
  auto path = dir.file("filled.db");
  TuningLog log(path);
  std::vector<TrialRecord> batch;
  for (int i = 0; i < rows; ++i) batch.push_back(make_record("i=" + std::to_string(i), 1.0 + i));
  log.append_batch(batch);
  return path;
}

// Folds the WAL into the main file so byte-level damage hits the real data.
void checkpoint(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

}  // namespace

TEST_CASE("4 processes x 500 appends into one log lose nothing", "[log][concurrency]") {
  test::TempDir dir;
  auto path = dir.file("shared.db");
  constexpr int kProcesses = 4, kAppends = 500;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        TuningLog log(path);
        for (int i = 0; i < kAppends; ++i) {
          log.append(make_record("p=" + std::to_string(p) + ",i=" + std::to_string(i), 1.0,
                                 Status::ok, "proc-" + std::to_string(p)));
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", p, e.what());
        code = 1;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  TuningLog log(path, LogMode::read_only);
  CHECK(log.count() == kProcesses * kAppends);
  auto runs = log.runs();
  REQUIRE(runs.size() == kProcesses);
  for (const auto& run : runs) CHECK(run.trials == kAppends);
  CHECK(log.measured_configs("copy", "copy|n=1024|dtype=f32", device_key_of(test::test_device()))
            .size() == kProcesses * kAppends);
}

TEST_CASE("A writer killed with SIGKILL loses at most the trial in flight", "[log][durability]") {
  test::TempDir dir;
  auto path = dir.file("killed.db");
  { TuningLog create(path); }
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    try {
      TuningLog log(path);
      for (int i = 0;; ++i) {
        log.append(make_record("i=" + std::to_string(i), 1.0));
        if (write(fds[1], &i, sizeof i) != sizeof i) _exit(2);  // i is committed
      }
    } catch (...) {
      _exit(1);
    }
  }
  close(fds[1]);
  int last = -1, value = 0;
  while (last < 200 && read(fds[0], &value, sizeof value) == sizeof value) last = value;
  REQUIRE(last >= 200);
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  while (read(fds[0], &value, sizeof value) == sizeof value) last = value;
  close(fds[0]);

  TuningLog log(path, LogMode::read_only);  // opens cleanly (integrity checked at open)
  auto count = log.count();
  CHECK(count >= last + 1);  // every reported commit is there
  CHECK(count <= last + 2);  // at most the one in flight beyond
  std::set<std::string> configs;
  for (const auto& r : log.records()) configs.insert(r.config_text);
  for (int i = 0; i <= last; ++i) CHECK(configs.count("i=" + std::to_string(i)) == 1);
  TuningLog writable(path);  // and accepts new appends
  writable.append(make_record("after=1", 1.0));
  CHECK(writable.count() == count + 1);
}

TEST_CASE("A text file is reported as not SQLite and never overwritten", "[log][corruption]") {
  test::TempDir dir;
  auto path = dir.file("notes.db");
  write_bytes(path, "these are my notes, not a database\n");
  require_refused(path, "not an SQLite database");
  try {  // plain text gets no import hint
    TuningLog log(path, LogMode::read_only);
  } catch (const Error& e) {
    CHECK_THAT(e.what(), !Catch::Contains("ktune import"));
  }
}

TEST_CASE("An export or a gzip file given as a log is refused with the import that reads it",
          "[log][corruption]") {
  test::TempDir dir;
  auto jsonl = dir.file("deploy.jsonl");
  write_bytes(jsonl, "{\"format\":\"ktune-trials\",\"version\":1}\n");
  require_refused(jsonl, "it looks like JSON");
  require_refused(jsonl, "`ktune import --db NEW.db FILE`");
  auto gz = dir.file("trials.jsonl.gz");
  const char gzip_start[] = "\x1f\x8b\x08\x00 and the rest of a gzip file";
  write_bytes(gz, std::string(gzip_start, sizeof gzip_start - 1));  // the NUL at [3] included
  require_refused(gz, "it looks like a gzip file");
}

TEST_CASE("A garbled or truncated database is reported as corrupted", "[log][corruption]") {
  test::TempDir dir;
  auto path = filled_db(dir, 400);
  checkpoint(path);
  std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() > 8 * 4096);

  SECTION("garbled pages") {
    for (std::size_t i = 4096 + 100; i < bytes.size() - 4096; i += 7) bytes[i] = char(i * 31);
    write_bytes(path, bytes);
    require_refused(path, "corrupt");
  }
  SECTION("truncated file") {
    write_bytes(path, bytes.substr(0, bytes.size() / 2 + 1234));
    require_refused(path, "corrupt");
  }
}

TEST_CASE("A foreign SQLite database and a newer schema are refused", "[log][corruption]") {
  test::TempDir dir;
  SECTION("foreign database") {
    auto path = dir.file("other.db");
    test::raw_sql(path, "CREATE TABLE photos(id INTEGER); INSERT INTO photos VALUES (1);");
    require_refused(path, "not a ktune tuning log");
  }
  SECTION("a foreign database that sets a schema version") {
    auto path = dir.file("versioned.db");
    test::raw_sql(path, "CREATE TABLE photos(id INTEGER); PRAGMA user_version = 1;");
    require_refused(path, "not a ktune tuning log");
  }
  SECTION("newer schema") {
    auto path = filled_db(dir, 3);
    test::raw_sql(path, "PRAGMA user_version = 99");
    require_refused(path, "newer than this ktune understands");
  }
  SECTION("the very next schema version") {
    auto path = filled_db(dir, 3);
    checkpoint(path);  // the refusal must leave the whole file as it was
    test::raw_sql(path, "PRAGMA user_version = " + std::to_string(TuningLog::current_schema_version() + 1));
    require_refused(path, "newer than this ktune understands");
  }
}

TEST_CASE("A -wal that readers kept from rewinding is truncated once they let go", "[log][durability]") {
  namespace fs = std::filesystem;
  using sqlite::Connection;
  test::TempDir dir;
  const std::string path = dir.file("w.db");
  Connection writer(path, Connection::Access::read_write, 1000);
  writer.exec("PRAGMA journal_mode=WAL");
  writer.exec("CREATE TABLE t(x BLOB)");
  writer.set_wal_bound(256 << 10, 50);
  int commits = 0;
  auto commit_64k = [&] {
    ++commits;
    sqlite::Transaction tx(writer);
    writer.exec("INSERT INTO t VALUES (randomblob(16000)), (randomblob(16000)), "
                "(randomblob(16000)), (randomblob(16000))");
    tx.commit();
  };
  auto wal_size = [&] { return fs::file_size(path + "-wal"); };
  // A reader inside its read transaction at every commit: SQLite cannot rewind the -wal, and
  // the bound's checkpoint gives up after its wait (the commits go on, nothing is lost).
  Connection reader(path, Connection::Access::read_only, 1000);
  reader.exec("BEGIN");
  CHECK(reader.query_int("SELECT count(*) FROM t") == 0);
  for (int i = 0; i < 40; ++i) commit_64k();
  const auto held = wal_size();
  CHECK(held > (2u << 20));
  CHECK(reader.query_int("SELECT count(*) FROM t") == 0);  // its snapshot stayed whole
  reader.exec("COMMIT");
  // Once the reader lets go, a commit soon finds the -wal past the bound and truncates it
  // (SQLite alone would keep the file at its size, and grow it under the next reader).
  for (int i = 0; i < 16 && wal_size() > held / 2; ++i) commit_64k();
  CHECK(wal_size() < (512u << 10));
  CHECK(reader.query_int("SELECT count(*) FROM t") == 4 * commits);
}
