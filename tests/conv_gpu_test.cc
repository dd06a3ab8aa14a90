// [gpu] conv2d_mma and conv2d_simt on the real device: for odd shapes (prime H/W, stride 2
// with odd inputs, dilation 2, C = 3 with and without the small-C pre-pass, odd C and K,
// deep R*S*C for split-K, 1x1x1), the default config, a random sample of each space and one
// config for each iterator strategy / split-K / small-C choice are measured through the
// GpuMeasurer: outputs poisoned, canaries checked, compared with the fp64 host reference
// under the workload's tolerance. The GPU reference (used to verify the ResNet-50 layers) is
// checked against the host reference on shapes just above its cost threshold.
#include <catch2/catch.hpp>

#include "cuda_module.h"
#include "gpu_guard.h"
#include "launch_plan_runner.h"
#include "memory_bound_test_util.h"
#include "device_reference.h"
#include "templates/conv/conv_problem.h"
#include "verify.h"

using namespace ktune;
using detail::check_cuda;

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

/// The strategy choices every conv test covers (each on at least one of its shapes).
test::Cover strategies() {
  return {{{"ITER", 0}}, {{"ITER", 1}}, {{"SPLIT_K", 4}}, {{"SMALL_C", 0}}, {{"SMALL_C", 1}}};
}

/// Measures the default, `random_count` random configs and one per strategy choice (counted
/// in `cover`).
void check_conv(const std::string& template_name, const ConvCase& c, const std::string& dtype,
                int random_count, std::uint64_t seed, test::Cover& cover) {
  const auto tmpl = find_template(template_name);
  auto attrs = c.attrs;
  attrs["dtype"] = dtype;
  const Problem problem = make_problem(*tmpl, c.shape, attrs);
  const auto configs = test::sample_configs(*tmpl, problem, random_count, seed, cover);
  test::expect_all_correct(template_name, problem, configs);
}

}  // namespace

TEST_CASE("conv2d_mma is correct for f16 and bf16 on odd shapes and sampled configs",
          "[gpu][conv]") {
  KTUNE_REQUIRE_GPU();
  std::uint64_t seed = 10;
  int i = 0;
  test::Cover cover = strategies();
  for (const auto& c : sweep()) {
    check_conv("conv2d_mma", c, i++ % 2 ? "bf16" : "f16", 3, ++seed, cover);
    if (std::string(c.shape) == "3x13x11x3x16x7x7")
      check_conv("conv2d_mma", c, "bf16", 2, ++seed, cover);
  }
  cover.require_all_found();
}

TEST_CASE("conv2d_simt is correct for f32 on odd shapes and sampled configs", "[gpu][conv]") {
  KTUNE_REQUIRE_GPU();
  std::uint64_t seed = 50;
  test::Cover cover = strategies();
  for (const auto& c : sweep()) check_conv("conv2d_simt", c, "f32", 3, ++seed, cover);
  cover.require_all_found();
}

TEST_CASE("conv GPU reference agrees with the fp64 host reference", "[gpu][conv]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  const Device device = query_device(0);
  struct RefCase {
    const char* tmpl;
    const char* shape;
    std::map<std::string, std::string> attrs;
  };
  // Each just above kDeviceReferenceCost (2^26 multiply-adds), so device_reference() is offered.
  const std::vector<RefCase> cases = {
      {"conv2d_simt", "2x28x28x128x96x3x3", {{"pad", "1"}}},
      {"conv2d_mma", "2x28x28x128x96x3x3", {{"pad", "1"}, {"dtype", "f16"}, {"bias", "1"}}},
      {"conv2d_mma", "8x31x29x64x80x3x3",
       {{"stride", "2"}, {"pad", "2"}, {"dilation", "2"}, {"dtype", "bf16"}, {"relu", "1"}}},
      {"conv2d_simt", "8x64x64x3x64x7x7",
       {{"stride", "2"}, {"pad", "3"}, {"bias", "1"}, {"relu", "1"}}},
  };
  std::uint64_t seed = 90;
  for (const auto& c : cases) {
    const auto tmpl = find_template(c.tmpl);
    const Problem p = make_problem(*tmpl, c.shape, c.attrs);
    INFO(p.key());
    const auto workload = tmpl->workload(p);
    const auto ref = workload->device_reference();
    REQUIRE(ref.has_value());
    std::vector<HostBuffer> host = test::host_buffers(*workload);
    workload->fill(host, ++seed);
    std::vector<HostBuffer> expected = host;
    workload->reference(expected);

    const detail::NvrtcOutput built = detail::compile_device_reference(*ref, device.arch());
    INFO(built.log);
    REQUIRE(built.ok);
    detail::CudaModule module(built.cubin);
    std::vector<detail::DeviceMemory> memory;
    std::vector<detail::DeviceBuffer> buffers;
    memory.reserve(host.size());
    for (const auto& b : host) {
      memory.emplace_back(b.bytes.size());
      buffers.push_back({memory.back().get(), b.bytes.size()});
      check_cuda(cudaMemcpy(memory.back().get(), b.bytes.data(), b.bytes.size(),
                            cudaMemcpyHostToDevice), "upload " + b.spec.name);
    }
    check_cuda(cudaMemset(buffers[2].ptr, 0xff, buffers[2].bytes), "poison y");
    REQUIRE(detail::run_launch_plan(module, ref->plan, buffers, nullptr).ok());
    check_cuda(cudaDeviceSynchronize(), "conv2d_reference");
    HostBuffer got{host[2].spec, std::vector<std::uint8_t>(host[2].bytes.size())};
    check_cuda(cudaMemcpy(got.bytes.data(), buffers[2].ptr, got.bytes.size(),
                          cudaMemcpyDeviceToHost), "download y");
    // Both accumulate in fp64; they differ only where a rounding to the dtype flips.
    Tolerance tight;
    tight.rel_l2 = host[2].spec.dtype == DType::f32 ? 1e-6 : 2e-3;
    const verify::Comparison cmp = verify::compare(got, expected[2], verify::with_element_bound(tight, expected[2]));
    INFO(cmp.message);
    CHECK(cmp.ok);
  }
}
