// [gpu] conv2d_wgmma on the real device (an sm_90a GPU; skips elsewhere): odd shapes (prime
// H/W, stride 2 with odd inputs, dilation 2, 1x1 / 3x3 / 7x7 filters, C not a multiple of
// 64 so k tiles span filter taps, odd and partial K, bias + ReLU, deep R*S*C for split-K,
// one large enough for the GPU reference), f16 and bf16, the default config, a random sample
// and one config for each structural choice (ITER, split-K, BK 128, one warpgroup, 256-row
// tiles, 192-row tiles of three warpgroups, BN 256, 3 stages, the staged epilogue), measured
// through the GpuMeasurer: fresh random inputs, outputs poisoned, canaries checked, compared
// with the conv workload's reference (fp64 on the host, or the GPU reference above its cost
// threshold) under its tolerance.
#include <catch2/catch.hpp>

#include "cuda_module.h"
#include "gpu_guard.h"
#include "memory_bound_test_util.h"
#include "templates/conv/conv_problem.h"

using namespace ktune;
using detail::check_cuda;

namespace {

/// One problem of the sweep.
struct ConvCase {
  const char* shape;  // NxHxWxCxKxRxS
  std::map<std::string, std::string> attrs;
};

/// Shapes conv2d_wgmma can run (C a multiple of 8); dtype is added by the caller.
const std::vector<ConvCase>& sweep() {
  static const std::vector<ConvCase> cases = {
      {"2x17x19x8x24x3x3", {{"pad", "1"}, {"bias", "1"}, {"relu", "1"}}},  // prime H/W, C = 8
      {"2x13x11x16x16x7x7", {{"stride", "2"}, {"pad", "3"}}},              // 7x7/2, odd input
      {"2x15x15x16x32x3x3", {{"dilation", "2"}, {"pad", "2"}, {"bias", "1"}}},
      {"1x23x23x64x40x1x1", {{"stride", "2"}}},                            // odd input, 1x1/2
      {"2x9x9x24x5x3x3", {{"pad", "1"}, {"relu", "1"}}},                   // odd K
      {"3x11x13x40x72x3x3", {{"stride", "2"}, {"pad", "1"}, {"bias", "1"}}},  // taps span tiles
      {"4x7x7x256x128x3x3", {{"pad", "1"}}},                               // R*S*C = 2304
      {"2x20x20x64x256x1x1", {{"bias", "1"}, {"relu", "1"}}},              // interior 128 x 256
      {"3x7x9x24x40x1x1", {{"bias", "1"}}},  // 1x1 plain A (x as M x C): C < BK, odd M, K = 40
      {"4x29x31x64x136x3x3", {{"pad", "1"}, {"bias", "1"}, {"relu", "1"}}},  // GPU reference
  };
  return cases;
}

}  // namespace

TEST_CASE("conv2d_wgmma is correct for f16 and bf16 on odd shapes and sampled configs",
          "[gpu][conv][wgmma]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  const Device device = query_device(0);
  if (device.cc_major != 9) {
    WARN("SKIPPED (conv2d_wgmma needs compute capability 9.0): " << device.name);
    return;
  }
  const auto tmpl = find_template("conv2d_wgmma");
  std::uint64_t seed = 300;
  int i = 0;
  // Every case gets the default and random configs; the structural choices alternate
  // between the dtypes to keep the run short, and each is run on at least one shape.
  test::Cover odd_cases = {
      {{"ITER", 0}},
      {{"SPLIT_K", 4}},
      {{"BK", 128}},
      {{"BN", 256}},
      {{"EPI", 1}, {"SPLIT_K", 1}},
      {{"PERSIST", 2}},
      {{"CLUSTER_K", 2}},
      {{"PRODUCER", 1}, {"EPI", 1}},
      {{"BM", 192}, {"WGS", 3}},
      {{"BM", 192}, {"WGS", 3}, {"EPI", 1}}};
  test::Cover even_cases = {
      {{"WGS", 1}},
      {{"BM", 256}},
      {{"STAGES", 3}, {"LOOP", 0}},
      {{"SPLIT_K", 2}, {"ITER", 1}},
      {{"EPI", 1}, {"SPLIT_K", 1}},
      {{"PERSIST", 1}, {"EPI", 1}},
      {{"CLUSTER_K", 4}, {"EPI", 1}},
      {{"PRODUCER", 2}, {"SPLIT_K", 2}},
      {{"BM", 192}, {"WGS", 3}},
      {{"BM", 192}, {"WGS", 3}, {"PRODUCER", 1}},
      {{"BM", 192}, {"PERSIST", 1}}};
  for (const auto& c : sweep())
    for (const char* dtype : {"f16", "bf16"}) {
      auto attrs = c.attrs;
      attrs["dtype"] = dtype;
      const Problem problem = make_problem(*tmpl, c.shape, attrs);
      const auto configs =
          test::sample_configs(*tmpl, problem, 2, ++seed, i++ % 2 ? odd_cases : even_cases);
      INFO(problem.key());
      test::expect_all_correct("conv2d_wgmma", problem, configs);
    }
  odd_cases.require_all_found();
  even_cases.require_all_found();
}
