// ReplayMeasurer and the Kernel Tuner cache reader on small synthetic data: statuses from
// Kernel Tuner's error strings, .json and .json.gz, truncated caches, a missing record as an
// error naming the config, T1 discovery, and searchers finding a known optimum by replay.
#include <catch2/catch.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "kernel_tuner_cache.h"
#include "ktune/error.h"
#include "ktune/replay.h"
#include "replay_metrics.h"

using namespace ktune;

namespace {

namespace fs = std::filesystem;

const char* kCache = R"({
"device_name": "Test GPU", "kernel_name": "k", "problem_size": [64, 32],
"tune_params_keys": ["bx", "t"], "tune_params": {"bx": [32, 64, 128], "t": [1, 2]},
"objective": "time",
"cache": {
"32,1": {"bx": 32, "t": 1, "time": 3.0, "times": [2.9, 3.0, 3.4]},
"32,2": {"bx": 32, "t": 2, "time": 2.0, "times": [2.0, 2.0]},
"64,1": {"bx": 64, "t": 1, "time": "CompilationFailedConfig"},
"64,2": {"bx": 64, "t": 2, "time": 1.5, "times": [1.5]},
"128,1": {"bx": 128, "t": 1, "time": "RuntimeFailedConfig"},
"128,2": {"bx": 128, "t": 2, "time": "InvalidConfig"}
}
})";

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("ktune_replay_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

SearchSpace small_space() {
  return SearchSpace::Builder().param("bx", {32, 64, 128}).param("t", {1, 2}).build();
}

}  // namespace

TEST_CASE("Kernel Tuner cache reader: fields, errors, gzip and truncation", "[replay]") {
  const auto c = kt::parse_kernel_tuner_cache(kCache, "inline");
  CHECK(c.device_name == "Test GPU");
  CHECK(c.problem_size == std::vector<std::int64_t>{64, 32});
  CHECK(c.param_names == std::vector<std::string>{"bx", "t"});
  CHECK(c.param_values[0] == std::vector<Value>{32, 64, 128});
  REQUIRE(c.entries.size() == 6);
  CHECK(*c.entries[0].time_ms == 3.0);
  CHECK(c.entries[0].times_ms.size() == 3);
  CHECK_FALSE(c.entries[2].time_ms);
  CHECK(c.entries[2].error == "CompilationFailedConfig");

  const fs::path dir = temp_dir();
  const std::string gz = (dir / "k_TestGPU.json.gz").string();
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, kCache, static_cast<unsigned>(std::strlen(kCache)));
  gzclose(f);
  CHECK(kt::read_kernel_tuner_cache(gz).entries.size() == 6);

  std::string truncated = kCache;
  truncated.resize(truncated.rfind("}\n}"));  // an interrupted run leaves the braces open
  CHECK(kt::parse_kernel_tuner_cache(truncated, "cut").entries.size() == 6);
  CHECK_THROWS_AS(kt::parse_kernel_tuner_cache("{\"cache\": {}}", "bad"), Error);
  CHECK_THROWS_AS(kt::read_kernel_tuner_cache((dir / "none.json").string()), Error);
  fs::remove_all(dir);
}

TEST_CASE("Kernel Tuner cache reader: Python's NaN and Infinity are failed entries", "[replay]") {
  // Python's json module writes non-finite floats as bare words JSON lacks; a string that
  // holds the word stays a string of that entry's own field.
  std::string text = kCache;
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("\"time\": 1.5, \"times\": [1.5]", "\"time\": NaN, \"times\": [NaN]");
  replace("\"times\": [2.0, 2.0]", "\"times\": [2.0, Infinity]");
  replace("\"kernel_name\": \"k\"", "\"kernel_name\": \"NaN Infinity\"");
  const auto c = kt::parse_kernel_tuner_cache(text, "python");
  REQUIRE(c.entries.size() == 6);
  CHECK(c.kernel_name == "NaN Infinity");
  CHECK_FALSE(c.entries[3].time_ms);
  CHECK(c.entries[3].error == "NaN");
  CHECK_FALSE(c.entries[1].time_ms);  // one sample measured nothing
  CHECK(c.entries[1].error == "Infinity");
  CHECK(kt::error_status("NaN") == Status::runtime_error);
  CHECK(kt::error_status("-Infinity") == Status::runtime_error);
  CHECK(kt::error_status("InvalidConfig") == Status::invalid);
  CHECK_FALSE(kt::error_status("Whatever"));
  // Replayed, the optimum is the best finite record left (3.0: 1.5 and 2.0 are gone).
  const fs::path dir = temp_dir();
  const std::string path = (dir / "k_python.json").string();
  std::ofstream(path) << text;
  const auto m = ReplayMeasurer::from_kernel_tuner_cache(path, small_space());
  CHECK(m.best_time_ms() == 3.0);
  fs::remove_all(dir);
  // Malformed text is still refused, as before, at its place in the text as written (not in
  // the text with the words quoted: 2 characters further per word before it).
  CHECK_THROWS_AS(kt::parse_kernel_tuner_cache("{\"cache\": NaNa}", "bad"), Error);
  const std::string stray = "{\"cache\": {\"1\": {\"bx\": 1, \"time\": NaN, \"times\": [NaN, NaN, 1.0,, 2.0]}}}";
  const std::size_t column = stray.find(",,") + 2;  // the parser stops at the second comma
  CHECK_THROWS_WITH(kt::parse_kernel_tuner_cache(stray, "stray"),
                    Catch::Contains("line 1, column " + std::to_string(column) + ":"));
}

TEST_CASE("ReplayMeasurer answers from the record with fitting statuses", "[replay]") {
  const fs::path dir = temp_dir();
  const std::string path = (dir / "k_TestGPU.json").string();
  std::ofstream(path) << kCache;
  const SearchSpace space = small_space();
  auto m = ReplayMeasurer::from_kernel_tuner_cache(path, space);
  CHECK(m.size() == 6);
  CHECK(m.best_time_ms() == 1.5);
  const auto trials = m.measure({space.parse("bx=32,t=1"), space.parse("bx=64,t=1"),
                                 space.parse("bx=128,t=1"), space.parse("bx=128,t=2")});
  CHECK(trials[0].ok());
  CHECK(trials[0].median_ms == 3.0);  // the recorded objective
  CHECK(trials[0].min_ms == 2.9);
  CHECK(trials[1].status == Status::compile_error);
  CHECK(trials[2].status == Status::runtime_error);
  CHECK(trials[3].status == Status::invalid);
  CHECK(m.evaluations() == 4);
  auto median = ReplayMeasurer::from_kernel_tuner_cache(path, space, ReplayObjective::median_of_samples);
  CHECK(median.measure({space.parse("bx=32,t=1")})[0].median_ms == 3.0);
  {
    // A record without samples keeps its recorded time under the median objective, and the
    // replay says so rather than scoring it by another statistic silently.
    const std::string bare = (dir / "bare_X.json").string();
    std::ofstream(bare) << R"({"tune_params_keys": ["bx", "t"], "tune_params": {"bx": [32, 64], "t": [1, 2]},
"cache": {
"32,1": {"bx": 32, "t": 1, "time": 1.0},
"32,2": {"bx": 32, "t": 2, "time": 4.0, "times": [2.0, 3.0, 9.0]}
}})";
    std::ostringstream said;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(said);
    spdlog::default_logger()->sinks().push_back(sink);
    auto by_median = ReplayMeasurer::from_kernel_tuner_cache(bare, space, ReplayObjective::median_of_samples);
    auto by_time = ReplayMeasurer::from_kernel_tuner_cache(bare, space, ReplayObjective::recorded);
    spdlog::default_logger()->sinks().pop_back();
    const auto trials = by_median.measure({space.parse("bx=32,t=1"), space.parse("bx=32,t=2")});
    CHECK(trials[0].median_ms == 1.0);
    CHECK(trials[1].median_ms == 3.0);
    const std::string text = said.str();
    CHECK_THAT(text, Catch::Contains("bare_X.json: 1 record has no samples; its recorded time (the mean) "
                                     "stands in for the median of samples (the first: bx=32,t=1)"));
    CHECK(text.find("no samples") == text.rfind("no samples"));  // not for the recorded objective
    CHECK(by_time.measure({space.parse("bx=32,t=2")})[0].median_ms == 4.0);
  }

  // A valid config the record lacks is an error naming it.
  const SearchSpace wider = SearchSpace::Builder().param("bx", {32, 64, 128, 256}).param("t", {1, 2}).build();
  auto w = ReplayMeasurer::from_kernel_tuner_cache(path, wider);
  try {
    w.measure({wider.parse("bx=256,t=1")});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::not_found);
    CHECK_THAT(e.what(), Catch::Contains("bx=256,t=1"));
  }
  // Records outside a narrower space are ignored, not used.
  const SearchSpace narrow = SearchSpace::Builder().param("bx", {32, 64}).param("t", {1, 2}).build();
  auto n = ReplayMeasurer::from_kernel_tuner_cache(path, narrow);
  CHECK(n.size() == 4);
  CHECK(n.ignored() == 2);

  std::ofstream(dir / "k.T1.json") << "{}";
  CHECK(find_t1_beside(path) == (dir / "k.T1.json").string());
  CHECK_FALSE(find_t1_beside((dir / "other_X.json").string()));
  fs::remove_all(dir);
}

TEST_CASE("ReplayMeasurer refuses impossible times and records that collide in the space",
          "[replay]") {
  const fs::path dir = temp_dir();
  // Times of zero, below zero and NaN-like strings no measurement gives: failures, never the
  // optimum (the fastest real record, 2.0 ms, stays the optimum).
  const std::string odd = (dir / "odd_X.json").string();
  std::ofstream(odd) << R"({"tune_params_keys": ["bx", "t"], "tune_params": {"bx": [32, 64], "t": [1, 2]},
"cache": {
"32,1": {"bx": 32, "t": 1, "time": 0.0},
"32,2": {"bx": 32, "t": 2, "time": -1.0},
"64,1": {"bx": 64, "t": 1, "time": 2.0},
"64,2": {"bx": 64, "t": 2, "time": 3.0, "times": [0.0, -2.0, 0.0]}
}})";
  const SearchSpace space = SearchSpace::Builder().param("bx", {32, 64}).param("t", {1, 2}).build();
  auto m = ReplayMeasurer::from_kernel_tuner_cache(odd, space);
  CHECK(m.best_time_ms() == 2.0);
  const auto trials = m.measure({space.parse("bx=32,t=1"), space.parse("bx=32,t=2")});
  CHECK(trials[0].status == Status::runtime_error);
  CHECK_THAT(trials[0].message, Catch::Contains("replayed time 0 ms"));
  CHECK(trials[1].status == Status::runtime_error);
  CHECK_THAT(trials[1].message, Catch::Contains("-1 ms"));
  // The median of samples that are all zero or below is no time either.
  auto median = ReplayMeasurer::from_kernel_tuner_cache(odd, space, ReplayObjective::median_of_samples);
  CHECK(median.measure({space.parse("bx=64,t=2")})[0].status == Status::runtime_error);
  // A record whose time is no time is broken under either objective, however good its samples.
  const std::string broken = (dir / "broken_X.json").string();
  std::ofstream(broken) << R"({"tune_params_keys": ["bx", "t"], "tune_params": {"bx": [32, 64], "t": [1, 2]},
"cache": {
"32,1": {"bx": 32, "t": 1, "time": -1.0, "times": [1.0, 1.0, 1.0]},
"64,1": {"bx": 64, "t": 1, "time": 2.0, "times": [2.0, 2.0, 2.0]}
}})";
  for (const auto objective : {ReplayObjective::recorded, ReplayObjective::median_of_samples}) {
    auto b = ReplayMeasurer::from_kernel_tuner_cache(broken, space, objective);
    CHECK(b.measure({space.parse("bx=32,t=1")})[0].status == Status::runtime_error);
    CHECK(b.best_time_ms() == 2.0);
  }
  const auto times = m.outcome_times();
  CHECK(std::count_if(times.begin(), times.end(), [](double t) { return std::isfinite(t); }) == 2);

  // A space without 't' maps "32,1" and "32,2" onto one config: refused, naming 't'.
  const std::string path = (dir / "k_TestGPU.json").string();
  std::ofstream(path) << kCache;
  const SearchSpace only_bx = SearchSpace::Builder().param("bx", {32, 64, 128}).build();
  try {
    (void)ReplayMeasurer::from_kernel_tuner_cache(path, only_bx);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("bx=32") && Catch::Contains("'t'"));
  }
  // The same from records given directly.
  RecordedResult ok;
  ok.time_ms = 1.0;
  CHECK_THROWS_WITH(ReplayMeasurer(only_bx, {{only_bx.parse("bx=32"), ok}, {only_bx.parse("bx=32"), ok}}, "direct"),
                    Catch::Contains("direct: two records give config bx=32"));
  fs::remove_all(dir);
}

TEST_CASE("replayed searchers find the known optimum of a synthetic space", "[replay]") {
  // 8 x 8 x 4 space; the time is a product of per-parameter factors with its optimum at
  // a=5, b=2, c=3; configs with a+b > 12 fail.
  const SearchSpace space = SearchSpace::Builder()
                                .param("a", {0, 1, 2, 3, 4, 5, 6, 7})
                                .param("b", {0, 1, 2, 3, 4, 5, 6, 7})
                                .param("c", {0, 1, 2, 3})
                                .constraint("a + c != 10")
                                .build();
  std::vector<std::pair<Config, RecordedResult>> records;
  space.for_each_valid([&](Index, const Config& c) {
    RecordedResult r;
    if (c["a"] + c["b"] > 12) {
      r.status = Status::runtime_error;
    } else {
      r.time_ms = (1 + 0.3 * std::abs(c["a"] - 5)) * (1 + 0.2 * std::abs(c["b"] - 2)) *
                  (1 + 0.5 * std::abs(c["c"] - 3));
    }
    records.emplace_back(c, r);
  });
  ReplayMeasurer m(space, records, "synthetic");
  REQUIRE(m.best_time_ms() == 1.0);
  const replay::RandomSearchExpectation random(m.outcome_times());
  for (const char* name : {"genetic", "annealing", "bayesian"}) {
    INFO(name);
    auto s = make_searcher(name);
    std::vector<ReplayRun> runs;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) runs.push_back(replay_search(*s, m, seed, 60, 2));
    const auto fractions = replay::fractions_at(runs, 60, 1.0);
    const double mean = replay::mean_confidence_95(fractions).mean;
    CHECK(mean > random.expected_fraction(60));
    CHECK(mean > 0.9);
  }
  auto ex = make_searcher("exhaustive");
  const ReplayRun all = replay_search(*ex, m, 1, 10000, 16);
  CHECK(all.best_ms.size() == m.size());
  CHECK(all.best_ms.back() == 1.0);
}
