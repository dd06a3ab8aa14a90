// [gpu] gemm_wgmma on the real device (Hopper only; skipped with a message elsewhere): odd and
// regular NT shapes in f16 and bf16, both output types, with and without bias, the default
// config, fixed configs covering every tile / warpgroup / k-tile / stage / split-K shape the
// kernel has, and a random sample of each space, compiled for sm_90a, run through their launch
// plans on fresh random inputs (split-K workspace poisoned with NaN) and compared with the
// double-precision CPU reference under the workload's tolerance; inputs must come back
// unchanged.
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

/// Checks the default, the `fixed` configs valid in each problem's space and `extra` random
/// implementable ones, for every problem; returns after the first problem whose checks fail.
void check_wgmma(const std::vector<Problem>& problems, const std::vector<std::string>& fixed,
                 int extra) {
  auto tmpl = std::shared_ptr<const KernelTemplate>(make_gemm_wgmma_template());
  Device device = query_device(0);
  Builder builder;
  std::uint64_t seed = 300;
  for (const auto& problem : problems) {
    SearchSpace space = tmpl->space(problem, device);
    std::vector<Config> configs = {space.default_config()};
    for (const std::string& text : fixed) {
      const Config c = space.parse(text);
      if (space.valid(c) && tmpl->can_implement(problem, c) &&
          std::find(configs.begin(), configs.end(), c) == configs.end())
        configs.push_back(c);
    }
    std::mt19937_64 rng(++seed);
    for (int attempt = 0, added = 0; attempt < 60 && added < extra; ++attempt) {
      Config c = space.random(rng);
      if (!tmpl->can_implement(problem, c) ||
          std::find(configs.begin(), configs.end(), c) != configs.end())
        continue;
      configs.push_back(c);
      ++added;
    }
    auto workload = tmpl->workload(problem);
    std::vector<HostBuffer> host;
    for (const auto& spec : workload->buffers()) host.push_back(make_host_buffer(spec));
    workload->fill(host, seed);
    std::vector<HostBuffer> expected = host;
    workload->reference(expected);
    auto built = builder.build_all(tmpl, problem, configs, device);
    bool all_ok = true;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      INFO("gemm_wgmma " << problem.key() << " " << configs[i].str());
      REQUIRE(tmpl->can_implement(problem, configs[i]));
      const std::string failure = gemm_test::run_and_compare(*tmpl, problem, configs[i], device,
                                                             built[i], host, expected, *workload);
      INFO(failure);
      CHECK(failure.empty());
      all_ok = all_ok && failure.empty();
    }
    if (!all_ok) return;  // one problem's failures say enough; keep the log readable
  }
}

/// Skips (with a visible message) on devices without wgmma.
#define KTUNE_REQUIRE_HOPPER()                                                       \
  do {                                                                               \
    KTUNE_REQUIRE_GPU();                                                             \
    check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");                                \
    const Device d_ = query_device(0);                                               \
    if (d_.cc_major != 9) {                                                          \
      WARN("SKIPPED (gemm_wgmma needs compute capability 9.0): " << d_.name);        \
      return;                                                                        \
    }                                                                                \
  } while (0)

/// Fixed configs: the large-shape default, one warpgroup of 64 x 64 with the shallowest
/// pipeline, 256-row tiles of two 128-row warpgroups with 128-deep k tiles, BN 64, split-K,
/// the same shapes with the producer warpgroup (PRODUCER=1, 2), k-split clusters, and padded
/// copies of A and B for K % 8 != 0.
const std::vector<std::string> kFixed = {
    "BM=128,BN=256,BK=64,WGS=2,STAGES=4,SPLIT_K=1,GROUP_M=8,PRODUCER=0,CLUSTER_K=1,PAD_K=0",
    "BM=64,BN=64,BK=64,WGS=1,STAGES=3,SPLIT_K=1,GROUP_M=1,PRODUCER=0,CLUSTER_K=1,PAD_K=0",
    "BM=256,BN=128,BK=128,WGS=2,STAGES=3,SPLIT_K=1,GROUP_M=4,PRODUCER=0,CLUSTER_K=1,PAD_K=0",
    "BM=128,BN=64,BK=128,WGS=1,STAGES=6,SPLIT_K=1,GROUP_M=8,PRODUCER=0,CLUSTER_K=1,PAD_K=0",
    "BM=64,BN=256,BK=64,WGS=1,STAGES=5,SPLIT_K=4,GROUP_M=1,PRODUCER=0,CLUSTER_K=1,PAD_K=0",
    "BM=128,BN=128,BK=64,WGS=2,STAGES=5,SPLIT_K=2,GROUP_M=8,PRODUCER=0,CLUSTER_K=1,PAD_K=0",
    // The warp-specialized pipeline (producer warpgroup, mbarrier ring), several shapes.
    "BM=128,BN=256,BK=64,WGS=2,STAGES=4,SPLIT_K=1,GROUP_M=8,PRODUCER=1,CLUSTER_K=1,PAD_K=0",
    "BM=64,BN=64,BK=64,WGS=1,STAGES=3,SPLIT_K=1,GROUP_M=1,PRODUCER=1,CLUSTER_K=1,PAD_K=0",
    "BM=128,BN=128,BK=128,WGS=1,STAGES=3,SPLIT_K=4,GROUP_M=8,PRODUCER=1,CLUSTER_K=1,PAD_K=0",
    // Asynchronous full arrivals (cp.async.mbarrier.arrive.noinc), consumer-side proxy fence.
    "BM=128,BN=256,BK=64,WGS=2,STAGES=4,SPLIT_K=1,GROUP_M=8,PRODUCER=2,CLUSTER_K=1,PAD_K=0",
    "BM=64,BN=128,BK=64,WGS=1,STAGES=3,SPLIT_K=2,GROUP_M=1,PRODUCER=2,CLUSTER_K=1,PAD_K=0",
    // k-split clusters: ranks 1.. hand their fp32 tiles to rank 0 through distributed shared
    // memory (kept where each rank gets at least one k tile).
    "BM=128,BN=128,BK=64,WGS=2,STAGES=5,SPLIT_K=1,GROUP_M=8,PRODUCER=0,CLUSTER_K=2,PAD_K=0",
    "BM=64,BN=128,BK=64,WGS=1,STAGES=3,SPLIT_K=1,GROUP_M=1,PRODUCER=0,CLUSTER_K=4,PAD_K=0",
    "BM=128,BN=64,BK=128,WGS=1,STAGES=4,SPLIT_K=1,GROUP_M=8,PRODUCER=0,CLUSTER_K=8,PAD_K=0",
    // K % 8 != 0 (kept only there): padded copies with split-K, a cluster, the producer.
    "BM=128,BN=128,BK=64,WGS=2,STAGES=5,SPLIT_K=2,GROUP_M=8,PRODUCER=0,CLUSTER_K=1,PAD_K=1",
    "BM=64,BN=128,BK=64,WGS=1,STAGES=3,SPLIT_K=1,GROUP_M=1,PRODUCER=0,CLUSTER_K=2,PAD_K=1",
    "BM=128,BN=256,BK=64,WGS=2,STAGES=4,SPLIT_K=1,GROUP_M=8,PRODUCER=1,CLUSTER_K=1,PAD_K=1",
};

}  // namespace

TEST_CASE("gemm_wgmma is correct for f16 and bf16 on odd NT shapes, both outputs, bias",
          "[gpu][gemm][wgmma]") {
  KTUNE_REQUIRE_HOPPER();
  std::vector<Problem> problems;
  auto wg = make_gemm_wgmma_template();
  int i = 0;
  for (const char* dtype : {"f16", "bf16"})
    for (const char* shape : {"1x1x8", "17x33x72", "127x259x96", "65x200x8", "300x520x200",
                              // K % 8 != 0: the padded copies of A and B (PAD_K = 1)
                              "1x1x1", "33x70x13", "130x260x1001"}) {
      ++i;
      problems.push_back(make_problem(*wg, shape,
                                      {{"dtype", dtype}, {"layout", "NT"},
                                       {"bias", i % 2 ? "1" : "0"},
                                       {"out", i % 3 ? "same" : "f32"}}));
    }
  check_wgmma(problems, kFixed, 2);
}

TEST_CASE("gemm_wgmma is correct on interior tiles, rasterized grids and long k",
          "[gpu][gemm][wgmma]") {
  KTUNE_REQUIRE_HOPPER();
  auto wg = make_gemm_wgmma_template();
  // 256 x 512: whole 128 x 256 tiles (the unchecked epilogue); 1024 x 1024 x 512: 32 tiles in
  // GROUP_M order; 64 x 2048 x 2048: a skinny default with split-K; 1000^3: edges everywhere.
  const std::vector<Problem> problems = {
      make_problem(*wg, "256x512x384", {{"dtype", "f16"}, {"layout", "NT"}}),
      make_problem(*wg, "256x512x384", {{"dtype", "bf16"}, {"layout", "NT"}, {"bias", "1"}}),
      make_problem(*wg, "1024x1024x512", {{"dtype", "bf16"}, {"layout", "NT"}, {"out", "f32"}}),
      make_problem(*wg, "64x2048x2048", {{"dtype", "f16"}, {"layout", "NT"}}),
      make_problem(*wg, "1000x1000x1000", {{"dtype", "f16"}, {"layout", "NT"}, {"bias", "1"}}),
  };
  check_wgmma(problems, kFixed, 1);
}
