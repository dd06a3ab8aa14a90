// `exhaustive`: every valid config in index order, the ground truth of small spaces. It is
// the one searcher that enumerates; it walks the space lazily, one batch at a time.
#include "ktune/error.h"
#include "searcher_base.h"
#include "searchers.h"

namespace ktune::search {

namespace {

class ExhaustiveSearcher : public SearcherBase {
 public:
  std::string name() const override { return "exhaustive"; }

  std::vector<Config> propose(std::size_t max_batch) override {
    if (!listed_) {
      // The walk checks constraints branch by branch, so listing valid indices is cheap
      // compared to measuring them; SearchSpace refuses spaces above its enumeration limit.
      space().for_each_valid([&](Index index, const Config&) { valid_.push_back(index); });
      listed_ = true;
    }
    std::vector<Config> batch;
    while (batch.size() < max_batch && next_ < valid_.size()) {
      Config c = space().at(valid_[next_++]);
      if (mark_proposed(c)) batch.push_back(std::move(c));
    }
    return batch;
  }

  void observe(const std::vector<Trial>&) override {}

 private:
  void on_reset() override {
    listed_ = false;
    valid_.clear();
    next_ = 0;
  }

  bool listed_ = false;
  std::vector<Index> valid_;
  std::size_t next_ = 0;
};

}  // namespace

SearcherInfo exhaustive_info() {
  return {"exhaustive", "every valid config in index order (the ground truth)", {}};
}

std::unique_ptr<Searcher> make_exhaustive(const SearcherOptions&) {
  return std::make_unique<ExhaustiveSearcher>();
}

}  // namespace ktune::search
