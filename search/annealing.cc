// `annealing`: simulated annealing over the neighbourhood structure of the space. The cost is
// the log of the time, so the temperature is scale-free (a temperature of 0.05 accepts a 5%
// slower neighbour with probability 1/e). The temperature cools geometrically per evaluation;
// when it falls below `t_min`, or the current config has no unmeasured neighbour left, the
// walk restarts from the best config found (alternating with a random valid config).
#include <algorithm>

#include "ktune/error.h"

#include "searcher_base.h"
#include "searchers.h"

namespace ktune::search {

namespace {

class AnnealingSearcher : public SearcherBase {
 public:
  explicit AnnealingSearcher(const SearcherOptions& o)
      : t0_(o.get_double("t0", 0)),
        cooling_(o.get_double("cooling", 0)),
        t_min_(o.get_double("t_min", 0)),
        initial_(static_cast<std::size_t>(std::max<std::int64_t>(1, o.get_int("initial", 0)))),
        kind_(o.get_string("neighbourhood", "") == "adjacent" ? Neighbourhood::adjacent
                                                              : Neighbourhood::hamming) {}

  std::string name() const override { return "annealing"; }

  std::vector<Config> propose(std::size_t max_batch) override {
    std::vector<Config> batch;
    if (max_batch == 0) return batch;
    for (int restarts = 0; restarts < 4 && batch.empty(); ++restarts) {
      if (!current_ && observed_ >= initial_ && best_ && !waiting_start_ && restarts_ == 0) {
        current_ = best_;  // the walk starts from the best of the initial sample
      }
      if (!current_) {  // initial sample or random restart: a batch of random configs
        while (batch.size() < max_batch) {
          auto c = random_unproposed();
          if (!c) break;
          mark_proposed(*c);
          batch.push_back(std::move(*c));
        }
        waiting_start_ = !batch.empty();
        return batch;
      }
      auto moves = unproposed_neighbours(current_->config, kind_);
      while (batch.size() < max_batch && !moves.empty()) {
        const std::size_t pick = below(moves.size());
        mark_proposed(moves[pick]);
        batch.push_back(std::move(moves[pick]));
        moves[pick] = std::move(moves.back());
        moves.pop_back();
      }
      if (batch.empty()) restart();  // neighbourhood exhausted
    }
    while (batch.size() < max_batch && batch.empty()) {  // still nothing: random fill
      auto c = random_unproposed();
      if (!c) break;
      mark_proposed(*c);
      batch.push_back(std::move(*c));
    }
    return batch;
  }

  void on_observe(const std::vector<Trial>& trials) override {
    const bool starting = waiting_start_;
    waiting_start_ = false;
    // A batch that began inside the initial sample belongs to it whole (a batch size that
    // does not divide `initial` included): the walk then starts from the best of all of it
    // (propose), not from the best of the batch's tail.
    const bool initial_sample = observed_ < initial_ && restarts_ == 0;
    bool restarted = false;  // a restart inside the batch: its other walk steps are not a start
    for (const auto& t : trials) {
      const double cost = trial_cost(t);
      ++observed_;
      if (std::isfinite(cost) && (!best_ || cost < best_->cost)) best_ = State{t.config, cost};
      if (initial_sample || restarted) continue;
      if (starting || !current_) {  // the walk (re)starts at the best of the random batch
        if (std::isfinite(cost) && (!current_ || cost < current_->cost)) current_ = State{t.config, cost};
        continue;
      }
      if (std::isfinite(cost)) {
        const double delta = cost - current_->cost;
        if (delta < 0 || uniform01() < std::exp(-delta / temperature_)) {
          current_ = State{t.config, cost};
        }
      }
      temperature_ *= cooling_;
      if (temperature_ < t_min_) {
        restart();
        restarted = true;
      }
    }
  }

 private:
  struct State {
    Config config;
    double cost;
  };

  void on_reset() override {
    current_.reset();
    best_.reset();
    waiting_start_ = false;
    temperature_ = t0_;
    restarts_ = 0;
    observed_ = 0;
  }

  void restart() {
    temperature_ = t0_;
    ++restarts_;
    // Odd restarts go back to the best config (its unmeasured neighbours), even ones explore.
    if (best_ && restarts_ % 2 == 1 && !unproposed_neighbours(best_->config, kind_).empty()) {
      current_ = best_;
    } else {
      current_.reset();
    }
  }

  double t0_;
  double cooling_;
  double t_min_;
  std::size_t initial_;
  std::size_t observed_ = 0;
  Neighbourhood kind_;
  std::optional<State> current_;
  std::optional<State> best_;
  bool waiting_start_ = false;
  double temperature_ = 1;
  int restarts_ = 0;
};

}  // namespace

SearcherInfo annealing_info() {
  return {"annealing",
          "simulated annealing over the space's neighbourhoods with geometric cooling and "
          "restarts",
          {{"initial", "12", "random configs measured before the walk starts from the best",
             "int 1..1000000"},
           {"t0", "0.05", "start temperature, in units of log(time)", "real 0.000001..1000000"},
           {"cooling", "0.99", "temperature factor per evaluation", "real 0.000001..1"},
           {"t_min", "0.005", "restart when the temperature falls below this", "real 0..1000000"},
           {"neighbourhood", "hamming", "hamming (any one parameter) or adjacent (one step)",
             "hamming|adjacent"}}};
}

std::unique_ptr<Searcher> make_annealing(const SearcherOptions& options) {
  const std::string kind = options.get_string("neighbourhood", "hamming");
  if (kind != "hamming" && kind != "adjacent") {
    throw Error(ErrorCode::invalid_argument,
                "annealing option neighbourhood='" + kind + "': expected hamming or adjacent");
  }
  return std::make_unique<AnnealingSearcher>(options);
}

}  // namespace ktune::search
