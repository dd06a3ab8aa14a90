// [gpu] correctness of the "reduction" template over a sample of its space (default, random,
// and every strategy: sub-warp / warp / block per row, second pass, atomics, shared-memory
// tree) on odd shapes (1 x 1, cols = 1, cols not a multiple of the vector width, 10^6-long
// rows, whole tensors) in every dtype, through the GpuMeasurer with the CPU reference.
#include <catch2/catch.hpp>

#include "gpu_guard.h"
#include "memory_bound_test_util.h"

using namespace ktune;

TEST_CASE("reduction is correct over its space and odd shapes", "[gpu][reduction]") {
  KTUNE_REQUIRE_GPU();
  const auto t = find_template("reduction");
  ktune::test::Cover cover = {
      {{"SPLIT", 8}, {"MULTI", 0}}, {{"SPLIT", 16}, {"MULTI", 1}}, {{"TREE", 1}},
      {{"TPR", 8}}, {{"TPR", 32}, {"ITEMS", 8}}, {{"TPR", 1024}, {"TREE", 1}},
      {{"SPLIT", 4}, {"MULTI", 2}}, {{"SPLIT", 64}, {"MULTI", 2}, {"TREE", 1}}};
  struct Case { const char* shape; const char* dtype; const char* fn; };
  const Case cases[] = {
      {"1x1", "f32", "sum"},          {"7x3", "f16", "max"},         {"1000x17", "bf16", "mean"},
      {"1x1000003", "f16", "sum"},    {"3x1000000", "bf16", "max"},  {"64x4096", "f32", "mean"},
      {"65536x1", "f32", "sum"},      {"1x16777221", "f32", "sum"},  {"2x10000000", "f32", "max"},
      {"513x2048", "f16", "mean"},    {"1x4099", "bf16", "max"}};
  std::uint64_t seed = 100;
  for (const Case& c : cases) {
    const Problem p = make_problem(*t, c.shape, {{"dtype", c.dtype}, {"fn", c.fn}});
    ktune::test::expect_all_correct("reduction", p, ktune::test::sample_configs(*t, p, 5, seed++, cover));
  }
  cover.require_all_found();
}
