// [gpu] correctness of the "elementwise" template: every function and dtype on an odd shape
// (n not a multiple of any vector width, bias rows crossing vectors) and on a large 1-D
// tensor, over a sample of the space (default, random, grid-stride and streaming configs),
// measured through the GpuMeasurer (poisoned outputs, canaries, CPU double reference).
#include <catch2/catch.hpp>

#include "gpu_guard.h"
#include "memory_bound_test_util.h"

using namespace ktune;

TEST_CASE("elementwise is correct over its space and odd shapes", "[gpu][elementwise]") {
  KTUNE_REQUIRE_GPU();
  const auto t = find_template("elementwise");
  ktune::test::Cover cover = {
      {{"GRID_MODE", 1}}, {{"CACHE_HINT", 1}}, {{"VEC", 1}}, {{"ITEMS", 16}}};
  std::uint64_t seed = 1;
  const auto domains = t->attr_domains();  // a temporary's member would dangle in the loop
  for (const auto& fn : domains.at("fn"))
    for (const char* dtype : {"f32", "f16", "bf16"}) {
      const Problem odd = make_problem(*t, "3x1001", {{"dtype", dtype}, {"fn", fn}});
      ktune::test::expect_all_correct("elementwise", odd,
                                      ktune::test::sample_configs(*t, odd, 2, seed++, cover));
    }
  for (const char* fn : {"gelu_tanh", "bias_silu", "mul"}) {
    const Problem big = make_problem(*t, "1x4194307", {{"dtype", "f32"}, {"fn", fn}});
    ktune::test::expect_all_correct("elementwise", big,
                                    ktune::test::sample_configs(*t, big, 6, seed++, cover));
  }
  const Problem rows = make_problem(*t, "1023x771", {{"dtype", "bf16"}, {"fn", "bias_gelu_erf"}});
  ktune::test::expect_all_correct("elementwise", rows,
                                  ktune::test::sample_configs(*t, rows, 6, seed++, cover));
  cover.require_all_found();
}
