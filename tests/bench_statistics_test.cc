// The benchmarks' summary statistics: the median every timing loop and every --rounds row
// reports, and the geometric mean of the per-shape ratios.
#include <catch2/catch.hpp>

#include "benchmarks/gpu_bench_support.h"

using namespace ktune;

TEST_CASE("benchmark medians and geometric means", "[bench]") {
  CHECK(bench::median({}) == 0.0);
  CHECK(bench::median({5.0}) == 5.0);
  CHECK(bench::median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(bench::median({4.0, 1.0, 3.0, 2.0}) == Approx(2.5));  // the mean of the middle pair
  CHECK(bench::median({0.72, 0.66}) == Approx(0.69));  // not the better of two rounds
  CHECK(bench::median<int>({1980, 1755}) == 1867);
  CHECK(bench::median({0.7, 0.65, 0.72, 0.69, 0.63}) == 0.69);
  CHECK(bench::geomean({2.0, 8.0}) == Approx(4.0));
  CHECK(bench::geomean({0.5, 2.0, 1.0}) == Approx(1.0));
}
