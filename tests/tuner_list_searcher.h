// Test helpers for the tuner and runner tests: a searcher that proposes a fixed list of
// configs in order, and a sink that keeps every recorded trial.
#pragma once

#include <string>
#include <vector>

#include "ktune/searcher.h"
#include "ktune/tuner.h"

namespace ktune::testing {

/// Proposes the given configs in order (skipping none); remembers what it observed.
class ListSearcher : public Searcher {
 public:
  explicit ListSearcher(std::vector<Config> configs) : configs_(std::move(configs)) {}
  std::string name() const override { return "list"; }
  void reset(const SearchSpace&, std::uint64_t) override {
    next_ = 0;
    observed.clear();
  }
  std::vector<Config> propose(std::size_t max_batch) override {
    std::vector<Config> out;
    while (out.size() < max_batch && next_ < configs_.size()) out.push_back(configs_[next_++]);
    return out;
  }
  void observe(const std::vector<Trial>& trials) override {
    observed.insert(observed.end(), trials.begin(), trials.end());
  }
  std::vector<Trial> observed;  ///< every trial observed, in order

 private:
  std::vector<Config> configs_;
  std::size_t next_ = 0;
};

/// Keeps every recorded trial.
class CollectingSink : public TrialSink {
 public:
  void record(const Trial& trial) override { trials.push_back(trial); }
  std::vector<Trial> trials;  ///< in recording order
};

/// Every valid config of a space, in index order.
inline std::vector<Config> all_valid(const SearchSpace& space) {
  std::vector<Config> out;
  space.for_each_valid([&](Index, const Config& c) { out.push_back(c); });
  return out;
}

}  // namespace ktune::testing
