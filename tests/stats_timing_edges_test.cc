// Boundaries of the timing statistics (lib/stats.cc) and timing plans (lib/timing.cc): zero
// medians, even counts, the noise verdict, rotation sets against 2 x L2, rounding of the wanted
// runs. From the mutation audit of session 33.
#include <catch2/catch.hpp>

#include "stats.h"
#include "timing.h"

using namespace ktune;

TEST_CASE("stats: zero medians and minima give 0, not a division by zero, even counts average",
          "[runner]") {
  CHECK(stats::relative_spread({0.0, 0.0, 0.0}) == 0);
  CHECK(stats::relative_range({0.0, 1.0}) == 0);
  CHECK(stats::median({4, 1, 3, 2}) == 2.5);
}

TEST_CASE("stats: a second candidate far faster than the first is not within noise", "[runner]") {
  // The tuner ranks by typical trials, so the winner's round medians can be the higher ones.
  const auto v = stats::compare_rounds({1.0, 1.0, 1.0}, {0.5, 0.5, 0.5});
  CHECK(v.difference == Approx(-0.5));
  CHECK_FALSE(v.within_noise);
}

TEST_CASE("timing: rotation leaves 2x L2 of other sets between two uses of one set, boundaries",
          "[runner]") {
  const std::size_t l2 = 50u << 20, target = 2 * l2;
  TimingOptions o;
  const auto small = timing::make_plan(o, 0.01, 8u << 20, l2);
  REQUIRE(small.l2 == L2Policy::rotate);
  CHECK(static_cast<std::size_t>(small.buffer_sets - 1) * (8u << 20) >= target);
  CHECK(timing::make_plan(o, 1, target, l2).l2 == L2Policy::none);      // exactly 2x L2
  CHECK(timing::make_plan(o, 1, target - 1, l2).l2 == L2Policy::rotate);
  // The largest rotation: ceil(target / f) + 1 == kMaxBufferSets.
  const std::size_t f64sets = target / (timing::kMaxBufferSets - 1) + 1;
  const auto at_max = timing::make_plan(o, 0.01, f64sets, l2);
  CHECK(at_max.l2 == L2Policy::rotate);
  CHECK(at_max.buffer_sets == timing::kMaxBufferSets);
  CHECK(timing::make_plan(o, 0.01, f64sets - 1, l2).l2 == L2Policy::flush);
}

TEST_CASE("timing: the wanted runs round up", "[runner]") {
  TimingOptions o;  // 50 ms, 10..1000 reps
  o.runs_per_sample = 1;
  timing::TimingPlan p;
  timing::plan_repetitions(p, o, 0.3);  // 166.7 runs fill 50 ms: 167
  CHECK(p.reps == 167);
}
