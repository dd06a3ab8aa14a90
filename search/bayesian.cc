// `bayesian`: Bayesian optimization with a Gaussian-process surrogate (gaussian_process.h)
// of log(time) over SearchSpace::encode features. After a random initial design, each
// proposal maximizes an acquisition (expected improvement, lower confidence bound or
// probability of improvement) over a pool of valid, never-proposed candidates: random
// samples plus the neighbours of the best configs found. Failed configs are imputed with the
// worst observed time, so the model learns to avoid their region. Batches use the kriging
// believer: a picked candidate joins the model with its predicted mean before the next pick.
#include <algorithm>
#include <unordered_set>

#include "gaussian_process.h"
#include "ktune/error.h"
#include "searcher_base.h"
#include "searchers.h"

namespace ktune::search {

namespace {

enum class Acquisition { ei, lcb, pi };

double normal_pdf(double z) { return 0.3989422804014327 * std::exp(-0.5 * z * z); }
double normal_cdf(double z) { return 0.5 * std::erfc(-z * 0.7071067811865476); }

class BayesianSearcher : public SearcherBase {
 public:
  explicit BayesianSearcher(const SearcherOptions& o)
      : initial_(static_cast<std::size_t>(std::max<std::int64_t>(2, o.get_int("initial", 0)))),
        random_candidates_(static_cast<std::size_t>(std::max<std::int64_t>(1, o.get_int("candidates", 0)))),
        incumbents_(static_cast<std::size_t>(std::max<std::int64_t>(0, o.get_int("incumbents", 0)))),
        refit_every_(static_cast<std::size_t>(std::max<std::int64_t>(1, o.get_int("refit_every", 0)))),
        fit_points_(static_cast<std::size_t>(std::max<std::int64_t>(8, o.get_int("fit_points", 0)))),
        model_points_(static_cast<std::size_t>(std::max<std::int64_t>(16, o.get_int("model_points", 0)))),
        fit_iterations_(static_cast<int>(o.get_int("fit_iterations", 0))),
        xi_(o.get_double("xi", 0)),
        kappa_(o.get_double("kappa", 0)) {
    const std::string a = o.get_string("acquisition", "ei");
    acquisition_ = a == "lcb" ? Acquisition::lcb : a == "pi" ? Acquisition::pi : Acquisition::ei;
  }

  std::string name() const override { return "bayesian"; }

  std::vector<Config> propose(std::size_t max_batch) override {
    std::vector<Config> batch;
    bool model_updated = false;  // refit on the batch's first model pick, wherever it falls
    while (batch.size() < max_batch) {
      std::optional<Config> pick;
      if (ok_count_ < 2 || observed_.size() + pending_ < initial_) {
        pick = random_unproposed();
        if (pick) ++pending_;
      } else {
        pick = best_candidate(!model_updated);
        model_updated = true;
      }
      if (!pick) break;
      mark_proposed(*pick);
      batch.push_back(std::move(*pick));
    }
    return batch;
  }

  void on_observe(const std::vector<Trial>& trials) override {
    for (const auto& t : trials) {
      const double cost = trial_cost(t);
      observed_.push_back({t.config, cost});
      if (std::isfinite(cost)) ++ok_count_;
      if (pending_ > 0) --pending_;
    }
  }

 private:
  struct Observation {
    Config config;
    double cost;  // log time, +inf when failed
  };

  void on_reset() override {
    observed_.clear();
    ok_count_ = 0;
    pending_ = 0;
    dims_.clear();
    for (std::size_t i = 0; i < space().dims(); ++i) {
      if (space().params()[i].values.size() > 1) dims_.push_back(i);
    }
    gp_ = GaussianProcess(dims_.size());
    rows_.clear();
    modelled_ = 0;
    last_fit_ = 0;
  }

  Eigen::VectorXd features(const Config& c) const {
    const std::vector<double> all = space().encode(c);
    Eigen::VectorXd x(static_cast<Eigen::Index>(dims_.size()));
    for (std::size_t i = 0; i < dims_.size(); ++i) x(static_cast<Eigen::Index>(i)) = all[dims_[i]];
    return x;
  }

  /// Standardized targets of the modelled observations, failures imputed with the worst.
  Eigen::VectorXd targets(double& best) const {
    double worst = -std::numeric_limits<double>::infinity();
    for (std::size_t i : rows_) {
      if (std::isfinite(observed_[i].cost)) worst = std::max(worst, observed_[i].cost);
    }
    Eigen::VectorXd y(static_cast<Eigen::Index>(rows_.size()));
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      const double cost = observed_[rows_[k]].cost;
      y(static_cast<Eigen::Index>(k)) = std::isfinite(cost) ? cost : worst;
    }
    const double mean = y.mean();
    const double sd = std::sqrt(std::max((y.array() - mean).square().mean(), 1e-12));
    y = (y.array() - mean) / sd;
    best = y.minCoeff();
    return y;
  }

  /// Brings the model up to date with every observation (refitting now and then).
  Eigen::VectorXd update_model(double& best) {
    gp_.truncate(rows_.size());  // drop the believed points of the previous batch
    const bool refit_due = gp_.size() == 0 ||
        observed_.size() - last_fit_ >= std::min(refit_every_, std::max<std::size_t>(1, observed_.size() / 8));
    if (refit_due) {
      gp_.clear();
      modelled_ = observed_.size();
      rows_ = model_rows();
      for (std::size_t i : rows_) gp_.add(features(observed_[i].config));
      const Eigen::VectorXd y = targets(best);
      gp_.fit(fit_rows(y), y, fit_iterations_);
      last_fit_ = modelled_;
    } else {
      while (modelled_ < observed_.size()) {
        rows_.push_back(modelled_);
        gp_.add(features(observed_[modelled_++].config));
      }
    }
    Eigen::VectorXd y = targets(best);
    gp_.solve(y);
    return y;
  }

  /// Observations the model holds after a refit (capped_model_rows: the model's Cholesky
  /// factor and every prediction cost grow with its size, O(n^3) and O(n^2)).
  std::vector<std::size_t> model_rows() const {
    std::vector<double> costs;
    costs.reserve(observed_.size());
    for (const auto& o : observed_) costs.push_back(o.cost);
    return capped_model_rows(costs, model_points_);
  }

  /// Rows used to fit hyperparameters: all, or the best half of the cap plus an even spread.
  std::vector<std::size_t> fit_rows(const Eigen::VectorXd& y) const {
    std::vector<std::size_t> rows(static_cast<std::size_t>(y.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    if (rows.size() <= fit_points_) return rows;
    std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
      return y(static_cast<Eigen::Index>(a)) < y(static_cast<Eigen::Index>(b));
    });
    std::vector<std::size_t> out(rows.begin(), rows.begin() + fit_points_ / 2);
    const std::size_t half = out.size(), rest = rows.size() - half, want = fit_points_ - half;
    for (std::size_t k = 0; k < want; ++k) out.push_back(rows[half + k * rest / want]);
    return out;
  }

  std::vector<Config> candidate_pool() {
    std::vector<Config> pool;
    std::unordered_set<std::string> seen;  // by text: spaces beyond 2^63 points have no index
    auto add = [&](Config&& c) {
      if (seen.insert(c.str()).second) pool.push_back(std::move(c));
    };
    // Neighbours of the best configs found.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < observed_.size(); ++i) {
      if (std::isfinite(observed_[i].cost)) order.push_back(i);
    }
    const std::size_t top = std::min(incumbents_, order.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](std::size_t a, std::size_t b) { return observed_[a].cost < observed_[b].cost; });
    for (std::size_t k = 0; k < top; ++k) {
      for (auto& n : unproposed_neighbours(observed_[order[k]].config, Neighbourhood::hamming)) add(std::move(n));
    }
    // Random valid configs not proposed yet.
    for (std::size_t k = 0; k < random_candidates_; ++k) {
      auto c = random_unproposed();
      if (!c) break;
      add(std::move(*c));
    }
    return pool;
  }

  double score(double mean, double variance, double best) const {
    const double sd = std::sqrt(variance);
    switch (acquisition_) {
      case Acquisition::lcb: return -(mean - kappa_ * sd);
      case Acquisition::pi: return normal_cdf((best - mean - xi_) / sd);
      case Acquisition::ei:
      default: {
        const double gain = best - mean - xi_;
        const double z = gain / sd;
        return gain * normal_cdf(z) + sd * normal_pdf(z);
      }
    }
  }

  std::optional<Config> best_candidate(bool refit) {
    if (refit) y_ = update_model(best_);
    std::vector<Config> pool = candidate_pool();
    if (pool.empty()) return std::nullopt;
    Eigen::MatrixXd x(static_cast<Eigen::Index>(pool.size()), static_cast<Eigen::Index>(dims_.size()));
    for (std::size_t i = 0; i < pool.size(); ++i) x.row(static_cast<Eigen::Index>(i)) = features(pool[i]).transpose();
    const GpPrediction p = gp_.predict(x);
    Eigen::Index arg = 0;
    double top = -std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const double s = score(p.mean(i), p.variance(i), best_);
      if (s > top) {
        top = s;
        arg = i;
      }
    }
    // Kriging believer for the rest of the batch: the pick joins the model at its mean.
    gp_.add(x.row(arg).transpose());
    y_.conservativeResize(y_.size() + 1);
    y_(y_.size() - 1) = p.mean(arg);
    gp_.solve(y_);
    return pool[static_cast<std::size_t>(arg)];
  }

  std::size_t initial_;
  std::size_t random_candidates_;
  std::size_t incumbents_;
  std::size_t refit_every_;
  std::size_t fit_points_;
  std::size_t model_points_;
  int fit_iterations_;
  double xi_;
  double kappa_;
  Acquisition acquisition_ = Acquisition::ei;

  std::vector<Observation> observed_;
  std::size_t ok_count_ = 0;
  std::size_t pending_ = 0;  // initial-design configs proposed but not yet observed
  std::vector<std::size_t> dims_;
  GaussianProcess gp_;
  std::vector<std::size_t> rows_;  // the observation behind each model row
  std::size_t modelled_ = 0;       // observations considered (the model holds rows_ of them)
  std::size_t last_fit_ = 0;
  Eigen::VectorXd y_;
  double best_ = 0;  // best standardized target in the model
};

}  // namespace

SearcherInfo bayesian_info() {
  return {"bayesian",
          "Gaussian-process Bayesian optimization (Matern 5/2, log time, EI / LCB / PI) over "
          "random and neighbouring candidates",
          {{"acquisition", "ei", "ei (expected improvement), lcb (lower confidence bound) or pi",
             "ei|lcb|pi"},
           {"initial", "6", "random configs measured before the model proposes", "int 2..1000000"},
           {"candidates", "96", "random valid candidates scored per proposal", "int 1..100000"},
           {"incumbents", "3", "best configs whose neighbours join the candidates", "int 0..1000"},
           {"xi", "0.01", "exploration margin of ei and pi (standardized log time)",
             "real 0..1000"},
           {"kappa", "2.0", "exploration weight of lcb", "real 0..1000"},
           {"refit_every", "10", "observations between hyperparameter fits", "int 1..1000000"},
           {"fit_points", "96", "most observations a hyperparameter fit uses", "int 8..10000"},
           {"model_points", "512",
            "most observations the model holds (beyond: the best half and the most recent)",
            "int 16..100000"},
           {"fit_iterations", "30", "Adam steps per hyperparameter fit", "int 0..100000"}}};
}

std::unique_ptr<Searcher> make_bayesian(const SearcherOptions& options) {
  const std::string a = options.get_string("acquisition", "ei");
  if (a != "ei" && a != "lcb" && a != "pi") {
    throw Error(ErrorCode::invalid_argument,
                "bayesian option acquisition='" + a + "': expected ei, lcb or pi");
  }
  return std::make_unique<BayesianSearcher>(options);
}

}  // namespace ktune::search
