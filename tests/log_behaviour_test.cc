// Tuning-log behaviour pinned down by a mutation audit: best() ranking, ties and the usable
// callback, infinite or missing medians, append_absent's identity of a record, runs(),
// write-ahead-log and folder checks at open, and export's refusal of the log's own files.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ktune/error.h"
#include "ktune/log.h"
#include "log_fixtures.h"

using namespace ktune;
using ktune::test::make_record;

namespace {

const std::string kProblem = "copy|n=1024|dtype=f32";

}  // namespace

TEST_CASE("log: an ok trial stored with an infinite median is never best, nor a task's best",
          "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  TuningLog log(path);
  log.append(make_record("BLOCK=1,VEC=1", 0.5));
  test::raw_sql(path, "UPDATE trials SET median_ms = 9e999");  // +inf, as an old writer could
  CHECK_FALSE(log.best("copy", kProblem, device_key_of(test::test_device())));
  REQUIRE(log.tasks().size() == 1);
  CHECK_FALSE(log.tasks().front().best_ms);
}

TEST_CASE("log: best() without a preferred source ranks a record with no source hash alike",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto slow = make_record("BLOCK=1,VEC=1", 0.9);
  slow.source_hash = "";  // e.g. an imported Kernel Tuner or T4 record
  log.append(slow);
  log.append(make_record("BLOCK=2,VEC=1", 0.5));
  const auto best = log.best("copy", kProblem, device_key_of(test::test_device()));
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=2,VEC=1");
}

TEST_CASE("log: best() sends a tie among many configs to the one recorded first",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  // BLOCK=37 first, then the others from 64 down: first in neither text nor numeric order.
  std::vector<TrialRecord> batch{make_record("BLOCK=37,VEC=1", 0.8)};
  for (int b = 64; b >= 1; --b)
    if (b != 37) batch.push_back(make_record("BLOCK=" + std::to_string(b) + ",VEC=1", 0.8));
  log.append_batch(batch);
  const auto best = log.best("copy", kProblem, device_key_of(test::test_device()));
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=37,VEC=1");
}

TEST_CASE("log: append_absent keeps re-measurements that differ in timestamp or median",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  const auto a = make_record("BLOCK=1,VEC=1", 0.8);
  auto later = a;
  later.trial.timestamp_us += 1;
  auto slower = a;
  slower.trial.median_ms = 0.9;
  CHECK(log.append_absent({a, later, slower}).size() == 3);
  CHECK(log.append_absent({a, later, slower}).size() == 0);  // a re-import adds nothing
  CHECK(log.count() == 3);
  // A trial that differs only in its timestamp, in a later import of its own (a later T4 file
  // of the same kernel), is another measurement too, not a batch-mate held already.
  auto a_second_later = a;
  a_second_later.trial.timestamp_us += 1000000;
  CHECK(log.append_absent({a_second_later}).size() == 1);
  CHECK(log.count() == 4);
}

TEST_CASE("log: append_absent keeps equal records of one batch, the log's copies answer for them",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  // Two trials that agree in everything compared (a replay answers a re-measured config with
  // the same time, unstamped): an export of them holds both, and an import must too.
  const auto a = make_record("BLOCK=1,VEC=1", 0.8);
  CHECK(log.append_absent({a, a}) == std::vector<std::size_t>{0, 1});
  CHECK(log.count() == 2);
  CHECK(log.append_absent({a, a}).empty());             // the same batch again adds nothing
  CHECK(log.append_absent({a, a, a}) == std::vector<std::size_t>{2});  // one more than held
  CHECK(log.count() == 3);
}

TEST_CASE("log: runs() lists runs in order of first appearance with their time span",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto b1 = make_record("BLOCK=1,VEC=1", 0.8, Status::ok, "run-b");
  auto a1 = make_record("BLOCK=2,VEC=1", 0.8, Status::ok, "run-a");
  auto b2 = make_record("BLOCK=3,VEC=1", 0.8, Status::ok, "run-b");
  b1.trial.timestamp_us = 1000;
  a1.trial.timestamp_us = 1500;
  b2.trial.timestamp_us = 3000;
  log.append(b1);
  log.append(a1);
  log.append(b2);
  const auto runs = log.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].run_id == "run-b");
  CHECK(runs[0].trials == 2);
  CHECK(runs[0].first_us == 1000);
  CHECK(runs[0].last_us == 3000);
  CHECK(runs[1].run_id == "run-a");
}

TEST_CASE("log: a write-ahead log holding only its 32-byte header does not block a new log",
          "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  {
    std::ofstream wal(path + "-wal", std::ios::binary);
    const std::string header(32, '\0');
    wal.write(header.data(), 32);
  }
  TuningLog log(path);
  log.append(make_record("BLOCK=1,VEC=1", 0.8));
  CHECK(log.count() == 1);
}

TEST_CASE("log: a folder in place of the log is named as such", "[log]") {
  test::TempDir dir;
  try {
    TuningLog log(dir.path.string());
    FAIL("opened a folder");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("a folder"));
  }
}

TEST_CASE("log: a failed trial's missing median reads back as NaN, an unknown status as not ok",
          "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  TuningLog log(path);
  auto failed = make_record("BLOCK=1,VEC=1", std::nan(""), Status::compile_error);
  log.append(failed);
  log.append(make_record("BLOCK=2,VEC=1", 0.8));
  auto all = log.records();
  REQUIRE(all.size() == 2);
  CHECK(std::isnan(all[0].trial.median_ms));
  test::raw_sql(path, "UPDATE trials SET status = 'finished' WHERE config = 'BLOCK=2,VEC=1'");
  all = log.records();
  CHECK(all[1].trial.status == Status::invalid);
  // Read as invalid, it is also found as invalid, and by no other status.
  LogFilter invalid;
  invalid.status = Status::invalid;
  const auto found = log.records(invalid);
  REQUIRE(found.size() == 1);
  CHECK(found[0].config_text == "BLOCK=2,VEC=1");
  CHECK(log.count(invalid) == 1);
  invalid.status = Status::compile_error;
  CHECK(log.count(invalid) == 1);
  invalid.status = Status::ok;
  CHECK(log.count(invalid) == 0);
}

TEST_CASE("log: a tie goes to the config recorded first, not the first by config text",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append(make_record("BLOCK=5,VEC=1", 0.8));
  log.append(make_record("BLOCK=4,VEC=1", 0.8));
  const auto best = log.best("copy", kProblem, device_key_of(test::test_device()));
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=5,VEC=1");
  const auto typical = config_representatives(log.records());
  REQUIRE(typical.size() == 2);
  CHECK(typical[0].config_text == "BLOCK=5,VEC=1");  // in order of first appearance
}

TEST_CASE("log: an export never writes over the log's -shm file", "[log]") {
  test::TempDir dir;
  const std::string path = dir.file("t.db");
  TuningLog log(path);
  log.append(make_record("BLOCK=1,VEC=1", 0.8));
  REQUIRE(std::filesystem::exists(path + "-shm"));
  CHECK_THROWS_WITH(export_file(log, path + "-shm", LogFormat::jsonl),
                    Catch::Contains("-shm"));
}

TEST_CASE("log: best() skips configs the caller cannot use", "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append(make_record("BLOCK=1,VEC=1", 0.5));
  log.append(make_record("BLOCK=2,VEC=1", 0.8));
  const auto best = log.best("copy", kProblem, device_key_of(test::test_device()), "",
                             [](const TrialRecord& r) { return r.config_text != "BLOCK=1,VEC=1"; });
  REQUIRE(best);
  CHECK(best->config_text == "BLOCK=2,VEC=1");
}

TEST_CASE("log: append_absent recognises a record it stored from trial.config",
          "[log]") {
  // append()/append_batch()/append_absent() store trial.config.str() when config_text is
  // empty, but the held-check compares the empty config_text with the stored text, so the
  // same record is added again on every call.
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto r = make_record("BLOCK=1,VEC=1", 0.8);
  r.config_text.clear();
  CHECK(log.append_absent({r}).size() == 1);
  CHECK(log.append_absent({r}).size() == 0);
  CHECK(log.count() == 1);
}

TEST_CASE("log: append refuses a config text import would refuse, or one trial.config contradicts",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto unparsable = make_record("BLOCK=1,VEC=1", 0.8);
  unparsable.config_text = "BLOCK=1e3,VEC=1";
  unparsable.trial.config = Config();
  CHECK_THROWS_WITH(log.append(unparsable), Catch::Contains("'1e3'") && Catch::Contains("BLOCK"));
  auto contradicting = make_record("BLOCK=1,VEC=1", 0.8);
  contradicting.config_text = "BLOCK=2,VEC=1";
  CHECK_THROWS_WITH(log.append_batch({make_record("BLOCK=4,VEC=1", 0.7), contradicting}),
                    Catch::Contains("name different configs"));
  CHECK(log.count() == 0);  // the batch is all or nothing
  // A record with only trial.config (the text is derived) or matching ones goes in, and the
  // log's own export imports again.
  auto derived = make_record("BLOCK=8,VEC=1", 0.6);
  derived.config_text.clear();
  log.append(derived);
  log.append(make_record("BLOCK=16,VEC=1", 0.5));
  const std::string out = dir.file("x.jsonl");
  export_file(log, out, LogFormat::jsonl);
  TuningLog again(dir.file("again.db"));
  CHECK(import_file(again, out).records == 2);
}

TEST_CASE("log: an append from a for_each visitor and a moved-from log are errors, not hangs",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append(make_record("BLOCK=1,VEC=1", 0.8));
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(log.for_each({}, [&](const TrialRecord& r) {
    auto copy = r;
    copy.trial.median_ms = 0.5;
    log.append(copy);
  }), Catch::Contains("from inside a for_each visitor"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));  // not the busy wait
  log.append(make_record("BLOCK=2,VEC=1", 0.7));  // after the visit, appends work again
  CHECK(log.count() == 2);

  TuningLog moved(std::move(log));
  CHECK(moved.count() == 2);
  CHECK_THROWS_WITH(log.count(), Catch::Contains("moved from"));  // NOLINT: use after move on purpose
}

namespace {

/// A record of `config` at `ms`, timed as `launch` says.
TrialRecord timed(const std::string& config, double ms, LaunchForm launch,
                  Status status = Status::ok) {
  TrialRecord r = make_record(config, ms, status);
  r.trial.launch = launch;
  return r;
}

}  // namespace

TEST_CASE("log: configs are ranked by the trials of one launch way, never across the two",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  const std::string device = device_key_of(test::test_device());
  // BLOCK=1 is fastest only when launched programmatically; BLOCK=2 was timed both ways and
  // is typically 0.60 ms on a plain launch; BLOCK=3, without a recorded form, counts as plain;
  // BLOCK=4 is the fastest plain config but failed when launched programmatically.
  log.append_batch({timed("BLOCK=1,VEC=1", 0.50, LaunchForm::programmatic_graph),
                    timed("BLOCK=2,VEC=1", 0.60, LaunchForm::stream),
                    timed("BLOCK=2,VEC=1", 0.45, LaunchForm::programmatic),
                    timed("BLOCK=2,VEC=1", 0.62, LaunchForm::graph),
                    timed("BLOCK=3,VEC=1", 0.58, LaunchForm::unknown),
                    timed("BLOCK=4,VEC=1", 0.30, LaunchForm::stream),
                    timed("BLOCK=4,VEC=1", 0.30, LaunchForm::programmatic, Status::wrong_result)});
  const auto plain = log.best("copy", kProblem, device);
  REQUIRE(plain);
  CHECK(plain->config_text == "BLOCK=3,VEC=1");  // 0.58 beats BLOCK=2's typical plain 0.60
  CHECK(plain->trial.launch == LaunchForm::unknown);
  const auto programmatic = log.best("copy", kProblem, device, "", {}, true);
  REQUIRE(programmatic);
  CHECK(programmatic->config_text == "BLOCK=2,VEC=1");
  CHECK(programmatic->trial.median_ms == 0.45);
  CHECK(programmatic->trial.launch == LaunchForm::programmatic);

  // The filter itself: the wanted way's ok trials and every failure, in log order.
  const auto records = log.records();
  std::vector<double> kept;
  for (const auto& r : trials_ranked_for_launch(records, true)) kept.push_back(r.trial.median_ms);
  CHECK(kept == std::vector<double>{0.50, 0.45, 0.30});
  kept.clear();
  for (const auto& r : trials_ranked_for_launch(records, false)) kept.push_back(r.trial.median_ms);
  CHECK(kept == std::vector<double>{0.60, 0.62, 0.58, 0.30, 0.30});
}

TEST_CASE("log: a task timed only one way still ranks for a launcher of the other way",
          "[log]") {
  test::TempDir dir;
  TuningLog log(dir.file("t.db"));
  const std::string device = device_key_of(test::test_device());
  log.append_batch({timed("BLOCK=1,VEC=1", 0.50, LaunchForm::programmatic),
                    timed("BLOCK=2,VEC=1", 0.40, LaunchForm::programmatic),
                    timed("BLOCK=3,VEC=1", 0.20, LaunchForm::stream, Status::timeout)});
  for (const bool programmatic : {false, true}) {
    INFO("programmatic launch " << programmatic);
    const auto best = log.best("copy", kProblem, device, "", {}, programmatic);
    REQUIRE(best);
    CHECK(best->config_text == "BLOCK=2,VEC=1");
  }
  // Only failures of the wanted way: the other way's ok trials stay.
  CHECK(trials_ranked_for_launch(log.records(), false).size() == 3);
}
