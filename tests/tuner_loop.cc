// CPU tests of the tuning loop with a scripted measurer: the default is measured first, every
// trial is recorded and observed, budgets stop the run, resume never re-measures, progress is
// reported, wrong results never win, and the finalists are re-measured interleaved.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>

#include <map>

#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/tuner.h"
#include "tuner_list_searcher.h"

using namespace ktune;
using namespace ktune::testing;

namespace {

/// Time = 1 + |A - 5| + B/10 ms; A == 7 is a wrong result, A == 8 times out. Keeps a log of
/// every batch it was asked to measure.
class ScriptedMeasurer : public Measurer {
 public:
  std::vector<Trial> measure(const std::vector<Config>& batch) override {
    batches.push_back({});
    std::vector<Trial> out;
    for (const auto& c : batch) {
      batches.back().push_back(c.str());
      Trial t;
      t.config = c;
      Value a = c["A"], b = c["B"];
      if (a == 7) {
        t.status = Status::wrong_result;
        t.error_norm = 0.3;
      } else if (a == 8) {
        t.status = Status::timeout;
      } else {
        t.status = Status::ok;
        double ms = 1 + std::abs(static_cast<double>(a - 5)) + static_cast<double>(b) / 10;
        if (a == 6) ms = 0.5;  // fastest by its first number...
        if (a == 6 && ++remeasures_of_6 > 1) ms = 3;  // ...but slower when measured again
        t.times_ms = {ms, ms * 1.01, ms * 0.99};
        summarize_times(t);
      }
      out.push_back(t);
    }
    return out;
  }
  std::vector<std::vector<std::string>> batches;
  int remeasures_of_6 = 0;
};

SearchSpace test_space() {
  SearchSpace::Builder b;
  b.param("A", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0).param("B", {0, 1, 2}, 2);
  return b.build();
}

}  // namespace

TEST_CASE("tuner: default first, every trial recorded and observed, winner re-measured", "[tuner]") {
  auto space = test_space();
  ListSearcher searcher(all_valid(space));
  ScriptedMeasurer measurer;
  CollectingSink sink;
  TunerOptions o;
  o.max_trials = 0;  // whole space
  o.batch = 4;
  o.top_k = 3;
  o.final_rounds = 2;
  o.record_final = false;
  std::vector<TuneProgress> progress;
  o.progress = [&](const TuneProgress& p) { progress.push_back(p); };
  Tuner tuner(space, searcher, measurer, o);
  tuner.set_sink(&sink);
  auto r = tuner.run();

  REQUIRE(measurer.batches.size() >= 2);
  CHECK(measurer.batches[0] == std::vector<std::string>{"A=0,B=2"});  // the default first
  CHECK(r.trials.size() == 30);          // default + 29 others, none twice
  CHECK(sink.trials.size() == 30);       // every trial recorded
  CHECK(searcher.observed.size() == 31); // default observed, and again when proposed
  CHECK(r.stop_reason == "exhausted");
  CHECK(r.status_counts[Status::wrong_result] == 3);
  CHECK(r.status_counts[Status::timeout] == 3);
  REQUIRE(r.default_trial);
  CHECK(r.default_trial->config.str() == "A=0,B=2");

  // A=6 looked fastest once but was slower in both interleaved rounds: A=5,B=0 wins.
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=5,B=0");
  CHECK(r.best->ok());
  CHECK(r.finalists.size() == 3);
  CHECK(r.finalists.front().config.str() == "A=5,B=0");
  // The finalists' re-measurement alternates configs within each round: each of the last
  // final_rounds (2) batches measures every finalist exactly once.
  std::vector<std::string> finalists;
  for (const auto& f : r.finalists) finalists.push_back(f.config.str());
  std::sort(finalists.begin(), finalists.end());
  REQUIRE(measurer.batches.size() >= 2 + 1);
  for (std::size_t k = measurer.batches.size() - 2; k < measurer.batches.size(); ++k) {
    auto round = measurer.batches[k];
    std::sort(round.begin(), round.end());
    CHECK(round == finalists);
  }
  CHECK(r.speedup() == Approx(6.2 / 1.0));
  CHECK_FALSE(r.top_two_within_noise);  // 1.0 vs 1.1 with 1% noise

  REQUIRE_FALSE(progress.empty());
  CHECK(progress.back().done == 30);
  CHECK(progress.back().budget == 30);
  CHECK(progress.back().failures == 6);
  CHECK(progress.back().default_ms == Approx(6.2));
  CHECK(progress.back().speedup > 1);
}

TEST_CASE("tuner: a wrong result is never the best even when it is the only fast one", "[tuner]") {
  auto space = test_space();
  auto c = [&](const char* text) { return space.parse(text); };
  ListSearcher searcher({c("A=7,B=0"), c("A=9,B=0"), c("A=8,B=0")});
  ScriptedMeasurer measurer;
  TunerOptions o;
  o.measure_default = false;
  o.top_k = 0;
  auto r = Tuner(space, searcher, measurer, o).run();
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=9,B=0");
}

TEST_CASE("tuner: a measurer that breaks its contract is named, its impossible times never win",
          "[tuner]") {
  auto space = test_space();
  auto c = [&](const char* text) { return space.parse(text); };
  // An ok trial with a NaN, zero or negative median is a failed trial: it neither wins nor
  // reorders the finalists.
  struct Impossible : ScriptedMeasurer {
    std::vector<Trial> measure(const std::vector<Config>& batch) override {
      auto out = ScriptedMeasurer::measure(batch);
      for (auto& t : out)
        if (t.config["A"] == 0) t.median_ms = std::nan("");
        else if (t.config["A"] == 1) t.median_ms = 0;
        else if (t.config["A"] == 2) t.median_ms = -1;
      return out;
    }
  } impossible;
  ListSearcher searcher({c("A=0,B=0"), c("A=1,B=0"), c("A=2,B=0"), c("A=4,B=1"), c("A=5,B=2")});
  TunerOptions o;
  o.measure_default = false;
  o.top_k = 5;
  auto r = Tuner(space, searcher, impossible, o).run();
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=5,B=2");
  CHECK(r.status_counts[Status::runtime_error] == 3);
  for (const auto& t : r.trials)
    if (t.config["A"] <= 2) CHECK_THAT(t.message, Catch::Contains("not a finite time > 0"));
  REQUIRE(r.finalists.size() == 2);
  CHECK(r.finalists[0].median_ms <= r.finalists[1].median_ms);

  // A measurer that answers nothing, or for other configs, stops the run with an Error.
  struct Silent : Measurer {
    std::vector<Trial> measure(const std::vector<Config>&) override { return {}; }
  } silent;
  ListSearcher s2(all_valid(space));
  CHECK_THROWS_WITH(Tuner(space, s2, silent, o).run(), Catch::Contains("returned 0 trials for"));
  struct Other : ScriptedMeasurer {
    std::vector<Trial> measure(const std::vector<Config>& batch) override {
      auto out = ScriptedMeasurer::measure(batch);
      std::reverse(out.begin(), out.end());  // the right trials, in another order
      return out;
    }
  } other;
  ListSearcher s3({c("A=3,B=0"), c("A=4,B=0")});
  TunerOptions batch2 = o;
  batch2.batch = 2;
  CHECK_THROWS_WITH(Tuner(space, s3, other, batch2).run(), Catch::Contains("asked for"));
}

TEST_CASE("tuner: trial budget and patience stop the run", "[tuner]") {
  auto space = test_space();
  ScriptedMeasurer m1;
  ListSearcher s1(all_valid(space));
  TunerOptions o;
  o.max_trials = 7;
  o.batch = 3;
  o.top_k = 0;
  auto r = Tuner(space, s1, m1, o).run();
  CHECK(r.trials.size() == 7);
  CHECK(r.stop_reason == "max_trials");

  ScriptedMeasurer m2;
  ListSearcher s2(all_valid(space));
  o.max_trials = 0;
  o.patience = 5;
  o.batch = 1;
  auto p = Tuner(space, s2, m2, o).run();
  CHECK(p.stop_reason == "patience");
  CHECK(p.trials.size() < 30);
}

namespace {

/// Times from a function of the config and of how often it was measured before (NaN = the
/// trial fails); can sleep per trial; keeps every batch.
class FunctionMeasurer : public Measurer {
 public:
  using TimeOf = std::function<double(const Config&, int earlier)>;
  explicit FunctionMeasurer(TimeOf time_of, int sleep_ms = 0) : time_of_(std::move(time_of)), sleep_ms_(sleep_ms) {}
  std::vector<Trial> measure(const std::vector<Config>& batch) override {
    batches.push_back({});
    std::vector<Trial> out;
    for (const auto& c : batch) {
      if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
      batches.back().push_back(c.str());
      Trial t;
      t.config = c;
      const double ms = time_of_(c, counts_[c.str()]++);
      if (std::isnan(ms)) {
        t.status = Status::runtime_error;
      } else {
        t.status = Status::ok;
        t.times_ms = {0.5 * ms, ms, ms};  // median ms; pooled rounds have another median
        summarize_times(t);
      }
      out.push_back(t);
    }
    return out;
  }
  std::vector<std::vector<std::string>> batches;

 private:
  TimeOf time_of_;
  int sleep_ms_;
  std::map<std::string, int> counts_;
};

/// A run without the default, batches of 3, `top_k` finalists re-measured `final_rounds`
/// times, every trial recorded into `sink`.
TuneResult run_recorded(const SearchSpace& space, Searcher& searcher, Measurer& m,
                        CollectingSink& sink, std::size_t top_k, int final_rounds) {
  TunerOptions o;
  o.measure_default = false;
  o.batch = 3;
  o.top_k = top_k;
  o.final_rounds = final_rounds;
  Tuner tuner(space, searcher, m, o);
  tuner.set_sink(&sink);
  return tuner.run();
}

/// run_recorded with two finalists re-measured three times.
TuneResult run_two_finalists(const SearchSpace& space, Searcher& searcher, Measurer& m,
                             CollectingSink& sink) {
  return run_recorded(space, searcher, m, sink, 2, 3);
}

/// The record the log's best() would name from `sink`'s trials, in recording order: the
/// fastest typical trial (config_representatives), ties to the config recorded first.
std::optional<TrialRecord> log_best_of(const CollectingSink& sink) {
  std::vector<TrialRecord> records;
  for (const auto& t : sink.trials) {
    TrialRecord rec;
    rec.config_text = t.config.str();
    rec.trial = t;
    records.push_back(rec);
  }
  std::optional<TrialRecord> best;
  for (const auto& rep : config_representatives(records))
    if (rep.trial.ok() && (!best || rep.trial.median_ms < best->trial.median_ms)) best = rep;
  return best;
}

std::vector<Config> a_row(const SearchSpace& space) {
  std::vector<Config> out;
  for (Value a = 0; a < 10; ++a) out.push_back(space.make({{"A", a}, {"B", 0}}));
  return out;
}

}  // namespace

TEST_CASE("tuner: patience counts only gains above min_improvement, exactly", "[tuner]") {
  auto space = test_space();
  // Every trial is faster than the one before, by 0.01 %.
  auto slowly_better = [](const Config& c, int) { return 10.0 - 0.001 * static_cast<double>(c["A"]); };
  TunerOptions o;
  o.measure_default = false;
  o.batch = 1;
  o.top_k = 0;
  o.patience = 3;
  o.min_improvement = 0.01;  // 1 %: none of those gains counts
  FunctionMeasurer m1(slowly_better);
  ListSearcher s1(a_row(space));
  auto r = Tuner(space, s1, m1, o).run();
  CHECK(r.stop_reason == "patience");
  CHECK(r.trials.size() == 4);  // the first, then three without a 1 % gain
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=3,B=0");  // still the fastest seen, though not by 1 %

  o.min_improvement = 0;  // every gain counts: the run goes through the list
  FunctionMeasurer m2(slowly_better);
  ListSearcher s2(a_row(space));
  auto all = Tuner(space, s2, m2, o).run();
  CHECK(all.stop_reason == "exhausted");
  CHECK(all.trials.size() == 10);

  // Batches of 8 stop at the patience, not at the end of the batch that crossed it.
  auto slower = [](const Config& c, int) { return 10.0 + static_cast<double>(c["A"]); };
  o.batch = 8;
  o.patience = 3;
  FunctionMeasurer m3(slower);
  ListSearcher s3(a_row(space));
  auto capped = Tuner(space, s3, m3, o).run();
  CHECK(capped.stop_reason == "patience");
  CHECK(capped.trials.size() == 4);  // the first (the best), then three without a gain
}

TEST_CASE("tuner: the time budget stops the run", "[tuner]") {
  auto space = test_space();
  FunctionMeasurer slow([](const Config&, int) { return 1.0; }, 40);  // 40 ms per trial
  ListSearcher searcher(all_valid(space));
  TunerOptions o;
  o.batch = 1;
  o.top_k = 0;
  o.max_seconds = 0.2;
  auto r = Tuner(space, searcher, slow, o).run();
  CHECK(r.stop_reason == "max_seconds");
  CHECK(r.trials.size() >= 3);
  CHECK(r.trials.size() < 30);
}

TEST_CASE("tuner: a config proposed twice in one batch is measured once", "[tuner]") {
  auto space = test_space();
  auto c = [&](Value a) { return space.make({{"A", a}, {"B", 0}}); };
  FunctionMeasurer m([](const Config& cfg, int) { return 1.0 + static_cast<double>(cfg["A"]); });
  ListSearcher searcher({c(1), c(1), c(2)});
  TunerOptions o;
  o.measure_default = false;
  o.batch = 3;
  o.top_k = 0;
  auto r = Tuner(space, searcher, m, o).run();
  REQUIRE_FALSE(m.batches.empty());
  CHECK(m.batches[0] == std::vector<std::string>{"A=1,B=0", "A=2,B=0"});
  CHECK(r.trials.size() == 2);
  CHECK(searcher.observed.size() == 2);  // and observed once
}

TEST_CASE("tuner: finalists rank by their typical trial, as the log does, one that fails again is dropped",
          "[tuner]") {
  auto space = test_space();
  auto c = [&](Value a) { return space.make({{"A", a}, {"B", 0}}); };
  // A=1: 1.0 in the search, then 1.2, 1.4, 1.3 in the rounds (typical: the lower median of the
  // four, 1.2); A=2: 1.1, then it fails in the second round; A=3: 1.5 throughout.
  FunctionMeasurer m([](const Config& cfg, int earlier) {
    const Value a = cfg["A"];
    if (a == 1) return std::vector<double>{1.0, 1.2, 1.4, 1.3}[earlier];
    if (a == 2) return earlier == 2 ? std::nan("") : 1.1;
    return 1.5;
  });
  ListSearcher searcher({c(1), c(2), c(3)});
  TunerOptions o;
  o.measure_default = false;
  o.batch = 3;
  o.top_k = 3;
  o.final_rounds = 3;
  auto r = Tuner(space, searcher, m, o).run();
  REQUIRE(r.finalists.size() == 2);
  CHECK(r.finalists[0].config.str() == "A=1,B=0");
  CHECK(r.finalists[0].median_ms == Approx(1.2));
  CHECK(r.finalists[1].config.str() == "A=3,B=0");
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=1,B=0");
  CHECK(r.best->median_ms == Approx(1.2));
}

TEST_CASE("tuner: the winner is the config the log's best() names from the recorded trials",
          "[tuner][log]") {
  // Two finalists within noise, in the demo's pattern: A=1 is fastest by the median of its
  // rounds, A=2 by the typical trial over all its trials (its search trial was lucky). The
  // log judges by the typical trial, so the tuner must too, or `tune` and `best` disagree.
  auto space = test_space();
  auto c = [&](Value a) { return space.make({{"A", a}, {"B", 0}}); };
  FunctionMeasurer m([](const Config& cfg, int earlier) {
    // rounds' medians: A=1 1.01, A=2 1.02; typical trials: A=1 1.01, A=2 1.00
    if (cfg["A"] == 1) return std::vector<double>{1.04, 1.00, 1.01, 1.05}[earlier];  // typical 1.01
    if (cfg["A"] == 2) return std::vector<double>{0.90, 1.02, 1.00, 1.03}[earlier];  // typical 1.00
    return 2.0;
  });
  ListSearcher searcher({c(1), c(2), c(3)});
  CollectingSink sink;
  auto r = run_two_finalists(space, searcher, m, sink);
  REQUIRE(r.best);
  const std::optional<TrialRecord> log_best = log_best_of(sink);
  REQUIRE(log_best);
  CHECK(r.best->config.str() == "A=2,B=0");
  CHECK(log_best->config_text == r.best->config.str());
  // The winner's rounds have the higher median (1.02 against 1.01): the difference reported
  // is its size, not a negative percentage.
  CHECK(r.top_two_difference == Approx(0.01 / 1.02));
  CHECK(r.best->median_ms == Approx(log_best->trial.median_ms));
}

TEST_CASE("tuner: a config whose one trial beats the finalists' typical trials is measured in rounds too",
          "[tuner][log]") {
  // A=0..1 are fastest in the search but 1.5 when measured again; A=2 (1.02 every time) is
  // not among the top 2, yet its one trial beats their typical 1.5: the log would name it.
  auto space = test_space();
  FunctionMeasurer m([](const Config& cfg, int earlier) {
    const double first = 1.0 + 0.01 * static_cast<double>(cfg["A"]);
    return cfg["A"] < 2 && earlier > 0 ? 1.5 : first;
  });
  ListSearcher searcher(a_row(space));
  CollectingSink sink;
  auto r = run_two_finalists(space, searcher, m, sink);
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=2,B=0");
  CHECK(r.best->median_ms == Approx(1.02));
  const std::optional<TrialRecord> log_best = log_best_of(sink);
  REQUIRE(log_best);
  CHECK(log_best->config_text == r.best->config.str());
  // A=3 (1.03) does not beat A=2's typical trial: it is not measured again.
  CHECK(std::count_if(sink.trials.begin(), sink.trials.end(),
                      [](const Trial& t) { return t.config.str() == "A=3,B=0"; }) == 1);
}

TEST_CASE("tuner: finalists with equal typical trials go to the config measured first, as in the log",
          "[tuner][log]") {
  // Session 19's demo: two gemm_mma configs with the same typical time to the nanosecond;
  // the tuner named the one whose text sorts first, the log the one recorded first.
  auto space = test_space();
  auto c = [&](Value a) { return space.make({{"A", a}, {"B", 0}}); };
  FunctionMeasurer m([](const Config& cfg, int) { return cfg["A"] == 3 ? 2.0 : 1.0; });
  // Two finalists re-measured three times, and no re-measurement at all (as `--replay` runs).
  for (const auto& [top_k, rounds] : {std::pair<std::size_t, int>{2, 3}, {0, 0}}) {
    INFO("top_k " << top_k << ", rounds " << rounds);
    ListSearcher searcher({c(2), c(1), c(3)});  // A=2 first, though "A=1" sorts before it
    CollectingSink sink;
    auto r = run_recorded(space, searcher, m, sink, top_k, rounds);
    REQUIRE(r.best);
    CHECK(r.best->config.str() == "A=2,B=0");
    const std::optional<TrialRecord> log_best = log_best_of(sink);
    REQUIRE(log_best);
    CHECK(log_best->config_text == r.best->config.str());
  }
}

TEST_CASE("tuner: a challenger that ties the winner is measured again only when recorded first",
          "[tuner][log]") {
  // A=0: 1.0 in the search, then 1.2 in each round (typical 1.2); A=1: 1.2 every time. With
  // one finalist (A=0), A=1's one trial ties its typical trial: the log breaks that tie to the
  // config recorded first.
  auto space = test_space();
  auto c = [&](Value a) { return space.make({{"A", a}, {"B", 0}}); };
  FunctionMeasurer m([](const Config& cfg, int earlier) {
    if (cfg["A"] == 0) return earlier == 0 ? 1.0 : 1.2;
    return cfg["A"] == 1 ? 1.2 : 5.0;
  });
  auto run = [&](std::vector<Config> order, CollectingSink& sink) {
    ListSearcher searcher(std::move(order));
    return run_recorded(space, searcher, m, sink, 1, 2);
  };
  auto count = [](const CollectingSink& sink, const char* config) {
    return std::count_if(sink.trials.begin(), sink.trials.end(),
                         [&](const Trial& t) { return t.config.str() == config; });
  };
  SECTION("recorded after the winner: the log keeps the winner, nothing more is measured") {
    CollectingSink sink;
    auto r = run({c(0), c(1), c(2)}, sink);
    REQUIRE(r.best);
    CHECK(r.best->config.str() == "A=0,B=0");
    CHECK(r.finalists.size() == 1);
    CHECK(count(sink, "A=1,B=0") == 1);
    REQUIRE(log_best_of(sink));
    CHECK(log_best_of(sink)->config_text == "A=0,B=0");
  }
  SECTION("recorded before the winner: it is measured in rounds and wins the tie, as in the log") {
    CollectingSink sink;
    auto r = run({c(1), c(0), c(2)}, sink);
    REQUIRE(r.best);
    CHECK(count(sink, "A=1,B=0") == 3);
    CHECK(r.best->config.str() == "A=1,B=0");
    REQUIRE(log_best_of(sink));
    CHECK(log_best_of(sink)->config_text == r.best->config.str());
  }
}

TEST_CASE("tuner: a default among the finalists is judged by its typical trial, as in the log",
          "[tuner]") {
  // The default (A=0,B=2) is measured first at 1.00 and then 1.10, 1.12, 1.11 in the rounds:
  // its typical trial is 1.10, the figure `ktune best` divides by. A=1 is the winner at 1.05.
  auto space = test_space();
  auto c = [&](Value a) { return space.make({{"A", a}, {"B", 0}}); };
  FunctionMeasurer m([](const Config& cfg, int earlier) {
    if (cfg["A"] == 0) return std::vector<double>{1.00, 1.10, 1.12, 1.11}[earlier];
    if (cfg["A"] == 1) return 1.05;
    return 2.0;
  });
  ListSearcher searcher({c(1), c(2)});
  TunerOptions o;
  o.batch = 2;
  o.top_k = 2;
  o.final_rounds = 3;
  auto r = Tuner(space, searcher, m, o).run();
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=1,B=0");
  REQUIRE(r.default_trial);
  CHECK(r.default_trial->config.str() == "A=0,B=2");
  CHECK(r.default_trial->median_ms == Approx(1.10));
  CHECK(r.speedup() == Approx(1.10 / 1.05));
}

TEST_CASE("tuner: resume feeds earlier trials first and never measures them again", "[tuner]") {
  auto space = test_space();
  auto all = all_valid(space);
  ScriptedMeasurer first_measurer;
  std::vector<Trial> earlier = first_measurer.measure({all.begin(), all.begin() + 10});
  ListSearcher searcher(all);
  ScriptedMeasurer measurer;
  CollectingSink sink;
  TunerOptions o;
  o.max_trials = 15;
  o.top_k = 0;
  Tuner tuner(space, searcher, measurer, o);
  tuner.set_sink(&sink);
  tuner.resume_from(earlier);
  auto r = tuner.run();
  CHECK(r.trials.size() == 5);  // 10 earlier + 5 new = budget 15
  CHECK(sink.trials.size() == 5);
  for (const auto& batch : measurer.batches)
    for (const auto& text : batch)
      for (const auto& e : earlier) CHECK(text != e.config.str());
  CHECK(searcher.observed.size() >= 10);
  CHECK(searcher.observed.front().config.str() == earlier.front().config.str());
  REQUIRE(r.default_trial);  // the default A=0,B=2 was among the earlier trials
  CHECK(r.default_trial->config.str() == "A=0,B=2");
}

TEST_CASE("tuner: starting configs come right after the default, once, within the budget",
          "[tuner]") {
  auto space = test_space();
  ListSearcher searcher(all_valid(space));  // would propose A=0,B=0, A=0,B=1, ... in order
  ScriptedMeasurer measurer;
  TunerOptions o;
  o.max_trials = 5;
  o.top_k = 0;
  Tuner tuner(space, searcher, measurer, o);
  SearchSpace::Builder other;
  other.param("A", {0, 1}, 0);
  tuner.start_with({space.parse("A=5,B=0"), space.parse("A=0,B=2"),  // the default: measured
                    space.parse("A=5,B=0"),                          // repeated
                    other.build().parse("A=1"),                      // another space's
                    space.parse("A=4,B=1"), space.parse("A=6,B=0")});
  auto r = tuner.run();
  REQUIRE(measurer.batches.size() >= 2);
  CHECK(measurer.batches[0] == std::vector<std::string>{"A=0,B=2"});
  CHECK(measurer.batches[1] == std::vector<std::string>{"A=5,B=0", "A=4,B=1", "A=6,B=0"});
  REQUIRE(r.best);
  CHECK(r.best->config.str() == "A=6,B=0");  // a starting config can win (0.5 ms)
  CHECK(r.trials.size() == 5);               // default + 3 starting + 1 searched
  // The searcher saw the starting configs before proposing anything.
  REQUIRE(searcher.observed.size() >= 4);
  CHECK(searcher.observed[1].config.str() == "A=5,B=0");

  ListSearcher small_searcher(all_valid(space));
  ScriptedMeasurer small_measurer;
  o.max_trials = 2;  // room for the default and one starting config
  Tuner small(space, small_searcher, small_measurer, o);
  small.start_with({space.parse("A=5,B=0"), space.parse("A=4,B=1")});
  CHECK(small.run().trials.size() == 2);
  CHECK(small_measurer.batches.back() == std::vector<std::string>{"A=5,B=0"});
}

TEST_CASE("tuner: a zero batch is misuse", "[tuner]") {
  auto space = test_space();
  ListSearcher s({});
  ScriptedMeasurer m;
  TunerOptions o;
  o.batch = 0;
  CHECK_THROWS_AS(Tuner(space, s, m, o), Error);
}

TEST_CASE("tuner: options outside their meaning are misuse, named", "[tuner]") {
  auto space = test_space();
  ListSearcher s({});
  ScriptedMeasurer m;
  auto refused = [&](auto&& edit, const char* needle) {
    TunerOptions o;
    edit(o);
    CHECK_THROWS_WITH(Tuner(space, s, m, o), Catch::Contains(needle));
  };
  refused([](TunerOptions& o) { o.max_seconds = -1; }, "max_seconds");
  refused([](TunerOptions& o) { o.max_seconds = std::nan(""); }, "max_seconds");
  refused([](TunerOptions& o) { o.min_improvement = -5; }, "min_improvement");
  refused([](TunerOptions& o) { o.final_rounds = -3; }, "final_rounds");
}

TEST_CASE("tuner: resumed trials that fill the budget leave nothing to measure", "[tuner]") {
  auto space = test_space();
  auto all = all_valid(space);
  std::vector<Config> not_default;  // three earlier trials, the default not among them
  for (const auto& c : all)
    if (c.str() != space.default_config().str() && not_default.size() < 3) not_default.push_back(c);
  ScriptedMeasurer first_measurer;
  std::vector<Trial> earlier = first_measurer.measure(not_default);
  ListSearcher searcher(all);
  ScriptedMeasurer measurer;
  TunerOptions o;
  o.max_trials = 3;
  o.top_k = 0;
  Tuner tuner(space, searcher, measurer, o);
  tuner.resume_from(earlier);
  auto r = tuner.run();
  CHECK(measurer.batches.empty());  // the default was not measured beyond the budget
  CHECK(r.trials.empty());
  CHECK(r.stop_reason == "max_trials");
  CHECK_FALSE(r.default_trial);  // not measured, not among the earlier trials

  // With the default among trials that fill the budget, it is still the run's reference.
  std::vector<Config> with_default{space.default_config(), not_default[0], not_default[1]};
  const std::vector<Trial> earlier2 = first_measurer.measure(with_default);
  ListSearcher searcher2(all);
  ScriptedMeasurer measurer2;
  Tuner tuner2(space, searcher2, measurer2, o);
  tuner2.resume_from(earlier2);
  const auto r2 = tuner2.run();
  CHECK(measurer2.batches.empty());
  REQUIRE(r2.default_trial);
  CHECK(r2.default_trial->config == space.default_config());
}

TEST_CASE("tuner: every built-in searcher sees each config once, the default and resumed included",
          "[tuner][search]") {
  /// Forwards to a built-in searcher and counts what it is shown.
  class Spy : public Searcher {
   public:
    explicit Spy(const std::string& name) : inner_(make_searcher(name)) {}
    std::string name() const override { return inner_->name(); }
    void reset(const SearchSpace& space, std::uint64_t seed) override { inner_->reset(space, seed); }
    std::vector<Config> propose(std::size_t n) override { return inner_->propose(n); }
    void observe(const std::vector<Trial>& trials) override {
      for (const auto& t : trials) ++seen[t.config.str()];
      inner_->observe(trials);
    }
    std::map<std::string, int> seen;

   private:
    std::unique_ptr<Searcher> inner_;
  };
  auto space = test_space();
  auto all = all_valid(space);
  for (const char* name : {"random", "exhaustive", "genetic", "annealing", "bayesian"}) {
    CAPTURE(name);
    ScriptedMeasurer first;
    const std::vector<Trial> earlier = first.measure({all[3], all[11], all[20]});
    Spy spy(name);
    spy.reset(space, 5);
    ScriptedMeasurer measurer;
    TunerOptions o;
    o.max_trials = all.size();  // the whole space: every config once
    o.top_k = 0;
    Tuner tuner(space, spy, measurer, o);
    tuner.resume_from(earlier);
    const auto r = tuner.run();
    CHECK(spy.seen.size() == all.size());
    for (const auto& [config, times] : spy.seen) {
      CAPTURE(config);
      CHECK(times == 1);
    }
    CHECK(r.trials.size() + earlier.size() == all.size());
  }
}
