// Sample statistics for timing: quantiles, median, relative spread, and the noise test used
// when the tuner decides whether the two best candidates can be told apart.
#pragma once

#include <cstddef>
#include <vector>

namespace ktune::stats {

/// Linear-interpolated quantile (q in [0, 1]) of unsorted samples; 0 for an empty vector.
double quantile(std::vector<double> samples, double q);
/// Median of unsorted samples; 0 for an empty vector.
double median(const std::vector<double>& samples);
/// Smallest sample; 0 for an empty vector.
double minimum(const std::vector<double>& samples);
/// Relative spread (p90 - p10) / median; 0 for fewer than two samples or a zero median.
double relative_spread(const std::vector<double>& samples);
/// Relative difference between the largest and smallest value: (max - min) / min.
double relative_range(const std::vector<double>& values);

/// Verdict of comparing two candidates measured in several interleaved rounds.
struct NoiseVerdict {
  bool within_noise = false;  ///< true when the difference is not larger than the noise
  double difference = 0;      ///< (median_b - median_a) / median_a of the per-round medians
  double noise = 0;           ///< the noise level the difference was compared with
};

/// Compares candidate A (the faster) with B from their per-round median times. The noise is
/// the larger of `floor` and the half-width of the rounds' spread of each candidate (p90-p10
/// of the round medians relative to their median, halved, summed for both candidates); the two
/// are within noise when B's median is not slower than A's by more than that.
NoiseVerdict compare_rounds(const std::vector<double>& rounds_a,
                            const std::vector<double>& rounds_b, double floor = 0.01);

}  // namespace ktune::stats
