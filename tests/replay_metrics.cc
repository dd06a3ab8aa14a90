// Replay metrics: the exact expectation of random sampling without replacement against a
// Monte Carlo simulation, confidence intervals, and the methodology score's anchors (random
// search scores about 0, a searcher that always has the optimum scores 1).
#include <catch2/catch.hpp>

#include <cmath>

#include <algorithm>
#include <limits>
#include <random>

#include "replay_metrics.h"

using namespace ktune;
using namespace ktune::replay;

namespace {

std::vector<double> outcomes() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> t = {3.0, 1.0, 7.5, 2.0, inf, 4.0, 9.0, 1.5, inf, 6.0, 2.5, 12.0, 5.0, inf, 3.5};
  return t;
}

}  // namespace

TEST_CASE("exact random-search expectation matches Monte Carlo", "[replay]") {
  const auto t = outcomes();
  const RandomSearchExpectation r(t);
  CHECK(r.optimum() == 1.0);
  CHECK(r.successes() == 12);
  std::mt19937_64 rng(11);
  for (std::size_t k : {1, 2, 4, 8, 15}) {
    double frac = 0, best = 0;
    const int trials = 40000;
    for (int i = 0; i < trials; ++i) {
      auto pool = t;
      std::shuffle(pool.begin(), pool.end(), rng);
      const double b = *std::min_element(pool.begin(), pool.begin() + static_cast<long>(k));
      frac += fraction_of_optimum(b, 1.0);
      best += std::isfinite(b) ? b : r.worst();
    }
    INFO("k = " << k);
    CHECK(r.expected_fraction(k) == Approx(frac / trials).epsilon(0.01));
    CHECK(r.expected_best_time(k) == Approx(best / trials).epsilon(0.01));
  }
  CHECK(r.expected_fraction(15) == Approx(1.0));
  CHECK(r.expected_fraction(1) == Approx((1 / 3.0 + 1 + 1 / 7.5 + 0.5 + 0.25 + 1 / 9.0 + 1 / 1.5 +
                                          1 / 6.0 + 0.4 + 1 / 12.0 + 0.2 + 1 / 3.5) / 15));
}

TEST_CASE("random-search expectation: the median of the successes, even counts averaged", "[replay]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(RandomSearchExpectation({4, 1, inf, 3, 2}).median() == 2.5);  // failures are not times
  CHECK(RandomSearchExpectation({5, 1, 3}).median() == 3);
  CHECK(RandomSearchExpectation({2, inf}).median() == 2);
}

TEST_CASE("mean confidence interval", "[replay]") {
  const auto ci = mean_confidence_95({1, 2, 3, 4, 5});
  CHECK(ci.mean == Approx(3));
  // t(4) = 2.776, sd = sqrt(2.5), se = sd / sqrt(5)
  CHECK(ci.high - ci.mean == Approx(2.776 * std::sqrt(2.5 / 5)).epsilon(1e-3));
  CHECK(mean_confidence_95({2}).low == 2);
  // Fractions of the optimum: the interval stays within [0, 1] (two runs give a wide one).
  const auto wide = mean_confidence_95({0.2, 0.99}, 0.0, 1.0);
  CHECK(wide.mean == Approx(0.595));
  CHECK(wide.low == 0.0);
  CHECK(wide.high == 1.0);
  CHECK(mean_confidence_95({0.2, 0.99}).high > 1.0);  // unbounded, the t interval itself
}

TEST_CASE("methodology score is 0 for the random expectation and 1 at the optimum", "[replay]") {
  std::vector<double> t;
  for (int i = 1; i <= 400; ++i) t.push_back(1.0 + 0.05 * i);
  const RandomSearchExpectation r(t);
  std::vector<double> random_curve, perfect, bad;
  for (std::size_t k = 1; k <= 400; ++k) {
    random_curve.push_back(r.expected_best_time(k));
    perfect.push_back(r.optimum());
    bad.push_back(r.worst());
  }
  const auto s0 = methodology_score(r, random_curve);
  REQUIRE(s0.available);
  CHECK(s0.score == Approx(0).margin(1e-9));
  CHECK(s0.first >= 1);
  CHECK(s0.last > s0.first);
  CHECK_FALSE(s0.truncated);
  CHECK(methodology_score(r, perfect).score == Approx(1));
  CHECK(methodology_score(r, bad).score < 0);
  const auto cut = methodology_score(r, std::vector<double>(perfect.begin(), perfect.begin() + 5));
  CHECK(cut.truncated);
}

// Edge cases from the mutation audit of session 33.
TEST_CASE("methodology score skips budgets where random search already has the optimum",
          "[replay]") {
  const replay::RandomSearchExpectation r({1, 2, 3, 4});  // median 2.5: k = 2..4 in the range
  std::vector<double> curve;
  for (std::size_t k = 1; k <= 4; ++k) curve.push_back(r.expected_best_time(k));
  const auto s = replay::methodology_score(r, curve);
  CHECK(s.first == 2);
  CHECK(s.last == 4);
  CHECK(s.budgets == 2);  // k = 4: E[best] is the optimum, no gap left
  CHECK(s.score == Approx(0).margin(1e-12));
}

TEST_CASE("mean best-time curve: no success yet counts as worst", "[replay]") {
  const double inf = std::numeric_limits<double>::infinity();
  ReplayRun a, b;
  a.best_ms = {inf, 3, 2};
  b.best_ms = {4};
  const auto c = replay::mean_best_time_curve({a, b}, 3, 9.0);
  CHECK(c == std::vector<double>{(9 + 4) / 2.0, (3 + 4) / 2.0, (2 + 4) / 2.0});
  // Past the longest run the curve stays at each run's last best, however long the budget.
  const auto long_curve = replay::mean_best_time_curve({a, b}, 1000000, 9.0);
  REQUIRE(long_curve.size() == 1000000);
  CHECK(long_curve[2] == 3.0);
  CHECK(long_curve[999999] == 3.0);
  const auto empty_run = replay::mean_best_time_curve({ReplayRun{}}, 4, 9.0);
  CHECK(empty_run == std::vector<double>{9, 9, 9, 9});
}

TEST_CASE("mean fraction curve: each evaluation's mean fraction, flat past the longest run",
          "[replay]") {
  ReplayRun a, b;
  a.best_ms = {4, 2, 1};
  b.best_ms = {2};
  const auto c = replay::mean_fraction_curve({a, b}, 1000, 1.0);
  REQUIRE(c.size() == 1000);
  for (std::size_t k : {1u, 2u, 3u, 4u, 1000u})
    CHECK(c[k - 1] == Approx(replay::mean_confidence_95(replay::fractions_at({a, b}, k, 1.0)).mean));
  CHECK(c[0] < c[1]);
  CHECK(c[2] == c[999]);
}

TEST_CASE("confidence interval beyond the t table (Cornish-Fisher)", "[replay]") {
  std::vector<double> v;
  for (int i = 0; i < 41; ++i) v.push_back(i % 2 ? 1.0 : -1.0);  // dof 40
  const auto ci = replay::mean_confidence_95(v);
  double ss = 0;
  for (double x : v) ss += (x - ci.mean) * (x - ci.mean);
  const double se = std::sqrt(ss / 40 / 41);
  CHECK((ci.high - ci.mean) / se == Approx(2.021).epsilon(1e-3));  // t(0.975, 40)
}
