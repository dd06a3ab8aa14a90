// SearcherBase: the bookkeeping every searcher shares: the space, a seeded generator, the set
// of configs already proposed, and drawing valid configs never proposed before (uniformly,
// without enumerating large spaces). Internal to search/.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "ktune/searcher.h"

namespace ktune::search {

/// Cost a searcher minimizes: log of the median time; +infinity for a failed trial.
double trial_cost(const Trial& trial);

/// Common state of the searchers: space, generator, proposed set.
class SearcherBase : public Searcher {
 public:
  void reset(const SearchSpace& space, std::uint64_t seed) override;
  /// Marks every observed config of the space as proposed (the tuner also hands over trials
  /// it measured on its own: the default config, resumed trials), then on_observe() with those
  /// trials; trials whose config is not of the space are ignored.
  void observe(const std::vector<Trial>& trials) final;

 protected:
  /// Called by reset() after the common state is cleared; searchers clear their own state.
  virtual void on_reset() {}
  /// Called by observe() with the trials of the space, after their configs are marked
  /// proposed.
  virtual void on_observe(const std::vector<Trial>&) {}
  /// The space of the current run.
  const SearchSpace& space() const { return space_; }
  /// The run's generator.
  std::mt19937_64& rng() { return rng_; }
  /// Uniform real in [0, 1).
  double uniform01() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n > 0.
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(rng_()) * n) >> 64);
  }
  /// True when the config was proposed before in this run.
  bool was_proposed(const Config& config) const;
  /// Records a config as proposed; false when it already was.
  bool mark_proposed(const Config& config);
  /// Number of configs proposed so far.
  std::size_t proposed_count() const { return proposed_.size() + proposed_text_.size(); }
  /// A uniformly random valid config never proposed (not yet marked), or nullopt when the
  /// space has none left (exact on spaces small enough to list; on huge spaces, nullopt only
  /// after many failed draws). Error(unsatisfiable) from SearchSpace::random when no valid
  /// config exists (or a space beyond 2^26 points hides its few valid ones).
  std::optional<Config> random_unproposed();
  /// The valid neighbours of `config` not proposed yet, in the space's order.
  std::vector<Config> unproposed_neighbours(const Config& config, Neighbourhood kind) const;

 private:
  SearchSpace space_;
  std::mt19937_64 rng_;
  std::unordered_set<Index> proposed_;             // by index (spaces of < 2^63 points)
  std::unordered_set<std::string> proposed_text_;  // by config text (larger spaces)
  bool indexable_ = true;                          // the space has an index_of
  bool listed_ = false;            // remaining_ holds the valid indices (small spaces only)
  std::vector<Index> remaining_;   // valid indices not yet picked from the list
};

}  // namespace ktune::search
