// Tuning-log database: lossless storage of records, the best / history / resume / task
// queries, read-only mode and schema migration of an older file.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "ktune/error.h"
#include "log_fixtures.h"
#include "sqlite_schema.h"

using namespace ktune;
using ktune::test::make_record;
using ktune::test::raw_sql;

TEST_CASE("TuningLog stores and returns every field of a record", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  CHECK(log.schema_version() == TuningLog::current_schema_version());
  auto ok = make_record("BLOCK=256,VEC=4", 0.5);
  auto failed = make_record("BLOCK=1024,VEC=8", 0.0, Status::compile_error);
  std::int64_t id = log.append(ok);
  CHECK(id > 0);
  log.append(failed);
  auto back = log.records();
  REQUIRE(back.size() == 2);
  CHECK(back[0].id == id);
  test::require_same_record(back[0], ok);
  test::require_same_record(back[1], failed);
  CHECK(std::isnan(back[1].trial.error_norm));
}

TEST_CASE("TuningLog best() is the smallest median among ok trials of the task", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append_batch({
      make_record("BLOCK=128,VEC=1", 0.9),
      make_record("BLOCK=256,VEC=2", 0.4),
      make_record("BLOCK=512,VEC=4", 0.1, Status::wrong_result),  // faster but wrong
      make_record("BLOCK=64,VEC=1", 0.05, Status::ok, "run-a", "copy|n=2048|dtype=f32"),
      make_record("BLOCK=32,VEC=1", 0.01, Status::ok, "run-a", "copy|n=1024|dtype=f32", "copy",
                  test::test_device("NVIDIA A100", 108, 8, 0)),
  });
  auto dk = device_key_of(test::test_device());
  auto best = log.best("copy", "copy|n=1024|dtype=f32", dk);
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=256,VEC=2");
  CHECK(best->trial.median_ms == 0.4);
  CHECK_FALSE(log.best("copy", "copy|n=4096|dtype=f32", dk));
  CHECK_FALSE(log.best("gemm", "copy|n=1024|dtype=f32", dk));
}

TEST_CASE("TuningLog answers run history, runs, tasks and resume queries", "[log][resume]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto dk = device_key_of(test::test_device());
  log.append(make_record("BLOCK=128,VEC=1", 0.9, Status::ok, "run-1"));
  log.append(make_record("BLOCK=256,VEC=1", 0.8, Status::timeout, "run-1"));
  log.append(make_record("BLOCK=512,VEC=1", 0.7, Status::ok, "run-2"));
  auto changed = make_record("BLOCK=64,VEC=1", 0.6, Status::ok, "run-2");
  changed.source_hash = "1111222233334444";  // a later version of the kernel source
  log.append(changed);
  log.append(make_record("BLOCK=128,VEC=1", 0.85, Status::ok, "run-2"));  // a repeat

  auto history = log.run_history("run-1");
  REQUIRE(history.size() == 2);
  CHECK(history[0].config_text == "BLOCK=128,VEC=1");
  CHECK(history[1].trial.status == Status::timeout);

  auto runs = log.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].run_id == "run-1");
  CHECK(runs[1].trials == 3);

  auto measured = log.measured_configs("copy", "copy|n=1024|dtype=f32", dk);
  CHECK(measured == std::vector<std::string>{"BLOCK=128,VEC=1", "BLOCK=256,VEC=1",
                                             "BLOCK=512,VEC=1", "BLOCK=64,VEC=1"});
  auto same_source = log.measured_configs("copy", "copy|n=1024|dtype=f32", dk, "00ff00ff00ff00ff");
  CHECK(same_source.size() == 3);

  auto tasks = log.tasks();
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].trials == 5);
  CHECK(tasks[0].ok_trials == 4);
  CHECK(tasks[0].best_ms == Approx(0.6));

  LogFilter only_timeouts;
  only_timeouts.status = Status::timeout;
  CHECK(log.count(only_timeouts) == 1);
  CHECK(log.count() == 5);

  // Filtered tasks: those with a matching trial, counted over the matching trials.
  log.append(make_record("BLOCK=128,VEC=1", 0.5, Status::ok, "run-3", "copy|n=4096|dtype=f32"));
  log.append(make_record("BLOCK=128,VEC=1", 0.4, Status::ok, "run-3", "copy|n=1024|dtype=f32",
                         "other"));
  CHECK(log.tasks().size() == 3);
  LogFilter copy_here;
  copy_here.template_name = "copy";
  copy_here.device_key = dk;
  const auto copy_tasks = log.tasks(copy_here);
  REQUIRE(copy_tasks.size() == 2);
  CHECK(copy_tasks[0].problem_key == "copy|n=1024|dtype=f32");
  CHECK(copy_tasks[1].problem_key == "copy|n=4096|dtype=f32");
  CHECK(copy_tasks[1].trials == 1);
  CHECK(log.tasks(only_timeouts).size() == 1);
  CHECK(log.tasks(only_timeouts)[0].trials == 1);
  CHECK_FALSE(log.tasks(only_timeouts)[0].best_ms);
  LogFilter other_device = copy_here;
  other_device.device_key = "NVIDIA A100|sm_80|108";
  CHECK(log.tasks(other_device).empty());
}

TEST_CASE("TuningLog best() sees trials appended between its calls", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  const auto dk = device_key_of(test::test_device());
  log.append(make_record("BLOCK=128,VEC=1", 0.9));
  REQUIRE(log.best("copy", "copy|n=1024|dtype=f32", dk)->config_text == "BLOCK=128,VEC=1");
  // The same statement answers again (prepared once): it must not keep an old snapshot,
  // neither after a complete read nor after a usable() refusal ended the ranking early.
  log.append(make_record("BLOCK=256,VEC=1", 0.5));
  CHECK(log.best("copy", "copy|n=1024|dtype=f32", dk)->config_text == "BLOCK=256,VEC=1");
  CHECK_FALSE(log.best("copy", "copy|n=1024|dtype=f32", dk, "",
                       [](const TrialRecord&) { return false; }));
  // Another connection appends: this one sees it at the next call.
  TuningLog writer(dir.file("t.db"));
  writer.append(make_record("BLOCK=512,VEC=1", 0.2));
  CHECK(log.best("copy", "copy|n=1024|dtype=f32", dk)->config_text == "BLOCK=512,VEC=1");
  CHECK(log.best("copy", "copy|n=9|dtype=f32", dk) == std::nullopt);
}

TEST_CASE("TuningLog::for_each's visitor may query the same log", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append(make_record("BLOCK=128,VEC=1", 0.9, Status::ok, "run-1"));
  log.append(make_record("BLOCK=256,VEC=1", 0.8, Status::ok, "run-1"));
  std::vector<std::int64_t> counts;
  log.for_each({}, [&](const TrialRecord& r) {  // used to wait on its own lock forever
    counts.push_back(log.count());
    CHECK(log.run_history(r.run_id).size() == 2);
  });
  CHECK(counts == std::vector<std::int64_t>{2, 2});
}

TEST_CASE("A log deleted without its write-ahead log is not silently brought back", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  {
    TuningLog log(path);
    log.append(make_record("BLOCK=128,VEC=1", 0.9, Status::ok, "old-run"));
    std::filesystem::copy_file(path + "-wal", dir.file("saved-wal"));  // while it holds the trial
  }
  std::filesystem::remove(path);
  std::filesystem::copy_file(dir.file("saved-wal"), path + "-wal");
  CHECK_THROWS_WITH(TuningLog(path), Catch::Contains("t.db-wal") && Catch::Contains("left over"));
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  CHECK(TuningLog(path).count() == 0);  // a fresh log once the leftovers are gone
}

TEST_CASE("A log deleted after a read-only open can be created again (its -wal holds nothing)",
          "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  {
    TuningLog log(path);
    log.append(make_record("BLOCK=128,VEC=1", 0.9, Status::ok, "old-run"));
  }
  { TuningLog reader(path, LogMode::read_only); CHECK(reader.count() == 1); }
  REQUIRE(std::filesystem::exists(path + "-wal"));  // what `ktune best` leaves behind
  CHECK(std::filesystem::file_size(path + "-wal") <= 32);
  std::filesystem::remove(path);
  TuningLog fresh(path);  // used to be refused as a left-over write-ahead log
  CHECK(fresh.count() == 0);
  fresh.append(make_record("BLOCK=256,VEC=1", 0.8, Status::ok, "new-run"));
  CHECK(fresh.count() == 1);
}

TEST_CASE("A read-only open never changes the log's file, even when it closes last", "[log]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  auto bytes = [](const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  { TuningLog(path).append(make_record("BLOCK=128,VEC=1", 0.9)); }
  const std::string before = bytes(path);
  { TuningLog reader(path, LogMode::read_only); CHECK(reader.count() == 1); }
  CHECK(bytes(path) == before);
  // A writer commits and closes while the reader is open, so the reader closes last: the
  // writer's commits stay in its -wal for the next writer, never folded in by the reader.
  {
    TuningLog reader(path, LogMode::read_only);
    CHECK(reader.count() == 1);
    { TuningLog(path).append(make_record("BLOCK=256,VEC=1", 0.8)); }
    CHECK(reader.count() == 2);
  }
  CHECK(bytes(path) == before);
  REQUIRE(fs::exists(path + "-wal"));
  CHECK(fs::file_size(path + "-wal") > 32);
  CHECK(TuningLog(path, LogMode::read_only).count() == 2);
  // A -wal holding a killed writer's frames (a copy taken while the writer holds them) is
  // read, and left as it was.
  const std::string crashed = dir.file("crashed.db");
  {
    TuningLog writer(path);
    writer.append(make_record("BLOCK=512,VEC=1", 0.7));
    fs::copy_file(path, crashed);
    fs::copy_file(path + "-wal", crashed + "-wal");
  }
  const std::string file = bytes(crashed), wal = bytes(crashed + "-wal");
  { TuningLog reader(crashed, LogMode::read_only); CHECK(reader.count() == 3); }
  CHECK(bytes(crashed) == file);
  CHECK(bytes(crashed + "-wal") == wal);
}

TEST_CASE("A read-only TuningLog refuses appends, a missing file is not_found", "[log]") {
  test::TempDir dir;
  { TuningLog(dir.file("t.db")).append(make_record("BLOCK=1,VEC=1", 1.0)); }
  TuningLog ro(dir.file("t.db"), LogMode::read_only);
  CHECK(ro.count() == 1);
  CHECK_THROWS_AS(ro.append(make_record("BLOCK=2,VEC=1", 1.0)), Error);
  try {
    TuningLog missing(dir.file("missing.db"), LogMode::read_only);
    FAIL("opened a missing file");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
    CHECK_THAT(e.what(), Catch::Contains("missing.db"));
  }
}

TEST_CASE("An older schema is migrated in place and keeps its rows", "[log]") {
  test::TempDir dir;
  auto path = dir.file("old.db");
  // a version-1 file, as an earlier ktune wrote it
  test::raw_sql(path, sqlite::schema_migrations()[0] + "PRAGMA user_version = 1;");
  {
    TuningLog log(path);
    CHECK(log.schema_version() == TuningLog::current_schema_version());
    log.append(make_record("BLOCK=1,VEC=1", 1.0));
  }
  TuningLog again(path, LogMode::read_only);
  CHECK(again.schema_version() == TuningLog::current_schema_version());
  CHECK(again.count() == 1);
}

TEST_CASE("A version-2 log's rows read as launch 'unknown', read-only and after migration", "[log]") {
  test::TempDir dir;
  auto path = dir.file("v2.db");
  // A version-2 file holding one ok trial, as ktune wrote it before recording launch forms.
  test::raw_sql(path, sqlite::schema_migrations()[0] + sqlite::schema_migrations()[1] +
                          "PRAGMA user_version = 2;"
                          "INSERT INTO trials(run_id, template, source_hash, problem_key, device_key, "
                          "device_name, cc_major, cc_minor, sm_count, driver_version, ktune_version, "
                          "nvrtc_version, config, status, message, times_ms, median_ms, min_ms, spread, "
                          "error_norm, timestamp_us) VALUES ('r', 'copy', '00ff', 'copy|N=4|dtype=f32', "
                          "'NVIDIA H200|sm_90|132', 'NVIDIA H200', 9, 0, 132, 13000, '0.1.0', '13.0', "
                          "'VEC=1', 'ok', 'verified', '1.5', 1.5, 1.5, 0, 0, 1);");
  {
    TuningLog old(path, LogMode::read_only);  // a read-only open leaves the schema as it is
    CHECK(old.schema_version() == 2);
    auto rows = old.records();
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].trial.launch == LaunchForm::unknown);
    CHECK(rows[0].trial.median_ms == 1.5);
  }
  {
    TuningLog log(path);
    CHECK(log.schema_version() == 3);
    auto before = log.records();
    REQUIRE(before.size() == 1);
    CHECK(before[0].trial.launch == LaunchForm::unknown);
    for (LaunchForm f : {LaunchForm::stream, LaunchForm::graph, LaunchForm::programmatic,
                         LaunchForm::programmatic_graph}) {
      auto r = make_record("BLOCK=1,VEC=1", 1.0);
      r.trial.launch = f;
      log.append(r);
    }
  }
  TuningLog again(path, LogMode::read_only);
  auto rows = again.records();
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].trial.launch == LaunchForm::unknown);
  CHECK(rows[1].trial.launch == LaunchForm::stream);
  CHECK(rows[2].trial.launch == LaunchForm::graph);
  CHECK(rows[3].trial.launch == LaunchForm::programmatic);
  CHECK(rows[4].trial.launch == LaunchForm::programmatic_graph);
  // A launch name this build does not know (a newer writer's) reads as unknown, not as an error.
  test::raw_sql(path, "UPDATE trials SET launch = 'teleport' WHERE id = 2");
  TuningLog edited(path, LogMode::read_only);
  CHECK(edited.records()[1].trial.launch == LaunchForm::unknown);
}

TEST_CASE("Launch form names round-trip and unknown names are refused by name", "[log]") {
  for (LaunchForm f : {LaunchForm::unknown, LaunchForm::stream, LaunchForm::graph,
                       LaunchForm::programmatic, LaunchForm::programmatic_graph})
    CHECK(launch_form_from_string(to_string(f)) == f);
  CHECK(launch_form(false, false) == LaunchForm::stream);
  CHECK(launch_form(true, false) == LaunchForm::graph);
  CHECK(launch_form(false, true) == LaunchForm::programmatic);
  CHECK(launch_form(true, true) == LaunchForm::programmatic_graph);
  CHECK_THROWS_WITH(launch_form_from_string("Stream"),
                    Catch::Equals("unknown launch form \"Stream\" (expected unknown, stream, graph, "
                                  "programmatic or programmatic_graph)"));
}

TEST_CASE("Trial status names round-trip and an unknown one is refused with every name listed",
          "[log]") {
  for (Status s : {Status::ok, Status::invalid, Status::compile_error, Status::launch_error,
                   Status::runtime_error, Status::timeout, Status::wrong_result})
    CHECK(status_from_string(to_string(s)) == s);
  CHECK_THROWS_WITH(status_from_string("OK"),
                    Catch::Equals("unknown trial status \"OK\" (expected ok, invalid, compile_error, "
                                  "launch_error, runtime_error, timeout or wrong_result)"));
}

TEST_CASE("parse_config_text is strict about names and integers", "[log]") {
  auto c = parse_config_text("b=2,a=-1");
  CHECK(c.names() == std::vector<std::string>{"b", "a"});
  CHECK(c.values() == std::vector<Value>{2, -1});
  CHECK(parse_config_text("").size() == 0);
  CHECK_THROWS_WITH(parse_config_text("a=1,b=x"), Catch::Contains("'x'"));
  CHECK_THROWS_WITH(parse_config_text("a=1.5"), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(parse_config_text("a=1;rm -rf=2"), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(parse_config_text("a=1,a=2"), Catch::Contains("twice"));
  CHECK_THROWS_WITH(parse_config_text("a=1,"), Catch::Contains("trailing"));
  CHECK_THROWS_AS(parse_config_text("a b=1"), Error);
}


TEST_CASE("An ok trial needs a finite time above 0 ms, and best() never picks another", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  TuningLog log(path);
  for (double bad : {-1.0, 0.0, std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(), std::nan("")}) {
    INFO(bad);
    CHECK_THROWS_AS(log.append(make_record("BLOCK=1,VEC=1", bad)), Error);
    CHECK_THROWS_WITH(log.append_batch({make_record("BLOCK=2,VEC=1", 1.0),
                                        make_record("BLOCK=1,VEC=1", bad)}),
                      Catch::Contains("BLOCK=1,VEC=1") && Catch::Contains("finite time above 0"));
  }
  CHECK(log.count() == 0);  // the batch is all or nothing
  CHECK_NOTHROW(log.append(make_record("BLOCK=1,VEC=1", -1.0, Status::compile_error)));
  log.append(make_record("BLOCK=128,VEC=1", 0.9));
  log.append(make_record("BLOCK=256,VEC=1", 0.5));
  // A file written otherwise (an older ktune, a hand edit) may hold such times: never best.
  raw_sql(path, "UPDATE trials SET median_ms = -1 WHERE config = 'BLOCK=256,VEC=1'");
  auto best = log.best("copy", "copy|n=1024|dtype=f32", device_key_of(test::test_device()));
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=128,VEC=1");
  CHECK(log.tasks().front().best_ms == 0.9);
}

TEST_CASE("A log with a negative schema version is refused and left as it is", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("neg.db");
  { TuningLog log(path); log.append(make_record("BLOCK=1,VEC=1", 1.0)); }
  raw_sql(path, "PRAGMA user_version = -1");
  const auto size = std::filesystem::file_size(path);
  for (LogMode mode : {LogMode::read_only, LogMode::read_write})
    CHECK_THROWS_WITH(TuningLog(path, mode), Catch::Contains("schema version -1"));
  CHECK(std::filesystem::file_size(path) == size);
}

TEST_CASE("A log whose trials table another program changed is named damaged and left as it is",
          "[log]") {
  test::TempDir dir;
  struct Damage { const char* sql; const char* said; };
  const Damage damages[] = {
      // an older version number over the current table: a migration would fail on its SQL
      {"PRAGMA user_version = 2",
       "says schema version 2 but its trials table has launch, which it should not"},
      {"DROP TABLE trials", "has no trials table"},
      {"ALTER TABLE trials DROP COLUMN message", "its trials table lacks message"}};
  for (const Damage& d : damages) {
    INFO(d.sql);
    const std::string path = dir.file(std::to_string(&d - damages) + ".db");
    { TuningLog log(path); log.append(make_record("BLOCK=1,VEC=1", 1.0)); }
    raw_sql(path, d.sql);
    const auto size = std::filesystem::file_size(path);
    for (LogMode mode : {LogMode::read_only, LogMode::read_write})
      CHECK_THROWS_WITH(TuningLog(path, mode),
                        Catch::Contains("is damaged") && Catch::Contains(d.said));
    CHECK(std::filesystem::file_size(path) == size);
  }
}

TEST_CASE("A read-only open of a log with a hot rollback journal says what left it and what "
          "rolls it back",
          "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("hot.db");
  {
    TuningLog log(path);
    for (int b = 1; b <= 200; ++b)
      log.append(make_record("BLOCK=" + std::to_string(b) + ",VEC=1", 1.0));
  }
  // Another program switches the log out of WAL and dies inside a large transaction.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) _exit(2);
    for (const char* sql : {"PRAGMA journal_mode=DELETE", "PRAGMA cache_size=1",
                            "BEGIN IMMEDIATE", "UPDATE trials SET message = printf('%.*c', 3000, 'Z')"})
      if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) _exit(3);
    _exit(0);  // no commit, no rollback: the journal stays hot
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(std::filesystem::exists(path + "-journal"));
  CHECK_THROWS_WITH(TuningLog(path, LogMode::read_only),
                    Catch::Contains("has a rollback journal") &&
                        Catch::Contains("a command that writes the log"));
  // A read-write open rolls it back: the records are as they were.
  TuningLog recovered(path);
  CHECK(recovered.count() == 200);
}

TEST_CASE("Exports and reports never replace the log they read nor another database", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db"), other = dir.file("other.db");
  { TuningLog log(path); log.append(make_record("BLOCK=1,VEC=1", 1.0)); }
  { TuningLog log(other); log.append(make_record("BLOCK=2,VEC=1", 2.0)); }
  TuningLog log(path, LogMode::read_only);
  CHECK_THROWS_WITH(export_file(log, path, LogFormat::jsonl),
                    Catch::Contains("is the tuning log") && Catch::Contains("t.db"));
  CHECK_THROWS_WITH(export_file(log, path + "-wal", LogFormat::jsonl), Catch::Contains("-wal"));
  CHECK_THROWS_WITH(export_file(log, other, LogFormat::t4),
                    Catch::Contains("other.db") && Catch::Contains("SQLite database"));
  CHECK_THROWS_WITH(check_output_path(log, dir.file("./t.db")), Catch::Contains("t.db"));
  // Another database's companions: its -wal may hold committed trials not yet written back.
  std::ofstream(other + "-wal") << "not yet checkpointed";
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    CHECK_THROWS_WITH(export_file(log, other + suffix, LogFormat::jsonl),
                      Catch::Contains(std::string("the ") + suffix + " file of SQLite database") &&
                          Catch::Contains("other.db"));
  std::filesystem::create_symlink(other + "-wal", dir.file("to_other_wal.jsonl"));
  CHECK_THROWS_WITH(check_output_path(log, dir.file("to_other_wal.jsonl")),
                    Catch::Contains("-wal file of SQLite database"));
  std::ifstream wal(other + "-wal");
  CHECK(std::string(std::istreambuf_iterator<char>(wal), {}) == "not yet checkpointed");
  // A name that merely ends like one, with no database beside it, is an ordinary output.
  CHECK_NOTHROW(check_output_path(log, dir.file("notes-wal")));
  // Companions that do not exist now (a WAL log has no -journal; a closed one no -wal / -shm)
  // would still be taken for the log's by SQLite at its next open.
  for (const char* suffix : {"-journal", "-wal", "-shm"}) {
    const std::string companion = dir.file(std::string("sub/../t.db") + suffix);
    std::filesystem::create_directories(dir.file("sub"));
    CHECK_THROWS_WITH(export_file(log, companion, LogFormat::jsonl),
                      Catch::Contains("is the tuning log") && Catch::Contains(suffix));
  }
  CHECK_FALSE(std::filesystem::exists(path + "-journal"));
  // Through a link the writer would follow, dangling or not, and to a log opened by a link
  // (SQLite keeps the companions beside the file the link names).
  std::filesystem::create_symlink(path + "-journal", dir.file("dangling.jsonl"));
  CHECK_THROWS_WITH(export_file(log, dir.file("dangling.jsonl"), LogFormat::jsonl),
                    Catch::Contains("-journal"));
  std::filesystem::create_directories(dir.file("links"));
  std::filesystem::create_symlink(path, dir.file("links/linked.db"));
  TuningLog linked(dir.file("links/linked.db"), LogMode::read_only);
  CHECK_THROWS_WITH(export_file(linked, path + "-journal", LogFormat::jsonl),
                    Catch::Contains("-journal"));
  CHECK_FALSE(std::filesystem::exists(path + "-journal"));
  CHECK_NOTHROW(export_file(log, dir.file("out.jsonl"), LogFormat::jsonl));
  CHECK(TuningLog(other, LogMode::read_only).count() == 1);
  CHECK(log.count() == 1);
}

TEST_CASE("A record whose device name would break its key is refused", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  TrialRecord r = make_record("BLOCK=1,VEC=1", 1.0);
  for (const char* bad : {"A|B", "new\nline"}) {
    r.device.name = bad;
    CHECK_THROWS_WITH(log.append(r), Catch::Contains(std::string("device name '") + bad + "'"));
  }
  CHECK(log.count() == 0);
  CHECK(fits_device_key("NVIDIA H200"));
  CHECK_FALSE(fits_device_key("A|B"));
}

TEST_CASE("best() judges a config measured several times by its typical trial", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  // BLOCK=1 had one lucky search-phase trial, then three final rounds at 0.7 ms; BLOCK=2 was
  // re-measured at 0.6 ms every time: the tuner's winner, and the log's.
  for (double ms : {0.5, 0.7, 0.71, 0.7}) log.append(make_record("BLOCK=1,VEC=1", ms));
  for (double ms : {0.61, 0.6, 0.6, 0.6}) log.append(make_record("BLOCK=2,VEC=1", ms));
  log.append(make_record("BLOCK=3,VEC=1", 0.65));  // measured once: that trial is its median
  const auto best = log.best("copy", "copy|n=1024|dtype=f32", device_key_of(test::test_device()));
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=2,VEC=1");
  CHECK(best->trial.median_ms == 0.6);
  const auto typical = config_representatives(log.records());
  REQUIRE(typical.size() == 3);
  CHECK(typical[0].trial.median_ms == 0.7);  // lower median of 0.5, 0.7, 0.7, 0.71
  CHECK(typical[2].trial.median_ms == 0.65);
  // The rule alone (the dispatcher applies it to its compact index): positions in the given
  // order, the lower median, ties to the earlier trial.
  // Equal typical times: the config recorded first stays the best (a later tie does not move it).
  TuningLog tied(dir.file("tied.db"));
  tied.append(make_record("BLOCK=4,VEC=1", 0.8));
  tied.append(make_record("BLOCK=5,VEC=1", 0.8));
  CHECK(tied.best("copy", "copy|n=1024|dtype=f32", device_key_of(test::test_device()))->config_text ==
        "BLOCK=4,VEC=1");
  CHECK(typical_trial_position({0.5, 0.7, 0.71, 0.7}) == 1);
  CHECK(typical_trial_position({0.9, 0.3, 0.6}) == 2);
  CHECK(typical_trial_position({2.0, 1.0}) == 1);
  CHECK(typical_trial_position({1.0}) == 0);
  CHECK(typical_trial_position({2.0, 1.0, 1.0}) == 1);  // of equal medians, the earliest
  CHECK(typical_trial_position({1.0, 2.0, 1.0}) == 0);
  // A trial without a time (NaN) sorts after every time and is never out of range.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(typical_trial_position({nan}) == 0);
  CHECK(typical_trial_position({nan, 2.0, 1.0}) == 1);
  CHECK(typical_trial_position({2.0, nan}) == 0);
  CHECK(typical_trial_position({nan, nan, 3.0}) == 0);
  CHECK_THROWS_AS(typical_trial_position({}), Error);
}

TEST_CASE("A config that failed any of its trials is never the best, nor exported as one", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("flaky.db");
  const std::string key = "copy|n=1024|dtype=f32";
  {
    TuningLog log(path);
    log.append(make_record("BLOCK=1,VEC=1", 0.5));  // fast once, then wrong when measured again
    log.append(make_record("BLOCK=2,VEC=1", 0.8));
    log.append(make_record("BLOCK=1,VEC=1", 0.5, Status::wrong_result));
  }
  TuningLog log(path, LogMode::read_only);
  CHECK(log.best("copy", key, device_key_of(test::test_device()))->config_text == "BLOCK=2,VEC=1");
  const auto ranked = ranked_representatives(log.records());
  REQUIRE(ranked.size() == 1);
  CHECK(ranked.front().config_text == "BLOCK=2,VEC=1");
  // export --best 1: only the other config's trial is written.
  ExportSelection one;
  one.best_configs = 1;
  const std::string out = dir.file("best.jsonl");
  CHECK(export_file(log, out, LogFormat::jsonl, {}, one) == 1);
  TuningLog back(dir.file("back.db"));
  import_file(back, out);
  CHECK(back.best("copy", key, device_key_of(test::test_device()))->config_text == "BLOCK=2,VEC=1");
}

TEST_CASE("A hand-edited 32-bit field too wide for it is refused by row, never wrapped", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("wide.db"), out = dir.file("out.jsonl");
  {
    TuningLog log(path);
    log.append(make_record("BLOCK=1,VEC=1", 1.0));
    log.append(make_record("BLOCK=2,VEC=1", 2.0));
  }
  raw_sql(path, "UPDATE trials SET cc_major = 99999999999 WHERE id = 2");
  TuningLog log(path, LogMode::read_only);
  CHECK_THROWS_WITH(log.for_each({}, [](const TrialRecord&) {}),
                    Catch::Contains("wide.db") && Catch::Contains("trial id 2") &&
                        Catch::Contains("cc_major 99999999999"));
  CHECK_THROWS_WITH(export_file(log, out, LogFormat::jsonl), Catch::Contains("cc_major"));
  CHECK_FALSE(std::filesystem::exists(out));
  raw_sql(path, "UPDATE trials SET cc_major = 9, registers = -4294967296 WHERE id = 2");
  CHECK_THROWS_WITH(log.for_each({}, [](const TrialRecord&) {}), Catch::Contains("registers -4294967296"));
}

TEST_CASE("An append refuses a record whose own export would not import again", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("names.db"));
  auto refused = [&](TrialRecord r, const std::string& what) {
    INFO(what);
    CHECK_THROWS_WITH(log.append(r), Catch::Contains(what));
  };
  TrialRecord r = make_record("BLOCK=1,VEC=1", 1.0);
  r.run_id = "";
  refused(r, "run id '' is empty");
  r = make_record("BLOCK=1,VEC=1", 1.0);
  r.problem_key = "not a problem key";
  refused(r, "expected op|dim=v");
  r = make_record("BLOCK=1,VEC=1", 1.0);
  r.template_name = "my template";
  refused(r, "template name 'my template'");
  r = make_record("BLOCK=1,VEC=1", 1.0);
  r.config_text = "";
  r.trial.config = Config(std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"BM;-DX"}),
                          {1});
  refused(r, "BM;-DX");
  CHECK(log.count() == 0);
}
