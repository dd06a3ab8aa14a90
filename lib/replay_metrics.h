// Metrics of replayed searches: fraction of optimum per evaluation, means with 95%
// confidence intervals, the exact expectation of random sampling without replacement, and
// the methodology score of Willemsen et al. (FGCS 2024): a searcher's best-so-far time
// relative to the exactly computed random-search expectation, averaged over the budgets in
// which random search closes 50% to 96% of the gap between the median and the optimum.
#pragma once

#include <cstddef>
#include <vector>

#include "ktune/replay.h"

namespace ktune::replay {

/// A mean with a two-sided 95% confidence interval (Student t).
struct Interval {
  double mean = 0;  ///< sample mean
  double low = 0;   ///< lower bound
  double high = 0;  ///< upper bound
};

/// Mean and 95% confidence interval of `values` (zero width for fewer than two values).
Interval mean_confidence_95(const std::vector<double>& values);
/// The same for a quantity known to lie in [`lowest`, `highest`] (a fraction of the optimum:
/// [0, 1]): the interval is cut to that range, which keeps its coverage, since the true mean
/// lies inside it.
Interval mean_confidence_95(const std::vector<double>& values, double lowest, double highest);

/// Exact statistics of random sampling without replacement from a finite set of outcomes.
class RandomSearchExpectation {
 public:
  /// Outcome times of every config (+infinity for failed ones); at least one must be finite.
  explicit RandomSearchExpectation(std::vector<double> outcome_times);
  /// Number of configs.
  std::size_t size() const { return times_.size(); }
  /// Number of successful configs.
  std::size_t successes() const { return ok_; }
  /// Fastest time.
  double optimum() const { return times_.front(); }
  /// Median of the successful times.
  double median() const { return median_; }
  /// Slowest successful time (stands in for "nothing found yet").
  double worst() const { return times_[ok_ - 1]; }
  /// E[optimum / best time found] after k draws (failures count 0).
  double expected_fraction(std::size_t k) const;
  /// E[best time found] after k draws (no success yet counts as worst()).
  double expected_best_time(std::size_t k) const;

 private:
  /// Calls visit(i, p) with P(the best of k draws has rank i), i = 0..size()-1.
  template <typename Visit>
  void rank_distribution(std::size_t k, Visit&& visit) const;
  std::vector<double> times_;  // sorted ascending, failures (+inf) last
  std::size_t ok_ = 0;
  double median_ = 0;
};

/// Fraction of optimum of a best-so-far time (0 while nothing succeeded).
double fraction_of_optimum(double best_ms, double optimum_ms);

/// Methodology score and the budget range it averaged over.
struct MethodologyScore {
  double score = 0;          ///< mean standardized performance; 0 = random search, 1 = optimum
  std::size_t first = 0;     ///< first budget of the range (random closes 50% of the gap)
  std::size_t last = 0;      ///< last budget of the range (96%), capped by the runs' length
  std::size_t full_last = 0; ///< the uncapped last budget
  bool truncated = false;    ///< the runs ended before full_last
  bool available = false;    ///< false when no budget of the range could be scored
  /// Budgets of first..last averaged: those where random search has not reached the optimum
  /// yet (at the others no gap is left to close).
  std::size_t budgets = 0;
};

/// Score from the mean best-so-far time per evaluation (index k-1 = after k evaluations;
/// no success yet counts as random.worst()).
MethodologyScore methodology_score(const RandomSearchExpectation& random,
                                   const std::vector<double>& mean_best_time,
                                   double gap_start = 0.5, double gap_end = 0.96);

/// Mean over runs of the best-so-far time per evaluation, runs shorter than `length` padded
/// with their last value; no success yet counts as `worst`.
std::vector<double> mean_best_time_curve(const std::vector<ReplayRun>& runs, std::size_t length,
                                         double worst);

/// Mean over runs of the fraction of optimum after 1..`length` evaluations (runs shorter than
/// `length` padded with their last value).
std::vector<double> mean_fraction_curve(const std::vector<ReplayRun>& runs, std::size_t length,
                                        double optimum);

/// Fractions of optimum of every run after `k` evaluations (runs shorter than k use their end).
std::vector<double> fractions_at(const std::vector<ReplayRun>& runs, std::size_t k, double optimum);

}  // namespace ktune::replay
