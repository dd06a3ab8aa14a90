// GaussianProcess: Matérn 5/2 kernel, incremental Cholesky, marginal-likelihood fit.
#include "gaussian_process.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ktune/error.h"

namespace ktune::search {

namespace {

constexpr double kSqrt5 = 2.2360679774997896;
// Bounds of the log hyperparameters (features live in [0, 1]).
constexpr double kMinLogLength = -3.5, kMaxLogLength = 3.0;
constexpr double kMinLogSignal = -3.0, kMaxLogSignal = 3.0;
constexpr double kMinLogNoise = -11.0, kMaxLogNoise = 0.0;
constexpr double kJitter = 1e-9;

}  // namespace

GaussianProcess::GaussianProcess(std::size_t dims) : dims_(dims) {
  hyper_.log_length = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(dims), std::log(0.3));
  hyper_.log_signal = 0.0;
  hyper_.log_noise = std::log(1e-3);
}

void GaussianProcess::clear() { n_ = 0; }

void GaussianProcess::reserve(std::size_t n) {
  const auto cap = static_cast<std::size_t>(x_.rows());
  if (n <= cap) return;
  const std::size_t grown = std::max<std::size_t>({n, 2 * cap, 64});
  Eigen::MatrixXd x(grown, dims_);
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(grown, grown);
  x.topRows(n_) = x_.topRows(n_);
  c.topLeftCorner(n_, n_) = chol_.topLeftCorner(n_, n_);
  x_ = std::move(x);
  chol_ = std::move(c);
}

Eigen::MatrixXd GaussianProcess::kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const {
  const Eigen::RowVectorXd inv = (-hyper_.log_length).array().exp().matrix().transpose();
  const Eigen::MatrixXd as = a.array().rowwise() * inv.array();
  const Eigen::MatrixXd bs = b.array().rowwise() * inv.array();
  Eigen::MatrixXd d2 = (-2.0 * as * bs.transpose()).colwise() + as.rowwise().squaredNorm();
  d2.rowwise() += bs.rowwise().squaredNorm().transpose();
  const double sf2 = std::exp(hyper_.log_signal);
  return d2.unaryExpr([sf2](double v) {
    const double r = std::sqrt(std::max(v, 0.0));
    return sf2 * (1.0 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r);
  });
}

void GaussianProcess::add(const Eigen::VectorXd& x) {
  reserve(n_ + 1);
  x_.row(n_) = x.transpose();
  const double diag = std::exp(hyper_.log_signal) + std::exp(hyper_.log_noise) + kJitter;
  if (n_ == 0) {
    chol_(0, 0) = std::sqrt(diag);
  } else {
    Eigen::VectorXd k = kernel(x_.topRows(n_), x.transpose());
    chol_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(k);
    chol_.block(n_, 0, 1, n_) = k.transpose();
    chol_(n_, n_) = std::sqrt(std::max(diag - k.squaredNorm(), 1e-10));
  }
  ++n_;
}

void GaussianProcess::refactor() {
  if (n_ == 0) return;
  Eigen::MatrixXd k = kernel(x_.topRows(n_), x_.topRows(n_));
  k.diagonal().array() += std::exp(hyper_.log_noise) + kJitter;
  Eigen::LLT<Eigen::MatrixXd> llt(k);
  chol_.topLeftCorner(n_, n_) = llt.matrixL();
}

void GaussianProcess::solve(const Eigen::VectorXd& y) {
  const auto l = chol_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>();
  alpha_ = l.solve(y);
  l.transpose().solveInPlace(alpha_);
}

GpPrediction GaussianProcess::predict(const Eigen::MatrixXd& points) const {
  GpPrediction out;
  const double sf2 = std::exp(hyper_.log_signal);
  if (n_ == 0) {
    out.mean = Eigen::VectorXd::Zero(points.rows());
    out.variance = Eigen::VectorXd::Constant(points.rows(), sf2);
    return out;
  }
  Eigen::MatrixXd ks = kernel(x_.topRows(n_), points);  // n x m
  out.mean = ks.transpose() * alpha_;
  chol_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(ks);
  out.variance = (sf2 - ks.colwise().squaredNorm().transpose().array()).max(1e-12).matrix();
  return out;
}

void GaussianProcess::fit(const std::vector<std::size_t>& rows, const Eigen::VectorXd& y,
                          int iterations) {
  if (static_cast<std::size_t>(y.size()) != n_)
    throw Error(ErrorCode::invalid_argument, "GaussianProcess::fit: " + std::to_string(y.size()) +
                                                 " targets for " + std::to_string(n_) + " points");
  for (const std::size_t r : rows)
    if (r >= n_)
      throw Error(ErrorCode::invalid_argument, "GaussianProcess::fit: row " + std::to_string(r) +
                                                   " of " + std::to_string(n_) + " points");
  const auto n = static_cast<Eigen::Index>(rows.size());
  if (n >= 3 && iterations > 0) {
    // The fitted subset: its inputs and its own targets (y holds one per training point).
    Eigen::MatrixXd x(n, dims_);
    Eigen::VectorXd ys(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      x.row(i) = x_.row(static_cast<Eigen::Index>(rows[i]));
      ys(i) = y(static_cast<Eigen::Index>(rows[i]));
    }
    const auto d = static_cast<Eigen::Index>(dims_);
    // Parameters: [log_length (d), log_signal, log_noise]; Adam ascent on the log likelihood.
    Eigen::VectorXd theta(d + 2), m = Eigen::VectorXd::Zero(d + 2), v = m;
    theta << hyper_.log_length, hyper_.log_signal, hyper_.log_noise;
    const double rate = 0.08, beta1 = 0.9, beta2 = 0.999;
    for (int it = 1; it <= iterations; ++it) {
      hyper_.log_length = theta.head(d);
      hyper_.log_signal = theta(d);
      hyper_.log_noise = theta(d + 1);
      const Eigen::MatrixXd kf = kernel(x, x);
      Eigen::MatrixXd k = kf;
      const double sn2 = std::exp(hyper_.log_noise);
      k.diagonal().array() += sn2 + kJitter;
      Eigen::LLT<Eigen::MatrixXd> llt(k);
      if (llt.info() != Eigen::Success) break;
      const Eigen::VectorXd a = llt.solve(ys);
      Eigen::MatrixXd w = a * a.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
      Eigen::VectorXd grad(d + 2);
      // dK/dlog_length_j = sf2 * 5/3 (1 + sqrt5 r) exp(-sqrt5 r) * diff_j^2 / l_j^2.
      const Eigen::ArrayXd inv2 = (-2.0 * hyper_.log_length).array().exp();
      Eigen::MatrixXd r2 = Eigen::MatrixXd::Zero(n, n);
      std::vector<Eigen::MatrixXd> diff2(d);
      for (Eigen::Index j = 0; j < d; ++j) {
        const Eigen::VectorXd col = x.col(j);
        diff2[j] = ((col.replicate(1, n) - col.transpose().replicate(n, 1)).array().square() *
                    inv2(j)).matrix();
        r2 += diff2[j];
      }
      const double sf2 = std::exp(hyper_.log_signal);
      const Eigen::MatrixXd common = r2.unaryExpr([sf2](double v) {
        const double r = std::sqrt(std::max(v, 0.0));
        return sf2 * 5.0 / 3.0 * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
      });
      const Eigen::MatrixXd wc = w.cwiseProduct(common);
      for (Eigen::Index j = 0; j < d; ++j) grad(j) = 0.5 * wc.cwiseProduct(diff2[j]).sum();
      grad(d) = 0.5 * w.cwiseProduct(kf).sum();
      grad(d + 1) = 0.5 * w.trace() * sn2;
      m = beta1 * m + (1 - beta1) * grad;
      v = beta2 * v + (1 - beta2) * grad.cwiseAbs2();
      const double c1 = 1 - std::pow(beta1, it), c2 = 1 - std::pow(beta2, it);
      theta += (rate * (m / c1).array() / ((v / c2).array().sqrt() + 1e-8)).matrix();
      for (Eigen::Index j = 0; j < d; ++j) theta(j) = std::clamp(theta(j), kMinLogLength, kMaxLogLength);
      theta(d) = std::clamp(theta(d), kMinLogSignal, kMaxLogSignal);
      theta(d + 1) = std::clamp(theta(d + 1), kMinLogNoise, kMaxLogNoise);
    }
    hyper_.log_length = theta.head(d);
    hyper_.log_signal = theta(d);
    hyper_.log_noise = theta(d + 1);
  }
  refactor();
}

std::vector<std::size_t> capped_model_rows(const std::vector<double>& costs, std::size_t cap) {
  const std::size_t n = costs.size();
  std::vector<std::size_t> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = i;
  if (n <= cap) return rows;
  std::vector<std::size_t> by_cost = rows;  // failures (+inf) last
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] < costs[b]; });
  std::vector<bool> taken(n, false);
  for (std::size_t k = 0; k < cap / 2; ++k) taken[by_cost[k]] = true;
  std::size_t count = cap / 2;
  for (std::size_t i = n; i-- > 0 && count < cap;) {
    if (!taken[i]) {
      taken[i] = true;
      ++count;
    }
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i)
    if (taken[i]) out.push_back(i);
  return out;
}

}  // namespace ktune::search
