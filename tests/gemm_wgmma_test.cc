// gemm_wgmma without a GPU: the shared-memory tile layout and wgmma descriptors replayed on
// the host (the loader's chunk placement against a model of the tensor core's 128B-swizzle
// address generation), the space (defaults, shared-memory / tile / accumulator constraints),
// can_implement refusing unsupported layouts and K with a reason naming them, launch plans,
// and NVRTC compiles to sm_90a cubins (defaults without spills, no wgmma serialization).
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "builtin_templates.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "memory_bound_test_util.h"
#include "templates/gemm/gemm_problem.h"
#include "templates/gemm/gemm_wgmma_layout.cuh"

using namespace ktune;

namespace {

/// The default config plus `extra` distinct random valid configs that can_implement accepts.
std::vector<Config> sample_implementable(const KernelTemplate& tmpl, const Problem& p,
                                         const SearchSpace& space, int extra, std::uint64_t seed) {
  std::vector<Config> configs = {space.default_config()};
  std::mt19937_64 rng(seed);
  for (int attempt = 0; attempt < 100 && static_cast<int>(configs.size()) < extra + 1;
       ++attempt) {
    Config c = space.random(rng);
    if (tmpl.can_implement(p, c) && std::find(configs.begin(), configs.end(), c) == configs.end())
      configs.push_back(c);
  }
  return configs;
}

/// The loader's placement of chunk (row, chunk) for a thread whose first row is row % step:
/// first offset plus i * step rows of 128 bytes (gemm_wgmma.cuh, MatrixTileLoader::load).
unsigned loader_offset(int rows, int row, int chunk, int row_step) {
  const int first = row % row_step;
  const int i = row / row_step;
  return ktg::wgmma_chunk_offset(rows, first, chunk) + static_cast<unsigned>(i * row_step * 128);
}

}  // namespace

TEST_CASE("gemm_wgmma tile layout: a bijection the loader fills and wgmma descriptors read",
          "[gemm][wgmma]") {
  // Descriptor fields: start >> 4 in bits 0-13, LBO 1, SBO 1024 >> 4, 128B swizzle (mode 1).
  const unsigned long long d = ktg::wgmma_desc(0x2400 + 64);
  CHECK((d & 0x3FFF) == (0x2400 + 64) >> 4);
  CHECK(((d >> 16) & 0x3FFF) == 1);
  CHECK(((d >> 32) & 0x3FFF) == 1024 >> 4);
  CHECK(((d >> 49) & 7) == 0);
  CHECK((d >> 62) == 1);
  for (int rows : {64, 128, 256})
    for (int bk : {64, 128}) {
      INFO("tile " << rows << " x " << bk);
      // Every element of the tile has its own 2-byte slot inside rows * bk * 2 bytes.
      std::set<unsigned> slots;
      for (int r = 0; r < rows; ++r)
        for (int k = 0; k < bk; ++k) {
          const unsigned off = ktg::wgmma_tile_offset(rows, r, k);
          REQUIRE(off % 2 == 0);
          REQUIRE(off < static_cast<unsigned>(rows * bk * 2));
          slots.insert(off);
        }
      CHECK(slots.size() == static_cast<std::size_t>(rows * bk));
      // The loader's per-thread shortcut (first chunk + i row steps) lands where the layout
      // says, for 128 and 256 threads.
      for (int threads : {128, 256}) {
        const int row_step = threads / (bk / 8);
        REQUIRE(row_step % 8 == 0);
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < bk / 8; ++c)
            REQUIRE(loader_offset(rows, r, c, row_step) == ktg::wgmma_chunk_offset(rows, r, c));
      }
      // Each 64-row (A) or whole-tile (B) operand of each 16-wide k step, as the main loop
      // describes it, reads through the swizzle exactly the element the loader put there.
      const unsigned tile = 3 * 1024 * 48;  // a stage boundary (multiple of 1024)
      for (int row0 = 0; row0 < rows; row0 += 64)
        for (int ks = 0; ks < bk / 16; ++ks) {
          const unsigned long long desc =
              ktg::wgmma_desc(ktg::wgmma_operand_addr(tile, rows, row0, ks));
          const int operand_rows = rows - row0 < 256 ? rows - row0 : 256;
          for (int r = 0; r < operand_rows; ++r)
            for (int kk = 0; kk < 16; ++kk) {
              const unsigned got = ktg::wgmma_model_address(desc, r, kk);
              const unsigned want = tile + ktg::wgmma_tile_offset(rows, row0 + r, ks * 16 + kk);
              INFO("row0 " << row0 << " k step " << ks << " element (" << r << ", " << kk << ")");
              REQUIRE(got == want);
            }
        }
    }
}

TEST_CASE("gemm_wgmma space: defaults valid, constraints and can_implement name the input",
          "[gemm][wgmma]") {
  const Device h200 = Device::h200();
  auto wg = make_gemm_wgmma_template();
  CHECK(wg->name() == "gemm_wgmma");
  CHECK(wg->op() == "gemm");
  CHECK(wg->vendor_reference() == "cublas");
  CHECK(find_template("gemm_wgmma")->name() == "gemm_wgmma");
  CHECK_THROWS_WITH(make_problem(*wg, "8x8x8", {{"dtype", "tf32"}}), Catch::Contains("dtype"));
  CHECK_THROWS_WITH(make_problem(*wg, "8x8x8", {{"dtype", "f32"}}), Catch::Contains("dtype"));
  // Another gemm layout is sent to gemm_mma; a string that is no layout is not.
  CHECK_THROWS_WITH(make_problem(*wg, "8x8x8", {{"layout", "TN"}}), Catch::Contains("use gemm_mma"));
  CHECK_THROWS_WITH(make_problem(*wg, "8x8x8", {{"layout", "XX"}}),
                    !Catch::Contains("use gemm_mma") && Catch::Contains("layout=XX"));
  struct Case {
    const char* shape;
    const char* dtype;
    Value bm, bn, wgs, split_k;
  };
  const std::vector<Case> cases = {
      {"4096x4096x4096", "f16", 128, 256, 2, 1},   // >= one wave of 128 x 256 tiles
      {"8192x8192x8192", "bf16", 128, 256, 2, 1},
      {"2048x2048x2048", "f16", 128, 128, 2, 1},   // 64 tiles of 128 x 256: < one wave
      {"1x1x8", "f16", 64, 64, 1, 1},
      {"16x8192x8192", "bf16", 64, 128, 1, 8},     // skinny M: 64 tiles x 8 splits >= 3 waves
      {"8192x16x8192", "f16", 128, 64, 2, 8},      // skinny N: the same, transposed
      {"1000x1000x1000", "f16", 128, 128, 2, 1},  // 16 k tiles: no split below 16 each
      {"127x259x96", "bf16", 128, 128, 2, 1},
  };
  for (const auto& c : cases) {
    Problem p = make_problem(*wg, c.shape, {{"dtype", c.dtype}, {"layout", "NT"}});
    SearchSpace space = wg->space(p, h200);
    const Config d = space.default_config();
    INFO(p.key() << " " << d.str() << " " << space.violated(d).value_or("valid"));
    CHECK(space.valid(d));
    CHECK(wg->can_implement(p, d));
    CHECK(d["BM"] == c.bm);
    CHECK(d["BN"] == c.bn);
    CHECK(d["WGS"] == c.wgs);
    CHECK(d["SPLIT_K"] == c.split_k);
    CHECK(wg->launch(p, d, h200).steps[0].dynamic_smem <= 227u * 1024u);
  }
  Problem p = make_problem(*wg, "4096x4096x4096", {{"layout", "NT"}});
  SearchSpace space = wg->space(p, h200);
  auto make = [&](Value bm, Value bn, Value bk, Value wgs, Value stages) {
    return space.make({{"BM", bm}, {"BN", bn}, {"BK", bk}, {"WGS", wgs}, {"STAGES", stages},
                       {"SPLIT_K", 1}, {"GROUP_M", 8}, {"PRODUCER", 0}, {"CLUSTER_K", 1}, {"PAD_K", 0}});
  };
  // 5 * 384 * 64 * 2 + 1 KiB = 241 KiB > 227 KiB.
  const Config huge = make(128, 256, 64, 2, 5);
  REQUIRE_FALSE(space.valid(huge));
  CHECK_THAT(*space.violated(huge), Catch::Contains("STAGES"));
  CHECK(space.valid(make(128, 256, 64, 2, 4)));
  // The producer's 128 bytes of mbarriers count against the limit too: 6 * 320 * 64 * 2 +
  // 1 KiB = 241 KiB is too much either way; 5 * 256 * 64 * 2 + 1 KiB + 128 fits.
  const Config ws = space.make({{"BM", 128}, {"BN", 128}, {"BK", 64}, {"WGS", 2}, {"STAGES", 6},
                                {"SPLIT_K", 1}, {"GROUP_M", 8}, {"PRODUCER", 1}, {"CLUSTER_K", 1}, {"PAD_K", 0}});
  CHECK(space.valid(ws));
  // 256 accumulators per thread: one warpgroup of 128 x 256.
  const Config one_wg = make(128, 256, 64, 1, 3);
  REQUIRE_FALSE(space.valid(one_wg));
  CHECK_THAT(*space.violated(one_wg), Catch::Contains("BN <= 16384"));
  // Two warpgroups cannot split 64 rows into 64-row wgmma tiles.
  const Config split64 = make(64, 128, 64, 2, 4);
  REQUIRE_FALSE(space.valid(split64));
  std::string why;
  CHECK_FALSE(wg->can_implement(p, split64, &why));
  CHECK_THAT(why, Catch::Contains("BM = 64") && Catch::Contains("WGS"));
  // Unsupported layouts and K are refused whatever the config, naming what is wrong.
  // Layouts other than NT are not problems of this template (its layout domain is NT alone).
  for (const char* layout : {"NN", "TN", "TT"}) {
    CHECK_THROWS_WITH(make_problem(*wg, "256x256x256", {{"layout", layout}}),
                      Catch::Contains(std::string("layout ") + layout) &&
                          Catch::Contains("gemm_mma"));
    // A Problem built by hand (a key from a log) is refused the same way by every entry.
    const Problem q{"gemm",
                    {{"M", 256}, {"N", 256}, {"K", 256}},
                    {{"bias", "0"}, {"dtype", "f16"}, {"layout", layout}, {"out", "same"}}};
    CHECK_THROWS_WITH(wg->space(q, h200), Catch::Contains(std::string("layout ") + layout));
    CHECK_THROWS_WITH(wg->launch(q, space.default_config(), h200),
                      Catch::Contains(std::string("layout ") + layout));
  }
  // K % 8 != 0: only PAD_K = 1 (A and B copied into rows of 104) is in the space; PAD_K = 0
  // is refused naming K and the way out.
  Problem odd_k = make_problem(*wg, "256x256x100", {{"layout", "NT"}});
  const SearchSpace odd_space = wg->space(odd_k, h200);
  CHECK(odd_space.default_config()["PAD_K"] == 1);
  CHECK(wg->can_implement(odd_k, odd_space.default_config()));
  const Config unpadded = test::with(odd_space, odd_space.default_config(), {{"PAD_K", 0}});
  CHECK_FALSE(odd_space.valid(unpadded));
  why.clear();
  CHECK_FALSE(wg->can_implement(odd_k, unpadded, &why));
  CHECK_THAT(why, Catch::Contains("K = 100") && Catch::Contains("PAD_K = 1") &&
                      Catch::Contains("104"));
  // Aligned K: padding would only copy, so PAD_K = 1 is out of the space.
  CHECK(space.default_config()["PAD_K"] == 0);
  CHECK_FALSE(space.valid(test::with(space, space.default_config(), {{"PAD_K", 1}})));
  // sm_90a code runs only on compute capability 9.0: other devices are refused, by name,
  // before any space or build (`ktune tune --dry-run --arch sm_86` included).
  Problem big = make_problem(*wg, "4096x4096x4096", {{"layout", "NT"}});
  for (const char* arch : {"sm_80", "sm_86", "sm_89"})
    CHECK_THROWS_WITH(wg->space(big, Device::offline(arch)),
                      Catch::Contains("sm_90a") && Catch::Contains(arch));
  CHECK_NOTHROW(wg->space(big, Device::offline("sm_90")));
  // The template always targets sm_90a (wgmma does not exist in plain sm_90).
  CHECK(wg->target_arch(h200, space.default_config()) == "sm_90a");
}

TEST_CASE("gemm_wgmma launch plans: grid, 128 threads per warpgroup, aligned shared memory",
          "[gemm][wgmma]") {
  const Device h200 = Device::h200();
  auto wg = make_gemm_wgmma_template();
  Problem p = make_problem(*wg, "300x520x1000", {{"layout", "NT"}, {"bias", "1"}});
  SearchSpace space = wg->space(p, h200);
  Config c = space.make({{"BM", 128}, {"BN", 256}, {"BK", 64}, {"WGS", 2}, {"STAGES", 4},
                         {"SPLIT_K", 1}, {"GROUP_M", 8}, {"PRODUCER", 0}, {"CLUSTER_K", 1}, {"PAD_K", 0}});
  LaunchPlan plan = wg->launch(p, c, h200);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].entry == "gemm_wgmma");
  CHECK(plan.steps[0].grid[0] == 3u * 3u);
  CHECK(plan.steps[0].block[0] == 256u);
  CHECK(plan.steps[0].dynamic_smem == 4u * (128u + 256u) * 64u * 2u + 1024u);
  CHECK(plan.steps[0].args[3].buffer == 3u);  // bias
  Config split = space.make({{"BM", 64}, {"BN", 128}, {"BK", 128}, {"WGS", 1}, {"STAGES", 3},
                             {"SPLIT_K", 4}, {"GROUP_M", 1}, {"PRODUCER", 1}, {"CLUSTER_K", 1}, {"PAD_K", 0}});
  LaunchPlan sp = wg->launch(p, split, h200);
  REQUIRE(sp.steps.size() == 2);
  CHECK(sp.steps[0].block[0] == 256u);  // producer warpgroup + one consumer
  CHECK(sp.steps[0].grid[2] == 4u);
  CHECK(sp.steps[1].entry == "gemm_wgmma_splitk_reduce");
  REQUIRE(sp.scratch.size() == 1);
  CHECK(sp.scratch[0].elements == 4u * 300u * 520u);
  // k-split cluster: CLUSTER_K blocks along z per tile, no workspace or reduce step; rank
  // 1..'s fp32 tile (64 x 256 floats) fits over the 3 freed stages of 320 x 64 halves.
  Config cluster = space.make({{"BM", 64}, {"BN", 256}, {"BK", 64}, {"WGS", 1}, {"STAGES", 3},
                               {"SPLIT_K", 1}, {"GROUP_M", 1}, {"PRODUCER", 0},
                               {"CLUSTER_K", 4}, {"PAD_K", 0}});
  REQUIRE(space.valid(cluster));
  LaunchPlan cp = wg->launch(p, cluster, h200);
  REQUIRE(cp.steps.size() == 1);
  CHECK(cp.steps[0].grid[0] == 5u * 3u);
  CHECK(cp.steps[0].grid[2] == 4u);
  CHECK(cp.scratch.empty());
  CHECK(cp.steps[0].dynamic_smem == 3u * (64u + 256u) * 64u * 2u + 1024u);
  CHECK(cp.steps[0].dynamic_smem >= 64u * 256u * 4u + 1024u);
  // It replaces SPLIT_K and the producer warpgroup; K = 1000 is 16 k tiles: 8 ranks fit.
  std::string why;
  CHECK_FALSE(wg->can_implement(p, test::with(space, cluster, {{"SPLIT_K", 2}}), &why));
  CHECK_THAT(why, Catch::Contains("CLUSTER_K = 4") && Catch::Contains("SPLIT_K = 1"));
  CHECK_FALSE(space.valid(test::with(space, cluster, {{"PRODUCER", 1}})));
  CHECK(space.valid(test::with(space, cluster, {{"CLUSTER_K", 8}})));
  // PAD_K: two pad steps (A then B into rows of 1000 -> 1000: K = 1001 pads to 1008) before
  // the main kernel, which reads the padded scratch copies over K = 1008.
  Problem odd = make_problem(*wg, "300x520x1001", {{"layout", "NT"}, {"bias", "1"}});
  SearchSpace os = wg->space(odd, h200);
  const Config padded = test::with(os, os.default_config(), {{"SPLIT_K", 2}, {"CLUSTER_K", 1}});
  REQUIRE(os.valid(padded));
  LaunchPlan pp = wg->launch(odd, padded, h200);
  REQUIRE(pp.steps.size() == 4);  // pad A, pad B, main, split-K reduce
  CHECK(pp.steps[0].entry == "gemm_wgmma_pad_k");
  CHECK(pp.steps[1].entry == "gemm_wgmma_pad_k");
  CHECK(pp.steps[2].entry == "gemm_wgmma");
  CHECK(pp.steps[3].entry == "gemm_wgmma_splitk_reduce");
  REQUIRE(pp.scratch.size() == 3);  // workspace, A_padded, B_padded (buffers 4, 5, 6)
  CHECK(pp.scratch[1].elements == 300u * 1008u);
  CHECK(pp.scratch[2].elements == 520u * 1008u);
  CHECK(pp.steps[0].args[0].buffer == 0u);
  CHECK(pp.steps[0].args[1].buffer == 5u);
  CHECK(pp.steps[0].args[3].i == 1001);
  CHECK(pp.steps[0].args[4].i == 1008);
  CHECK(pp.steps[1].args[0].buffer == 1u);
  CHECK(pp.steps[1].args[1].buffer == 6u);
  CHECK(pp.steps[1].args[2].i == 520);
  CHECK(pp.steps[2].args[0].buffer == 5u);
  CHECK(pp.steps[2].args[1].buffer == 6u);
  CHECK(pp.steps[2].args[4].buffer == 4u);  // the workspace
  CHECK(pp.steps[2].args[7].i == 1008);     // K the kernel sees
  CHECK(pp.steps[0].grid[0] * 256u >= 300u * 1008u / 8u);
  Problem short_k = make_problem(*wg, "300x520x128", {{"layout", "NT"}});
  SearchSpace ss = wg->space(short_k, h200);
  CHECK_FALSE(ss.valid(ss.parse("BM=64,BN=256,BK=64,WGS=1,STAGES=3,SPLIT_K=1,GROUP_M=1,"
                                "PRODUCER=0,CLUSTER_K=4,PAD_K=0")));  // 2 k tiles, 4 ranks
}

TEST_CASE("gemm_wgmma compiles to sm_90a: wgmma without serialization, defaults without spills",
          "[gemm][wgmma][nvrtc]") {
  const Device h200 = Device::h200();
  BuilderOptions options;
  options.threads = 2;
  Builder builder(options);
  auto wg = std::shared_ptr<const KernelTemplate>(make_gemm_wgmma_template());
  struct Case {
    const char* shape;
    std::map<std::string, std::string> attrs;
    int extra;
  };
  const std::vector<Case> cases = {
      {"4096x4096x4096", {{"dtype", "f16"}, {"layout", "NT"}}, 3},
      {"4096x4096x4096", {{"dtype", "bf16"}, {"layout", "NT"}}, 1},
      {"1000x1000x1000", {{"dtype", "f16"}, {"layout", "NT"}, {"bias", "1"}, {"out", "f32"}}, 2},
      {"16x8192x8192", {{"dtype", "bf16"}, {"layout", "NT"}}, 1},
      {"127x259x96", {{"dtype", "f16"}, {"layout", "NT"}, {"out", "f32"}}, 1},
  };
  // Builds one config of `shape` (f16 / bf16 NT) from its text and checks it compiled
  // without spills or serialized wgmma; returns the ptxas log.
  auto build_clean = [&](const char* shape, const char* dtype, const std::string& text) {
    Problem p = make_problem(*wg, shape, {{"dtype", dtype}, {"layout", "NT"}});
    SearchSpace space = wg->space(p, h200);
    const Config c = text.empty() ? space.default_config() : space.parse(text);
    REQUIRE(space.valid(c));
    BuildResult r = builder.build(*wg, p, c, h200);
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK(r.resources.spill_stores == 0);
    CHECK(r.log.find("serialized") == std::string::npos);
    return r.log;
  };
  // The warp-specialized variants (producer warpgroup, setmaxnreg) of the large default.
  for (const char* producer : {"1", "2"}) {
    Problem p = make_problem(*wg, "4096x4096x4096", {{"dtype", "bf16"}, {"layout", "NT"}});
    SearchSpace space = wg->space(p, h200);
    const std::string text =
        std::string("BM=128,BN=256,BK=64,WGS=2,STAGES=4,SPLIT_K=1,GROUP_M=8,CLUSTER_K=1,") +
        "PAD_K=0,PRODUCER=" + producer;
    CHECK(wg->launch(p, space.parse(text), h200).steps[0].block[0] == 384u);
    const std::string log = build_clean("4096x4096x4096", "bf16", text);
    CHECK(log.find("setmaxnreg") == std::string::npos);  // ptxas ignoring it says so
  }
  // PAD_K: the padding entry is compiled beside the kernel (odd K of the suite: the default).
  build_clean("4097x4095x4093", "f16", "");
  // k-split clusters of 2 and 8 CTAs (the K-heavy shape's candidates).
  for (const char* ck : {"2", "8"})
    build_clean("512x512x65536", "f16",
                std::string("BM=128,BN=128,BK=64,WGS=2,STAGES=5,SPLIT_K=1,GROUP_M=8,") +
                    "PRODUCER=0,PAD_K=0,CLUSTER_K=" + ck);
  for (const auto& c : cases) {
    Problem p = make_problem(*wg, c.shape, c.attrs);
    SearchSpace space = wg->space(p, h200);
    std::vector<Config> configs = sample_implementable(*wg, p, space, c.extra, 5);
    auto results = builder.build_all(wg, p, configs, h200);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      INFO(p.key() << " " << configs[i].str() << "\n" << results[i].log);
      REQUIRE(results[i].ok);
      CHECK(results[i].arch == "sm_90a");
      CHECK(results[i].kernels.count("gemm_wgmma") == 1);
      CHECK(results[i].kernels.size() == (configs[i]["SPLIT_K"] > 1 ? 2u : 1u));
      // ptxas says "wgmma.mma_async instructions are serialized" when it cannot keep them
      // asynchronous (a large slowdown).
      CHECK(results[i].log.find("serialized") == std::string::npos);
      if (i == 0)
        for (const auto& [entry, r] : results[i].kernels) {
          INFO(entry);
          CHECK(r.spill_stores == 0);
          CHECK(r.spill_loads == 0);
          CHECK(r.stack_bytes == 0);
        }
    }
  }
}
