// The benchmark programs' argument rules (benchmarks/bench_args.h): an option is never taken
// for the output path, and option values are checked against their choices by name.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "benchmarks/bench_args.h"
#include "ktune/error.h"
#include "ktune/template.h"

using namespace ktune;

TEST_CASE("benchmark arguments: the output path comes first and is never an option", "[bench]") {
  const std::string usage = "usage: prog OUT.json [--budget=N]";
  std::string prog = "prog", out = "result.json", flag = "--budget=3";
  std::vector<char*> ok = {prog.data(), out.data(), flag.data()};
  CHECK(bench::output_argument(3, ok.data(), usage) == "result.json");
  std::vector<char*> missing = {prog.data()};
  CHECK_THROWS_WITH(bench::output_argument(1, missing.data(), usage), usage);
  std::vector<char*> option_first = {prog.data(), flag.data()};
  CHECK_THROWS_WITH(bench::output_argument(2, option_first.data(), usage), usage);
}

TEST_CASE("benchmark arguments: a value outside an option's choices is named", "[bench]") {
  CHECK_NOTHROW(bench::check_choices("--dtypes", {"f16", "f32"}, {"f32", "f16", "bf16"}));
  CHECK_THROWS_WITH(bench::check_choices("--dtypes", {"f16", "f64"}, {"f32", "f16", "bf16"}),
                    "--dtypes takes f32, f16, bf16, not f64");
}

TEST_CASE("benchmark arguments: a budget of 0 without a time cap is refused, naming the way out", "[bench]") {
  CHECK_NOTHROW(bench::check_budget_ends(1, 0));
  CHECK_NOTHROW(bench::check_budget_ends(0, 30, "--seconds"));  // time-capped: ends
  CHECK_THROWS_WITH(bench::check_budget_ends(0, 0, "--seconds"),
                    Catch::Contains("--budget=0") && Catch::Contains("--budget=1 measures the default") &&
                        Catch::Contains("--seconds=S"));
  CHECK_THROWS_WITH(bench::check_budget_ends(0, 0), Catch::Contains("--budget=0") &&
                                                         !Catch::Contains("--seconds"));
}

TEST_CASE("benchmark arguments: an unknown searcher is named with the registered ones", "[bench]") {
  CHECK_NOTHROW(bench::check_searcher("--searcher", "genetic"));
  CHECK_NOTHROW(bench::check_searcher("--searcher", "bayesian"));
  CHECK_THROWS_WITH(bench::check_searcher("--searcher", "genetik"),
                    Catch::Contains("--searcher takes") && Catch::Contains("genetic") &&
                        Catch::Contains("not genetik"));
}

TEST_CASE("benchmark arguments: a listed shape outside the suite is named, never dropped", "[bench]") {
  const std::vector<std::string> suite = {"4096x4096x4096", "8192x8192x8192"};
  CHECK_NOTHROW(bench::check_subset("--shapes", {"4096x4096x4096"}, suite));
  CHECK_THROWS_WITH(bench::check_subset("--shapes", {"4096x4096x409", "4096x4096x4096", "1x2x3"}, suite),
                    Catch::Contains("--shapes: 4096x4096x409, 1x2x3 not in the chosen suite") &&
                        Catch::Contains("8192x8192x8192"));
  CHECK_THROWS_WITH(bench::check_subset("--shapes", {"1x2x3"}, {}), Catch::Contains("(empty)"));
}

TEST_CASE("benchmark runs with a failed row exit 1", "[bench]") {
  CHECK(bench::exit_status("prog", 0, 3, "x") == 0);
  CHECK(bench::exit_status("prog", 1, 3, "x") == 1);
  CHECK(bench::exit_status("prog", 0, 0, "x") == 1);  // nothing measured is not a success
}

TEST_CASE("benchmark arguments: an override naming no parameter of the run is named", "[bench]") {
  const auto copy = find_template("copy");
  const auto space = copy->space(make_problem(*copy, "1048576", {{"dtype", "f32"}}), Device::h200());
  const auto ln = find_template("layernorm");
  const auto norm = ln->space(make_problem(*ln, "32768x1024", {{"dtype", "f16"}}), Device::h200());
  CHECK_NOTHROW(bench::check_variant_names("--variants", {"VEC=2", "THREADS=128,VEC=1"}, {space}));
  // A value outside the domain is left to the run (measured where valid); a name known to any
  // of the run's templates passes.
  CHECK_NOTHROW(bench::check_variant_names("--variants", {"VEC=3"}, {space}));
  CHECK_NOTHROW(bench::check_variant_names("--variants", {"ROW_MODE=3"}, {space, norm}));
  CHECK_THROWS_WITH(bench::check_variant_names("--variants", {"VEC=2", "VEC=2,FOO=1"}, {space, norm}),
                    Catch::Contains("--variants 'VEC=2,FOO=1'") && Catch::Contains("unknown parameter 'FOO'"));
  CHECK_THROWS_WITH(bench::check_variant_names("--copy-variants", {"VEC"}, {space}),
                    Catch::Contains("--copy-variants 'VEC'") && Catch::Contains("not name=value"));
  CHECK_THROWS_WITH(bench::check_variant_names("--variants", {"VEC=1,VEC=2"}, {space}),
                    Catch::Contains("'VEC' is given twice"));
  CHECK_THROWS_WITH(bench::check_variant_names("--variants", {"VEC=two"}, {space}),
                    Catch::Contains("'two' of VEC is not an integer"));
  CHECK_THROWS_WITH(bench::check_variant_names("--variants", {"VEC=2,"}, {space}),
                    Catch::Contains("item '' is not name=value"));
  CHECK_NOTHROW(bench::check_variant_names("--variants", {"FOO=1"}, {}));  // nothing to check against
}
