// Searcher behaviour pinned down by mutation audits: genetic's tournament, repair, crossover
// and jumps, annealing's alternating restarts (also inside a batch), bayesian's initial design,
// believer batches, lcb, incumbent neighbours and imputed failures, the catalog's documented
// defaults and option parsing.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ktune/error.h"
#include "ktune/searcher.h"
#include "search_fixtures.h"

using namespace ktune;
using ktune::test::line_space;
using ktune::test::timed;

namespace {

Trial failed(const Config& c) {
  Trial t;
  t.config = c;
  t.status = Status::compile_error;
  return t;
}

Config at_x(const SearchSpace& space, Value x) {
  for (Index i = 0; i < space.size(); ++i)
    if (space.at(i)["x"] == x) return space.at(i);
  FAIL("no x=" << x);
  return Config();
}

/// Parameters `names`, each over 0..19.
SearchSpace grid_of_20(const std::vector<std::string>& names) {
  std::vector<Value> v;
  for (int i = 0; i < 20; ++i) v.push_back(i);
  SearchSpace::Builder b;
  for (const auto& n : names) b.param(n, v);
  return b.build();
}

/// The config of `space` with every parameter 7.
Config all_sevens(const SearchSpace& space) {
  return Config(space.names(), std::vector<Value>(space.dims(), 7));
}

}  // namespace

TEST_CASE("searchers: genetic breeds from the tournament winner and repairs by one step",
          "[search][genetic]") {
  // crossover 0, mutation 0: the child is parent A itself, proposed before, so the first
  // repair is one step (jump 0) away from A. A tournament of 1000 draws from 4 members
  // picks the best one (doc: "parent A (tournament winner)").
  const SearchSpace space = line_space(100);
  for (Value best : {Value{40}, Value{0}, Value{99}}) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      INFO("best x=" << best << " seed " << seed);
      auto s = make_searcher("genetic", SearcherOptions::parse(
          "initial=2,population=4,tournament=1000,crossover=0,mutation=0,jump=0"));
      s->reset(space, seed);
      std::vector<Trial> trials = {timed(at_x(space, best), 1.0)};
      for (Value x : {Value{20}, Value{60}, Value{80}})
        trials.push_back(timed(at_x(space, x), 2.0 + static_cast<double>(x)));
      s->observe(trials);
      const auto child = s->propose(1);
      REQUIRE(child.size() == 1);
      const Value x = child[0]["x"];
      if (best == 0) CHECK(x == 1);
      else if (best == 99) CHECK(x == 98);
      else CHECK(std::abs(x - best) == 1);
    }
  }
}

TEST_CASE("searchers: genetic never breeds from failed configs", "[search][genetic]") {
  // One ok config and two failures: fewer than two breedable members, so the next configs
  // are still the random initial design (not children next to x=50).
  const SearchSpace space = line_space(100);
  int adjacent = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    auto s = make_searcher("genetic", SearcherOptions::parse(
        "initial=2,population=4,tournament=1000,crossover=0,mutation=0,jump=0"));
    s->reset(space, seed);
    s->observe({failed(at_x(space, 10)), failed(at_x(space, 90)), timed(at_x(space, 50), 1.0)});
    const auto next = s->propose(1);
    REQUIRE(next.size() == 1);
    adjacent += std::abs(next[0]["x"] - 50) == 1;
  }
  CHECK(adjacent <= 3);  // random: about 10 * 2/97
}

TEST_CASE("searchers: genetic uniform crossover mixes the two parents gene by gene",
          "[search][genetic]") {
  SearchSpace::Builder b;
  for (int i = 0; i < 10; ++i) b.param("p" + std::to_string(i), {0, 1});
  const SearchSpace space = b.build();
  const Config zeros = space.at(0), ones = space.at(space.size() - 1);
  int mixed = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    auto s = make_searcher("genetic", SearcherOptions::parse(
        "initial=2,population=2,tournament=1,crossover=1,mutation=0,jump=0"));
    s->reset(space, seed);
    s->observe({timed(zeros, 1.0), timed(ones, 2.0)});
    const auto child = s->propose(1);
    REQUIRE(child.size() == 1);
    int n_ones = 0;
    for (Value v : child[0].values()) n_ones += v == 1;
    mixed += n_ones >= 2 && n_ones <= 8;
  }
  CHECK(mixed >= 4);  // parents differ half of the time, then a mix has 2..8 ones w.p. ~0.98
}

TEST_CASE("searchers: a genetic jump goes to any other value with equal probability",
          "[search][genetic]") {
  // mutation 1, jump 1, crossover 0: the first child of A (x=5) is a uniform jump to one of
  // the 19 other values; x=6 must come up about 1/19 of the time.
  const SearchSpace space = line_space(20);
  int six = 0;
  const int runs = 400;
  for (int seed = 1; seed <= runs; ++seed) {
    auto s = make_searcher("genetic", SearcherOptions::parse(
        "initial=2,population=2,tournament=1000,crossover=0,mutation=1,jump=1"));
    s->reset(space, static_cast<std::uint64_t>(seed));
    s->observe({timed(at_x(space, 5), 1.0), timed(at_x(space, 15), 2.0)});
    const auto child = s->propose(1);
    REQUIRE(child.size() == 1);
    six += child[0]["x"] == 6;
  }
  INFO("x=6 in " << six << " of " << runs);
  CHECK(six >= runs / 19 / 2);
  CHECK(six <= runs / 19 * 2);
}

TEST_CASE("searchers: annealing restarts alternately from the best config and a random one",
          "[search]") {
  // X is by far the fastest; every other config takes 1 ms, so the walk never leaves X on its
  // own. cooling 0.5 from t0 0.05 below t_min 0.02 restarts after two walk evaluations:
  // proposals 1-2 walk from X, restart 1 (odd) goes back to X (3-4), restart 2 is random.
  const SearchSpace space = grid_of_20({"a", "b"});
  const Config x_cfg = all_sevens(space);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    auto s = make_searcher("annealing",
                           SearcherOptions::parse("initial=1,t0=0.05,cooling=0.5,t_min=0.02"));
    s->reset(space, seed);
    s->observe({timed(x_cfg, 0.001)});
    std::vector<Config> seq;
    for (int k = 0; k < 30; ++k) {
      const auto b = s->propose(1);
      REQUIRE(b.size() == 1);
      seq.push_back(b[0]);
      s->observe({timed(b[0], 1.0)});
    }
    auto near_x = [](const Config& c) { return c["a"] == 7 || c["b"] == 7; };
    for (int k = 0; k < 4; ++k) {
      INFO("proposal " << k + 1 << ": " << seq[k].str());
      CHECK(near_x(seq[k]));
    }
    int away = 0;
    for (std::size_t k = 4; k < seq.size(); ++k) away += !near_x(seq[k]);
    CHECK(away > 0);
  }
}

TEST_CASE("searchers: the catalog's defaults are the documented ones", "[search]") {
  const std::map<std::string, std::map<std::string, std::string>> documented = {
      {"genetic", {{"population", "4"}, {"tournament", "2"}, {"crossover", "0.8"},
                   {"mutation", "0.15"}, {"initial", "12"}, {"jump", "0.5"},
                   {"design_draws", "3"}}},
      {"annealing", {{"initial", "12"}, {"t0", "0.05"}, {"cooling", "0.99"},
                     {"t_min", "0.005"}, {"neighbourhood", "hamming"}}},
      {"bayesian", {{"acquisition", "ei"}, {"initial", "6"}, {"candidates", "96"},
                    {"incumbents", "3"}, {"xi", "0.01"}, {"kappa", "2.0"},
                    {"refit_every", "10"}, {"fit_points", "96"}, {"model_points", "512"},
                    {"fit_iterations", "30"}}},
      {"random", {}},
      {"exhaustive", {}}};
  for (const auto& info : searcher_catalog()) {
    INFO("searcher " << info.name);
    REQUIRE(documented.count(info.name));
    const auto& want = documented.at(info.name);
    CHECK(info.options.size() == want.size());
    for (const auto& o : info.options) {
      INFO("option " << o.name);
      REQUIRE(want.count(o.name));
      const std::string& d = want.at(o.name);
      char* end = nullptr;
      const double num = std::strtod(d.c_str(), &end);
      if (*end == '\0') CHECK(std::strtod(o.default_value.c_str(), nullptr) == num);
      else CHECK(o.default_value == d);
    }
  }
}

TEST_CASE("searchers: bayesian stays random while fewer than two trials succeeded",
          "[search][bayesian]") {
  // Only the first trial succeeds: the model never has two successes, so every proposal is
  // an initial-design (uniform random) pick, the same draws as the random searcher's.
  const SearchSpace space = line_space(200);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    auto bo = make_searcher("bayesian", SearcherOptions::parse("initial=2"));
    auto rnd = make_searcher("random");
    bo->reset(space, seed);
    rnd->reset(space, seed);
    for (int k = 0; k < 8; ++k) {
      const auto a = bo->propose(1), b = rnd->propose(1);
      REQUIRE(a.size() == 1);
      REQUIRE(b.size() == 1);
      CHECK(a[0].str() == b[0].str());
      const Trial t = k == 0 ? timed(a[0], 1.0) : failed(a[0]);
      bo->observe({t});
      rnd->observe({k == 0 ? timed(b[0], 1.0) : failed(b[0])});
    }
  }
}

TEST_CASE("searchers: bayesian models failed configs as the worst time and keeps away from them",
          "[search][bayesian]") {
  // ok at x = 0, 5, 10 (improving towards 10) and 39 (slow); compile errors at 15, 20, 25.
  // Imputed with the worst time, the failures pull the model up between 10 and 39; imputed
  // with the best, the region between them would look like the fastest.
  const SearchSpace space = line_space(40);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto s = make_searcher("bayesian", SearcherOptions::parse("initial=2"));
    s->reset(space, seed);
    std::vector<Trial> trials{timed(at_x(space, 0), 2.0), timed(at_x(space, 5), 1.5),
                              timed(at_x(space, 10), 1.2), timed(at_x(space, 39), 4.0)};
    for (Value x : {15, 20, 25}) trials.push_back(failed(at_x(space, x)));
    s->observe(trials);
    const auto pick = s->propose(1);
    REQUIRE(pick.size() == 1);
    INFO("seed " << seed << " pick x=" << pick[0]["x"]);
    CHECK((pick[0]["x"] < 14 || pick[0]["x"] > 26));
  }
}

TEST_CASE("searchers: lcb with a large kappa explores far from the data, a batch believes its picks",
          "[search][bayesian]") {
  const SearchSpace space = line_space(200);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    INFO("seed " << seed);
    auto s = make_searcher("bayesian", SearcherOptions::parse("acquisition=lcb,kappa=1000,initial=2"));
    s->reset(space, seed);
    std::vector<Trial> trials;
    for (Value x : {Value{0}, Value{10}, Value{20}, Value{30}, Value{40}, Value{50}})
      trials.push_back(timed(at_x(space, x), std::exp(0.01 * static_cast<double>(x))));
    s->observe(trials);
    const auto batch = s->propose(2);
    REQUIRE(batch.size() == 2);
    INFO("picks " << batch[0]["x"] << ", " << batch[1]["x"]);
    CHECK(batch[0]["x"] >= 100);                                // max sigma: far from 0..50
    CHECK(std::abs(batch[1]["x"] - batch[0]["x"]) > 10);  // the first pick is believed
  }
}

TEST_CASE("searchers: bayesian candidates include the neighbours of the best configs",
          "[search][bayesian]") {
  std::vector<Value> v;
  for (int i = 0; i < 1000; ++i) v.push_back(i);
  const SearchSpace space = SearchSpace::Builder().param("a", v).param("b", v).build();
  auto cfg = [&](Value a, Value b) {
    std::vector<std::uint32_t> pos = {static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)};
    return space.from_positions(pos);
  };
  int near = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto s = make_searcher("bayesian",
                           SearcherOptions::parse("initial=2,candidates=1,incumbents=1"));
    s->reset(space, seed);
    s->observe({timed(cfg(100, 100), 1.0), timed(cfg(500, 500), 2.0), timed(cfg(900, 900), 3.0)});
    const auto pick = s->propose(1);
    REQUIRE(pick.size() == 1);
    const Value a = pick[0]["a"], b = pick[0]["b"];
    near += a == 100 || b == 100;  // a neighbour of the best config
  }
  CHECK(near >= 4);  // one random candidate against ~2000 neighbours of the best
}

TEST_CASE("searchers: a searcher option with an empty value is a parse error", "[search]") {
  for (const char* text : {"initial=", "initial= ", "a=1,initial="}) {
    INFO(text);
    try {
      (void)SearcherOptions::parse(text);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::parse_error);
    }
  }
}

TEST_CASE("searchers: option numbers are plain decimals, as integers are", "[search]") {
  for (const char* text : {"x=0x1p-1", "x=+0.5", "x=0X1", "x=1.5e"}) {
    INFO(text);
    CHECK_THROWS_AS(SearcherOptions::parse(text).get_double("x", 0), Error);
  }
  CHECK(SearcherOptions::parse("x=1e-2").get_double("x", 0) == 0.01);
  CHECK(SearcherOptions::parse("x=.5").get_double("x", 0) == 0.5);
  CHECK_THROWS_AS(SearcherOptions::parse("n=+4").get_int("n", 0), Error);
}

TEST_CASE("searchers: bayesian's initial design is `initial` random configs also across batches",
          "[search][bayesian]") {
  // initial = 6 with batches of 4: the second batch starts with the design's last two random
  // picks (the random searcher's draws for the same seed), then the model's.
  const SearchSpace space = line_space(200);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    auto bo = make_searcher("bayesian", SearcherOptions::parse("initial=6"));
    auto rnd = make_searcher("random");
    bo->reset(space, seed);
    rnd->reset(space, seed);
    auto a = bo->propose(4), b = rnd->propose(4);
    REQUIRE(a.size() == 4);
    std::vector<Trial> ta, tb;
    for (std::size_t k = 0; k < 4; ++k) {
      CHECK(a[k].str() == b[k].str());
      ta.push_back(timed(a[k], 1.0 + static_cast<double>(a[k]["x"])));
      tb.push_back(timed(b[k], 1.0 + static_cast<double>(b[k]["x"])));
    }
    bo->observe(ta);
    rnd->observe(tb);
    a = bo->propose(4);
    b = rnd->propose(2);
    REQUIRE(a.size() == 4);
    CHECK(a[0].str() == b[0].str());
    CHECK(a[1].str() == b[1].str());
  }
}

TEST_CASE("searchers: an annealing walk restarted at random starts from the best of that batch",
          "[search]") {
  // Batches of 2, cooling 0.5: restart 1 (best) ends batch 1, restart 2 (random) ends
  // batch 2; batch 3 is the random restart sample and batch 4 walks from its best.
  const SearchSpace space = grid_of_20({"a", "b"});
  const Config x_cfg = all_sevens(space);
  auto ms = [](const Config& c) { return 1.0 + static_cast<double>(c["a"] + 20 * c["b"]); };
  auto near = [](const Config& c, const Config& d) { return c["a"] == d["a"] || c["b"] == d["b"]; };
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    INFO("seed " << seed);
    auto s = make_searcher("annealing",
                           SearcherOptions::parse("initial=1,t0=0.05,cooling=0.5,t_min=0.02"));
    s->reset(space, seed);
    s->observe({timed(x_cfg, 0.001)});
    std::vector<std::vector<Config>> batches;
    for (int k = 0; k < 4; ++k) {
      const auto b = s->propose(2);
      REQUIRE(b.size() == 2);
      batches.push_back(b);
      s->observe({timed(b[0], ms(b[0])), timed(b[1], ms(b[1]))});
    }
    const auto& r = batches[2];
    const Config& start = ms(r[0]) < ms(r[1]) ? r[0] : r[1];
    INFO("restart sample " << r[0].str() << " / " << r[1].str());
    for (const auto& c : batches[3]) {
      INFO(c.str());
      CHECK(near(c, start));
    }
  }
}

TEST_CASE("searchers: a random annealing restart that falls inside a batch is random",
          "[search]") {
  // A 20^3 grid, adjacent neighbourhood (6 steps around X), batches of 3; X is by far the fastest, every other config takes
  // 1 ms. cooling 0.5 from 0.05 below t_min 0.02: restart 1 (to X) at the 2nd trial of
  // batch 1, restart 2 (random, by the docs) at the 1st trial of batch 2. Batch 3 should be
  // random configs; the rest of batch 2 (steps next to X) becomes the walk state instead,
  // so batch 3 is three steps around one config.
  const SearchSpace space = grid_of_20({"a", "b", "c"});
  const Config x_cfg = all_sevens(space);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    auto s = make_searcher("annealing", SearcherOptions::parse(
        "initial=1,t0=0.05,cooling=0.5,t_min=0.02,neighbourhood=adjacent"));
    s->reset(space, seed);
    s->observe({timed(x_cfg, 0.001)});
    std::vector<std::vector<Config>> batches;
    for (int k = 0; k < 3; ++k) {
      const auto b = s->propose(3);
      REQUIRE(b.size() == 3);
      batches.push_back(b);
      std::vector<Trial> t;
      for (const auto& c : b) t.push_back(timed(c, 1.0));
      s->observe(t);
    }
    Value spread = 0;
    for (const auto& c : batches[2])
      for (const auto& d : batches[2])
        spread = std::max<Value>(spread, std::abs(c["a"] - d["a"]) + std::abs(c["b"] - d["b"]) +
                                           std::abs(c["c"] - d["c"]));
    INFO("batch 3: " << batches[2][0].str() << " / " << batches[2][1].str() << " / "
                     << batches[2][2].str());
    CHECK(spread > 2);  // three random configs, not three steps around one
  }
}

TEST_CASE("searchers: exhaustive names a huge unsatisfiable space at once", "[search]") {
  // 2^28 points, none valid, the constraint on two parameters: counting walks 4 points.
  SearchSpace::Builder b;
  for (int i = 0; i < 28; ++i) b.param("p" + std::to_string(i), {0, 1});
  const SearchSpace space = b.constraint("p0 + p1 > 5").build();
  auto s = make_searcher("exhaustive");
  s->reset(space, 1);
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)s->propose(4);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unsatisfiable);
  }
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5);
}
