// Sample statistics for timing (see stats.h).
#include "stats.h"

#include <algorithm>
#include <cmath>

namespace ktune::stats {

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(samples.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, samples.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return samples[lo] * (1 - frac) + samples[hi] * frac;
}

double median(const std::vector<double>& samples) { return quantile(samples, 0.5); }

double minimum(const std::vector<double>& samples) {
  return samples.empty() ? 0 : *std::min_element(samples.begin(), samples.end());
}

double relative_spread(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  double m = median(samples);
  if (m <= 0) return 0;
  return (quantile(samples, 0.9) - quantile(samples, 0.1)) / m;
}

double relative_range(const std::vector<double>& values) {
  if (values.empty()) return 0;
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return *lo > 0 ? (*hi - *lo) / *lo : 0;
}

NoiseVerdict compare_rounds(const std::vector<double>& rounds_a,
                            const std::vector<double>& rounds_b, double floor) {
  NoiseVerdict v;
  double ma = median(rounds_a), mb = median(rounds_b);
  if (ma <= 0) return v;
  v.difference = (mb - ma) / ma;
  double half_widths = 0.5 * (relative_spread(rounds_a) + relative_spread(rounds_b));
  v.noise = std::max(floor, half_widths);
  v.within_noise = std::abs(v.difference) <= v.noise;
  return v;
}

}  // namespace ktune::stats
