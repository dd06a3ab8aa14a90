// [gpu] gemm_simt and gemm_mma on the real device: for odd and regular shapes, all four
// layouts, every dtype, bias and output types, the default config, a split-K config and a
// random sample of each space are compiled for the device, run through their launch plans
// (main kernel, split-K reduction) on random inputs, and compared with the double-precision
// CPU reference under the workload's tolerance; inputs must come back unchanged.
#include <catch2/catch.hpp>

#include <random>

#include "builtin_templates.h"
#include "cuda_module.h"
#include "gemm_device_buffers.h"
#include "gpu_guard.h"
#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"
#include "verify.h"

using namespace ktune;
using detail::check_cuda;

namespace {

/// The default config, the default with SPLIT_K = 4 (when valid) and `extra` random ones.
std::vector<Config> configs_to_check(const SearchSpace& space, int extra, std::uint64_t seed) {
  std::vector<Config> configs = {space.default_config()};
  std::vector<Value> split = space.default_config().values();
  const std::size_t pos = *space.find("SPLIT_K");
  split[pos] = 4;
  Config split_config(space.names(), split);
  if (space.valid(split_config)) configs.push_back(split_config);
  std::mt19937_64 rng(seed);
  for (int attempt = 0; attempt < 40 && static_cast<int>(configs.size()) < extra + 2; ++attempt) {
    Config c = space.random(rng);
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  return configs;
}

/// Checks every (problem, config) pair of a template; configs of a problem compile together.
/// `fixed` configs (parameter values as text, "BM=128,...") are checked too where the problem's
/// space holds them as valid.
void check_template(const std::shared_ptr<const KernelTemplate>& tmpl,
                    const std::vector<Problem>& problems, int extra,
                    const std::vector<std::string>& fixed = {}) {
  Device device = query_device(0);
  Builder builder;
  std::uint64_t seed = 100;
  for (const auto& problem : problems) {
    SearchSpace space = tmpl->space(problem, device);
    std::vector<Config> configs = configs_to_check(space, extra, ++seed);
    for (const std::string& text : fixed) {
      const Config c = space.parse(text);
      if (space.valid(c) && std::find(configs.begin(), configs.end(), c) == configs.end())
        configs.push_back(c);
    }
    auto workload = tmpl->workload(problem);
    std::vector<HostBuffer> host;
    for (const auto& spec : workload->buffers()) host.push_back(make_host_buffer(spec));
    workload->fill(host, seed);
    std::vector<HostBuffer> expected = host;
    workload->reference(expected);
    auto built = builder.build_all(tmpl, problem, configs, device);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      INFO(tmpl->name() << " " << problem.key() << " " << configs[i].str());
      REQUIRE(tmpl->can_implement(problem, configs[i]));
      const std::string failure = gemm_test::run_and_compare(*tmpl, problem, configs[i], device,
                                                             built[i], host, expected, *workload);
      INFO(failure);
      CHECK(failure.empty());
    }
  }
}

const char* const kLayouts[] = {"NN", "NT", "TN", "TT"};

}  // namespace

TEST_CASE("gemm_simt is correct on odd shapes, all layouts, bias, split-K and sampled configs",
          "[gpu][gemm]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  auto simt = std::shared_ptr<const KernelTemplate>(make_gemm_simt_template());
  std::vector<Problem> problems;
  int i = 0;
  for (const char* layout : kLayouts)
    for (const char* shape : {"1x1x1", "17x33x65", "127x259x96", "64x128x256"})
      problems.push_back(make_problem(*simt, shape,
                                      {{"layout", layout}, {"bias", ++i % 2 ? "1" : "0"}}));
  problems.push_back(make_problem(*simt, "1000x1000x1000", {{"layout", "NT"}}));
  problems.push_back(make_problem(*simt, "5x1024x4096", {{"layout", "NN"}, {"bias", "1"}}));
  problems.push_back(make_problem(*simt, "127x512x64", {{"layout", "TT"}}));
  check_template(simt, problems, 3);
}

TEST_CASE("gemm_simt is correct with large tiles: 8x16 / 16x8 threads, 3 stages, interior loop",
          "[gpu][gemm]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  auto simt = std::shared_ptr<const KernelTemplate>(make_gemm_simt_template());
  // Interior and edge blocks side by side (300x520x136: the unchecked cursor loop next to the
  // guarded one; a k tail for BK = 16) and an interior-only shape (256x512x384: unchecked
  // loop and epilogue), every layout; the large-shape default (128x256x8, 8x16, 3 stages) and
  // its neighbours, split-K and 1 stage included.
  std::vector<Problem> problems;
  for (int l = 0; l < 4; ++l)
    for (const char* shape : {"300x520x136", "256x512x384"})
      problems.push_back(make_problem(*simt, shape,
                                      {{"layout", kLayouts[l]}, {"bias", l % 2 ? "1" : "0"}}));
  check_template(simt, problems, 0,
                 {"BM=128,BN=256,BK=8,TM=8,TN=16,WARP_ROWS=4,"
                  "VEC=4,STAGES=3,PAD=4,SPLIT_K=1,GROUP_M=8",
                  "BM=128,BN=256,BK=16,TM=8,TN=16,WARP_ROWS=8,"
                  "VEC=4,STAGES=3,PAD=4,SPLIT_K=2,GROUP_M=8",
                  "BM=256,BN=128,BK=8,TM=16,TN=8,WARP_ROWS=4,"
                  "VEC=4,STAGES=3,PAD=4,SPLIT_K=1,GROUP_M=1",
                  "BM=128,BN=128,BK=8,TM=8,TN=8,WARP_ROWS=4,"
                  "VEC=4,STAGES=3,PAD=4,SPLIT_K=1,GROUP_M=8",
                  "BM=128,BN=128,BK=8,TM=8,TN=8,WARP_ROWS=2,"
                  "VEC=4,STAGES=1,PAD=4,SPLIT_K=4,GROUP_M=8",
                  "BM=128,BN=256,BK=8,TM=8,TN=16,WARP_ROWS=4,"
                  "VEC=4,STAGES=2,PAD=4,SPLIT_K=1,GROUP_M=8",
                  "BM=128,BN=128,BK=8,TM=16,TN=8,WARP_ROWS=4,"
                  "VEC=4,STAGES=3,PAD=4,SPLIT_K=1,GROUP_M=8"});
}

TEST_CASE("gemm_mma is correct for f16, bf16, tf32 on odd shapes, all layouts, both outputs",
          "[gpu][gemm]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  auto mma = std::shared_ptr<const KernelTemplate>(make_gemm_mma_template());
  std::vector<Problem> problems;
  int i = 0;
  for (const char* dtype : {"f16", "bf16", "tf32"})
    for (const char* layout : kLayouts)
      for (const char* shape : {"1x1x1", "17x33x65", "127x259x96", "128x256x512"}) {
        ++i;
        problems.push_back(make_problem(*mma, shape,
                                        {{"dtype", dtype}, {"layout", layout},
                                         {"bias", i % 2 ? "1" : "0"},
                                         {"out", i % 3 ? "same" : "f32"}}));
      }
  problems.push_back(make_problem(*mma, "1000x1000x1000", {{"dtype", "f16"}, {"layout", "NT"}}));
  problems.push_back(make_problem(*mma, "16x2048x4096", {{"dtype", "bf16"}, {"layout", "NT"}}));
  problems.push_back(make_problem(*mma, "127x1024x64", {{"dtype", "f16"}, {"layout", "TN"}}));
  problems.push_back(make_problem(*mma, "333x257x1031", {{"dtype", "f16"}, {"layout", "NN"}, {"bias", "1"}}));
  check_template(mma, problems, 3);
}

TEST_CASE("gemm_mma is correct with large tiles: 128x256 / 256x128, 64x64 warps, 2-4 stages",
          "[gpu][gemm]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  auto mma = std::shared_ptr<const KernelTemplate>(make_gemm_mma_template());
  // Edge tiles in M, N and a k tail (200 = 3 x 64 + 8), and an interior-only shape (the
  // unchecked epilogue); the large-shape default and its neighbours, split-K included, and
  // one k step per k tile (BK = 16 f16 / 8 tf32: the fragment hand-over between tiles).
  // Every layout meets both shapes across the three dtypes.
  std::vector<Problem> problems;
  int i = 0;
  for (const char* dtype : {"f16", "bf16", "tf32"})
    for (int l = 0; l < 4; ++l, ++i)
      problems.push_back(make_problem(*mma, l % 2 ? "256x512x384" : "300x520x200",
                                      {{"dtype", dtype}, {"layout", kLayouts[(l + i / 4) % 4]},
                                       {"bias", i % 2 ? "1" : "0"},
                                       {"out", i % 3 ? "same" : "f32"}}));
  check_template(mma, problems, 0,
                 {"BM=128,BN=256,BK=64,WM=64,WN=64,STAGES=3,SPLIT_K=1,GROUP_M=8",
                  "BM=128,BN=256,BK=32,WM=64,WN=64,STAGES=3,SPLIT_K=1,GROUP_M=8",
                  "BM=256,BN=128,BK=64,WM=64,WN=64,STAGES=4,SPLIT_K=2,GROUP_M=1",
                  "BM=128,BN=128,BK=16,WM=64,WN=64,STAGES=2,SPLIT_K=1,GROUP_M=8",
                  "BM=64,BN=128,BK=8,WM=32,WN=64,STAGES=4,SPLIT_K=1,GROUP_M=8"});
}
