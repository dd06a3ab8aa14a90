// The benchmark programs' argument rules (benchmarks/bench_args.h): an option is never taken
// for the output path, and option values are checked against their choices by name.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "benchmarks/bench_args.h"
#include "ktune/error.h"

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
