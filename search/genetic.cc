// `genetic`: a steady-state genetic algorithm. It starts from a spread-out random design (each
// config the farthest, in Hamming distance, of a few random draws). The population is the
// best `population` configs measured so far (elitism); parents are picked by tournament, mixed
// by uniform crossover of parameter positions and mutated (a step to an adjacent value or a
// jump to any value). Children that violate a constraint or were proposed before are repaired
// by further mutation, then by a neighbour of the first parent, then by a random valid config.
#include <algorithm>
#include <map>

#include "searcher_base.h"
#include "searchers.h"

namespace ktune::search {

namespace {

class GeneticSearcher : public SearcherBase {
 public:
  explicit GeneticSearcher(const SearcherOptions& o)
      : population_(static_cast<std::size_t>(std::max<std::int64_t>(2, o.get_int("population", 0)))),
        tournament_(static_cast<std::size_t>(std::max<std::int64_t>(1, o.get_int("tournament", 0)))),
        crossover_(o.get_double("crossover", 0)),
        mutation_(o.get_double("mutation", 0)),
        initial_(static_cast<std::size_t>(std::max<std::int64_t>(2, o.get_int("initial", 0)))),
        jump_(o.get_double("jump", 0)),
        design_draws_(static_cast<std::size_t>(std::max<std::int64_t>(1, o.get_int("design_draws", 0)))) {}

  std::string name() const override { return "genetic"; }

  std::vector<Config> propose(std::size_t max_batch) override {
    std::vector<Config> batch;
    while (batch.size() < max_batch) {
      std::optional<Config> child;
      if (proposed_count() < initial_ || elite_.size() < 2) {
        child = spread_unproposed();
      } else {
        child = breed();
      }
      if (!child) break;
      mark_proposed(*child);
      batch.push_back(std::move(*child));
    }
    return batch;
  }

  void on_observe(const std::vector<Trial>& trials) override {
    for (const auto& t : trials) {
      const double cost = trial_cost(t);
      if (!std::isfinite(cost)) continue;  // failures never become parents
      elite_.push_back({space().positions(t.config), cost});
    }
    std::stable_sort(elite_.begin(), elite_.end(),
                     [](const Member& a, const Member& b) { return a.cost < b.cost; });
    if (elite_.size() > population_) elite_.resize(population_);
  }

 private:
  struct Member {
    std::vector<std::uint32_t> positions;
    double cost;
  };

  void on_reset() override {
    elite_.clear();
    design_.clear();
  }

  /// Initial design: the best spread of `design_draws` random unproposed configs (the one
  /// farthest, in Hamming distance, from the closest config of the design so far).
  std::optional<Config> spread_unproposed() {
    std::optional<Config> chosen;
    std::size_t chosen_distance = 0;
    std::vector<std::uint32_t> chosen_positions;
    for (std::size_t draw = 0; draw < design_draws_; ++draw) {
      auto c = random_unproposed();
      if (!c) break;
      auto pos = space().positions(*c);
      std::size_t nearest = pos.size() + 1;
      for (const auto& d : design_) {
        std::size_t differing = 0;
        for (std::size_t g = 0; g < pos.size(); ++g) differing += pos[g] != d[g];
        nearest = std::min(nearest, differing);
      }
      if (!chosen || nearest > chosen_distance) {
        chosen = std::move(c);
        chosen_distance = nearest;
        chosen_positions = std::move(pos);
      }
    }
    if (chosen) design_.push_back(std::move(chosen_positions));
    return chosen;
  }

  const Member& tournament() {
    const Member* best = &elite_[below(elite_.size())];
    for (std::size_t i = 1; i < tournament_; ++i) {
      const Member& m = elite_[below(elite_.size())];
      if (m.cost < best->cost) best = &m;
    }
    return *best;
  }

  void mutate_gene(std::vector<std::uint32_t>& pos, std::size_t gene) {
    const auto n = static_cast<std::uint32_t>(space().params()[gene].values.size());
    if (n < 2) return;
    if (uniform01() >= jump_) {  // step to an adjacent value
      if (pos[gene] == 0) pos[gene] = 1;
      else if (pos[gene] + 1 == n) pos[gene] = n - 2;
      else pos[gene] += uniform01() < 0.5 ? -1 : 1;
    } else {  // jump to any other value
      auto k = static_cast<std::uint32_t>(below(n - 1));
      pos[gene] = k >= pos[gene] ? k + 1 : k;
    }
  }

  bool usable(const std::vector<std::uint32_t>& pos, Config& out) {
    out = space().from_positions(pos);
    return space().valid(out) && !was_proposed(out);
  }

  std::optional<Config> breed() {
    const std::size_t dims = space().dims();
    const Member& a = tournament();
    const Member& b = tournament();
    std::vector<std::uint32_t> child = a.positions;
    if (uniform01() < crossover_) {
      for (std::size_t g = 0; g < dims; ++g) {
        if (uniform01() < 0.5) child[g] = b.positions[g];
      }
    }
    for (std::size_t g = 0; g < dims; ++g) {
      if (uniform01() < mutation_) mutate_gene(child, g);
    }
    Config out;
    if (usable(child, out)) return out;
    for (int attempt = 0; attempt < 24 && dims > 0; ++attempt) {
      mutate_gene(child, below(dims));
      if (usable(child, out)) return out;
    }
    auto around = unproposed_neighbours(space().from_positions(a.positions), Neighbourhood::hamming);
    if (!around.empty()) return around[below(around.size())];
    return random_unproposed();
  }

  std::size_t population_;
  std::size_t tournament_;
  double crossover_;
  double mutation_;
  std::size_t initial_;
  double jump_;
  std::size_t design_draws_;
  std::vector<Member> elite_;
  std::vector<std::vector<std::uint32_t>> design_;  // positions of the initial design
};

}  // namespace

SearcherInfo genetic_info() {
  return {"genetic",
          "steady-state genetic algorithm: tournament selection, uniform crossover, "
          "constraint-repairing mutation, elitist population",
          {{"population", "4", "number of best measured configs that breed", "int 2..100000"},
           {"tournament", "2", "configs drawn per tournament (selection pressure)",
             "int 1..100000"},
           {"crossover", "0.8", "probability that a child mixes two parents", "real 0..1"},
           {"mutation", "0.15", "per-parameter mutation probability", "real 0..1"},
           {"initial", "12", "configs of the spread-out random design measured before breeding",
             "int 2..1000000"},
           {"jump", "0.5", "probability that a mutation jumps to any value (else one step)",
             "real 0..1"},
           {"design_draws", "3", "random draws per initial config; the most spread-out one is kept",
             "int 1..1000"}}};
}

std::unique_ptr<Searcher> make_genetic(const SearcherOptions& options) {
  return std::make_unique<GeneticSearcher>(options);
}

}  // namespace ktune::search
