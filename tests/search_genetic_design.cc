// The genetic searcher's initial design: with several draws per config it keeps the most
// spread-out one, so the first configs differ from each other in every parameter where a
// plain random sample would repeat values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "ktune/searcher.h"

using namespace ktune;

namespace {

/// Three parameters of five values each, no constraints (125 configs).
SearchSpace grid_space() {
  return SearchSpace::Builder()
      .param("x", {1, 2, 3, 4, 5})
      .param("y", {10, 20, 30, 40, 50})
      .param("z", {0, 1, 2, 3, 4})
      .build();
}

/// The smallest Hamming distance between any two of the first `n` proposals of a run.
std::size_t closest_pair_distance(const std::string& options, std::uint64_t seed, std::size_t n) {
  const SearchSpace space = grid_space();
  auto s = make_searcher("genetic", SearcherOptions::parse(options));
  s->reset(space, seed);
  const auto first = s->propose(n);
  REQUIRE(first.size() == n);
  std::size_t closest = space.dims();
  for (std::size_t i = 0; i < first.size(); ++i) {
    for (std::size_t j = i + 1; j < first.size(); ++j) {
      std::size_t differing = 0;
      for (std::size_t d = 0; d < space.dims(); ++d) {
        differing += first[i].values()[d] != first[j].values()[d];
      }
      closest = std::min(closest, differing);
    }
  }
  return closest;
}

}  // namespace

TEST_CASE("genetic initial design spreads its configs over every parameter", "[search][genetic]") {
  // 64 draws per config: the first three configs share no value of any parameter.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    INFO("seed " << seed);
    CHECK(closest_pair_distance("initial=3,design_draws=64", seed, 3) == 3);
  }
  // A plain random sample (one draw) repeats some value among 8 configs in some run.
  std::size_t repeated = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    repeated += closest_pair_distance("initial=8,design_draws=1", seed, 8) < 3;
  }
  CHECK(repeated > 0);
}
