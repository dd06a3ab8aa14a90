// `random`: uniform sampling of valid configs without replacement. The baseline every other
// searcher is measured against; its expected best is computed exactly in replay_metrics.
#include "searcher_base.h"
#include "searchers.h"

namespace ktune::search {

namespace {

class RandomSearcher : public SearcherBase {
 public:
  std::string name() const override { return "random"; }

  std::vector<Config> propose(std::size_t max_batch) override {
    std::vector<Config> batch;
    while (batch.size() < max_batch) {
      auto c = random_unproposed();
      if (!c) break;
      mark_proposed(*c);
      batch.push_back(std::move(*c));
    }
    return batch;
  }
};

}  // namespace

SearcherInfo random_info() {
  return {"random", "uniform random sampling of valid configs without replacement", {}};
}

std::unique_ptr<Searcher> make_random(const SearcherOptions&) {
  return std::make_unique<RandomSearcher>();
}

}  // namespace ktune::search
