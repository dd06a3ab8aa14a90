// Searchers at the edges of their contract: option values outside what each option accepts,
// spaces beyond 2^63 points, exhaustive's lazy walk and its unsatisfiable error, and two
// schedule rules when the batch size does not divide the initial sample (annealing starts
// from the best of the whole sample; the Bayesian model is refitted before its first pick).
#include <catch2/catch.hpp>

#include <chrono>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ktune/error.h"
#include "ktune/searcher.h"
#include "search_fixtures.h"

using namespace ktune;
using ktune::test::line_space;
using ktune::test::timed;

TEST_CASE("searcher options outside what they accept are errors naming the option",
          "[search]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"genetic", "population=-1"},        {"genetic", "crossover=2"},
      {"genetic", "mutation=nan"},         {"genetic", "tournament=1.5"},
      {"annealing", "cooling=1.5"},        {"annealing", "t_min=-1"},
      {"annealing", "neighbourhood=diagonal"}, {"bayesian", "fit_iterations=3000000000"},
      {"bayesian", "xi=inf"},              {"bayesian", "kappa=-1"},
      {"bayesian", "acquisition=foo"},     {"bayesian", "candidates=1000000000"}};
  for (const auto& [name, option] : bad) {
    INFO(name << " " << option);
    try {
      make_searcher(name, SearcherOptions::parse(option));
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(option.substr(0, option.find('='))));
    }
  }
  CHECK_THROWS_WITH(SearcherOptions::parse("population=4,population=5"),
                    Catch::Contains("given twice"));
  // Every documented default is a value its own option accepts.
  for (const auto& info : searcher_catalog()) {
    std::string all;
    for (const auto& o : info.options) all += (all.empty() ? "" : ",") + o.name + "=" + o.default_value;
    INFO(info.name << ": " << all);
    CHECK_NOTHROW(make_searcher(info.name, SearcherOptions::parse(all)));
    for (const auto& o : info.options) CHECK_FALSE(o.accepts.empty());
  }
}

TEST_CASE("adaptive searchers work on spaces beyond 2^63 points", "[search]") {
  SearchSpace::Builder b;  // 10^19 points: no Cartesian index exists
  for (int i = 0; i < 19; ++i) b.param("p" + std::to_string(i), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const SearchSpace space = b.build();
  CHECK_THROWS(space.size());
  for (const char* name : {"random", "genetic", "annealing", "bayesian"}) {
    INFO(name);
    auto s = make_searcher(name);
    s->reset(space, 3);
    std::set<std::string> seen;
    for (int round = 0; round < 4; ++round) {
      const auto batch = s->propose(4);
      REQUIRE(batch.size() == 4);
      std::vector<Trial> trials;
      for (const auto& c : batch) {
        CHECK(space.valid(c));
        CHECK(seen.insert(c.str()).second);  // never proposed twice
        trials.push_back(timed(c, 1.0 + static_cast<double>(c["p0"] + c["p1"])));
      }
      s->observe(trials);
    }
  }
  auto exhaustive = make_searcher("exhaustive");  // no index order to walk: a clear error
  exhaustive->reset(space, 1);
  CHECK_THROWS_AS(exhaustive->propose(1), Error);
}

TEST_CASE("exhaustive walks large spaces lazily in index order and names unsatisfiable ones",
          "[search]") {
  SearchSpace::Builder b;  // 2^23 points, half of them valid; too many to list first
  for (int i = 0; i < 23; ++i) b.param("p" + std::to_string(i), {0, 1});
  b.constraint("p0 + p1 == 1");
  const SearchSpace space = b.build();
  auto s = make_searcher("exhaustive");
  s->reset(space, 1);
  std::vector<Index> expected;  // the first valid indices, in order
  for (Index i = 0; expected.size() < 6; ++i)
    if (space.valid(space.at(i))) expected.push_back(i);
  std::vector<Index> got;
  for (int round = 0; round < 2; ++round)
    for (const auto& c : s->propose(3)) got.push_back(space.index_of(c));
  CHECK(got == expected);

  const SearchSpace none =
      SearchSpace::Builder().param("a", {0, 1}).param("b", {0, 1}).constraint("a + b > 5").build();
  s->reset(none, 1);
  try {
    s->propose(4);
    FAIL("an empty space was not reported");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unsatisfiable);
    CHECK_THAT(e.what(), Catch::Contains("a + b > 5"));
  }
}

TEST_CASE("next_valid is the first valid index at or after any index", "[search][space]") {
  SearchSpace::Builder b;
  b.param("a", {1, 2, 3, 4}).param("b", {0, 5, 10}).param("c", {1, 2, 4, 8}).param("d", {0, 1});
  b.constraint("a * c <= 8").constraint("b != 5 or d == 1").constraint("a + b + c != 11");
  b.constraint("c >= a unless d", [](const Config& c) { return c["d"] == 1 || c["c"] >= c["a"]; });
  const SearchSpace space = b.build();
  for (Index from = 0; from <= space.size(); ++from) {
    std::optional<Index> expected;
    for (Index i = from; i < space.size() && !expected; ++i)
      if (space.valid(space.at(i))) expected = i;
    INFO("from " << from);
    CHECK(space.next_valid(from) == expected);
  }
}

TEST_CASE("the walk cuts a prefix no value of a later parameter can complete, and only that",
          "[search][space]") {
  // Constraints between a parameter and one several levels further down, in every shape:
  // the walk's valid configs are exactly those a check of every point accepts.
  const std::vector<std::vector<std::string>> constraint_sets = {
      {"a * e <= 6", "b + d != 4"},
      {"a == e", "c % 2 == b % 2 or d > 1"},
      {"a + b + e == 5", "a < d"},
      {"e > 10"},  // never: every prefix is cut at once
      {"a + c + e >= 2 * d", "b * e != 6"}};
  for (const auto& constraints : constraint_sets) {
    SearchSpace::Builder b;
    // b, c, d: 64 combinations, the walk's threshold for looking ahead from a to e.
    b.param("a", {0, 1, 2, 3}).param("b", {0, 1, 2, 3}).param("c", {1, 2, 3, 4}).param("d", {0, 1, 2, 3});
    b.param("e", {0, 1, 2, 3, 4});
    for (const auto& c : constraints) b.constraint(c);
    const SearchSpace space = b.build();
    INFO(constraints.front());
    std::vector<Index> expected, walked;
    for (Index i = 0; i < space.size(); ++i)
      if (space.valid(space.at(i))) expected.push_back(i);
    space.for_each_valid([&](Index i, const Config&) { walked.push_back(i); });
    CHECK(walked == expected);
    CHECK(space.count_valid() == expected.size());
    CHECK(space.next_valid(0) == (expected.empty() ? std::nullopt : std::optional<Index>(expected.front())));
  }
}

TEST_CASE("a prefix that the last parameter cannot complete is cut before the parameters between",
          "[search][space]") {
  // 30^8 points; only p0 = p7 = 29 satisfy p0 + p7 == 58. Without looking ahead, the first
  // valid config sits behind 29 * 30^7 (~6e11) completions that each fail at p7.
  SearchSpace::Builder b;
  std::vector<Value> domain(30);
  std::iota(domain.begin(), domain.end(), Value{0});
  for (int i = 0; i < 8; ++i) b.param("p" + std::to_string(i), domain);
  const SearchSpace space = b.constraint("p0 + p7 == 58").build();
  const auto start = std::chrono::steady_clock::now();
  const std::optional<Index> first = space.next_valid(0);
  auto s = make_searcher("exhaustive");
  s->reset(space, 1);
  const std::vector<Config> proposed = s->propose(4);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5);
  REQUIRE(first);
  const Config c = space.at(*first);
  CHECK(c["p0"] == 29);
  CHECK(c["p7"] == 29);
  for (int i = 1; i < 7; ++i) CHECK(c["p" + std::to_string(i)] == 0);
  REQUIRE(proposed.size() == 4);
  CHECK(space.index_of(proposed.front()) == *first);
}

TEST_CASE("exhaustive finds the few valid configs at the end of a huge space quickly",
          "[search]") {
  // 2^30 points; a chain p0 >= p1 >= ... >= p24 and their sum 25: only p0..p24 = 1 remain, 32
  // configs at the top of the index order. Counting would walk 2^25 points (it gives up); a
  // scan of the indices from 0 would check ~2^30 configs; the pruning walk visits a few
  // hundred prefixes.
  SearchSpace::Builder b;
  std::string sum = "p0";
  for (int i = 0; i < 30; ++i) b.param("p" + std::to_string(i), {0, 1});
  for (int i = 0; i < 24; ++i)
    b.constraint("p" + std::to_string(i) + " >= p" + std::to_string(i + 1));
  for (int i = 1; i < 25; ++i) sum += " + p" + std::to_string(i);
  const SearchSpace space = b.constraint(sum + " == 25").build();
  auto s = make_searcher("exhaustive");
  s->reset(space, 1);
  const auto start = std::chrono::steady_clock::now();
  std::vector<Config> all;
  for (int round = 0; round < 5; ++round)
    for (auto& c : s->propose(10)) all.push_back(std::move(c));
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5);
  REQUIRE(all.size() == 32);
  for (std::size_t k = 0; k < all.size(); ++k) {
    CHECK(space.valid(all[k]));
    if (k > 0) CHECK(space.index_of(all[k]) > space.index_of(all[k - 1]));
  }
  CHECK(space.index_of(all.back()) == space.size() - 1);
}

TEST_CASE("annealing starts its walk from the best of the whole initial sample", "[search]") {
  // Batches of 8 against initial = 12: the sample ends inside the second batch, whose tail
  // used to pick the start (the best of its last four trials only).
  const SearchSpace space = line_space(1000);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    auto s = make_searcher("annealing", SearcherOptions::parse("neighbourhood=adjacent"));
    s->reset(space, seed);
    Value best_x = -1;
    double best_ms = 1e300;
    for (int round = 0; round < 2; ++round) {
      std::vector<Trial> trials;
      for (const auto& c : s->propose(8)) {
        const double ms = 1.0 + std::abs(static_cast<double>(c["x"] - 500));
        if (ms < best_ms) best_ms = ms, best_x = c["x"];
        trials.push_back(timed(c, ms));
      }
      s->observe(trials);
    }
    const auto walk = s->propose(8);
    REQUIRE_FALSE(walk.empty());
    for (const auto& c : walk) CHECK(std::abs(c["x"] - best_x) == 1);
  }
}

TEST_CASE("the Bayesian model is refitted before its first pick of a batch", "[search]") {
  // initial = 6 with batches of 4: the second batch holds two random picks, then two model
  // picks, which used to come from a model never fitted (the same picks whatever the data).
  const SearchSpace space = line_space(64);
  std::vector<std::vector<Value>> picks;
  for (int optimum : {40, 5}) {
    auto s = make_searcher("bayesian", SearcherOptions::parse("initial=6"));
    s->reset(space, 11);
    std::vector<Value> model_picks;
    for (int round = 0; round < 2; ++round) {
      const auto batch = s->propose(4);
      REQUIRE(batch.size() == 4);
      std::vector<Trial> trials;
      for (const auto& c : batch)
        trials.push_back(timed(c, 1.0 + std::abs(static_cast<double>(c["x"] - optimum))));
      if (round == 1) model_picks = {batch[2]["x"], batch[3]["x"]};
      s->observe(trials);
    }
    picks.push_back(model_picks);
  }
  INFO("picks for optimum 40: " << picks[0][0] << ", " << picks[0][1] << "; for optimum 5: "
                                << picks[1][0] << ", " << picks[1][1]);
  CHECK(picks[0] != picks[1]);  // the model's picks follow the measurements
}
