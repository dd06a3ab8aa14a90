// SearcherBase: proposed-set bookkeeping and uniform sampling of unproposed valid configs.
// Rejection sampling from SearchSpace::random is exact; when it keeps hitting proposed
// configs on a small space, the remaining valid configs are listed once and drawn from.
#include "searcher_base.h"

#include "ktune/error.h"

namespace ktune::search {

namespace {

/// Draws from SearchSpace::random before listing the remaining valid configs.
constexpr int kRejectionDraws = 64;
/// Largest Cartesian size whose valid configs may be listed.
constexpr Index kListableSize = Index{1} << 24;

}  // namespace

double trial_cost(const Trial& trial) {
  if (!trial.ok() || !(trial.median_ms > 0)) return std::numeric_limits<double>::infinity();
  return std::log(trial.median_ms);
}

void SearcherBase::reset(const SearchSpace& space, std::uint64_t seed) {
  space_ = space;
  rng_.seed(seed);
  proposed_.clear();
  proposed_text_.clear();
  try {
    (void)space_.size();
    indexable_ = true;
  } catch (const Error&) {
    indexable_ = false;  // more than 2^63 points: configs are told apart by their text
  }
  listed_ = false;
  remaining_.clear();
  on_reset();
}

void SearcherBase::observe(const std::vector<Trial>& trials) {
  // A config observed but never proposed (the default, a resumed trial) is not proposed
  // later: it would only be answered from the tuner's memory and observed a second time.
  // A trial of another space's config (names or values this space lacks) tells this search
  // nothing: every searcher ignores it alike, instead of each failing in its own way.
  std::vector<Trial> own;
  own.reserve(trials.size());
  for (const auto& t : trials) {
    if (!space_.contains(t.config)) continue;
    mark_proposed(t.config);
    own.push_back(t);
  }
  on_observe(own);
}

bool SearcherBase::was_proposed(const Config& config) const {
  return indexable_ ? proposed_.count(space_.index_of(config)) > 0
                    : proposed_text_.count(config.str()) > 0;
}

bool SearcherBase::mark_proposed(const Config& config) {
  return indexable_ ? proposed_.insert(space_.index_of(config)).second
                    : proposed_text_.insert(config.str()).second;
}

std::optional<Config> SearcherBase::random_unproposed() {
  if (!listed_) {
    for (int i = 0; i < kRejectionDraws; ++i) {
      Config c = space_.random(rng_);
      if (!was_proposed(c)) return c;
    }
    bool listable = false;
    try {
      listable = space_.size() <= kListableSize;
    } catch (const Error&) {
      listable = false;  // more than 2^63 points
    }
    if (!listable) return std::nullopt;
    space_.for_each_valid([&](Index index, const Config&) { remaining_.push_back(index); });
    listed_ = true;
  }
  // Proposed entries are dropped lazily; the pick stays listed until it is proposed.
  while (!remaining_.empty()) {
    const std::size_t pick = below(remaining_.size());
    const Index index = remaining_[pick];
    if (!proposed_.count(index)) return space_.at(index);
    remaining_[pick] = remaining_.back();
    remaining_.pop_back();
  }
  return std::nullopt;
}

std::vector<Config> SearcherBase::unproposed_neighbours(const Config& config,
                                                        Neighbourhood kind) const {
  std::vector<Config> out;
  for (auto& n : space_.neighbours(config, kind)) {
    if (!was_proposed(n)) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace ktune::search
