// conv2d_wgmma without a GPU: the gathered activation tile's placement (the loader's
// per-thread chunks, each one filter tap of one output pixel, land where the wgmma
// descriptors read them; replayed against the 128B-swizzle model of gemm_wgmma_layout.cuh),
// the space (defaults valid on the ResNet-50 layers it can run, C % 8 refused with a reason
// that names C and points to conv2d_mma, structural rules named), launch plans (grid, 128
// threads per warpgroup, aligned shared memory, split-K step, bias argument), and NVRTC
// compiles to sm_90a cubins (defaults without spills, no wgmma serialization, a sample).
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <tuple>

#include "builtin_templates.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "memory_bound_test_util.h"
#include "templates/conv/conv_problem.h"
#include "templates/gemm/gemm_wgmma_layout.cuh"

using namespace ktune;

namespace {

/// ResNet-50 layer at batch 32: shape and attributes (as benchmarks/gpu_conv.cc lists them).
struct Layer {
  const char* shape;
  int stride, pad;
};

const std::vector<Layer>& resnet50_layers() {
  static const std::vector<Layer> layers = {
      {"32x56x56x64x64x1x1", 1, 0},     {"32x56x56x64x64x3x3", 1, 1},
      {"32x56x56x64x256x1x1", 1, 0},    {"32x56x56x256x64x1x1", 1, 0},
      {"32x56x56x256x128x1x1", 1, 0},   {"32x56x56x128x128x3x3", 2, 1},
      {"32x28x28x128x512x1x1", 1, 0},   {"32x56x56x256x512x1x1", 2, 0},
      {"32x28x28x512x128x1x1", 1, 0},   {"32x28x28x128x128x3x3", 1, 1},
      {"32x28x28x512x256x1x1", 1, 0},   {"32x28x28x256x256x3x3", 2, 1},
      {"32x14x14x256x1024x1x1", 1, 0},  {"32x28x28x512x1024x1x1", 2, 0},
      {"32x14x14x1024x256x1x1", 1, 0},  {"32x14x14x256x256x3x3", 1, 1},
      {"32x14x14x1024x512x1x1", 1, 0},  {"32x14x14x512x512x3x3", 2, 1},
      {"32x7x7x512x2048x1x1", 1, 0},    {"32x14x14x1024x2048x1x1", 2, 0},
      {"32x7x7x2048x512x1x1", 1, 0},    {"32x7x7x512x512x3x3", 1, 1},
  };
  return layers;
}

/// Host model of the gather: the input element (or -1 for a zero) that row m (pixel),
/// reduced index k of the implicit GEMM's A matrix holds, straight from the definition.
long long a_element(const conv::ConvShape& s, long long m, long long k) {
  const long long P = s.P(), Q = s.Q();
  if (m >= s.pixels() || k >= s.gemm_k()) return -1;
  const long long n = m / (P * Q), p = (m / Q) % P, q = m % Q;
  const long long c = k % s.C, rs = k / s.C, r = rs / s.S, t = rs % s.S;
  const long long h = p * s.stride - s.pad + r * s.dilation;
  const long long w = q * s.stride - s.pad + t * s.dilation;
  if (h < 0 || h >= s.H || w < 0 || w >= s.W) return -1;
  return ((n * s.H + h) * s.W + w) * s.C + c;
}

}  // namespace

TEST_CASE("conv2d_wgmma tile placement: each thread's chunks are one tap of one pixel, read "
          "back by the wgmma descriptors",
          "[conv][wgmma]") {
  // The loader (conv2d_wgmma.cuh) gives thread tid the chunk column tid % (BK / 8) and rows
  // tid / (BK / 8) + i * row_step, at shared offset chunk_offset(first row) + i * row_step
  // * 128. Replay it for odd geometries: the 8 elements of each chunk must be 8 consecutive
  // channels of one input pixel (or all padding), and the descriptor model must read every
  // A element (m, k) from the slot the loader filled with it.
  struct Case {
    const char* shape;
    int stride, pad, dil;
  };
  const std::vector<Case> cases = {{"2x17x19x8x24x3x3", 1, 1, 1},
                                   {"1x23x23x64x40x1x1", 2, 0, 1},
                                   {"2x15x15x16x32x3x3", 1, 2, 2},
                                   {"2x13x11x40x16x7x7", 2, 3, 1}};
  for (const auto& c : cases) {
    auto tmpl = make_conv2d_wgmma_template();
    const Problem p =
        make_problem(*tmpl, c.shape,
                     {{"dtype", "f16"}, {"stride", std::to_string(c.stride)},
                      {"pad", std::to_string(c.pad)}, {"dilation", std::to_string(c.dil)}});
    const conv::ConvShape s = conv::conv_shape(p);
    for (int rows : {64, 128, 256})
      for (int bk : {64, 128})
        for (int threads : {128, 256}) {
          const int per_row = bk / 8, row_step = threads / per_row;
          INFO(p.key() << " tile " << rows << " x " << bk << ", " << threads << " threads");
          long long misplaced = 0, torn = 0, misread = 0;  // plain counters: fast loops
          for (int m0 : {0, rows})
            for (long long k0 = 0; k0 < s.gemm_k(); k0 += bk) {
              // Shared image of the tile: slot -> A element it holds.
              std::vector<long long> image(static_cast<std::size_t>(rows * bk), -7);
              for (int tid = 0; tid < threads; ++tid)
                for (int i = 0; i < rows * per_row / threads; ++i) {
                  const int row = tid / per_row + i * row_step, chunk = tid % per_row;
                  const unsigned dst = ktg::wgmma_chunk_offset(rows, tid / per_row, chunk) +
                                       static_cast<unsigned>(i * row_step * 128);
                  misplaced += dst != ktg::wgmma_chunk_offset(rows, row, chunk);
                  const long long first = a_element(s, m0 + row, k0 + chunk * 8);
                  for (int e = 0; e < 8; ++e) {
                    const long long v = a_element(s, m0 + row, k0 + chunk * 8 + e);
                    // One 16-byte copy: contiguous channels, or all zero fill.
                    torn += v != (first < 0 ? -1 : first + e);
                    image[(dst + 2 * e) / 2] = v;
                  }
                }
              // What the tensor cores read for each warpgroup's 64-row operand of each k step.
              for (int row0 = 0; row0 < rows; row0 += 64)
                for (int ks = 0; ks < bk / 16; ++ks) {
                  const unsigned long long desc =
                      ktg::wgmma_desc(ktg::wgmma_operand_addr(0, rows, row0, ks));
                  for (int r = 0; r < 64; ++r)
                    for (int kk = 0; kk < 16; ++kk) {
                      const unsigned at = ktg::wgmma_model_address(desc, r, kk);
                      misread += image[at / 2] != a_element(s, m0 + row0 + r, k0 + ks * 16 + kk);
                    }
                }
            }
          CHECK(misplaced == 0);
          CHECK(torn == 0);
          CHECK(misread == 0);
        }
  }
}

TEST_CASE("conv2d_wgmma space: ResNet-50 defaults valid, can_implement names the input",
          "[conv][wgmma]") {
  const Device h200 = Device::h200();
  auto wg = make_conv2d_wgmma_template();
  CHECK(wg->name() == "conv2d_wgmma");
  CHECK(wg->op() == "conv2d");
  CHECK(wg->vendor_reference() == "cudnn");
  CHECK(find_template("conv2d_wgmma")->name() == "conv2d_wgmma");
  CHECK_THROWS_WITH(make_problem(*wg, "1x8x8x8x8x3x3", {{"dtype", "f32"}}),
                    Catch::Contains("dtype"));
  for (const auto& l : resnet50_layers())
    for (const char* dtype : {"f16", "bf16"}) {
      const Problem p = make_problem(*wg, l.shape,
                                     {{"dtype", dtype}, {"stride", std::to_string(l.stride)},
                                      {"pad", std::to_string(l.pad)}, {"bias", "1"}});
      const SearchSpace space = wg->space(p, h200);
      const Config d = space.default_config();
      INFO(p.key() << " " << d.str() << " " << space.violated(d).value_or("valid"));
      CHECK(space.valid(d));
      CHECK(wg->can_implement(p, d));
      const LaunchPlan plan = wg->launch(p, d, h200);
      CHECK(plan.steps[0].dynamic_smem <= 227u * 1024u);
      // At least ~0.7 of a wave of blocks (split-K only where 128 x 64 tiles are fewer).
      CHECK(plan.steps[0].grid[0] * plan.steps[0].grid[2] * 10u >= 132u * 7u);
      CHECK(wg->target_arch(h200, d) == "sm_90a");
    }
  // Chosen tiles on a few layers: wide output channels get 128 x 256 while those fill ~0.7
  // of a wave, 64 channels 128 x 64; one k tile (1x1 over 64 channels) keeps 3 stages.
  auto default_of = [&](const char* shape, int stride, int pad) {
    const Problem p = make_problem(*wg, shape, {{"dtype", "f16"},
                                               {"stride", std::to_string(stride)},
                                               {"pad", std::to_string(pad)}});
    return wg->space(p, h200).default_config();
  };
  const Config s1 = default_of("32x56x56x64x64x1x1", 1, 0);
  CHECK(s1["BN"] == 64);
  CHECK(s1["STAGES"] == 3);
  CHECK(s1["SPLIT_K"] == 1);
  // 56x56 3x3 over 64 channels: 784 tiles of 128 x 64 (6 waves) tie with 523 of 192 x 64
  // (4 waves): persistent 192-row blocks, 4 stages beside the staged output tile.
  const Config s13 = default_of("32x56x56x64x64x3x3", 1, 1);
  CHECK(s13["BN"] == 64);
  CHECK(s13["BM"] == 192);
  CHECK(s13["PERSIST"] == 1);
  CHECK(s13["STAGES"] == 4);
  CHECK(s13["EPI"] == 1);
  const Config s1w = default_of("32x56x56x256x512x1x1", 2, 0);
  CHECK(s1w["BM"] == 128);
  CHECK(s1w["BN"] == 256);
  CHECK(s1w["WGS"] == 2);
  // 7x7 outputs (M = 1568), 3x3 over 512 channels (72 k tiles): 52 tiles of 128 x 128, each
  // split across a cluster of two (104 blocks, one wave, 6 stages, two warpgroups), no
  // workspace split.
  const Config s4 = default_of("32x7x7x512x512x3x3", 1, 1);
  CHECK(s4["BN"] == 128);
  CHECK(s4["CLUSTER_K"] == 2);
  CHECK(s4["WGS"] == 2);
  CHECK(s4["SPLIT_K"] == 1);
  CHECK(s4["STAGES"] == 6);
  CHECK(s4["EPI"] == 1);  // staged epilogue wherever K % 8 == 0
  // The 1x1 layer of the same M and K (32 k tiles): 104 tiles of 128 x 64, no cluster.
  const Config s4_1x1 = default_of("32x7x7x2048x512x1x1", 1, 0);
  CHECK(s4_1x1["BN"] == 64);
  CHECK(s4_1x1["CLUSTER_K"] == 1);
  // 14x14 outputs, 256 channels of 3x3 (M = 6272): 98 tiles of 128 x 128 fill 74 % of the
  // SMs; 66 tiles of 192 x 128, each split over a 2-CTA cluster, fill all 132.
  const Config s3 = default_of("32x14x14x256x256x3x3", 1, 1);
  CHECK(s3["BN"] == 128);
  CHECK(s3["BM"] == 192);
  CHECK(s3["WGS"] == 3);
  CHECK(s3["CLUSTER_K"] == 2);
  CHECK(s3["SPLIT_K"] == 1);
  // The 1x1 layer of that M over 1024 input channels keeps 128 x 128 on one warpgroup, and a
  // 56x56 stride-2 layer over 512 outputs its 128 x 256 tiles (no 192-row tie rule there).
  CHECK(default_of("32x14x14x1024x256x1x1", 1, 0)["BM"] == 128);
  CHECK(default_of("32x56x56x256x512x1x1", 2, 0)["BN"] == 256);
  // M = 25088 (28x28 outputs) and 6272 (14x14): 196 / 49 tiles of 128 rows (1.48 / 0.74
  // waves) against 131 / 33 of 192 rows: three warpgroups of 64 x BN where the busiest SM's
  // tile area drops (1.48 waves of 128 x 128 -> one of 192 x 128; 2 waves of 128 x 256 -> one
  // of 192 x 256; 98 tiles of 128 x 256 -> 132 of 192 x 128, where 66 of 192 x 256 would
  // leave half the SMs idle), with the staged epilogue.
  for (const auto& [shape, stride, pad, bn] :
       std::vector<std::tuple<const char*, int, int, int>>{{"32x28x28x128x128x3x3", 1, 1, 128},
                                                           {"32x56x56x128x128x3x3", 2, 1, 128},
                                                           {"32x28x28x512x256x1x1", 1, 0, 256},
                                                           {"32x14x14x256x1024x1x1", 1, 0, 256},
                                                           {"32x14x14x1024x512x1x1", 1, 0, 128}}) {
    const Config c = default_of(shape, stride, pad);
    INFO(shape << " " << c.str());
    CHECK(c["BM"] == 192);
    CHECK(c["WGS"] == 3);
    CHECK(c["BN"] == bn);
    CHECK(c["EPI"] == 1);
  }
  // 56x56 outputs over 128 channels (784 tiles of 128, 6 waves; 523 of 192, 4 waves): a tie,
  // taken as persistent 192-row blocks.
  const Config s2_56 = default_of("32x56x56x256x128x1x1", 1, 0);
  CHECK(s2_56["BM"] == 192);
  CHECK(s2_56["PERSIST"] == 1);
  // ... but not for 64-wide tiles of a 1x1 filter (measured slower).
  CHECK(default_of("32x56x56x256x64x1x1", 1, 0)["BM"] == 128);
  // 1x1: staged epilogue; one k tile: analytic offsets.
  CHECK(s1["EPI"] == 1);
  CHECK(s1["ITER"] == 0);

  // The stem (C = 3) and any C not a multiple of 8: refused, naming C and conv2d_mma.
  for (const char* shape : {"32x224x224x3x64x7x7", "2x9x9x12x16x3x3"}) {
    const Problem stem = make_problem(*wg, shape, {{"dtype", "f16"}, {"stride", "2"},
                                                   {"pad", "3"}});
    const Config d = wg->space(stem, h200).default_config();
    std::string why;
    CHECK_FALSE(wg->can_implement(stem, d, &why));
    CHECK_THAT(why, Catch::Contains("C = ") && Catch::Contains("multiple of 8") &&
                        Catch::Contains("conv2d_mma"));
    CHECK_THROWS_WITH(wg->launch(stem, d, h200), Catch::Contains("C = "));
  }

  // Structural rules, each with a reason naming the value.
  const Problem p = make_problem(*wg, "32x28x28x128x128x3x3", {{"dtype", "f16"}, {"pad", "1"}});
  const SearchSpace space = wg->space(p, h200);
  auto make = [&](Value bm, Value bn, Value bk, Value wgs, Value stages) {
    return space.make({{"BM", bm}, {"BN", bn}, {"BK", bk}, {"WGS", wgs}, {"STAGES", stages},
                       {"SPLIT_K", 1}, {"GROUP_M", 8}, {"ITER", 1}, {"EPI", 0}, {"LOOP", 1},
                       {"PERSIST", 0}, {"CLUSTER_K", 1}, {"PRODUCER", 0}});
  };
  std::string why;
  const Config split64 = make(64, 128, 64, 2, 4);
  CHECK_FALSE(space.valid(split64));
  CHECK_FALSE(wg->can_implement(p, split64, &why));
  CHECK_THAT(why, Catch::Contains("BM = 64") && Catch::Contains("WGS"));
  CHECK(wg->can_implement(p, make(192, 128, 64, 3, 5)));  // three warpgroups of 64 rows
  const Config two_of_192 = make(192, 128, 64, 2, 4);      // 96 rows per warpgroup
  CHECK_FALSE(space.valid(two_of_192));
  CHECK_FALSE(wg->can_implement(p, two_of_192, &why));
  CHECK_THAT(why, Catch::Contains("BM = 192") && Catch::Contains("WGS (2"));
  // A producer beside three warpgroups leaves 128 registers per consumer: BN <= 128.
  const Problem wide = make_problem(*wg, "32x28x28x512x256x1x1", {{"dtype", "f16"}});
  const SearchSpace wide_space = wg->space(wide, h200);
  const Config producer3 = wide_space.make(
      {{"BM", 192}, {"BN", 256}, {"BK", 64}, {"WGS", 3}, {"STAGES", 3}, {"SPLIT_K", 1},
       {"GROUP_M", 8}, {"ITER", 1}, {"EPI", 0}, {"LOOP", 1}, {"PERSIST", 0}, {"CLUSTER_K", 1},
       {"PRODUCER", 1}});
  CHECK_FALSE(wide_space.valid(producer3));
  CHECK_FALSE(wg->can_implement(wide, producer3, &why));
  CHECK_THAT(why, Catch::Contains("BN = 256") && Catch::Contains("WGS = 3") &&
                      Catch::Contains("registers"));
  CHECK(wg->can_implement(wide, test::with(wide_space, producer3, {{"BN", 128}})));
  const Config one_wg = make(128, 128, 64, 1, 4);  // 64 x ... fits: 128 x 128 / 1 = 16384
  CHECK(wg->can_implement(p, one_wg));
  const Config too_many = make(256, 128, 64, 1, 3);
  CHECK_FALSE(wg->can_implement(p, too_many, &why));
  CHECK_THAT(why, Catch::Contains("accumulators"));
  // 5 * (128 + 256) * 64 * 2 + 1 KiB > 227 KiB; BN 256 is also wider than K = 128.
  const Config huge = make(128, 256, 64, 2, 5);
  CHECK_FALSE(space.valid(huge));
  // A wider tile than the output channels only pads: pruned from the space.
  CHECK_THAT(*space.violated(make(128, 256, 64, 2, 4)), Catch::Contains("BN <= 128"));
  CHECK(space.valid(make(128, 128, 64, 2, 6)));
}

TEST_CASE("conv2d_wgmma launch plans: grid, 128 threads per warpgroup, aligned shared memory",
          "[conv][wgmma]") {
  const Device h200 = Device::h200();
  auto wg = make_conv2d_wgmma_template();
  // M = 2 * 17 * 19 = 646 pixels, K = 72 channels.
  const Problem p = make_problem(*wg, "2x17x19x16x72x3x3",
                                 {{"dtype", "bf16"}, {"pad", "1"}, {"bias", "1"}});
  const SearchSpace space = wg->space(p, h200);
  const Config c = space.make({{"BM", 128}, {"BN", 128}, {"BK", 64}, {"WGS", 2}, {"STAGES", 4},
                               {"SPLIT_K", 1}, {"GROUP_M", 8}, {"ITER", 1}, {"EPI", 0}, {"LOOP", 1},
                       {"PERSIST", 0}, {"CLUSTER_K", 1}, {"PRODUCER", 0}});
  const LaunchPlan plan = wg->launch(p, c, h200);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].entry == "conv2d_wgmma");
  CHECK(plan.steps[0].grid[0] == 6u);  // ceil(646 / 128) x ceil(72 / 128)
  CHECK(plan.steps[0].block[0] == 256u);
  // R*S*C = 144: three k tiles, so only three of the four stages are ever written.
  CHECK(plan.steps[0].dynamic_smem == 3u * (128u + 128u) * 64u * 2u + 1024u);
  CHECK(plan.steps[0].args[0].buffer == 0u);  // x read directly (no small-C copy)
  CHECK(plan.steps[0].args[3].buffer == 3u);  // bias
  CHECK(plan.scratch.empty());
  const Config split = space.make({{"BM", 64}, {"BN", 64}, {"BK", 64}, {"WGS", 1},
                                   {"STAGES", 3}, {"SPLIT_K", 2}, {"GROUP_M", 1}, {"ITER", 0},
                                   {"EPI", 0}, {"LOOP", 0}, {"PERSIST", 0}, {"CLUSTER_K", 1}, {"PRODUCER", 0}});
  const LaunchPlan sp = wg->launch(p, split, h200);
  REQUIRE(sp.steps.size() == 2);
  CHECK(sp.steps[0].block[0] == 128u);
  CHECK(sp.steps[0].grid[0] == 11u * 2u);
  CHECK(sp.steps[0].grid[2] == 2u);
  CHECK(sp.steps[1].entry == "conv2d_splitk_reduce");
  REQUIRE(sp.scratch.size() == 1);
  CHECK(sp.scratch[0].elements == 2u * 646u * 72u);
  CHECK(sp.steps[0].dynamic_smem == 2u * (64u + 64u) * 64u * 2u + 1024u);  // 2 k tiles a split
  // A 1x1 over 64 channels (one k tile): one stage of shared memory whatever STAGES says.
  const Problem one = make_problem(*wg, "32x56x56x64x256x1x1", {{"dtype", "f16"}});
  const SearchSpace os = wg->space(one, h200);
  const Config d = os.default_config();
  CHECK(d["BN"] == 128);  // two blocks per SM: one stores while the other loads
  CHECK(d["EPI"] == 1);   // 1x1 default: staged epilogue
  const LaunchPlan op = wg->launch(one, test::with(os, d, {{"EPI", 0}}), h200);
  CHECK(op.steps[0].dynamic_smem == (128u + 128u) * 64u * 2u + 1024u);
  // The staged epilogue needs BM rows of BN * 2 + 16 bytes: more than that one stage.
  const LaunchPlan staged = wg->launch(one, test::with(os, d, {{"EPI", 1}}), h200);
  CHECK(staged.steps[0].dynamic_smem == 128u * (128u * 2u + 16u) + 1024u);
  // Persistent blocks: at most PERSIST x SMs blocks; the staging rows follow the stage.
  const Config persistent = test::with(os, d, {{"EPI", 1}, {"PERSIST", 2}, {"WGS", 2}});
  CHECK(os.valid(persistent));
  const LaunchPlan pp = wg->launch(one, persistent, h200);
  CHECK(pp.steps[0].grid[0] == 2u * 132u);  // 784 x 2 tiles
  CHECK(pp.steps[0].dynamic_smem ==
        (128u + 128u) * 64u * 2u + 128u * (128u * 2u + 16u) + 1024u);
  // k-split cluster: CLUSTER_K blocks along z per tile, no workspace or reduce step, and
  // shared memory for rank 1's fp32 tile (128 x 128 floats: more than the stages here).
  const Config cluster = space.make({{"BM", 128}, {"BN", 128}, {"BK", 64}, {"WGS", 2},
                                     {"STAGES", 4}, {"SPLIT_K", 1}, {"GROUP_M", 8}, {"ITER", 1},
                                     {"EPI", 0}, {"LOOP", 1}, {"PERSIST", 0}, {"CLUSTER_K", 2}, {"PRODUCER", 0}});
  CHECK(space.valid(cluster));
  const LaunchPlan cp = wg->launch(p, cluster, h200);
  REQUIRE(cp.steps.size() == 1);
  CHECK(cp.steps[0].grid[0] == 6u);
  CHECK(cp.steps[0].grid[2] == 2u);
  CHECK(cp.scratch.empty());
  CHECK(cp.steps[0].dynamic_smem == 128u * 128u * 4u + 1024u);
  // It replaces SPLIT_K and PERSIST: both combinations are refused, naming the value.
  std::string why_ck;
  CHECK_FALSE(wg->can_implement(p, test::with(space, cluster, {{"SPLIT_K", 2}}), &why_ck));
  CHECK_THAT(why_ck, Catch::Contains("CLUSTER_K = 2") && Catch::Contains("SPLIT_K = 1"));
  CHECK_FALSE(space.valid(test::with(space, cluster, {{"SPLIT_K", 2}})));
  // R*S*C = 144 is three k tiles: four ranks would leave one without work.
  CHECK_FALSE(space.valid(test::with(space, cluster, {{"CLUSTER_K", 4}})));
  // Producer warpgroup: one more warpgroup of threads, the same grid and dynamic shared memory
  // (its mbarriers are static); refused with persistent blocks or a cluster.
  const Config producer = test::with(space, c, {{"PRODUCER", 1}});
  CHECK(space.valid(producer));
  const LaunchPlan prp = wg->launch(p, producer, h200);
  CHECK(prp.steps[0].block[0] == 384u);
  CHECK(prp.steps[0].grid[0] == plan.steps[0].grid[0]);
  CHECK(prp.steps[0].dynamic_smem == plan.steps[0].dynamic_smem);
  std::string why_pr;
  CHECK_FALSE(wg->can_implement(p, test::with(space, cluster, {{"PRODUCER", 2}}), &why_pr));
  CHECK_THAT(why_pr, Catch::Contains("PRODUCER = 2") && Catch::Contains("CLUSTER_K = 1"));
  CHECK_FALSE(space.valid(test::with(space, c, {{"PRODUCER", 1}, {"PERSIST", 1}})));
  // Three 256-thread blocks of 64 accumulators per thread do not fit the register file.
  std::string why3;
  CHECK_FALSE(wg->can_implement(one, test::with(os, d, {{"PERSIST", 3}, {"WGS", 2}}), &why3));
  CHECK_THAT(why3, Catch::Contains("PERSIST = 3"));
}

TEST_CASE("conv2d_wgmma compiles to sm_90a: wgmma without serialization, defaults without "
          "spills",
          "[conv][wgmma][nvrtc]") {
  const Device h200 = Device::h200();
  BuilderOptions options;
  options.threads = 2;
  Builder builder(options);
  auto wg = std::shared_ptr<const KernelTemplate>(make_conv2d_wgmma_template());
  struct Case {
    const char* shape;
    std::map<std::string, std::string> attrs;
    int extra;
  };
  const std::vector<Case> cases = {
      {"32x56x56x64x64x3x3", {{"dtype", "f16"}, {"pad", "1"}}, 3},
      {"32x56x56x64x256x1x1", {{"dtype", "f16"}, {"bias", "1"}, {"relu", "1"}}, 1},
      {"32x14x14x512x512x3x3", {{"dtype", "bf16"}, {"stride", "2"}, {"pad", "1"}}, 2},
      {"32x7x7x512x512x3x3", {{"dtype", "f16"}, {"pad", "1"}}, 1},
      {"3x17x13x24x40x7x7", {{"dtype", "bf16"}, {"dilation", "2"}, {"pad", "3"}}, 1},
      // Defaults of 192 x 128 tiles on three warpgroups (the B loader's partial last round).
      {"32x28x28x512x256x1x1", {{"dtype", "f16"}}, 0},
      {"32x28x28x128x128x3x3", {{"dtype", "bf16"}, {"pad", "1"}}, 0},
      // 192 x 128 split over a 2-CTA cluster (the M = 6272 3x3 default).
      {"32x14x14x256x256x3x3", {{"dtype", "f16"}, {"pad", "1"}}, 0},
  };
  for (const auto& c : cases) {
    const Problem p = make_problem(*wg, c.shape, c.attrs);
    const SearchSpace space = wg->space(p, h200);
    // The default, the default with the staged epilogue, the default with the gather-first
    // loop, then random configs.
    std::vector<Config> configs = {space.default_config(),
                                   test::with(space, space.default_config(), {{"EPI", 1}}),
                                   test::with(space, space.default_config(), {{"LOOP", 0}})};
    std::mt19937_64 rng(11);
    // One persistent-block config (PERSIST > 0), one k-split cluster (CLUSTER_K > 1) and one
    // producer warpgroup (PRODUCER > 0) when the shape allows them.
    for (const char* knob : {"PERSIST", "CLUSTER_K", "PRODUCER"})
      for (int tries = 0; tries < 2000; ++tries) {
        const Config r = space.random(rng);
        if (r[knob] > (std::string(knob) == "CLUSTER_K" ? 1 : 0) && wg->can_implement(p, r)) {
          configs.push_back(r);
          break;
        }
      }
    for (int tries = 0; tries < 200 && static_cast<int>(configs.size()) < c.extra + 4; ++tries) {
      const Config r = space.random(rng);
      if (wg->can_implement(p, r) && std::find(configs.begin(), configs.end(), r) == configs.end())
        configs.push_back(r);
    }
    const auto results = builder.build_all(wg, p, configs, h200);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      INFO(p.key() << " " << configs[i].str() << "\n" << results[i].log);
      REQUIRE(results[i].ok);
      CHECK(results[i].arch == "sm_90a");
      CHECK(results[i].kernels.count("conv2d_wgmma") == 1);
      // ptxas says "wgmma.mma_async instructions are serialized" when it cannot keep them
      // asynchronous (a large slowdown).
      CHECK(results[i].log.find("serialized") == std::string::npos);
      CHECK(results[i].log.find("setmaxnreg") == std::string::npos);  // ptxas ignoring it
      if (i <= 2 || (configs[i]["PRODUCER"] > 0)) {
        const auto& r = results[i].kernels.at("conv2d_wgmma");
        CHECK(r.spill_stores == 0);
        CHECK(r.spill_loads == 0);
        CHECK(r.stack_bytes == 0);
      }
    }
  }
}
