// Replay metrics: exact random-search expectation by the rank distribution of the best of k
// draws without replacement, P(rank i) = C(N-1-i, k-1) / C(N, k) (0-based i), computed by
// the ratio recursion P(i+1) = P(i) (N-1-i-(k-1)) / (N-1-i) to stay in floating range.
#include "replay_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ktune/error.h"

namespace ktune::replay {

namespace {

/// Two-sided 97.5% quantile of Student's t with `dof` degrees of freedom.
double t_quantile_975(std::size_t dof) {
  static const double table[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                 2.306,  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                 2.120,  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                 2.064,  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < std::size(table)) return table[dof];
  // Cornish-Fisher expansion around the normal quantile; exact to ~1e-4 beyond 30 dof.
  const double z = 1.959963984540054, n = static_cast<double>(dof);
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

}  // namespace

Interval mean_confidence_95(const std::vector<double>& values) {
  Interval out;
  if (values.empty()) return out;
  double sum = 0;
  for (double v : values) sum += v;
  out.mean = sum / static_cast<double>(values.size());
  out.low = out.high = out.mean;
  if (values.size() < 2) return out;
  double ss = 0;
  for (double v : values) ss += (v - out.mean) * (v - out.mean);
  const double se = std::sqrt(ss / static_cast<double>(values.size() - 1) /
                              static_cast<double>(values.size()));
  const double half = t_quantile_975(values.size() - 1) * se;
  out.low = out.mean - half;
  out.high = out.mean + half;
  return out;
}

Interval mean_confidence_95(const std::vector<double>& values, double lowest, double highest) {
  Interval out = mean_confidence_95(values);
  out.low = std::clamp(out.low, lowest, highest);
  out.high = std::clamp(out.high, lowest, highest);
  return out;
}

RandomSearchExpectation::RandomSearchExpectation(std::vector<double> outcome_times)
    : times_(std::move(outcome_times)) {
  std::sort(times_.begin(), times_.end());
  ok_ = static_cast<std::size_t>(std::count_if(times_.begin(), times_.end(),
                                               [](double t) { return std::isfinite(t); }));
  if (ok_ == 0) {
    throw Error(ErrorCode::invalid_argument,
                "random-search expectation needs at least one successful outcome");
  }
  median_ = ok_ % 2 ? times_[ok_ / 2] : 0.5 * (times_[ok_ / 2 - 1] + times_[ok_ / 2]);
}

template <typename Visit>
void RandomSearchExpectation::rank_distribution(std::size_t k, Visit&& visit) const {
  const std::size_t n = times_.size();
  k = std::clamp<std::size_t>(k, 1, n);
  double p = static_cast<double>(k) / static_cast<double>(n);  // P(rank 0) = k / N
  for (std::size_t i = 0; i + k <= n; ++i) {
    visit(i, p);
    const double remaining = static_cast<double>(n - 1 - i);
    p = remaining > 0 ? p * (remaining - static_cast<double>(k - 1)) / remaining : 0;
  }
}

double RandomSearchExpectation::expected_fraction(std::size_t k) const {
  double sum = 0;
  rank_distribution(k, [&](std::size_t i, double p) {
    if (i < ok_) sum += p * times_.front() / times_[i];
  });
  return sum;
}

double RandomSearchExpectation::expected_best_time(std::size_t k) const {
  double sum = 0;
  const double fallback = worst();
  rank_distribution(k, [&](std::size_t i, double p) { sum += p * (i < ok_ ? times_[i] : fallback); });
  return sum;
}

double fraction_of_optimum(double best_ms, double optimum_ms) {
  return std::isfinite(best_ms) && best_ms > 0 ? optimum_ms / best_ms : 0.0;
}

MethodologyScore methodology_score(const RandomSearchExpectation& random,
                                   const std::vector<double>& mean_best_time, double gap_start,
                                   double gap_end) {
  MethodologyScore out;
  const double opt = random.optimum(), gap = random.median() - opt;
  auto budget_closing = [&](double fraction) {
    const double target = opt + (1.0 - fraction) * gap;
    // expected_best_time falls monotonically in k: bisect for the first k reaching target.
    std::size_t lo = 1, hi = random.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (random.expected_best_time(mid) <= target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  out.first = budget_closing(gap_start);
  out.full_last = std::max(out.first, budget_closing(gap_end));
  out.last = std::min(out.full_last, mean_best_time.size());
  out.truncated = out.last < out.full_last;
  if (out.last < out.first) return out;
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t k = out.first; k <= out.last; ++k) {
    const double r = random.expected_best_time(k);
    if (r - opt <= 0) continue;
    sum += (r - mean_best_time[k - 1]) / (r - opt);
    ++count;
  }
  out.budgets = count;
  out.available = count > 0;
  out.score = count ? sum / static_cast<double>(count) : 0.0;
  return out;
}

namespace {

/// How many evaluations of a curve of `length` differ run by run: past the longest run every
/// run holds its last best, so the curve is flat there and is filled in once instead of per
/// run (a budget of 10^6 over a space of 11 configs). At least 1.
std::size_t varying_length(const std::vector<ReplayRun>& runs, std::size_t length) {
  std::size_t longest = 1;
  for (const auto& run : runs) longest = std::max(longest, run.best_ms.size());
  return std::min(length, longest);
}

}  // namespace

std::vector<double> mean_best_time_curve(const std::vector<ReplayRun>& runs, std::size_t length,
                                         double worst) {
  std::vector<double> out(length, 0.0);
  if (runs.empty()) return out;
  const std::size_t computed = varying_length(runs, length);
  for (const auto& run : runs) {
    for (std::size_t k = 0; k < computed; ++k) {
      double b = run.best_ms.empty() ? worst : run.best_ms[std::min(k, run.best_ms.size() - 1)];
      out[k] += std::isfinite(b) ? b : worst;
    }
  }
  for (std::size_t k = 0; k < computed; ++k) out[k] /= static_cast<double>(runs.size());
  for (std::size_t k = computed; k < length; ++k) out[k] = out[computed - 1];
  return out;
}

std::vector<double> mean_fraction_curve(const std::vector<ReplayRun>& runs, std::size_t length,
                                        double optimum) {
  std::vector<double> out;
  out.reserve(length);
  const std::size_t computed = varying_length(runs, length);
  for (std::size_t k = 1; k <= length; ++k)
    out.push_back(k <= computed ? mean_confidence_95(fractions_at(runs, k, optimum)).mean
                                : out.back());
  return out;
}

std::vector<double> fractions_at(const std::vector<ReplayRun>& runs, std::size_t k, double optimum) {
  std::vector<double> out;
  for (const auto& run : runs) {
    const double b = run.best_ms.empty() || k == 0
                         ? std::numeric_limits<double>::infinity()
                         : run.best_ms[std::min(k, run.best_ms.size()) - 1];
    out.push_back(fraction_of_optimum(b, optimum));
  }
  return out;
}

}  // namespace ktune::replay
