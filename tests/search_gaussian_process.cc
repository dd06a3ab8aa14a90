// The bayesian searcher's surrogate: fitting the hyperparameters on a subset of the training
// points uses that subset's own targets (the searcher fits on at most fit_points of its
// observations, best first), and the posterior interpolates what it was given.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "ktune/error.h"
#include "search/gaussian_process.h"

using ktune::search::GaussianProcess;

namespace {

/// `n` points in [0, 1]^2 and a smooth function of them, with a seeded generator.
void sample(std::size_t n, std::uint64_t seed, Eigen::MatrixXd& x, Eigen::VectorXd& y) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  x.resize(static_cast<Eigen::Index>(n), 2);
  y.resize(static_cast<Eigen::Index>(n));
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    x(i, 0) = u(rng);
    x(i, 1) = u(rng);
    y(i) = std::sin(6.0 * x(i, 0)) + 0.3 * x(i, 1);
  }
}

}  // namespace

TEST_CASE("A Gaussian process fitted on a subset of its points uses that subset's targets",
          "[search][bayesian]") {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  sample(40, 7, x, y);
  // The subset in an order unlike the points' own (the searcher sorts rows best first).
  const std::vector<std::size_t> rows = {31, 4, 17, 22, 9, 38, 0, 13, 26, 35, 2, 19};

  GaussianProcess all(2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) all.add(x.row(i).transpose());
  all.fit(rows, y, 60);

  GaussianProcess only(2);
  Eigen::VectorXd ys(static_cast<Eigen::Index>(rows.size()));
  std::vector<std::size_t> own(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    only.add(x.row(static_cast<Eigen::Index>(rows[i])).transpose());
    ys(static_cast<Eigen::Index>(i)) = y(static_cast<Eigen::Index>(rows[i]));
    own[i] = i;
  }
  only.fit(own, ys, 60);

  // The same data gives the same hyperparameters, whichever other points the model holds.
  REQUIRE(all.hyper().log_length.size() == 2);
  for (Eigen::Index j = 0; j < 2; ++j)
    CHECK(all.hyper().log_length(j) == Approx(only.hyper().log_length(j)).margin(1e-9));
  CHECK(all.hyper().log_signal == Approx(only.hyper().log_signal).margin(1e-9));
  CHECK(all.hyper().log_noise == Approx(only.hyper().log_noise).margin(1e-9));
  // The fit moved away from the starting values (the comparison above is not vacuous).
  CHECK(std::abs(all.hyper().log_length(0) - std::log(0.3)) > 1e-3);

  // After the fit the model covers every point: the posterior mean reproduces the targets.
  all.solve(y);
  const auto p = all.predict(x);
  for (Eigen::Index i = 0; i < x.rows(); ++i) CHECK(p.mean(i) == Approx(y(i)).margin(0.05));
}

TEST_CASE("A Gaussian process refuses targets that do not match its points",
          "[search][bayesian]") {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  sample(10, 3, x, y);
  GaussianProcess gp(2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) gp.add(x.row(i).transpose());
  const Eigen::VectorXd short_y = y.head(6);
  CHECK_THROWS_WITH(gp.fit({0, 1, 2}, short_y, 5), Catch::Contains("6 targets for 10 points"));
  CHECK_THROWS_WITH(gp.fit({0, 1, 12}, y, 5), Catch::Contains("row 12 of 10 points"));
}

TEST_CASE("A capped model holds the cheapest half and the most recent rest", "[search]") {
  using ktune::search::capped_model_rows;
  const double inf = std::numeric_limits<double>::infinity();
  // Up to the cap: everything, in order.
  CHECK(capped_model_rows({3, 1, 2}, 4) == std::vector<std::size_t>{0, 1, 2});
  // Ten observations, cap 4: the two cheapest (1: cost 0.5, 6: cost 0.1) and the two most
  // recent of the rest (8, 9), failures (+inf) never counted cheap, in observation order.
  const std::vector<double> costs{5, 0.5, 4, inf, 3, 2, 0.1, inf, 7, inf};
  CHECK(capped_model_rows(costs, 4) == std::vector<std::size_t>{1, 6, 8, 9});
  // The most recent already among the cheapest: the next most recent fills the cap.
  CHECK(capped_model_rows({5, 4, 3, 2, 1, 0.5}, 4) == std::vector<std::size_t>{2, 3, 4, 5});
  CHECK(capped_model_rows({0.1, 0.2, 9, 9, 9, 0.05}, 4) == std::vector<std::size_t>{0, 3, 4, 5});
  // Cost ties go to the earlier observation; the cap is never exceeded.
  CHECK(capped_model_rows({1, 1, 1, 1, 1, 1}, 4) == std::vector<std::size_t>{0, 1, 4, 5});
  CHECK(capped_model_rows(std::vector<double>(100, 1.0), 16).size() == 16);
}
