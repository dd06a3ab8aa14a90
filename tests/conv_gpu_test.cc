// [gpu] conv2d_mma and conv2d_simt on the real device: for odd shapes (prime H/W, stride 2
// with odd inputs, dilation 2, C = 3 with and without the small-C pre-pass, odd C and K,
// deep R*S*C for split-K, 1x1x1), the default config, a random sample of each space and one
// config for each iterator strategy / split-K / small-C choice are measured through the
// GpuMeasurer: outputs poisoned, canaries checked, compared with the fp64 host reference
// under the workload's tolerance.
#include <catch2/catch.hpp>

#include "gpu_guard.h"
#include "memory_bound_test_util.h"

using namespace ktune;

namespace {

/// One problem of the sweep.
struct ConvCase {
  const char* shape;  // NxHxWxCxKxRxS
  std::map<std::string, std::string> attrs;
};

/// Odd and regular shapes, every attribute exercised (dtype is added by the caller).
const std::vector<ConvCase>& sweep() {
  static const std::vector<ConvCase> cases = {
      {"2x17x19x8x24x3x3", {{"pad", "1"}, {"bias", "1"}, {"relu", "1"}}},  // prime H/W
      {"3x13x11x3x16x7x7", {{"stride", "2"}, {"pad", "3"}}},               // stem-like, C = 3
      {"2x15x15x16x32x3x3", {{"dilation", "2"}, {"pad", "2"}, {"bias", "1"}}},
      {"1x23x23x64x40x1x1", {{"stride", "2"}}},                            // odd input, 1x1/2
      {"2x9x9x17x5x3x3", {{"pad", "1"}, {"relu", "1"}}},                   // odd C and K
      {"4x7x7x256x128x3x3", {{"pad", "1"}}},                               // R*S*C = 2304
      {"1x1x1x1x1x1x1", {}},
  };
  return cases;
}

/// Measures the default, `random_count` random configs and one per strategy choice.
void check_conv(const std::string& template_name, const ConvCase& c, const std::string& dtype,
                int random_count, std::uint64_t seed) {
  const auto tmpl = find_template(template_name);
  auto attrs = c.attrs;
  attrs["dtype"] = dtype;
  const Problem problem = make_problem(*tmpl, c.shape, attrs);
  const auto configs = test::sample_configs(
      *tmpl, problem, random_count, seed,
      {{{"ITER", 0}}, {{"ITER", 1}}, {{"SPLIT_K", 4}}, {{"SMALL_C", 0}}, {{"SMALL_C", 1}}});
  test::expect_all_correct(template_name, problem, configs);
}

}  // namespace

TEST_CASE("conv2d_mma is correct for f16 and bf16 on odd shapes and sampled configs",
          "[gpu][conv]") {
  KTUNE_REQUIRE_GPU();
  std::uint64_t seed = 10;
  int i = 0;
  for (const auto& c : sweep()) {
    check_conv("conv2d_mma", c, i++ % 2 ? "bf16" : "f16", 3, ++seed);
    if (std::string(c.shape) == "3x13x11x3x16x7x7") check_conv("conv2d_mma", c, "bf16", 2, ++seed);
  }
}

TEST_CASE("conv2d_simt is correct for f32 on odd shapes and sampled configs", "[gpu][conv]") {
  KTUNE_REQUIRE_GPU();
  std::uint64_t seed = 50;
  for (const auto& c : sweep()) check_conv("conv2d_simt", c, "f32", 3, ++seed);
}
