// Tests of the "layernorm" template without a GPU: problem checks (hidden range, dtypes),
// every constraint of its space, valid defaults, launch plans, the CPU reference against
// hand-computed rows, the large-mean rows of the fill, and NVRTC compiles for sm_90.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "builtin_templates.h"
#include "ktune/error.h"
#include "memory_bound_test_util.h"

using namespace ktune;
using ktune::test::with;

namespace {

Problem ln_problem(const std::string& shape, const std::string& dtype, const std::string& norm) {
  return make_problem(*make_layernorm_template(), shape, {{"dtype", dtype}, {"norm", norm}});
}

}  // namespace

TEST_CASE("layernorm check_problem rejects bad problems", "[layernorm]") {
  auto t = make_layernorm_template();
  CHECK_THROWS_AS(ln_problem("4x32", "f32", "layernorm"), Error);      // hidden < 64
  CHECK_THROWS_AS(ln_problem("4x65537", "f32", "layernorm"), Error);   // hidden > 65536
  CHECK_THROWS_AS(ln_problem("4x128", "f64", "layernorm"), Error);
  CHECK_THROWS_AS(ln_problem("4x128", "f32", "batchnorm"), Error);
  CHECK_NOTHROW(ln_problem("1x64", "bf16", "rmsnorm"));
  CHECK_NOTHROW(ln_problem("1x65536", "f32", "layernorm"));
  CHECK_NOTHROW(t->check_problem(t->example_problem()));
}

TEST_CASE("layernorm constraints reject what they should", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  const Problem p = ln_problem("1024x4096", "f16", "layernorm");
  const SearchSpace s = t->space(p, dev);
  const Config d = s.default_config();
  REQUIRE(s.valid(d));
  CHECK(d["ROW_MODE"] == 0);  // 4096 halves fit in registers
  CHECK(d["MIN_WARPS"] == 32);  // 4 vectors per thread: 64 registers, 4 blocks per SM
  CHECK(t->space(ln_problem("8192x16384", "f16", "layernorm"), dev).default_config()["MIN_WARPS"] == 16);
  // 16-bit rows of 14-16 vectors per thread: no 16-warp request for RMSNorm (measured faster,
  // session 29 call 2); LayerNorm takes the cluster ring of longer rows on sm_90 (session 30
  // call 1), and before sm_90 drops the request at 16 vectors and keeps it at 14.
  auto min_warps_of = [&](const char* shape, const char* dtype, const char* norm) {
    return t->space(ln_problem(shape, dtype, norm), dev).default_config()["MIN_WARPS"];
  };
  CHECK(min_warps_of("4096x28672", "f16", "rmsnorm") == 0);
  CHECK(min_warps_of("4096x32768", "bf16", "rmsnorm") == 0);
  // RMSNorm at 13 vectors (25000, 26624) drops it too (session 31 call 3); LayerNorm rows of
  // 15 vectors that do not split over 4 CTAs (29704: 3713 vectors) drop it for bf16 only.
  CHECK(min_warps_of("4096x25000", "bf16", "rmsnorm") == 0);
  CHECK(min_warps_of("4096x26624", "f16", "rmsnorm") == 0);
  CHECK(min_warps_of("4096x29704", "bf16", "layernorm") == 0);
  CHECK(min_warps_of("4096x29704", "f16", "layernorm") == 16);
  for (const char* shape : {"4096x28672", "4096x30720", "4096x32768"}) {
    for (const char* dtype : {"f16", "bf16"}) {
      INFO(shape << " " << dtype);
      const Config c = t->space(ln_problem(shape, dtype, "layernorm"), dev).default_config();
      CHECK(c.str() == "THREADS=256,TPR=256,VEC=8,ROW_MODE=3,STATS=1,CACHE_HINT=0,CLUSTER=4,RPG=6,"
                       "PREFETCH=0,PARAMS=2,MIN_WARPS=24,STAGES=2");
    }
  }
  const Device a100 = Device::offline("sm_80");
  const Config ln16_80 = t->space(ln_problem("4096x32768", "f16", "layernorm"), a100).default_config();
  CHECK(ln16_80["CLUSTER"] == 1);
  CHECK(ln16_80["MIN_WARPS"] == 0);
  CHECK(t->space(ln_problem("4096x28672", "bf16", "layernorm"), a100).default_config()["MIN_WARPS"] == 16);
  // Rows of 13 vectors per thread (26624), and rows whose vectors do not split over 4 CTAs
  // (26632: 3329 vectors; 28688: 3586), keep one CTA per row with the row in registers.
  for (const char* shape : {"4096x26624", "4096x26632", "4096x28688"}) {
    INFO(shape);
    const Config c = t->space(ln_problem(shape, "f16", "layernorm"), dev).default_config();
    CHECK(c["CLUSTER"] == 1);
    CHECK(c["ROW_MODE"] == 0);
  }
  // Unmeasured rows keep the request: shorter ones (RMSNorm 20480 does not spill at 16 warps)
  // and narrower vectors (hidden 8194: VEC 2, 17 vectors per thread).
  CHECK(min_warps_of("4096x20480", "f16", "rmsnorm") == 16);
  CHECK(min_warps_of("4096x8194", "f16", "layernorm") == 16);
  CHECK(min_warps_of("4096x16384", "f32", "layernorm") == 16);  // f32 rows (16 vectors) do not spill
  const Config reg = with(s, d, {{"THREADS", 512}, {"TPR", 512}, {"VEC", 8}, {"ROW_MODE", 0}});
  REQUIRE(s.valid(reg));
  CHECK_FALSE(s.valid(with(s, reg, {{"TPR", 1024}})));           // TPR <= THREADS
  CHECK_FALSE(s.valid(with(s, reg, {{"THREADS", 1024}, {"TPR", 1024}})));  // 1024 * 8 > 4096
  CHECK(s.valid(with(s, reg, {{"THREADS", 1024}, {"TPR", 1024}, {"VEC", 4}})));
  // 4096 / 8 lanes = 512 values per thread: far beyond the register budget.
  CHECK_FALSE(s.valid(with(s, reg, {{"TPR", 8}})));
  CHECK(s.valid(with(s, reg, {{"TPR", 8}, {"ROW_MODE", 2}})));
  // Shared memory: 64 rows x 4096 halves = 512 KiB per block does not fit.
  CHECK_FALSE(s.valid(with(s, reg, {{"TPR", 8}, {"ROW_MODE", 1}})));
  CHECK(s.valid(with(s, reg, {{"TPR", 128}, {"ROW_MODE", 1}})));  // 4 rows: 32 KiB
  // VEC must divide hidden.
  const Problem odd = ln_problem("3x100", "f16", "rmsnorm");
  const SearchSpace so = t->space(odd, dev);
  REQUIRE(so.valid(so.default_config()));
  CHECK(so.default_config()["VEC"] == 4);
  CHECK_FALSE(so.valid(with(so, so.default_config(), {{"VEC", 8}})));
  std::string why;
  CHECK_FALSE(t->can_implement(odd, with(so, so.default_config(), {{"VEC", 8}}), &why));
  CHECK(why.find("hidden=100") != std::string::npos);
  CHECK_THROWS_WITH(t->launch(odd, with(so, so.default_config(), {{"VEC", 8}}), dev),
                    Catch::Contains("VEC=8 does not divide hidden=100"));
  // RMSNorm has no statistics choice.
  CHECK(so.params()[so.find("STATS").value()].values == std::vector<Value>{0});
  // f32 rows of 65536 never fit shared memory (256 KiB) nor one CTA's registers at 1024
  // threads (64 values + bookkeeping > 64 registers) ...
  // ... so the default splits the row over a cluster: 4 CTAs of 512 threads (8 vectors each),
  // 16 warps per SM asked for (128 registers).
  const Problem big = ln_problem("4096x65536", "f32", "layernorm");
  const SearchSpace sb = t->space(big, dev);
  const Config db = sb.default_config();
  CHECK(db["ROW_MODE"] == 0);
  CHECK(db["CLUSTER"] == 4);
  CHECK(db["TPR"] == 512);
  CHECK(db["MIN_WARPS"] == 16);
  const Config one = with(sb, db, {{"THREADS", 1024}, {"TPR", 1024}, {"CLUSTER", 1}, {"RPG", 1},
                                   {"PREFETCH", 0}, {"PARAMS", 0}, {"MIN_WARPS", 0}});
  CHECK_FALSE(sb.valid(with(sb, one, {{"ROW_MODE", 1}})));
  CHECK_FALSE(sb.valid(one));
  CHECK(sb.valid(with(sb, one, {{"ROW_MODE", 2}})));
  // f16 / bf16 hold the row packed: 8 CTAs of 256 threads, 4 vectors of 8 halves each, and
  // LayerNorm streams the rows through the shared-memory ring with one exchange per row;
  // RMSNorm keeps them in registers with the next row prefetched.
  for (const char* dtype : {"f16", "bf16"}) {
    const SearchSpace hs = t->space(ln_problem("4096x65536", dtype, "layernorm"), dev);
    const Config h = hs.default_config();
    CHECK(hs.valid(h));
    CHECK(h["ROW_MODE"] == 3);
    CHECK(h["STATS"] == 1);
    CHECK(h["CLUSTER"] == 8);
    CHECK(h["THREADS"] == 256);
    CHECK(h["MIN_WARPS"] == 24);
    CHECK(h["PREFETCH"] == 0);
    CHECK(h["STAGES"] == 2);
    CHECK(h["PARAMS"] == 2);
    CHECK(h["RPG"] > 1);
    const Config r = t->space(ln_problem("4096x65536", dtype, "rmsnorm"), dev).default_config();
    CHECK(r["ROW_MODE"] == 0);
    CHECK(r["CLUSTER"] == 8);
    CHECK(r["PREFETCH"] == 1);
    // The ring only where each CTA's part splits evenly over its threads (49152: 3 vectors
    // each) or unevenly into 3.25-4 vectors per thread (30720 at 4 CTAs: 3.75; 53248 / 61440
    // at 8 CTAs, f16 only: 3.25 / 3.75; session 32 calls 2-3, where bf16 ran slower);
    // 36864 / 45056 (2.25 / 2.75 vectors at 8 CTAs, where the ring measured slower: session
    // 31 call 3) and 49216 (3.004, unmeasured) keep the registers.
    auto mode_of = [&](const char* shape) {
      return t->space(ln_problem(shape, dtype, "layernorm"), dev).default_config()["ROW_MODE"];
    };
    CHECK(mode_of("4096x49152") == 3);
    CHECK(mode_of("4096x30720") == 3);
    const Value eight_cta_uneven = std::string(dtype) == "f16" ? 3 : 0;
    CHECK(mode_of("4096x53248") == eight_cta_uneven);
    CHECK(mode_of("4096x61440") == eight_cta_uneven);
    CHECK(mode_of("4096x36864") == 0);
    CHECK(mode_of("4096x45056") == 0);
    CHECK(mode_of("4096x49216") == 0);
  }
  CHECK(db["STATS"] == 0);  // f32 LayerNorm: mode 0, two-pass
}

TEST_CASE("layernorm cluster and rows-per-group constraints", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  const Problem big = ln_problem("64x65536", "f16", "layernorm");
  const SearchSpace s = t->space(big, dev);
  // The default: a cluster per row, no streaming hints (the measured winners at 65536).
  CHECK(s.default_config()["CLUSTER"] > 1);
  CHECK(s.default_config()["CACHE_HINT"] == 0);
  const Config c = with(s, s.default_config(), {{"CLUSTER", 4}, {"THREADS", 512}, {"TPR", 512},
                                                {"ROW_MODE", 0}, {"STATS", 0}, {"RPG", 1},
                                                {"PREFETCH", 0}, {"PARAMS", 0}, {"MIN_WARPS", 0}});
  REQUIRE(s.valid(c));
  CHECK(s.valid(with(s, c, {{"CLUSTER", 8}})));
  CHECK(s.valid(with(s, c, {{"CLUSTER", 8}, {"THREADS", 256}, {"TPR", 256}})));
  CHECK_FALSE(s.valid(with(s, c, {{"THREADS", 1024}})));      // a cluster CTA holds one row part
  CHECK(s.valid(with(s, c, {{"STATS", 1}})));  // Welford across a cluster: one exchange a row
  CHECK_FALSE(s.valid(with(s, c, {{"ROW_MODE", 2}})));        // registers only
  // Several rows per cluster (the exchanges alternate buffers), the next row prefetched.
  CHECK(s.valid(with(s, c, {{"RPG", 2}, {"PREFETCH", 1}})));
  CHECK(s.valid(with(s, c, {{"RPG", 12}, {"PREFETCH", 1}, {"PARAMS", 2}})));
  // gamma / beta in shared memory only with several rows per group: [64, 65536] f16 LayerNorm
  // over a cluster of 4 keeps 16384 elements of gamma and of beta per CTA.
  CHECK_FALSE(s.valid(with(s, c, {{"RPG", 1}, {"PARAMS", 2}})));
  CHECK(t->launch(big, with(s, c, {{"RPG", 2}, {"PARAMS", 2}}), dev).steps[0].dynamic_smem ==
        2u * 16384u * 2u);
  // 2 CTAs: 32768 halves / 512 threads = 8 vectors of 4 registers (+ bookkeeping) < 128.
  CHECK(s.valid(with(s, c, {{"CLUSTER", 2}})));
  // ... and with the next row prefetched: 96 registers; not within 64 (MIN_WARPS 32).
  CHECK(s.valid(with(s, c, {{"CLUSTER", 2}, {"RPG", 2}, {"PREFETCH", 1}})));
  CHECK_FALSE(s.valid(with(s, c, {{"CLUSTER", 2}, {"RPG", 2}, {"PREFETCH", 1}, {"MIN_WARPS", 32}})));
  // 1 CTA: 16 vectors (64 registers + bookkeeping) within 128.
  CHECK(s.valid(with(s, c, {{"CLUSTER", 1}})));
  CHECK_FALSE(s.valid(with(s, c, {{"CLUSTER", 1}, {"MIN_WARPS", 32}})));  // not within 64
  // The launch: CLUSTER blocks per RPG rows.
  CHECK(t->launch(big, c, dev).steps[0].grid[0] == 64u * 4u);
  CHECK(t->launch(big, with(s, c, {{"RPG", 3}, {"PREFETCH", 1}}), dev).steps[0].grid[0] == 22u * 4u);
  // VEC * CLUSTER must divide hidden; every lane of every CTA busy.
  const Problem odd = ln_problem("10x1000", "f32", "rmsnorm");
  const SearchSpace so = t->space(odd, dev);
  const Config base = with(so, so.default_config(), {{"THREADS", 64}, {"TPR", 64}, {"VEC", 4}, {"ROW_MODE", 0}, {"MIN_WARPS", 0}});
  REQUIRE(so.valid(base));
  CHECK(so.valid(with(so, base, {{"CLUSTER", 2}})));
  CHECK_FALSE(so.valid(with(so, base, {{"CLUSTER", 4}})));     // 64 * 4 * 4 > 1000
  CHECK_FALSE(so.valid(with(so, base, {{"CLUSTER", 8}, {"TPR", 32}, {"THREADS", 32}})));  // 1000 % 32
  std::string why;
  CHECK_FALSE(t->can_implement(odd, with(so, base, {{"CLUSTER", 8}, {"TPR", 32}, {"THREADS", 32}}), &why));
  CHECK(why.find("hidden=1000") != std::string::npos);
  // Short rows: a warp per row, RPG rows per warp that fill the last wave of blocks.
  const Problem small = ln_problem("32768x1024", "f16", "layernorm");
  const SearchSpace ss = t->space(small, dev);
  const Config ds = ss.default_config();
  CHECK(ds["TPR"] == 32);  // 128 vectors of 8: four per lane of a warp
  CHECK(ds["THREADS"] == 256);
  CHECK(ds["MIN_WARPS"] == 24);  // 3 blocks of 8 warps per SM
  CHECK(ds["RPG"] == 12);        // 342 blocks on 396 slots of the H200
  CHECK(ds["PREFETCH"] == 1);
  CHECK(ds["PARAMS"] == 2);
  CHECK(ds["CACHE_HINT"] == 1);
  CHECK(t->launch(small, ds, dev).steps[0].grid[0] == 342u);
  CHECK(t->launch(small, ds, dev).steps[0].dynamic_smem == 2u * 1024u * 2u);  // gamma, beta
  const Config r4 = with(ss, ds, {{"RPG", 4}});
  REQUIRE(ss.valid(r4));
  CHECK(t->launch(small, r4, dev).steps[0].grid[0] == 32768u / 8u / 4u);
  CHECK_FALSE(ss.valid(with(ss, r4, {{"ROW_MODE", 1}})));
  // PREFETCH and PARAMS need several rows per group.
  const Config r1 = with(ss, ds, {{"RPG", 1}, {"PREFETCH", 0}, {"PARAMS", 0}});
  REQUIRE(ss.valid(r1));
  CHECK_FALSE(ss.valid(with(ss, r1, {{"PREFETCH", 1}})));
  CHECK_FALSE(ss.valid(with(ss, r1, {{"PARAMS", 1}})));
  CHECK_FALSE(ss.valid(with(ss, r1, {{"PARAMS", 2}})));
  CHECK(t->launch(small, r1, dev).steps[0].dynamic_smem == 0u);
  // MIN_WARPS: whole blocks (24 warps: 3 of 256 threads, not 1.5 of 512) ...
  CHECK_FALSE(ss.valid(with(ss, ds, {{"THREADS", 512}})));
  // 4 vectors x 4 registers x (row, next, gamma, beta) + 32 > 64
  CHECK_FALSE(ss.valid(with(ss, ds, {{"THREADS", 512}, {"MIN_WARPS", 32}, {"PARAMS", 1}})));
  CHECK(ss.valid(with(ss, ds, {{"THREADS", 512}, {"MIN_WARPS", 16}})));
  // ... and a cap that holds the row: 32 registers (64 warps) cannot.
  CHECK_FALSE(ss.valid(with(ss, ds, {{"MIN_WARPS", 64}})));
  CHECK_FALSE(ss.valid(with(ss, r1, {{"MIN_WARPS", 48}, {"VEC", 2}})));  // 16 + 32 > 42
  // 4096 halves on 32 lanes: 64 vectors of 8 halves = 64 registers per copy: gamma and beta
  // in registers too (4 copies + bookkeeping > 255) do not fit; in shared memory they do.
  const Problem wide = ln_problem("64x4096", "f16", "layernorm");
  const SearchSpace sw = t->space(wide, dev);
  const Config w = with(sw, sw.default_config(), {{"THREADS", 64}, {"TPR", 32}, {"VEC", 8}, {"ROW_MODE", 0}, {"MIN_WARPS", 0}});
  CHECK(sw.valid(w));
  CHECK_FALSE(sw.valid(with(sw, w, {{"RPG", 2}, {"PARAMS", 1}, {"PREFETCH", 1}})));
  CHECK(sw.valid(with(sw, w, {{"RPG", 2}, {"PARAMS", 2}, {"PREFETCH", 1}})));
}

TEST_CASE("layernorm shared-memory ring (ROW_MODE 3) constraints and launch", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  const Problem p = ln_problem("32768x1024", "f16", "layernorm");
  const SearchSpace s = t->space(p, dev);
  const Config ring = with(s, s.default_config(),
                           {{"ROW_MODE", 3}, {"THREADS", 256}, {"TPR", 32}, {"VEC", 8}, {"RPG", 16},
                            {"STAGES", 4}, {"PREFETCH", 0}, {"PARAMS", 2}, {"CLUSTER", 1},
                            {"MIN_WARPS", 32}});
  REQUIRE(s.valid(ring));
  REQUIRE(t->can_implement(p, ring));
  const LaunchPlan plan = t->launch(p, ring, dev);
  CHECK(plan.steps[0].grid[0] == 256u);  // 32768 rows / (8 rows per tile x 16 tiles)
  // gamma + beta (2 x 1024 halves), then 4 stages of 8 rows of 2 KiB
  CHECK(plan.steps[0].dynamic_smem == 4096u + 4u * 8u * 2048u);
  CHECK_FALSE(s.valid(with(s, ring, {{"ROW_MODE", 0}})));    // STAGES belongs to the ring
  CHECK_FALSE(s.valid(with(s, ring, {{"PREFETCH", 1}})));    // the ring is the prefetch
  // 8 stages x 32 rows x 2 KiB = 512 KiB: more than a block's shared memory
  CHECK_FALSE(s.valid(with(s, ring, {{"STAGES", 8}, {"THREADS", 1024}})));
  // A row of 100 halves is 200 bytes: bulk copies move 16-byte units
  const Problem odd = ln_problem("3x100", "f16", "rmsnorm");
  const SearchSpace so = t->space(odd, dev);
  const Config odd_ring = with(so, so.default_config(),
                               {{"ROW_MODE", 3}, {"RPG", 1}, {"PREFETCH", 0}, {"PARAMS", 0},
                                {"CLUSTER", 1}, {"MIN_WARPS", 0}});
  CHECK_FALSE(so.valid(odd_ring));
  std::string why;
  CHECK_FALSE(t->can_implement(odd, odd_ring, &why));
  CHECK(why.find("16-byte") != std::string::npos);
  CHECK(why.find("hidden=100") != std::string::npos);
  // A cluster streams each CTA's part of the row: 65536 f32 over 8 CTAs is 32 KiB per stage.
  const Problem big = ln_problem("4096x65536", "f32", "layernorm");
  const SearchSpace sb = t->space(big, dev);
  const Config split = with(sb, sb.default_config(),
                            {{"ROW_MODE", 3}, {"CLUSTER", 8}, {"THREADS", 512}, {"TPR", 512},
                             {"VEC", 4}, {"RPG", 8}, {"STAGES", 3}, {"PREFETCH", 0}, {"PARAMS", 2},
                             {"MIN_WARPS", 16}});
  REQUIRE(sb.valid(split));
  const LaunchPlan bp = t->launch(big, split, dev);
  CHECK(bp.steps[0].grid[0] == 4096u);  // 512 row groups of 8 rows x 8 CTAs
  CHECK(bp.steps[0].dynamic_smem == 2u * 8192u * 4u + 3u * 8192u * 4u);
}

TEST_CASE("layernorm defaults are valid for the benchmark and odd shapes", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  for (const char* shape : {"32768x1024", "32768x4096", "8192x16384", "4096x65536", "1x64",
                            "3x65", "5x1000", "2x12288", "9x36864", "100x40000", "7x49152",
                            "3x65528", "4096x65000"})
    for (const char* dtype : {"f32", "f16", "bf16"})
      for (const char* norm : {"layernorm", "rmsnorm"}) {
        const Problem p = ln_problem(shape, dtype, norm);
        const SearchSpace s = t->space(p, dev);
        INFO(p.key() << " " << s.default_config().str());
        CHECK(s.valid(s.default_config()));
        CHECK(t->can_implement(p, s.default_config()));
      }
}

TEST_CASE("layernorm before sm_90: no clusters or bulk copies in the space, it compiles",
          "[layernorm][nvrtc]") {
  auto t = make_layernorm_template();
  std::mt19937_64 rng(11);
  int refused_hopper_defaults = 0;
  for (const char* arch : {"sm_80", "sm_86"}) {
    const Device dev = Device::offline(arch);
    for (const char* shape : {"4x65536", "4096x65536", "4x1024", "32768x4096"})
      for (const char* dtype : {"f32", "f16"}) {
        const Problem p = ln_problem(shape, dtype, "layernorm");
        const SearchSpace s = t->space(p, dev);
        INFO(arch << " " << p.key() << " " << s.default_config().str());
        CHECK(s.valid(s.default_config()));
        CHECK(s.default_config()["CLUSTER"] == 1);
        for (int i = 0; i < 200; ++i) {
          const Config c = s.random(rng);
          INFO(c.str());
          REQUIRE(c["CLUSTER"] == 1);
          REQUIRE(c["ROW_MODE"] != 3);
        }
        // Stated as a rule of the space, not a silent gap in a domain: the sm_90 default of
        // the long rows (a cluster; a ring for f16) is refused with its reason.
        const Config hopper = t->space(p, Device::h200()).default_config();
        if (hopper["CLUSTER"] > 1 || hopper["ROW_MODE"] == 3) {
          ++refused_hopper_defaults;
          CHECK_THAT(s.violated(hopper).value_or(""), Catch::Contains("need sm_90"));
        }
      }
  }
  CHECK(refused_hopper_defaults >= 4);  // 4 x 65536 and 4096 x 65536, f32 and f16, per arch
  // What NVRTC rejected for sm_80 before (the long-row default's __cluster_dims__, a sampled
  // ring's cp.async.bulk) now compiles: the default and samples of those spaces.
  ktune::test::expect_space_compiles(*t, ln_problem("4x65536", "f16", "layernorm"), 2, 21,
                                     Device::offline("sm_80"));
  ktune::test::expect_space_compiles(*t, ln_problem("4x1024", "f16", "layernorm"), 3, 22,
                                     Device::offline("sm_86"));
  // sm_90 keeps them.
  const SearchSpace h = t->space(ln_problem("4096x65536", "f16", "layernorm"), Device::h200());
  CHECK(h.default_config()["CLUSTER"] > 1);
}

TEST_CASE("layernorm launch plans", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  const Problem p = ln_problem("1000x2048", "bf16", "layernorm");
  const SearchSpace s = t->space(p, dev);
  const Config c = with(s, s.default_config(), {{"THREADS", 256}, {"TPR", 64}, {"ROW_MODE", 1}});
  const LaunchPlan plan = t->launch(p, c, dev);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].grid[0] == 250u);  // 4 rows per block
  CHECK(plan.steps[0].dynamic_smem == 4u * 2048u * 2u);
  CHECK(plan.steps[0].args.size() == 8);
  CHECK(plan.steps[0].args[4].buffer == 4);  // mean
  const Problem r = ln_problem("1000x2048", "bf16", "rmsnorm");
  const LaunchPlan rp = t->launch(r, with(s, c, {{"ROW_MODE", 0}}), dev);
  CHECK(rp.steps[0].dynamic_smem == 0u);
  CHECK(rp.steps[0].args[2].kind == KernelArg::Kind::i64);  // no beta
  CHECK(rp.steps[0].args[5].buffer == 3);                   // rstd
  const std::vector<std::string> want = {"-DKT_DTYPE=2", "-DKT_NORM=1", "-DKT_HIDDEN=2048"};
  CHECK(t->problem_defines(r) == want);
}

TEST_CASE("layernorm reference matches hand-computed rows", "[layernorm]") {
  auto t = make_layernorm_template();
  // One row alternating 1, 3: mean 2, variance 1; gamma 2, beta 0.5.
  auto w = t->workload(ln_problem("1x64", "f32", "layernorm"));
  auto b = ktune::test::host_buffers(*w);
  REQUIRE(b.size() == 6);
  std::vector<double> x(64), gamma(64, 2.0), beta(64, 0.5);
  for (int i = 0; i < 64; ++i) x[i] = i % 2 ? 3.0 : 1.0;
  ktune::test::set_values(b[0], x);
  ktune::test::set_values(b[1], gamma);
  ktune::test::set_values(b[2], beta);
  w->reference(b);
  const double rstd = 1.0 / std::sqrt(1.0 + 1e-5);
  CHECK(read_element(b[4], 0) == 2.0);
  CHECK(read_element(b[5], 0) == Approx(rstd).epsilon(1e-7));
  CHECK(read_element(b[3], 0) == Approx(-2.0 * rstd + 0.5).epsilon(1e-7));
  CHECK(read_element(b[3], 1) == Approx(2.0 * rstd + 0.5).epsilon(1e-7));
  // RMSNorm of alternating 2, -2: mean square 4.
  auto wr = t->workload(ln_problem("1x64", "f32", "rmsnorm"));
  auto br = ktune::test::host_buffers(*wr);
  REQUIRE(br.size() == 4);
  for (int i = 0; i < 64; ++i) x[i] = i % 2 ? -2.0 : 2.0;
  ktune::test::set_values(br[0], x);
  ktune::test::set_values(br[1], gamma);
  wr->reference(br);
  const double rrms = 1.0 / std::sqrt(4.0 + 1e-5);
  CHECK(read_element(br[3], 0) == Approx(rrms).epsilon(1e-7));
  CHECK(read_element(br[2], 0) == Approx(4.0 * rrms).epsilon(1e-7));
  CHECK(read_element(br[2], 1) == Approx(-4.0 * rrms).epsilon(1e-7));
}

TEST_CASE("layernorm fill has large-mean rows and no zeros", "[layernorm]") {
  auto t = make_layernorm_template();
  auto w = t->workload(ln_problem("8x256", "f32", "layernorm"));
  auto b = ktune::test::host_buffers(*w);
  w->fill(b, 11);
  w->reference(b);
  for (int r = 0; r < 8; ++r) {
    const double mean = read_element(b[4], static_cast<std::size_t>(r));
    const double rstd = read_element(b[5], static_cast<std::size_t>(r));
    if (r % 4 == 3) {
      CHECK(std::abs(mean - 256.0) < 0.1);  // large mean ...
      CHECK(rstd > 2.0);                    // ... and a spread below 0.5
    } else {
      CHECK(std::abs(mean) < 10.0);
    }
  }
  for (double v : ktune::test::values_of(b[0])) REQUIRE(v != 0.0);
  for (double v : ktune::test::values_of(b[1])) REQUIRE(v != 0.0);
  CHECK(w->bytes() == 2.0 * 8 * 256 * 4 + 2.0 * 256 * 4 + 2.0 * 8 * 4);
}

TEST_CASE("layernorm spaces compile with NVRTC for sm_90", "[layernorm][nvrtc]") {
  auto t = make_layernorm_template();
  ktune::test::expect_space_compiles(*t, ln_problem("32768x4096", "f16", "layernorm"), 3, 1);
  ktune::test::expect_space_compiles(*t, ln_problem("4096x65536", "f32", "layernorm"), 2, 2);
  ktune::test::expect_space_compiles(*t, ln_problem("5x1000", "bf16", "rmsnorm"), 2, 3);
  ktune::test::expect_space_compiles(*t, ln_problem("8192x16384", "f16", "rmsnorm"), 1, 4);
  // The defaults of the short and long rows (no spills: checked for the default).
  ktune::test::expect_space_compiles(*t, ln_problem("32768x1024", "f16", "layernorm"), 1, 5);
  ktune::test::expect_space_compiles(*t, ln_problem("4096x65536", "f16", "layernorm"), 1, 6);
  ktune::test::expect_space_compiles(*t, ln_problem("4096x65536", "bf16", "rmsnorm"), 1, 7);
  ktune::test::expect_space_compiles(*t, ln_problem("8192x16384", "f16", "layernorm"), 0, 8);
  ktune::test::expect_space_compiles(*t, ln_problem("8192x16384", "f32", "layernorm"), 0, 9);
  // 16-bit rows of 14-16 vectors per thread: RMSNorm without the 16-warp request, LayerNorm
  // on the cluster ring (unevenly split at 30720): no spills.
  ktune::test::expect_space_compiles(*t, ln_problem("4096x32768", "bf16", "rmsnorm"), 0, 10);
  ktune::test::expect_space_compiles(*t, ln_problem("4096x32768", "f16", "layernorm"), 0, 11);
  ktune::test::expect_space_compiles(*t, ln_problem("4096x30720", "bf16", "layernorm"), 0, 12);
  // The cluster split (distributed shared memory) and several rows per group: prefetched,
  // gamma / beta in registers or shared memory, Welford, an odd RPG.
  const auto p = ln_problem("4096x65536", "bf16", "layernorm");
  const SearchSpace s = t->space(p, Device::h200());
  const auto q = ln_problem("32768x1024", "f32", "rmsnorm");
  const SearchSpace sq = t->space(q, Device::h200());
  const auto r = ln_problem("32768x1024", "f16", "layernorm");
  const SearchSpace sr = t->space(r, Device::h200());
  using ktune::test::with;
  const std::vector<std::pair<Problem, Config>> extra = {
      {p, with(s, s.default_config(), {{"CLUSTER", 8}, {"THREADS", 256}, {"TPR", 256}, {"RPG", 1},
                                       {"ROW_MODE", 0}, {"STATS", 0}, {"PREFETCH", 0},
                                       {"PARAMS", 0}, {"MIN_WARPS", 0}})},
      {p, with(s, s.default_config(), {{"CLUSTER", 4}, {"THREADS", 512}, {"TPR", 512}, {"RPG", 3},
                                       {"ROW_MODE", 0}, {"STATS", 0}, {"PREFETCH", 1},
                                       {"PARAMS", 2}, {"MIN_WARPS", 16}})},
      {q, with(sq, sq.default_config(), {{"RPG", 4}, {"PREFETCH", 0}, {"PARAMS", 1}})},
      {r, with(sr, sr.default_config(), {{"STATS", 1}, {"PARAMS", 1}, {"MIN_WARPS", 16}})},
      {r, with(sr, sr.default_config(), {{"STATS", 1}, {"RPG", 3}, {"PARAMS", 0}})},
      {r, with(sr, sr.default_config(), {{"TPR", 64}, {"THREADS", 128}, {"MIN_WARPS", 32}})},
      // Welford across a cluster: each CTA's (mean, M2) gathered in one exchange per row.
      {p, with(s, s.default_config(), {{"CLUSTER", 8}, {"THREADS", 256}, {"TPR", 256}, {"RPG", 4},
                                       {"ROW_MODE", 0}, {"PREFETCH", 1}, {"PARAMS", 2},
                                       {"STATS", 1}, {"MIN_WARPS", 0}})}};
  Builder builder(BuilderOptions{2, "", {}});
  for (const auto& [problem, config] : extra) {
    const BuildResult b = builder.build(*t, problem, config, Device::h200());
    INFO(problem.key() << " " << config.str() << "\n" << b.log);
    CHECK(t->space(problem, Device::h200()).valid(config));
    CHECK(b.ok);
  }
  // The f32 rows-per-group config of the first round stays spill-free.
  const BuildResult b = builder.build(*t, q, extra[2].second, Device::h200());
  CHECK(b.resources.spill_stores == 0);
  // So does one-exchange Welford at the f16 [4096, 65536] LayerNorm winner's geometry (equal
  // parts: the division-free merges) within its 80-register cap.
  const auto h = ln_problem("4096x65536", "f16", "layernorm");
  const SearchSpace sh = t->space(h, Device::h200());
  const Config welford = with(sh, sh.default_config(),
                              {{"CLUSTER", 8}, {"THREADS", 256}, {"TPR", 256}, {"VEC", 4},
                               {"ROW_MODE", 0}, {"RPG", 12}, {"PREFETCH", 1}, {"PARAMS", 2},
                               {"STATS", 1},
                               {"MIN_WARPS", 24}, {"CACHE_HINT", 0}});
  REQUIRE(sh.valid(welford));
  const BuildResult bw = builder.build(*t, h, welford, Device::h200());
  INFO(bw.log);
  CHECK(bw.ok);
  CHECK(bw.resources.spill_stores == 0);
  // The f16 [32768, 1024] winner (gamma / beta in shared memory, one warp per block of two
  // rows) within its 80-register cap.
  const Config winner = with(sr, sr.default_config(),
                             {{"THREADS", 32}, {"TPR", 32}, {"VEC", 8}, {"ROW_MODE", 0},
                              {"STATS", 0}, {"CACHE_HINT", 1}, {"CLUSTER", 1}, {"RPG", 2},
                              {"PREFETCH", 1}, {"PARAMS", 2}, {"MIN_WARPS", 24}});
  REQUIRE(sr.valid(winner));
  const BuildResult bp = builder.build(*t, r, winner, Device::h200());
  INFO(bp.log);
  CHECK(bp.ok);
  CHECK(bp.resources.spill_stores == 0);
}

TEST_CASE("layernorm ROW_MODE 1 fits up to the limit less the 1 KiB static", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();  // 227 KiB per block; the kernel keeps 1 KiB static
  const std::map<std::string, Value> one_row = {
      {"THREADS", 1024}, {"TPR", 1024}, {"VEC", 4},     {"ROW_MODE", 1}, {"STATS", 0},
      {"CACHE_HINT", 0}, {"CLUSTER", 1}, {"RPG", 1},    {"PREFETCH", 0}, {"PARAMS", 0},
      {"MIN_WARPS", 0},  {"STAGES", 2}};
  // 57856 floats = 231424 bytes = 227 KiB - 1 KiB exactly: fits.
  const Problem fits = ln_problem("64x57856", "f32", "layernorm");
  const SearchSpace sf = t->space(fits, dev);
  const Config cf = sf.make(one_row);
  CHECK(sf.valid(cf));
  CHECK(t->launch(fits, cf, dev).steps[0].dynamic_smem + 1024u <=
        static_cast<unsigned>(dev.smem_per_block_optin));
  // 58112 floats = 227 KiB: the device limit, but not beside the kernel's static 1 KiB.
  const Problem over = ln_problem("64x58112", "f32", "layernorm");
  const SearchSpace so = t->space(over, dev);
  CHECK_FALSE(so.valid(so.make(one_row)));
}

TEST_CASE("layernorm ring starts after gamma rounded up to 128 bytes", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  // hidden 1000 f16: 2000-byte rows (a multiple of 16, not of 128).
  const Problem p = ln_problem("64x1000", "f16", "rmsnorm");
  const SearchSpace s = t->space(p, dev);
  const Config ring = s.make({{"THREADS", 256}, {"TPR", 32}, {"VEC", 8}, {"ROW_MODE", 3},
                              {"STATS", 0}, {"CACHE_HINT", 0}, {"CLUSTER", 1}, {"RPG", 2},
                              {"PREFETCH", 0}, {"PARAMS", 2}, {"MIN_WARPS", 0}, {"STAGES", 2}});
  REQUIRE(s.valid(ring));
  REQUIRE(t->can_implement(p, ring));
  // layernorm.cu: gamma (2000 B) rounded up to 2048, then 2 stages x 8 rows x 2000 B.
  CHECK(t->launch(p, ring, dev).steps[0].dynamic_smem == 2048u + 2u * 8u * 2000u);
}

TEST_CASE("layernorm PARAMS 2 needs gamma and beta to fit shared memory", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  // 65536 halves in one CTA of 1024 threads: 8 vectors of 8 fit registers (72 <= 64 + 8), but
  // gamma + beta in shared memory would be 256 KiB.
  const Problem p = ln_problem("64x65536", "f16", "layernorm");
  const SearchSpace s = t->space(p, dev);
  const Config regs = s.make({{"THREADS", 1024}, {"TPR", 1024}, {"VEC", 8}, {"ROW_MODE", 0},
                              {"STATS", 0}, {"CACHE_HINT", 0}, {"CLUSTER", 1}, {"RPG", 2},
                              {"PREFETCH", 0}, {"PARAMS", 0}, {"MIN_WARPS", 0}, {"STAGES", 2}});
  REQUIRE(s.valid(regs));
  const Config smem = with(s, regs, {{"PARAMS", 2}});
  CHECK_FALSE(s.valid(smem));
}
