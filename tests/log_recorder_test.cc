// LogRecorder and trials_to_resume on a real log without a GPU: stamping (run id, time, note,
// the source a replayed trial was measured with), and what a new run of the task resumes from
// (one trial per config, its typical ok trial, only of the source that run would record).
#include <algorithm>

#include <catch2/catch.hpp>

#include "builtin_templates.h"
#include "ktune/build.h"
#include "ktune/log_recorder.h"
#include "log_fixtures.h"

using namespace ktune;

namespace {

Trial ok_trial(const Config& c, double ms) {
  Trial t;
  t.config = c;
  t.status = Status::ok;
  t.times_ms = {ms};
  summarize_times(t);
  return t;
}

}  // namespace

TEST_CASE("LogRecorder stamps trials, trials_to_resume gives each config's typical trial or its failure",
          "[log]") {
  test::TempDir dir;
  auto tmpl = make_copy_template();
  const Problem problem = make_problem(*tmpl, "4096", {});
  const Device device = test::test_device();
  const SearchSpace space = tmpl->space(problem, device);
  const Config a = space.default_config();
  std::mt19937_64 rng(3);
  Config b = space.random(rng);
  while (b == a) b = space.random(rng);

  TuningLog log(dir.file("log.db"));
  LogRecorder recorder(log, tmpl, problem, device);
  CHECK_FALSE(recorder.run_id().empty());
  // a measured three times (the final rounds re-measure finalists): 3.0, 1.0, 2.0 ms; b fails
  // once, then succeeds.
  for (double ms : {3.0, 1.0, 2.0}) recorder.record(ok_trial(a, ms));
  Trial failed;
  failed.config = b;
  failed.status = Status::runtime_error;
  failed.message = "boom";
  recorder.record(failed);
  recorder.record(ok_trial(b, 5.0));
  CHECK(recorder.recorded() == 5);

  const auto records = log.records();
  REQUIRE(records.size() == 5);
  for (const auto& r : records) {
    CHECK(r.run_id == recorder.run_id());
    CHECK(r.trial.timestamp_us > 0);
    CHECK(r.source_hash == Builder::source_hash(tmpl->source()));
  }

  const auto resumed = trials_to_resume(log, *tmpl, problem, device, space);
  REQUIRE(resumed.size() == 2);
  CHECK(resumed[0].config == a);
  CHECK(resumed[0].median_ms == 2.0);  // the typical of 3, 1, 2 (not the first, not the best)
  CHECK(resumed[1].config == b);
  // Its failure, not the ok trial after it: the log never names a config that failed.
  CHECK(resumed[1].status == Status::runtime_error);
  CHECK(resumed[1].message == "boom");

  // Another task, or the same one on another device, resumes nothing from these.
  CHECK(trials_to_resume(log, *tmpl, make_problem(*tmpl, "8192", {}), device, space).empty());
  CHECK(trials_to_resume(log, *tmpl, problem, test::test_device("NVIDIA H100", 132), space).empty());

  // A replayed trial keeps the source it was measured with and says where it came from; a run
  // of the current source does not resume it, one that replays the same record does.
  LogRecorder::Options replay;
  replay.run_id = "replay-run";
  replay.source_of = {{b.str(), "0123456789abcdef"}};
  replay.note = "replayed from x.db";
  LogRecorder replayed(log, tmpl, make_problem(*tmpl, "65536", {}), device, replay);
  replayed.record(ok_trial(b, 7.0));
  const Problem other = make_problem(*tmpl, "65536", {});
  LogFilter filter;
  filter.problem_key = other.key();
  const auto stamped = log.records(filter);
  REQUIRE(stamped.size() == 1);
  CHECK(stamped[0].run_id == "replay-run");
  CHECK(stamped[0].source_hash == "0123456789abcdef");
  CHECK(stamped[0].trial.message == "replayed from x.db");
  const SearchSpace other_space = tmpl->space(other, device);
  CHECK(trials_to_resume(log, *tmpl, other, device, other_space).empty());
  CHECK(trials_to_resume(log, *tmpl, other, device, other_space, replay.source_of).size() == 1);
}

TEST_CASE("trials_to_resume resumes only the ok trials timed the new run's way", "[log]") {
  test::TempDir dir;
  auto tmpl = make_copy_template();
  const Problem problem = make_problem(*tmpl, "4096", {});
  const Device device = test::test_device();
  const SearchSpace space = tmpl->space(problem, device);
  std::mt19937_64 rng(11);
  std::vector<Config> configs{space.default_config()};
  while (configs.size() < 4) {
    Config c = space.random(rng);
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  const Config &both = configs[0], &plain_only = configs[1], &programmatic_only = configs[2],
               &failed_plain = configs[3];
  auto timed = [](const Config& c, double ms, LaunchForm launch) {
    Trial t = ok_trial(c, ms);
    t.launch = launch;
    return t;
  };
  TuningLog log(dir.file("log.db"));
  LogRecorder recorder(log, tmpl, problem, device);
  recorder.record(timed(both, 2.0, LaunchForm::stream));
  recorder.record(timed(both, 1.5, LaunchForm::programmatic));
  recorder.record(timed(plain_only, 3.0, LaunchForm::graph));
  recorder.record(timed(programmatic_only, 1.0, LaunchForm::programmatic_graph));
  recorder.record(timed(failed_plain, 0.5, LaunchForm::programmatic));
  Trial failure;
  failure.config = failed_plain;
  failure.status = Status::wrong_result;
  recorder.record(failure);  // a failure resumes whichever way the run times

  std::size_t other_way = 99;
  auto resumed = trials_to_resume(log, *tmpl, problem, device, space, {}, false, &other_way);
  REQUIRE(resumed.size() == 3);
  CHECK(resumed[0].config == both);
  CHECK(resumed[0].median_ms == 2.0);  // its plain time, not the programmatic 1.5
  CHECK(resumed[1].config == plain_only);
  CHECK(resumed[2].config == failed_plain);
  CHECK(resumed[2].status == Status::wrong_result);
  CHECK(other_way == 1);  // programmatic_only is measured again

  resumed = trials_to_resume(log, *tmpl, problem, device, space, {}, true, &other_way);
  REQUIRE(resumed.size() == 3);
  CHECK(resumed[0].config == both);
  CHECK(resumed[0].median_ms == 1.5);
  CHECK(resumed[1].config == programmatic_only);
  CHECK(resumed[2].config == failed_plain);
  CHECK(resumed[2].status == Status::wrong_result);
  CHECK(other_way == 1);  // plain_only
}
