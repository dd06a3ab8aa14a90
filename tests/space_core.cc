// Tests of SearchSpace and Config: builder validation, the index <-> Config bijection on a space
// of more than 10^9 points, constraints against brute force, counting and enumeration, random
// sampling, neighbourhoods, features, and the errors of make/parse.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <set>
#include <thread>

#include "ktune/error.h"
#include "ktune/space.h"
#include "space_fixtures.h"

using namespace ktune;
using ktune::test::small_space;

namespace {

/// 13 parameters of mixed radix, 1,197,504,000 Cartesian points, with a few constraints.
SearchSpace large_space() {
  const std::vector<std::size_t> sizes = {5, 7, 3, 8, 6, 4, 9, 2, 10, 11, 3, 2, 5};
  SearchSpace::Builder b;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::vector<Value> values;
    for (std::size_t k = 0; k < sizes[i]; ++k) values.push_back(static_cast<Value>(k * k + i));
    b.param("p" + std::to_string(i), values);
  }
  b.constraint("p0 + p1 <= p3 + 40");
  b.constraint("p4 % 2 == 0 or p5 > 6");
  return b.build();
}

/// The same constraints written in C++ (Python // on negative c spelled out).
bool small_space_rule(Value a, Value b, Value c) {
  const Value floor_half = c >= 0 ? c / 2 : -((-c + 1) / 2);
  return 8 <= a * (b + 1) && a * (b + 1) <= 24 && (b == 0 || a % b == 0) && floor_half != -1 &&
         !(a == 8 && c > 0);
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

template <class F>
Error failure_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("no ktune::Error thrown");
  return Error(ErrorCode::internal, "unreachable");
}

}  // namespace

TEST_CASE("config: text form, defines, hash and lookup", "[space][config]") {
  auto space = small_space();
  Config c = space.make({{"a", 4}, {"b", 1}, {"c", -3}});
  CHECK(c.str() == "a=4,b=1,c=-3");
  CHECK(c.defines() == std::vector<std::string>{"-Da=4", "-Db=1", "-Dc=-3"});
  CHECK(c.hash() == fnv1a("a=4,b=1,c=-3"));
  CHECK(std::hash<Config>()(c) == c.hash());
  CHECK(c["b"] == 1);
  CHECK(c.get_or("zz", 7) == 7);
  CHECK(c.has("c"));
  CHECK_FALSE(c.has("zz"));
  const Error e = failure_of([&] { (void)c["zz"]; });
  CHECK(e.code() == ErrorCode::unknown_name);
  CHECK_THAT(std::string(e.what()), Catch::Contains("'zz'"));
  // Equal across spaces with the same names; different values differ.
  auto copy = small_space().make({{"a", 4}, {"b", 1}, {"c", -3}});
  CHECK(copy == c);
  CHECK_FALSE(space.make({{"a", 4}, {"b", 1}, {"c", 0}}) == c);
  CHECK(Config().str().empty());
  CHECK_THROWS_AS(Config(space.names(), {1, 2}), Error);
}

TEST_CASE("space: builder rejects bad parameters and constraints", "[space]") {
  auto code_of = [](auto f) { return failure_of(f).code(); };
  CHECK(code_of([] { SearchSpace::Builder().param("a", {1}).param("a", {2}); }) ==
        ErrorCode::invalid_argument);
  CHECK(code_of([] { SearchSpace::Builder().param("a", {}); }) == ErrorCode::invalid_argument);
  const Error repeated = failure_of([] { SearchSpace::Builder().param("a", {1, 2, 1}); });
  CHECK_THAT(std::string(repeated.what()), Catch::Contains("value 1 twice"));
  const Error bad_default = failure_of([] { SearchSpace::Builder().param("a", {1, 2}, 3); });
  CHECK_THAT(std::string(bad_default.what()), Catch::Contains("default 3"));
  CHECK(code_of([] { SearchSpace::Builder().param("1x", {1}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([] { SearchSpace::Builder().param("not", {1}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([] { SearchSpace::Builder().param("a", {1}).constraint("a +").build(); }) ==
        ErrorCode::parse_error);
  CHECK(code_of([] { SearchSpace::Builder().param("a", {1}).constraint("b > 1").build(); }) ==
        ErrorCode::unknown_name);
  CHECK(code_of([] { SearchSpace::Builder().constraint("empty", nullptr); }) ==
        ErrorCode::invalid_argument);
}

TEST_CASE("space: index <-> config bijection on more than 10^9 points", "[space]") {
  auto space = large_space();
  REQUIRE(space.size() == 1197504000ull);
  REQUIRE(space.dims() == 13);
  // First parameter slowest, last fastest.
  CHECK(space.at(0).values() == std::vector<Value>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  CHECK(space.at(1).values().back() == 13);
  CHECK(space.at(space.size() / 5).values().front() == 1);
  CHECK(space.at(space.size() - 1).values().front() == 16);
  std::mt19937_64 rng(42);
  for (int k = 0; k < 2000; ++k) {
    const Index index = rng() % space.size();
    const Config c = space.at(index);
    REQUIRE(space.index_of(c) == index);
    REQUIRE(space.from_positions(space.positions(c)) == c);
    REQUIRE(space.parse(c.str()) == c);
    REQUIRE(space.contains(c));
  }
  CHECK_THROWS_AS(space.at(space.size()), Error);

  // Domains spread over a wide range use a sorted lookup instead of a table.
  auto wide = SearchSpace::Builder()
                  .param("w", {1000000, -5000000000LL, 7, 0})
                  .param("v", {3, 1})
                  .build();
  for (Index i = 0; i < wide.size(); ++i) REQUIRE(wide.index_of(wide.at(i)) == i);
  CHECK_FALSE(wide.contains(Config(wide.names(), {8, 3})));
  CHECK_THROWS_AS(space.from_positions({0, 0}), Error);
}

TEST_CASE("space: constraints agree with a brute-force check", "[space]") {
  auto space = small_space();
  std::vector<Index> expected;
  for (Index i = 0; i < space.size(); ++i) {
    const Config c = space.at(i);
    const bool rule = small_space_rule(c["a"], c["b"], c["c"]);
    INFO(c.str());
    REQUIRE(space.valid(c) == rule);
    REQUIRE(space.violated(c).has_value() == !rule);
    if (rule) expected.push_back(i);
  }
  REQUIRE_FALSE(expected.empty());
  CHECK(space.count_valid() == expected.size());
  std::vector<Index> visited;
  space.for_each_valid([&](Index i, const Config& c) {
    CHECK(space.index_of(c) == i);
    visited.push_back(i);
  });
  CHECK(visited == expected);
  // violated() names the first broken constraint in declaration order.
  CHECK(space.violated(space.make({{"a", 1}, {"b", 0}, {"c", 0}})) ==
        std::optional<std::string>("8 <= a * (b + 1) <= 24"));
  CHECK(space.violated(space.make({{"a", 8}, {"b", 0}, {"c", 2}})) ==
        std::optional<std::string>("c // 2 != -1 and not (a == 8 and c > 0)"));
}

TEST_CASE("space: C++ predicates and unconstrained parameters in counting", "[space]") {
  auto with_predicate = SearchSpace::Builder()
                            .param("x", {1, 2, 3, 4, 5})
                            .param("y", {1, 2, 3})
                            .param("free", {0, 1, 2, 3})
                            .constraint("x + y is even",
                                        [](const Config& c) { return (c["x"] + c["y"]) % 2 == 0; })
                            .constraint("x != 5")
                            .build();
  Index brute = 0;
  for (Index i = 0; i < with_predicate.size(); ++i) {
    const Config c = with_predicate.at(i);
    if ((c["x"] + c["y"]) % 2 == 0 && c["x"] != 5) ++brute;
  }
  CHECK(with_predicate.count_valid() == brute);
  CHECK(with_predicate.violated(with_predicate.make({{"x", 1}, {"y", 2}, {"free", 0}})) ==
        std::optional<std::string>("x + y is even"));
  // The large space only constrains 6 parameters: counting enumerates those alone.
  auto large = large_space();
  const std::uint64_t count = large.count_valid(Index{1} << 20);
  CHECK(count > 0);
  CHECK(count < large.size());
  CHECK(count % (3 * 9 * 2 * 10 * 11 * 3 * 2 * 5) == 0);
  CHECK_THROWS_AS(large.for_each_valid([](Index, const Config&) {}, 1000000), Error);
  CHECK_THROWS_AS(large.count_valid(1000), Error);
}

TEST_CASE("space: random() is valid, deterministic and covers small spaces", "[space]") {
  auto space = small_space();
  std::set<Index> valid;
  space.for_each_valid([&](Index i, const Config&) { valid.insert(i); });
  std::mt19937_64 rng(7);
  std::set<Index> seen;
  for (std::size_t k = 0; k < 40 * valid.size(); ++k) {
    const Config c = space.random(rng);
    REQUIRE(space.valid(c));
    seen.insert(space.index_of(c));
  }
  CHECK(seen == valid);

  std::mt19937_64 r1(99), r2(99);
  for (int k = 0; k < 20; ++k) CHECK(space.random(r1) == space.random(r2));

  auto large = large_space();
  for (int k = 0; k < 200; ++k) REQUIRE(large.valid(large.random(rng)));
}

TEST_CASE("space: random() finds rare valid points", "[space]") {
  // Two valid points in 262144: too rare for rejection sampling, small enough to list.
  SearchSpace::Builder small;
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) small.param(n, {0, 1, 2, 3, 4, 5, 6, 7});
  auto needle = small.constraint("a == 3 and b == 5 and c * d == 42").constraint("e + f == 0").build();
  std::mt19937_64 rng(1);
  std::set<std::string> found;
  for (int k = 0; k < 50; ++k) found.insert(needle.random(rng).str());
  CHECK(found == std::set<std::string>{"a=3,b=5,c=6,d=7,e=0,f=0", "a=3,b=5,c=7,d=6,e=0,f=0"});

  // A space of 10^12 points with few valid ones: randomized depth-first search.
  SearchSpace::Builder big;
  for (int i = 0; i < 12; ++i) big.param("q" + std::to_string(i), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  big.constraint("q0 + q1 + q2 == 27").constraint("q5 * q6 == 81").constraint("q11 < q10 < q9");
  auto sparse = big.build();
  for (int k = 0; k < 20; ++k) {
    const Config c = sparse.random(rng);
    REQUIRE(sparse.valid(c));
    CHECK(c["q0"] == 9);
    CHECK(c["q6"] == 9);
  }
}

TEST_CASE("space: random() walks from the defaults where valid points are rare and a search stalls", "[space]") {
  // 16^10 points, valid ones about 10^-5 of them and decided only once all ten are assigned
  // (a depth-first search in random order never left its first bad choices here and called
  // the space unsatisfiable). The defaults are valid, so random() walks from them.
  SearchSpace::Builder b;
  std::vector<Value> domain(16);
  std::iota(domain.begin(), domain.end(), Value{1});
  std::string sum;
  for (int i = 0; i < 10; ++i) {
    const std::string name = "p" + std::to_string(i);
    b.param(name, domain, 1);
    sum += (i ? " + " : "") + name;
  }
  auto space = b.constraint(sum + " <= 25").constraint("p0 * p1 * p2 <= 64").build();
  std::mt19937_64 rng(7);
  std::set<std::string> seen;
  std::vector<std::set<Value>> values(10);
  for (int k = 0; k < 50; ++k) {
    const Config c = space.random(rng);
    REQUIRE(space.valid(c));
    seen.insert(c.str());
    for (int i = 0; i < 10; ++i) values[i].insert(c["p" + std::to_string(i)]);
  }
  CHECK(seen.size() >= 45);  // draws differ: not the defaults over and over
  for (const auto& v : values) CHECK(v.size() >= 4);
  // The same generator state gives the same config.
  std::mt19937_64 r1(11), r2(11);
  CHECK(space.random(r1) == space.random(r2));
}

TEST_CASE("space: random()'s walk mixes: a free parameter is uniform over its whole domain", "[space]") {
  // Nine constrained parameters (their sum <= 8: about 4e-7 of 16^9, too rare to draw and the
  // space too large to list) and one free one, `a`, which is uniform over 0..15 among the valid
  // configs. The walk starts at the defaults (a = 0); a walk that moves too little stays near
  // them, and one that never proposes a domain's last value never reaches a = 15.
  SearchSpace::Builder b;
  std::vector<Value> domain(16);
  std::iota(domain.begin(), domain.end(), Value{0});
  b.param("a", domain, 0);
  std::string sum;
  for (int i = 1; i <= 9; ++i) {
    b.param("b" + std::to_string(i), domain, 0);
    sum += (i > 1 ? " + b" : "b") + std::to_string(i);
  }
  auto space = b.constraint(sum + " <= 8").build();
  std::mt19937_64 rng(5);
  std::vector<int> count(16, 0);
  constexpr int kDraws = 640;
  for (int k = 0; k < kDraws; ++k) ++count[space.random(rng)["a"]];
  for (int v = 0; v < 16; ++v) {
    INFO("a = " << v << " drawn " << count[v] << " times of " << kDraws);
    CHECK(count[v] > 0);
    CHECK(count[v] < 3 * kDraws / 16);  // expected 40 each; a stuck walk piles up at a = 0
  }
}

TEST_CASE("space: unsatisfiable constraints are an error naming them", "[space]") {
  auto small = SearchSpace::Builder()
                   .param("a", {1, 2, 3})
                   .param("b", {1, 2})
                   .constraint("a > 2")
                   .constraint("a * b < 3")
                   .build();
  std::mt19937_64 rng(3);
  const Error e = failure_of([&] { small.random(rng); });
  CHECK(e.code() == ErrorCode::unsatisfiable);
  CHECK_THAT(std::string(e.what()), Catch::Contains("\"a > 2\""));
  CHECK_THAT(std::string(e.what()), Catch::Contains("\"a * b < 3\""));
  CHECK(small.count_valid() == 0);

  SearchSpace::Builder big;
  for (int i = 0; i < 12; ++i) big.param("q" + std::to_string(i), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  big.constraint("q0 + q1 > 18");
  const Error f = failure_of([&] { big.build().random(rng); });
  CHECK(f.code() == ErrorCode::unsatisfiable);
  CHECK_THAT(std::string(f.what()), Catch::Contains("q0 + q1 > 18"));
}

TEST_CASE("space: neighbours are valid, at distance one, in a fixed order", "[space]") {
  auto space = SearchSpace::Builder()
                   .param("x", {1, 2, 4, 8})
                   .param("y", {10, 20, 30})
                   .constraint("x * y != 80")
                   .build();
  const Config c = space.make({{"x", 2}, {"y", 20}});
  std::vector<std::string> hamming;
  for (const auto& n : space.neighbours(c, Neighbourhood::hamming)) hamming.push_back(n.str());
  CHECK(hamming ==
        std::vector<std::string>{"x=1,y=20", "x=8,y=20", "x=2,y=10", "x=2,y=30"});
  std::vector<std::string> adjacent;
  for (const auto& n : space.neighbours(c, Neighbourhood::adjacent)) adjacent.push_back(n.str());
  CHECK(adjacent == std::vector<std::string>{"x=1,y=20", "x=2,y=10", "x=2,y=30"});
  // x=8,y=10 and x=4,y=20 are excluded by the constraint.
  const Config edge = space.make({{"x", 4}, {"y", 10}});
  std::vector<std::string> edge_adjacent;
  for (const auto& n : space.neighbours(edge, Neighbourhood::adjacent)) {
    edge_adjacent.push_back(n.str());
  }
  CHECK(edge_adjacent == std::vector<std::string>{"x=2,y=10"});

  auto large = large_space();
  std::mt19937_64 rng(5);
  const Config r = large.random(rng);
  for (const auto& n : large.neighbours(r, Neighbourhood::hamming)) {
    REQUIRE(large.valid(n));
    const auto a = large.positions(r), b = large.positions(n);
    int differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
    REQUIRE(differ == 1);
  }
}

TEST_CASE("space: encode scales positions to [0, 1]", "[space]") {
  auto space = SearchSpace::Builder()
                   .param("x", {8, 1, 4, 2, 16})
                   .param("one", {7})
                   .param("flag", {0, 1})
                   .build();
  CHECK(space.encode(space.make({{"x", 4}, {"one", 7}, {"flag", 1}})) ==
        std::vector<double>{0.5, 0.0, 1.0});
  CHECK(space.encode(space.make({{"x", 8}, {"one", 7}, {"flag", 0}})) ==
        std::vector<double>{0.0, 0.0, 0.0});
  CHECK(space.default_config().str() == "x=8,one=7,flag=0");
}

TEST_CASE("space: make and parse name what is wrong", "[space]") {
  auto space = small_space();
  CHECK(space.parse(" c=2, a=6 ,b=3 ") == space.make({{"a", 6}, {"b", 3}, {"c", 2}}));
  const Error unknown = failure_of([&] { space.make({{"a", 1}, {"b", 0}, {"c", 0}, {"d", 1}}); });
  CHECK(unknown.code() == ErrorCode::unknown_name);
  CHECK_THAT(std::string(unknown.what()), Catch::Contains("'d'"));
  CHECK_THAT(std::string(unknown.what()), Catch::Contains("a, b, c"));
  const Error domain = failure_of([&] { space.parse("a=5,b=0,c=0"); });
  CHECK(domain.code() == ErrorCode::invalid_argument);
  CHECK_THAT(std::string(domain.what()), Catch::Contains("value 5 of parameter 'a'"));
  CHECK_THAT(std::string(domain.what()), Catch::Contains("{1, 2, 3, 4, 6, 8}"));
  const Error missing = failure_of([&] { space.parse("b=0"); });
  CHECK_THAT(std::string(missing.what()), Catch::Contains("a, c"));
  CHECK(failure_of([&] { space.parse("a=1,b"); }).code() == ErrorCode::parse_error);
  CHECK(failure_of([&] { space.parse("a=1,b=x,c=0"); }).code() == ErrorCode::parse_error);
  CHECK(failure_of([&] { space.parse("a=1,b=0,c=0,"); }).code() == ErrorCode::parse_error);
  CHECK(failure_of([&] { space.parse("a=1,a=2,b=0,c=0"); }).code() ==
        ErrorCode::invalid_argument);
  // Configs of another space are refused, values outside the domain are invalid.
  auto other = SearchSpace::Builder().param("a", {1}).build();
  CHECK_THROWS_AS(space.valid(other.default_config()), Error);
  CHECK_FALSE(space.contains(other.default_config()));
  const Config outside(space.names(), {5, 0, 0});
  CHECK_FALSE(space.valid(outside));
  CHECK_FALSE(space.contains(outside));
  CHECK_THAT(*space.violated(outside), Catch::Contains("value 5"));
  CHECK_THROWS_AS(space.index_of(outside), Error);
}

TEST_CASE("space: with_changes sets named parameters of the default, naming bad input", "[space]") {
  auto space = small_space();  // default a=1, b=0, c=0
  CHECK(space.with_changes("") == space.default_config());
  CHECK(space.with_changes(" c=2 , a=6") == space.make({{"a", 6}, {"b", 0}, {"c", 2}}));
  // Invalid results are returned for the caller to judge (8 <= a * (b + 1) fails here).
  const Config small = space.with_changes("a=2");
  CHECK_FALSE(space.valid(small));
  CHECK_THAT(*space.violated(small), Catch::Contains("8 <= a * (b + 1) <= 24"));
  const Error unknown = failure_of([&] { space.with_changes("a=2,zz=1"); });
  CHECK(unknown.code() == ErrorCode::unknown_name);
  CHECK_THAT(std::string(unknown.what()), Catch::Contains("'zz'"));
  CHECK_THAT(std::string(failure_of([&] { space.with_changes("b=7"); }).what()),
             Catch::Contains("value 7 of parameter 'b'"));
  CHECK(failure_of([&] { space.with_changes("a"); }).code() == ErrorCode::parse_error);
  CHECK(failure_of([&] { space.with_changes("a=1,a=2"); }).code() == ErrorCode::invalid_argument);
}

TEST_CASE("space: empty and huge spaces", "[space]") {
  SearchSpace empty;
  CHECK(empty.size() == 1);
  CHECK(empty.count_valid() == 1);
  std::mt19937_64 rng(1);
  CHECK(empty.random(rng).size() == 0);
  SearchSpace::Builder b;
  for (int i = 0; i < 70; ++i) b.param("h" + std::to_string(i), {0, 1});
  auto huge = b.constraint("h0 + h69 == 1").build();
  CHECK_THROWS_AS(huge.size(), Error);
  CHECK(huge.valid(huge.random(rng)));
  CHECK(huge.find("h3") == std::optional<std::size_t>(3));
  CHECK_FALSE(huge.find("x"));
}

TEST_CASE("space: const methods are safe from several threads", "[space]") {
  auto space = large_space();
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int k = 0; k < 300; ++k) {
        const Config c = space.random(rng);
        if (!space.valid(c) || space.at(space.index_of(c)) != c) ++bad[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == std::vector<int>(4, 0));
}

TEST_CASE("space: valid() refuses values outside their domains, neighbours of an invalid config are valid",
          "[space]") {
  auto space = SearchSpace::Builder()
                   .param("A", {0, 1, 2})
                   .param("B", {0, 1, 2})
                   .constraint("A != 0")
                   .build();
  // Same names, a value no domain holds, every constraint satisfied.
  const Config outside(std::make_shared<const std::vector<std::string>>(space.default_config().names()),
                       std::vector<Value>{7, 1});
  CHECK_FALSE(space.valid(outside));
  CHECK(space.violated(outside).has_value());

  // A=0 breaks "A != 0": changing B cannot repair that, only changing A can.
  const Config invalid = space.parse("A=0,B=0");
  REQUIRE_FALSE(space.valid(invalid));
  const auto near = space.neighbours(invalid, Neighbourhood::hamming);
  std::set<std::string> texts;
  for (const auto& c : near) {
    CHECK(space.valid(c));
    texts.insert(c.str());
  }
  CHECK(texts == std::set<std::string>{"A=1,B=0", "A=2,B=0"});
}
