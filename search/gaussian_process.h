// GaussianProcess: the surrogate of the bayesian searcher. A zero-mean GP with an ARD
// Matérn 5/2 kernel over features in [0, 1]^d, Gaussian noise, hyperparameters fitted by
// maximizing the log marginal likelihood (Adam on log parameters, on a capped subset), and a
// Cholesky factor extended by one row per new observation so that adding data costs O(n^2).
// Internal to search/.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace ktune::search {

/// Kernel hyperparameters, in logs.
struct GpHyper {
  Eigen::VectorXd log_length;  ///< per-feature length scales
  double log_signal = 0;       ///< log signal variance
  double log_noise = -4;       ///< log noise variance
};

/// Posterior mean and variance at a set of points.
struct GpPrediction {
  Eigen::VectorXd mean;      ///< posterior mean
  Eigen::VectorXd variance;  ///< posterior variance (latent function)
};

/// A GP regression model with incremental Cholesky updates.
class GaussianProcess {
 public:
  /// A model over `dims` features with default hyperparameters.
  explicit GaussianProcess(std::size_t dims = 0);
  /// Removes every point; keeps the hyperparameters.
  void clear();
  /// Number of training points.
  std::size_t size() const { return n_; }
  /// Adds a training input (targets are given to solve()). Extends the factor in O(n^2).
  void add(const Eigen::VectorXd& x);
  /// Keeps only the first `n` training points (their factor is unchanged).
  void truncate(std::size_t n) { n_ = std::min(n, n_); }
  /// Computes the weights for targets `y` (one per point, already standardized).
  void solve(const Eigen::VectorXd& y);
  /// Posterior at the rows of `points` (after solve()).
  GpPrediction predict(const Eigen::MatrixXd& points) const;
  /// Fits hyperparameters on the training points `rows` by maximizing the log marginal
  /// likelihood of their targets (`y` holds one target per training point, indexed like the
  /// points; warm start from the current values), then refactors the full training set.
  void fit(const std::vector<std::size_t>& rows, const Eigen::VectorXd& y, int iterations);
  /// The current hyperparameters.
  const GpHyper& hyper() const { return hyper_; }

 private:
  Eigen::MatrixXd kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const;
  void refactor();
  void reserve(std::size_t n);

  std::size_t dims_;
  GpHyper hyper_;
  std::size_t n_ = 0;
  Eigen::MatrixXd x_;      // capacity rows x dims
  Eigen::MatrixXd chol_;   // capacity x capacity; lower triangle of the top-left n x n used
  Eigen::VectorXd alpha_;  // (K + noise I)^-1 y
};

/// The observations a model capped at `cap` points holds, in observation order, given each
/// observation's cost (+inf for a failure): all of them up to `cap`; beyond that the `cap / 2`
/// cheapest (ties to the earlier) and the most recent of the rest up to `cap` in all, so that
/// the model keeps both where the optimum is and where the search is now.
std::vector<std::size_t> capped_model_rows(const std::vector<double>& costs, std::size_t cap);

}  // namespace ktune::search
