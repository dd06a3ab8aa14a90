// `exhaustive`: every valid config in index order, the ground truth of small spaces. It is
// the one searcher that enumerates: spaces up to 2^22 points are listed once by the pruning
// walk, larger ones are walked lazily by the same pruning walk (SearchSpace::next_valid), one
// batch at a time, so the first batch comes without listing the whole space.
#include "ktune/error.h"
#include "searcher_base.h"
#include "searchers.h"

namespace ktune::search {

namespace {

class ExhaustiveSearcher : public SearcherBase {
 public:
  std::string name() const override { return "exhaustive"; }

  std::vector<Config> propose(std::size_t max_batch) override {
    if (!started_) start();
    std::vector<Config> batch;
    if (listed_) {
      while (batch.size() < max_batch && next_ < valid_.size()) {
        Config c = space().at(valid_[next_++]);
        if (mark_proposed(c)) batch.push_back(std::move(c));
      }
    } else {  // large spaces: the valid indices in order, found by the pruning walk
      while (batch.size() < max_batch && cursor_ < size_) {
        const std::optional<Index> next = space().next_valid(cursor_);
        if (!next) {
          cursor_ = size_;
          break;
        }
        cursor_ = *next + 1;
        Config c = space().at(*next);
        if (mark_proposed(c)) batch.push_back(std::move(c));
      }
    }
    if (batch.empty() && proposed_count() == 0) {
      // Nothing valid at all: the same error (naming the constraints) as every other searcher.
      (void)space().random(rng());
    }
    return batch;
  }

 private:
  /// Spaces up to kListed points are listed by the pruning walk (cheap next to measuring);
  /// larger ones are walked lazily, so the first batch never waits for the whole space.
  void start() {
    started_ = true;
    size_ = space().size();  // throws above 2^63 points: no index order to walk
    if (size_ <= kListed) {
      space().for_each_valid([&](Index index, const Config&) { valid_.push_back(index); });
      listed_ = true;
    } else if (counted_none_valid()) {
      // Unsatisfiable: named now (every searcher's error), not after walking every index.
      (void)space().random(rng());
    }
  }

  /// Whether counting finds no valid config. Counting walks only the constrained parameters
  /// (when there are no C++ predicates), so it is cheap for many huge spaces; above
  /// kCountLimit points it gives up (false) and the lazy walk decides.
  bool counted_none_valid() const {
    try {
      return space().count_valid(kCountLimit) == 0;
    } catch (const Error&) {
      return false;
    }
  }

  void on_reset() override {
    started_ = false;
    listed_ = false;
    valid_.clear();
    next_ = 0;
    cursor_ = 0;
    size_ = 0;
  }

  static constexpr Index kListed = Index{1} << 22;
  static constexpr Index kCountLimit = Index{1} << 22;  // points count_valid may walk at start
  bool started_ = false;
  bool listed_ = false;
  std::vector<Index> valid_;  // listed spaces: the valid indices in order
  std::size_t next_ = 0;
  Index size_ = 0;    // Cartesian size
  Index cursor_ = 0;  // large spaces: the next index to check
};

}  // namespace

SearcherInfo exhaustive_info() {
  return {"exhaustive", "every valid config in index order (the ground truth)", {}};
}

std::unique_ptr<Searcher> make_exhaustive(const SearcherOptions&) {
  return std::make_unique<ExhaustiveSearcher>();
}

}  // namespace ktune::search
