// Warm start from the tuning log: nearest_shape_configs() picks the winners of the nearest
// comparable shapes tuned on the same device, carried into the new problem's space, and
// `ktune tune` measures them right after the default (`--warm-start N`, 0 = off).
#include <algorithm>
#include <sstream>

#include <catch2/catch.hpp>

#include "cli_fixtures.h"
#include "ktune/build.h"
#include "ktune/log.h"
#include "ktune/template.h"
#include "ktune/warm_start.h"

using namespace ktune;
using test::TempDir;

namespace {

/// A record of the copy template for `n` elements of `dtype`, measured at `ms`.
TrialRecord copy_record(std::int64_t n, const std::string& config, double ms,
                        const std::string& dtype = "f32", const Device& device = Device::h200(),
                        const std::string& source = "") {
  const auto copy = find_template("copy");
  const Problem problem = make_problem(*copy, std::to_string(n), {{"dtype", dtype}});
  TrialRecord r = test::make_record(config, ms, Status::ok, "run-w", problem.key(), "copy", device);
  r.source_hash = source.empty() ? Builder::source_hash(copy->source()) : source;
  return r;
}

std::vector<std::string> texts(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const auto& c : configs) out.push_back(c.str());
  return out;
}

}  // namespace

TEST_CASE("warm start: the winners of the nearest comparable shapes, nearest first",
          "[warm_start]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  Device h100 = Device::h200();
  h100.name = "NVIDIA H100";
  log.append_batch({
      copy_record(1 << 20, "VEC=4,THREADS=1024,ITEMS=4,GRID_STRIDE=0", 0.10),
      copy_record(1 << 20, "VEC=2,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.20),
      copy_record(1 << 22, "VEC=4,THREADS=512,ITEMS=2,GRID_STRIDE=0", 0.30),
      copy_record(1 << 22, "VEC=1,THREADS=64,ITEMS=1,GRID_STRIDE=0", 0.01, "f32", Device::h200(),
                  "an-older-source"),                                                 // older source
      copy_record(1 << 24, "VEC=4,THREADS=512,ITEMS=2,GRID_STRIDE=0", 1.0),           // a repeat
      copy_record(1 << 26, "VEC=4,THREADS=128,ITEMS=8,GRID_STRIDE=1", 4.0),           // farthest
      copy_record(1 << 21, "VEC=1,THREADS=64,ITEMS=8,GRID_STRIDE=1", 0.01, "f16"),    // other dtype
      copy_record(1 << 21, "VEC=1,THREADS=64,ITEMS=4,GRID_STRIDE=1", 0.01, "f32", h100),  // other GPU
      copy_record(1 << 21, "VEC=1,THREADS=128,ITEMS=1,GRID_STRIDE=1", 0.01),          // this problem
  });
  const auto copy = find_template("copy");
  const Problem problem = make_problem(*copy, std::to_string(1 << 21), {{"dtype", "f32"}});
  const SearchSpace space = copy->space(problem, Device::h200());

  // 2^20 and 2^22 are both one octave away (2^20's key sorts first); 2^24 repeats 2^22's
  // winner and is passed over; 2^26 is next.
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), space, 3)) ==
        std::vector<std::string>{"VEC=4,THREADS=1024,ITEMS=4,GRID_STRIDE=0",
                                 "VEC=4,THREADS=512,ITEMS=2,GRID_STRIDE=0",
                                 "VEC=4,THREADS=128,ITEMS=8,GRID_STRIDE=1"});
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), space, 1)) ==
        std::vector<std::string>{"VEC=4,THREADS=1024,ITEMS=4,GRID_STRIDE=0"});
  CHECK(nearest_shape_configs(log, *copy, problem, Device::h200(), space, 0).empty());

  // A space without 1024-thread blocks (a replay's narrowed space, another device): 2^20 gives
  // its best config that this space holds.
  SearchSpace::Builder narrow;
  narrow.param("VEC", {1, 2, 4}, 4)
      .param("THREADS", {64, 128, 256, 512}, 256)
      .param("ITEMS", {1, 2, 4, 8}, 1)
      .param("GRID_STRIDE", {0, 1}, 0);
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), narrow.build(), 2)) ==
        std::vector<std::string>{"VEC=2,THREADS=256,ITEMS=1,GRID_STRIDE=0",
                                 "VEC=4,THREADS=512,ITEMS=2,GRID_STRIDE=0"});

  // On the H100 the log holds only this problem itself: nothing to start from.
  CHECK(nearest_shape_configs(log, *copy, problem, h100, space, 3).empty());
}

TEST_CASE("cli: tune starts a new shape from the nearest tuned shape's winner, --warm-start 0 does not",
          "[cli][replay][warm_start]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  constexpr std::int64_t kFirst = 1 << 20, kSecond = 1 << 22;
  test::write_recorded_copy_db(recorded, {kFirst, kSecond});
  auto plan = [&](std::int64_t n, int budget) {
    const std::string path = dir.file("plan-" + std::to_string(n) + ".json");
    test::write_text(path, "[{\"template\": \"copy\", \"shape\": \"" + std::to_string(n) +
                               "\", \"dtype\": \"f32\", \"budget\": " + std::to_string(budget) + "}]");
    return path;
  };
  for (int warm : {1, 0}) {
    INFO("--warm-start " << warm);
    const std::string out = dir.file("out-" + std::to_string(warm) + ".db");
    // The first shape tuned exhaustively, so its winner is the recorded optimum.
    auto first = test::run_ktune(dir, "tune --plan " + plan(kFirst, 0) + " --replay " + recorded +
                                          " --db " + out + " --searcher exhaustive --progress 0");
    INFO(first.output);
    REQUIRE(first.status == 0);
    auto second = test::run_ktune(dir, "tune --plan " + plan(kSecond, 3) + " --replay " + recorded +
                                           " --db " + out + " --searcher random --progress 0" +
                                           " --warm-start " + std::to_string(warm));
    INFO(second.output);
    REQUIRE(second.status == 0);
    CHECK((second.output.find("warm start: the winners of the nearest tuned shapes (1 config)") !=
           std::string::npos) == (warm == 1));
    CHECK((second.output.find("warm start: 1 of 1 config measured") != std::string::npos) == (warm == 1));
    // The second trial of the new shape (after the default) is the first shape's winner.
    TuningLog log(out, LogMode::read_only);
    const auto copy = find_template("copy");
    const std::string first_key = make_problem(*copy, std::to_string(kFirst), {{"dtype", "f32"}}).key();
    const std::string second_key = make_problem(*copy, std::to_string(kSecond), {{"dtype", "f32"}}).key();
    const auto winner = log.best("copy", first_key, Device::h200().key());
    REQUIRE(winner);
    LogFilter task;
    task.problem_key = second_key;
    const auto trials = log.records(task);
    REQUIRE(trials.size() == 3);
    CHECK((trials[1].config_text == winner->config_text) == (warm == 1));
  }
  // A budget that the default fills: the header names the candidate, the summary that none of
  // it was measured.
  const std::string out = dir.file("out-budget.db");
  REQUIRE(test::run_ktune(dir, "tune --plan " + plan(kFirst, 0) + " --replay " + recorded + " --db " + out +
                                   " --searcher exhaustive --progress 0").status == 0);
  auto tight = test::run_ktune(dir, "tune --plan " + plan(kSecond, 1) + " --replay " + recorded + " --db " +
                                        out + " --searcher random --progress 0");
  INFO(tight.output);
  REQUIRE(tight.status == 0);
  CHECK(tight.output.find("(1 config)") != std::string::npos);
  CHECK(tight.output.find("warm start: 0 of 1 config measured") != std::string::npos);
}

TEST_CASE("warm start: only the nearest problems are asked when their winners coincide",
          "[warm_start]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  const auto copy = find_template("copy");
  const std::int64_t n = std::int64_t{1} << 20;
  // Problems n + 1 ... n + 40 elements all share one winner; the farthest has its own.
  std::vector<TrialRecord> records;
  const std::int64_t far = n + 1 + static_cast<std::int64_t>(kNeighboursAskedPerConfig) * 2 + 10;
  for (std::int64_t m = n + 1; m < far; ++m)
    records.push_back(copy_record(m, "VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.1));
  records.push_back(copy_record(far, "VEC=2,THREADS=512,ITEMS=2,GRID_STRIDE=1", 0.1));
  log.append_batch(records);
  const Problem problem = make_problem(*copy, std::to_string(n), {{"dtype", "f32"}});
  const SearchSpace space = copy->space(problem, Device::h200());
  // Two configs wanted: the nearest 2 * kNeighboursAskedPerConfig problems are asked and give
  // one; the far problem's winner is not reached.
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), space, 2)) ==
        std::vector<std::string>{"VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0"});
  // Wanting as many configs as there are problems asks every one.
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), space, records.size())) ==
        std::vector<std::string>{"VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0",
                                 "VEC=2,THREADS=512,ITEMS=2,GRID_STRIDE=1"});
}

TEST_CASE("warm start: shapes equally far up and down tie by problem key, as the dispatcher's",
          "[warm_start]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  const auto copy = find_template("copy");
  // 20 -> 10 and 20 -> 40 are both one octave; in floating point log2(20/10) and log2(40/20)
  // differ in the last bit unless rounded.
  log.append_batch({copy_record(40, "VEC=2,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.1),
                    copy_record(10, "VEC=1,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.1)});
  const Problem problem = make_problem(*copy, "20", {{"dtype", "f32"}});
  const SearchSpace space = copy->space(problem, Device::h200());
  const auto configs = nearest_shape_configs(log, *copy, problem, Device::h200(), space, 1);
  REQUIRE(configs.size() == 1);
  CHECK(configs.front().str() == "VEC=1,THREADS=256,ITEMS=1,GRID_STRIDE=0");  // copy|N=10 first
}

TEST_CASE("warm start: a neighbour's winner is the one of the way the new run times",
          "[warm_start]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto timed = [](const std::string& config, double ms, LaunchForm launch) {
    TrialRecord r = copy_record(1 << 20, config, ms);
    r.trial.launch = launch;
    return r;
  };
  log.append_batch(
      {timed("VEC=4,THREADS=1024,ITEMS=4,GRID_STRIDE=0", 0.10, LaunchForm::programmatic),
       timed("VEC=2,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.20, LaunchForm::stream)});
  const auto copy = find_template("copy");
  const Problem problem = make_problem(*copy, std::to_string(1 << 21), {{"dtype", "f32"}});
  const SearchSpace space = copy->space(problem, Device::h200());
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), space, 1)) ==
        std::vector<std::string>{"VEC=2,THREADS=256,ITEMS=1,GRID_STRIDE=0"});
  CHECK(texts(nearest_shape_configs(log, *copy, problem, Device::h200(), space, 1, true)) ==
        std::vector<std::string>{"VEC=4,THREADS=1024,ITEMS=4,GRID_STRIDE=0"});
}
