// gemm_simt / gemm_mma without a GPU: the blocked double-precision reference against a naive
// triple loop for every layout, problem checks, spaces and their constraints (shared memory,
// split-K), launch plans (split-K workspace and reduction step), problem defines (alignment
// of leading dimensions), the workload, and NVRTC compiles for sm_90 of the defaults and a
// sample of each space with no register spills at the defaults.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "builtin_templates.h"
#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "memory_bound_test_util.h"
#include "templates/gemm/gemm_problem.h"

using namespace ktune;

namespace {

/// Host buffers of a workload, filled for `seed`.
std::vector<HostBuffer> filled_buffers(const Workload& w, std::uint64_t seed) {
  std::vector<HostBuffer> host;
  for (const auto& spec : w.buffers()) host.push_back(make_host_buffer(spec));
  w.fill(host, seed);
  return host;
}

/// op(A)(m, k) of a gemm shape from its stored buffer.
double op_a(const gemm::GemmShape& s, const HostBuffer& a, std::int64_t m, std::int64_t k) {
  return read_element(a, static_cast<std::size_t>(s.a_transposed ? k * s.M + m : m * s.K + k));
}

/// op(B)(k, n) of a gemm shape from its stored buffer.
double op_b(const gemm::GemmShape& s, const HostBuffer& b, std::int64_t k, std::int64_t n) {
  return read_element(b, static_cast<std::size_t>(s.b_transposed ? n * s.K + k : k * s.N + n));
}

/// The default config plus `extra` distinct random valid configs.
std::vector<Config> sample(const SearchSpace& space, int extra, std::uint64_t seed) {
  std::vector<Config> configs = {space.default_config()};
  std::mt19937_64 rng(seed);
  for (int attempt = 0; attempt < 50 && static_cast<int>(configs.size()) < extra + 1; ++attempt) {
    Config c = space.random(rng);
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  return configs;
}

}  // namespace

TEST_CASE("gemm reference equals a naive triple loop for every layout and dtype", "[gemm]") {
  auto simt = make_gemm_simt_template();
  auto mma = make_gemm_mma_template();
  struct Case {
    const KernelTemplate* tmpl;
    const char* dtype;
    const char* out;
  };
  const std::vector<Case> cases = {
      {simt.get(), "f32", "same"}, {mma.get(), "f16", "same"}, {mma.get(), "bf16", "f32"},
      {mma.get(), "tf32", "same"}};
  for (const char* shape : {"1x1x1", "3x5x7", "5x130x300"})
    for (const char* layout : {"NN", "NT", "TN", "TT"})
      for (const auto& c : cases) {
        const char* bias = std::string(layout) == "NT" || std::string(shape) == "1x1x1" ? "1" : "0";
        Problem p = make_problem(*c.tmpl, shape,
                                 {{"dtype", c.dtype}, {"layout", layout}, {"bias", bias},
                                  {"out", c.out}});
        INFO(p.key());
        const gemm::GemmShape s = gemm::gemm_shape(p);
        auto w = c.tmpl->workload(p);
        std::vector<HostBuffer> host = filled_buffers(*w, 7);
        std::vector<HostBuffer> expected = host;
        w->reference(expected);
        double max_err = 0, max_ref = 0;
        for (std::int64_t m = 0; m < s.M; ++m)
          for (std::int64_t n = 0; n < s.N; ++n) {
            double sum = 0;
            for (std::int64_t k = 0; k < s.K; ++k) sum += op_a(s, host[0], m, k) * op_b(s, host[1], k, n);
            const auto i = static_cast<std::size_t>(m * s.N + n);
            double want = gemm::kAlpha * sum + gemm::kBeta * read_element(host[2], i);
            if (s.bias) want += read_element(host[3], static_cast<std::size_t>(n));
            want = round_to_dtype(s.output_dtype(), want);
            max_err = std::max(max_err, std::fabs(read_element(expected[2], i) - want));
            max_ref = std::max(max_ref, std::fabs(want));
          }
        // Rounding of the same double to the output dtype may differ by one unit at most.
        const double ulp = s.output_dtype() == DType::f32 ? 1e-6 : s.output_dtype() == DType::f16 ? 1e-3 : 8e-3;
        CHECK(max_err <= ulp * std::max(1.0, max_ref));
        CHECK(max_ref > 0);
        for (std::size_t i = 0; i < host.size(); ++i)
          if (host[i].spec.role == Role::input) CHECK(expected[i].bytes == host[i].bytes);
      }
}

TEST_CASE("gemm workload: buffers, never-zero inputs, bytes, flops, tolerance", "[gemm]") {
  auto mma = make_gemm_mma_template();
  Problem p = make_problem(*mma, "64x48x96", {{"dtype", "f16"}, {"layout", "TN"}, {"bias", "1"}});
  auto w = mma->workload(p);
  auto specs = w->buffers();
  REQUIRE(specs.size() == 4);
  CHECK(specs[0].elements == 64u * 96u);
  CHECK(specs[1].elements == 96u * 48u);
  CHECK(specs[2].role == Role::inout);
  CHECK(specs[2].dtype == DType::f16);
  CHECK(specs[3].elements == 48u);
  std::vector<HostBuffer> host = filled_buffers(*w, 3);
  for (const auto& b : host)
    for (std::size_t i = 0; i < b.spec.elements; ++i) {
      const double v = read_element(b, i);
      REQUIRE(v != 0.0);
      REQUIRE(std::fabs(v) <= 1.0);
    }
  CHECK(w->flops() == 2.0 * 64 * 48 * 96);
  CHECK(w->bytes() == (64.0 * 96 + 96.0 * 48) * 2 + 2 * 64.0 * 48 * 2 + 48 * 2);
  CHECK(w->reference_cost() == 64.0 * 48 * 96);
  auto simt = make_gemm_simt_template();
  auto f32 = simt->workload(make_problem(*simt, "8x8x65536"));
  auto f32_small = simt->workload(make_problem(*simt, "8x8x64"));
  CHECK(f32_small->tolerance(specs[2]).rel_l2 == Approx(1e-5));
  CHECK(f32->tolerance(specs[2]).rel_l2 > f32_small->tolerance(specs[2]).rel_l2);
  CHECK(w->tolerance(specs[2]).rel_l2 > f32_small->tolerance(specs[2]).rel_l2);
}

TEST_CASE("gemm problems: checks name the bad attribute or dimension", "[gemm]") {
  auto simt = make_gemm_simt_template();
  auto mma = make_gemm_mma_template();
  CHECK(simt->name() == "gemm_simt");
  CHECK(mma->name() == "gemm_mma");
  CHECK(simt->op() == "gemm");
  CHECK(mma->vendor_reference() == "cublas");
  CHECK_THROWS_WITH(make_problem(*simt, "8x8x8", {{"dtype", "f16"}}), Catch::Contains("dtype"));
  CHECK_THROWS_WITH(make_problem(*mma, "8x8x8", {{"dtype", "f32"}}), Catch::Contains("dtype"));
  CHECK_THROWS_WITH(make_problem(*mma, "8x8x8", {{"layout", "NX"}}), Catch::Contains("layout"));
  CHECK_THROWS_WITH(make_problem(*mma, "8x8x8", {{"bias", "2"}}), Catch::Contains("bias"));
  CHECK_THROWS_AS(make_problem(*mma, "8x8", {}), Error);
  CHECK_THROWS_WITH(make_problem(*mma, "8x8x4294967296", {}), Catch::Contains("2^30"));
  // Near 2^31 the kernels' int arithmetic (m0 + BM, (K + BK - 1) / BK) would wrap: refused.
  CHECK_THROWS_WITH(make_problem(*simt, "1x1x2147483647", {}), Catch::Contains("K must be <= 2^30"));
  CHECK_THROWS_WITH(make_problem(*mma, "2147483647x8x8", {}), Catch::Contains("M must be <= 2^30"));
  CHECK_NOTHROW(make_problem(*mma, "8x8x1073741824", {}));
  // A config whose grid the launch would refuse is not implementable either.
  const Problem wide = make_problem(*simt, "1048576x1048576x1", {});
  const SearchSpace wide_space = simt->space(wide, Device::h200());
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    const Config c = wide_space.random(rng);
    std::string why;
    if (simt->can_implement(wide, c, &why)) {
      CHECK_NOTHROW(simt->launch(wide, c, Device::h200()));
    } else if (why.find("grid") != std::string::npos) {
      CHECK_THROWS_WITH(simt->launch(wide, c, Device::h200()), Catch::Contains("grid"));
    }
  }
  Problem p = make_problem(*mma, "8x8x8", {});
  CHECK(p.attr("dtype") == "f16");
  CHECK(p.attr("layout") == "NN");
  p.attrs.erase("out");
  CHECK_THROWS_WITH(mma->check_problem(p), Catch::Contains("out"));
  CHECK_NOTHROW(simt->example_problem());
  CHECK_NOTHROW(mma->example_problem());
}

TEST_CASE("gemm problem defines carry layout, dtype and leading-dimension alignment", "[gemm]") {
  auto mma = make_gemm_mma_template();
  auto has = [](const std::vector<std::string>& defines, const std::string& d) {
    return std::find(defines.begin(), defines.end(), d) != defines.end();
  };
  // NT: A is M x K (lda = K = 4093, odd), B is N x K (ldb = K).
  auto odd = mma->problem_defines(make_problem(*mma, "4097x4095x4093", {{"layout", "NT"}}));
  CHECK(has(odd, "-DKT_DTYPE=1"));
  CHECK(has(odd, "-DKT_A_T=0"));
  CHECK(has(odd, "-DKT_B_T=1"));
  CHECK(has(odd, "-DKT_ALIGN_A=1"));
  CHECK(has(odd, "-DKT_ALIGN_B=1"));
  CHECK(has(odd, "-DKT_OUT_F32=0"));
  // TN: A is K x M (lda = M = 4100 = 4 * 1025), B is K x N (ldb = N = 4096).
  auto mixed = mma->problem_defines(
      make_problem(*mma, "4100x4096x7", {{"layout", "TN"}, {"dtype", "bf16"}, {"out", "f32"}}));
  CHECK(has(mixed, "-DKT_ALIGN_A=4"));
  CHECK(has(mixed, "-DKT_ALIGN_B=8"));
  CHECK(has(mixed, "-DKT_DTYPE=2"));
  CHECK(has(mixed, "-DKT_OUT_F32=1"));
  auto tf32 = mma->problem_defines(make_problem(*mma, "64x64x64", {{"dtype", "tf32"}, {"bias", "1"}}));
  CHECK(has(tf32, "-DKT_DTYPE=3"));
  CHECK(has(tf32, "-DKT_ALIGN_A=4"));  // 16 bytes of fp32
  CHECK(has(tf32, "-DKT_BIAS=1"));
}

TEST_CASE("gemm spaces: every default is valid and implementable over boundary shapes", "[gemm]") {
  // Tile covers change at 16 / 64 / 128 / 256 rows or columns, alignment with odd sizes, the
  // default tile class with the shape's waves: a default the space refuses is never measured
  // (no speed-up reference). 65536 x 96 / 128 once got a 256-column default over N <= 128.
  const std::vector<std::int64_t> sides = {1, 17, 64, 65, 96, 120, 128, 129, 1000, 65536, 200000};
  const std::vector<std::int64_t> depths = {1, 64, 4093, 4096};
  struct Case {
    std::shared_ptr<const KernelTemplate> tmpl;
    std::vector<const char*> dtypes, layouts;
    std::vector<Device> devices;
  };
  const std::vector<Case> cases = {
      {make_gemm_simt_template(), {"f32"}, {"NN", "NT", "TN", "TT"}, {Device::h200(), Device::offline("sm_86")}},
      {make_gemm_mma_template(), {"f16", "tf32"}, {"NN", "NT", "TN", "TT"}, {Device::h200(), Device::offline("sm_86")}},
      {make_gemm_wgmma_template(), {"bf16"}, {"NT"}, {Device::h200()}}};
  int checked = 0;
  for (const Case& c : cases)
    for (const Device& device : c.devices)
      for (const char* dtype : c.dtypes)
        for (const char* layout : c.layouts)
          for (std::int64_t m : sides)
            for (std::int64_t n : sides)
              for (std::int64_t k : depths) {
                const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
                const Problem p = make_problem(*c.tmpl, shape, {{"dtype", dtype}, {"layout", layout}});
                const SearchSpace space = c.tmpl->space(p, device);
                const Config d = space.default_config();
                std::string why;
                INFO(c.tmpl->name() << " " << device.arch() << " " << p.key() << " " << d.str() << ": "
                                    << space.violated(d).value_or("valid"));
                REQUIRE(space.valid(d));
                REQUIRE(c.tmpl->can_implement(p, d, &why));
                ++checked;
              }
  CHECK(checked == (4 * 2 + 2 * 4 * 2 + 1) * 11 * 11 * 4);
}

TEST_CASE("gemm spaces: defaults valid, shared memory and split-K constraints reject", "[gemm]") {
  const Device h200 = Device::h200();
  auto simt = make_gemm_simt_template();
  auto mma = make_gemm_mma_template();
  for (const char* dtype : {"f16", "bf16", "tf32"})
    for (const char* shape : {"1x1x1", "4096x4096x4096", "16x8192x8192"}) {
      Problem p = make_problem(*mma, shape, {{"dtype", dtype}});
      SearchSpace space = mma->space(p, h200);
      INFO(p.key() << " " << space.violated(space.default_config()).value_or("valid"));
      CHECK(space.valid(space.default_config()));
      CHECK(mma->can_implement(p, space.default_config()));
    }
  Problem p = make_problem(*mma, "4096x4096x4096", {});
  SearchSpace space = mma->space(p, h200);
  Config huge = space.make({{"BM", 128}, {"BN", 256}, {"BK", 128}, {"WM", 64}, {"WN", 64},
                            {"STAGES", 5}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  REQUIRE_FALSE(space.valid(huge));  // 5 * 384 * 128 * 2 bytes = 480 KiB
  CHECK_THAT(*space.violated(huge), Catch::Contains("STAGES"));
  Config fits = space.make({{"BM", 256}, {"BN", 128}, {"BK", 32}, {"WM", 64}, {"WN", 64},
                            {"STAGES", 4}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  CHECK(space.valid(fits));
  Config too_many_accumulators = space.make({{"BM", 128}, {"BN", 128}, {"BK", 32}, {"WM", 128},
                                             {"WN", 64}, {"STAGES", 3}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  CHECK_FALSE(space.valid(too_many_accumulators));
  // K = 32 has two 16-wide k tiles: at most two splits.
  Problem small_k = make_problem(*mma, "64x64x32", {});
  SearchSpace sk = mma->space(small_k, h200);
  Config split4 = sk.make({{"BM", 64}, {"BN", 64}, {"BK", 16}, {"WM", 32}, {"WN", 32},
                           {"STAGES", 2}, {"SPLIT_K", 4}, {"GROUP_M", 1}});
  CHECK_FALSE(sk.valid(split4));
  CHECK(sk.valid(sk.make({{"BM", 64}, {"BN", 64}, {"BK", 16}, {"WM", 32}, {"WN", 32},
                          {"STAGES", 2}, {"SPLIT_K", 2}, {"GROUP_M", 1}})));
  // A structurally broken config is refused by can_implement (no static_assert at compile).
  std::string why;
  CHECK_FALSE(mma->can_implement(p, space.make({{"BM", 64}, {"BN", 64}, {"BK", 32}, {"WM", 128},
                                                {"WN", 32}, {"STAGES", 3}, {"SPLIT_K", 1},
                                                {"GROUP_M", 8}}), &why));
  CHECK_THAT(why, Catch::Contains("WM"));

  Problem ps = make_problem(*simt, "4096x4096x4096", {});
  SearchSpace ss = simt->space(ps, h200);
  CHECK(ss.valid(ss.default_config()));
  // 2 * 32 * (256 + 256 + 8) * 4 bytes = 130 KiB: fits an H200 block, not an sm_86 one.
  Config big = ss.make({{"BM", 256}, {"BN", 256}, {"BK", 32}, {"TM", 16}, {"TN", 8},
                        {"WARP_ROWS", 4}, {"VEC", 4}, {"STAGES", 2}, {"PAD", 4}, {"SPLIT_K", 1},
                        {"GROUP_M", 8}});
  CHECK(ss.valid(big));
  SearchSpace ss86 = simt->space(ps, Device::offline("sm_86"));
  REQUIRE_FALSE(ss86.valid(big));
  CHECK_THAT(*ss86.violated(big), Catch::Contains("STAGES * BK"));
  Config odd = ss.make({{"BM", 128}, {"BN", 128}, {"BK", 8}, {"TM", 8}, {"TN", 8},
                        {"WARP_ROWS", 1}, {"VEC", 4}, {"STAGES", 2}, {"PAD", 4}, {"SPLIT_K", 1},
                        {"GROUP_M", 8}});
  CHECK_FALSE(ss.valid(odd));  // 1 x 32 warps do not tile a 16 x 16 thread grid
  CHECK_FALSE(simt->can_implement(ps, odd));
  // An odd leading dimension allows only scalar loads of that operand; VEC up to the other's.
  Problem pk = make_problem(*simt, "64x64x63", {{"layout", "NT"}});  // lda = ldb = 63
  SearchSpace sk2 = simt->space(pk, h200);
  CHECK(sk2.default_config()["VEC"] == 1);
  CHECK(sk2.valid(sk2.default_config()));
}

TEST_CASE("gemm defaults follow the shape: skinny tiles, split-K to fill the SMs, pruning",
          "[gemm]") {
  const Device h200 = Device::h200();
  auto simt = make_gemm_simt_template();
  auto mma = make_gemm_mma_template();
  struct Case {
    const KernelTemplate* tmpl;
    const char* shape;
    const char* dtype;
    Value bm, bn, split_k;
  };
  const std::vector<Case> cases = {
      // 64-column tiles would be 128 < 2 waves: 32 columns, 256 tiles fill the SMs, no split
      {mma.get(), "1x8192x8192", "f16", 16, 32, 1},
      {mma.get(), "16x8192x8192", "bf16", 16, 32, 1},
      {mma.get(), "32x8192x8192", "f16", 32, 32, 1},
      {mma.get(), "64x8192x8192", "tf32", 64, 32, 1},
      {mma.get(), "8192x16x8192", "f16", 32, 16, 1},  // skinny N: the same, transposed
      {mma.get(), "16x2048x8192", "f16", 16, 32, 8},  // 64 tiles < 132: split 8 for 3 waves
      {mma.get(), "127x8192x8192", "f16", 128, 128, 4},  // regular: 64 tiles -> one wave
      {mma.get(), "4096x4096x4096", "f16", 128, 256, 1},  // >= 2 waves of 128 x 256 tiles
      {mma.get(), "2048x2048x2048", "f16", 128, 128, 1},  // 128 tiles of 128 x 256: < 2 waves
      {mma.get(), "4097x4095x4093", "f16", 128, 128, 1},  // odd ld: 2-byte copies, small tiles
      {mma.get(), "512x512x65536", "f16", 128, 128, 16},
      {mma.get(), "1024x1024x1024", "f16", 128, 128, 2},  // 32 k tiles: >= 16 per split
      {mma.get(), "1x1x1", "f16", 16, 16, 1},
      {simt.get(), "1x8192x8192", "f32", 16, 128, 8},  // 64 tiles x 8 = 512 blocks
      {simt.get(), "64x8192x8192", "f32", 64, 128, 8},
      {simt.get(), "8192x32x8192", "f32", 128, 32, 8},
      {simt.get(), "4096x4096x4096", "f32", 128, 128, 1},
      {simt.get(), "2048x2048x2048", "f32", 128, 128, 1},
      {simt.get(), "3x5x7", "f32", 16, 32, 1},
  };
  for (const auto& c : cases) {
    Problem p = make_problem(*c.tmpl, c.shape, {{"dtype", c.dtype}, {"layout", "NT"}});
    SearchSpace space = c.tmpl->space(p, h200);
    const Config d = space.default_config();
    INFO(p.key() << " " << d.str() << " " << space.violated(d).value_or("valid"));
    CHECK(space.valid(d));
    CHECK(c.tmpl->can_implement(p, d));
    CHECK(d["BM"] == c.bm);
    CHECK(d["BN"] == c.bn);
    CHECK(d["SPLIT_K"] == c.split_k);
  }
  // Devices with less shared memory (sm_86: 99 KiB per block) get defaults that fit.
  const Device sm86 = Device::offline("sm_86");
  for (const char* dtype : {"f16", "tf32"})
    for (const char* shape : {"64x8192x8192", "8192x64x8192", "4096x4096x4096"}) {
      Problem p = make_problem(*mma, shape, {{"dtype", dtype}, {"layout", "TN"}});
      SearchSpace space = mma->space(p, sm86);
      INFO(p.key() << " " << space.violated(space.default_config()).value_or("valid"));
      CHECK(space.valid(space.default_config()));
    }
  // Tiles larger than the padded problem are left out: M = 16 allows BM = 16 only.
  Problem skinny = make_problem(*mma, "16x8192x8192", {{"dtype", "f16"}, {"layout", "NT"}});
  SearchSpace ss = mma->space(skinny, h200);
  Config padded = ss.default_config();
  std::vector<Value> values = padded.values();
  values[*ss.find("BM")] = 32;
  values[*ss.find("WM")] = 32;
  const Config bm32(ss.names(), values);
  REQUIRE_FALSE(ss.valid(bm32));
  CHECK_THAT(*ss.violated(bm32), Catch::Contains("BM <= 16"));
  // One row of tiles: every GROUP_M visits tiles in the same order, only GROUP_M = 1 stays.
  CHECK(padded["GROUP_M"] == 1);
  values = padded.values();
  values[*ss.find("GROUP_M")] = 8;
  const Config grouped(ss.names(), values);
  REQUIRE_FALSE(ss.valid(grouped));
  CHECK_THAT(*ss.violated(grouped), Catch::Contains("GROUP_M == 1"));
  Problem square = make_problem(*mma, "4096x4096x4096", {{"dtype", "f16"}, {"layout", "NT"}});
  CHECK(mma->space(square, h200).default_config()["GROUP_M"] == 8);
  // Large regular shapes: 8 warps of 64 x 64, 128-byte k rows, 3 stages (144 KiB f16).
  for (const char* dtype : {"f16", "bf16", "tf32"}) {
    Problem big = make_problem(*mma, "4096x4096x4096", {{"dtype", dtype}, {"layout", "NT"}});
    const Config d = mma->space(big, h200).default_config();
    INFO(d.str());
    CHECK(d["WM"] == 64);
    CHECK(d["WN"] == 64);
    CHECK(d["BK"] == (std::string(dtype) == "tf32" ? 32 : 64));
    CHECK(d["STAGES"] == 3);
  }
  // The f32 template keeps 32-wide tiles for tiny shapes (whole warps need them).
  Problem tiny = make_problem(*simt, "1x1x1", {});
  CHECK(simt->space(tiny, h200).valid(simt->space(tiny, h200).default_config()));
}

TEST_CASE("gemm launch plans: grid, block, shared memory, split-K step and workspace", "[gemm]") {
  const Device h200 = Device::h200();
  auto mma = make_gemm_mma_template();
  Problem p = make_problem(*mma, "300x200x1000", {{"bias", "1"}});
  SearchSpace space = mma->space(p, h200);
  Config c = space.make({{"BM", 128}, {"BN", 64}, {"BK", 32}, {"WM", 64}, {"WN", 32},
                         {"STAGES", 3}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  LaunchPlan plan = mma->launch(p, c, h200);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.scratch.empty());
  CHECK(plan.steps[0].entry == "gemm_mma");
  CHECK(plan.steps[0].grid[0] == 3u * 4u);
  CHECK(plan.steps[0].grid[2] == 1u);
  CHECK(plan.steps[0].block[0] == 32u * 2u * 2u);
  CHECK(plan.steps[0].dynamic_smem == 3u * (128u + 64u) * 32u * 2u);
  REQUIRE(plan.steps[0].args.size() == 10);
  CHECK(plan.steps[0].args[3].buffer == 3u);  // bias

  Config split = space.make({{"BM", 128}, {"BN", 64}, {"BK", 32}, {"WM", 64}, {"WN", 32},
                             {"STAGES", 3}, {"SPLIT_K", 4}, {"GROUP_M", 8}});
  LaunchPlan sp = mma->launch(p, split, h200);
  REQUIRE(sp.steps.size() == 2);
  REQUIRE(sp.scratch.size() == 1);
  CHECK(sp.scratch[0].elements == 4u * 300u * 200u);
  CHECK(sp.scratch[0].dtype == DType::f32);
  CHECK(sp.steps[0].grid[2] == 4u);
  CHECK(sp.steps[0].args[4].buffer == 4u);  // workspace follows A, B, C, bias
  CHECK(sp.steps[1].entry == "gemm_mma_splitk_reduce");
  CHECK(sp.steps[1].args[0].buffer == 4u);
  CHECK(sp.steps[1].grid[0] >= 1u);

  auto simt = make_gemm_simt_template();
  Problem ps = make_problem(*simt, "1x1x1", {});
  LaunchPlan one = simt->launch(ps, simt->space(ps, h200).default_config(), h200);
  REQUIRE(one.steps.size() == 1);
  CHECK(one.steps[0].entry == "gemm_simt");
  CHECK(one.steps[0].grid[0] == 1u);
  CHECK(one.steps[0].block[0] == 32u);  // skinny default: 16 x 32 tile of 4 x 4 per thread
  CHECK(one.steps[0].args[3].buffer == 2u);  // no bias: C stands in, unused
}

TEST_CASE("gemm templates compile for sm_90: defaults without spills, sampled configs",
          "[gemm][nvrtc]") {
  const Device h200 = Device::h200();
  BuilderOptions options;
  options.threads = 2;
  Builder builder(options);
  auto simt = std::shared_ptr<const KernelTemplate>(make_gemm_simt_template());
  auto mma = std::shared_ptr<const KernelTemplate>(make_gemm_mma_template());
  struct Case {
    std::shared_ptr<const KernelTemplate> tmpl;
    const char* shape;
    std::map<std::string, std::string> attrs;
    int extra;  // random configs besides the default
  };
  const std::vector<Case> cases = {
      {simt, "1024x1024x1024", {{"layout", "NN"}}, 2},
      {simt, "1000x1000x999", {{"layout", "TT"}, {"bias", "1"}}, 1},
      {mma, "4096x4096x4096", {{"dtype", "f16"}, {"layout", "NT"}}, 2},
      {mma, "4097x4095x4093", {{"dtype", "f16"}, {"layout", "TN"}, {"bias", "1"}}, 1},
      {mma, "1024x1024x1024", {{"dtype", "bf16"}, {"layout", "NN"}, {"out", "f32"}}, 1},
      {mma, "1024x1024x1024", {{"dtype", "tf32"}, {"layout", "TT"}}, 1},
      // skinny defaults: BK = 128 (f16) / 64 (tf32), split-K; sampled configs may take BK 256
      {mma, "16x8192x8192", {{"dtype", "f16"}, {"layout", "NT"}}, 1},
      {mma, "64x8192x8192", {{"dtype", "bf16"}, {"layout", "TN"}, {"bias", "1"}}, 1},
      {mma, "8192x16x8192", {{"dtype", "tf32"}, {"layout", "NN"}}, 0},
      {simt, "1x8192x8192", {{"layout", "NT"}}, 1},
      // regular default: 128 x 128 x 8, 8 x 8 per thread, 3 stages, two blocks per SM (the
      // launch bounds cap it at 128 registers: no spills in NT and TN with bias)
      {simt, "4096x4096x4096", {{"layout", "NT"}}, 0},
      {simt, "4096x4096x4096", {{"layout", "TN"}, {"bias", "1"}}, 0},
  };
  for (const auto& c : cases) {
    Problem p = make_problem(*c.tmpl, c.shape, c.attrs);
    SearchSpace space = c.tmpl->space(p, h200);
    std::vector<Config> configs = sample(space, c.extra, 11);
    auto results = builder.build_all(c.tmpl, p, configs, h200);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      INFO(c.tmpl->name() << " " << p.key() << " " << configs[i].str() << "\n" << results[i].log);
      REQUIRE(results[i].ok);
      CHECK(c.tmpl->can_implement(p, configs[i]));
      const std::size_t kernels = configs[i]["SPLIT_K"] > 1 ? 2 : 1;
      CHECK(results[i].kernels.size() == kernels);
      if (i == 0)  // defaults: no spills in any kernel
        for (const auto& [entry, r] : results[i].kernels) {
          INFO(entry);
          CHECK(r.spill_stores == 0);
          CHECK(r.spill_loads == 0);
        }
    }
  }
  // The large-tile default (128 x 256, 64 x 64 warps, 3 stages) in every layout and dtype:
  // 8 warps of 128 accumulators and double-buffered fragments fit 255 registers, no spills.
  for (const auto& [dtype, layout] : std::vector<std::pair<const char*, const char*>>{
           {"f16", "NN"}, {"bf16", "TN"}, {"f16", "TT"}, {"tf32", "NT"}}) {
    Problem p = make_problem(*mma, "4096x4096x4096", {{"dtype", dtype}, {"layout", layout}});
    const Config d = mma->space(p, h200).default_config();
    REQUIRE(d["BN"] == 256);
    BuildResult r = builder.build(*mma, p, d, h200);
    INFO(p.key() << " " << d.str() << "\n" << r.log);
    CHECK(r.ok);
    CHECK(r.resources.spill_stores == 0);
    CHECK(r.resources.spill_loads == 0);
  }
  // The deepest k tiles (512-byte rows) in both orientations of B.
  for (const char* layout : {"NT", "TN"}) {
    Problem p = make_problem(*mma, "16x8192x8192", {{"dtype", "f16"}, {"layout", layout}});
    SearchSpace space = mma->space(p, h200);
    Config deep = space.make({{"BM", 16}, {"BN", 64}, {"BK", 256}, {"WM", 16}, {"WN", 16},
                              {"STAGES", 3}, {"SPLIT_K", 8}, {"GROUP_M", 1}});
    INFO(p.key() << " " << space.violated(deep).value_or("valid"));
    REQUIRE(space.valid(deep));
    BuildResult r = builder.build(*mma, p, deep, h200);
    INFO(r.log);
    CHECK(r.ok);
    CHECK(r.resources.spill_stores == 0);
  }
  // The register-file rules: configs they keep compile without spills, and the ones they
  // reject (compiled anyway: constraints do not stop a build) spill.
  struct RegisterCase {
    std::shared_ptr<const KernelTemplate> tmpl;
    std::map<std::string, Value> values;
    bool kept;
  };
  auto mma_config = [](Value bm, Value bn, Value wm, Value wn) {
    return std::map<std::string, Value>{{"BM", bm}, {"BN", bn}, {"BK", 32}, {"WM", wm}, {"WN", wn},
                                        {"STAGES", 4}, {"SPLIT_K", 1}, {"GROUP_M", 8}};
  };
  const std::vector<RegisterCase> register_cases = {
      {mma, mma_config(128, 128, 16, 32), true},    // 32 warps of 16 x 32
      {mma, mma_config(128, 128, 32, 32), true},    // 16 warps of 32 x 32
      {mma, mma_config(128, 256, 16, 64), false},   // 32 warps of 16 x 64
      {mma, mma_config(256, 128, 128, 16), false},  // 16 warps of 128 x 16
      {simt, {{"BM", 32}, {"BN", 256}, {"BK", 32}, {"TM", 16}, {"TN", 8}, {"WARP_ROWS", 1}, {"VEC", 4},
              {"STAGES", 1}, {"PAD", 0}, {"SPLIT_K", 1}, {"GROUP_M", 8}}, false},  // staging in registers
      // within the host estimate, but the kernel's own asks for two blocks (128 registers)
      {simt, {{"BM", 64}, {"BN", 256}, {"BK", 32}, {"TM", 8}, {"TN", 8}, {"WARP_ROWS", 1}, {"VEC", 4},
              {"STAGES", 1}, {"PAD", 0}, {"SPLIT_K", 1}, {"GROUP_M", 8}}, false},
      {simt, {{"BM", 64}, {"BN", 256}, {"BK", 32}, {"TM", 8}, {"TN", 8}, {"WARP_ROWS", 1}, {"VEC", 4},
              {"STAGES", 2}, {"PAD", 0}, {"SPLIT_K", 1}, {"GROUP_M", 8}}, true},
  };
  for (const auto& c : register_cases) {
    Problem p = make_problem(*c.tmpl, "4096x4096x4096", {{"layout", "NT"}});
    SearchSpace space = c.tmpl->space(p, h200);
    const Config config = space.make(c.values);
    INFO(c.tmpl->name() << " " << config.str() << ": " << space.violated(config).value_or("valid"));
    CHECK(space.valid(config) == c.kept);
    if (!c.kept) CHECK_THAT(*space.violated(config), Catch::Contains("register") || Catch::Contains("65536"));
    BuildResult r = builder.build(*c.tmpl, p, config, h200);
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK((r.resources.spill_stores == 0) == c.kept);
  }
}

TEST_CASE("gemm_simt shared-memory constraint counts the PAD columns", "[gemm]") {
  auto simt = make_gemm_simt_template();
  const Problem p = make_problem(*simt, "4096x4096x4096", {{"layout", "NT"}});
  Device small = Device::h200();
  small.smem_per_block_optin = 48 * 1024;  // a part without opt-in shared memory
  const SearchSpace s = simt->space(p, small);
  const Config c = s.make({{"BM", 64}, {"BN", 64}, {"BK", 32}, {"TM", 8}, {"TN", 8},
                           {"WARP_ROWS", 4}, {"VEC", 4}, {"STAGES", 3}, {"PAD", 0},
                           {"SPLIT_K", 1}, {"GROUP_M", 8}});
  REQUIRE(s.valid(c));  // 3 x 32 x 128 x 4 = 48 KiB exactly
  CHECK_FALSE(s.valid(test::with(s, c, {{"PAD", 4}})));  // + 3 x 32 x 8 x 4 bytes
}

TEST_CASE("gemm_simt launch asks shared memory for the padded rows", "[gemm]") {
  auto simt = make_gemm_simt_template();
  const Device dev = Device::h200();
  const Problem p = make_problem(*simt, "4096x4096x4096", {{"layout", "NT"}});
  const SearchSpace s = simt->space(p, dev);
  const Config c = s.make({{"BM", 128}, {"BN", 128}, {"BK", 8}, {"TM", 8}, {"TN", 8},
                           {"WARP_ROWS", 4}, {"VEC", 4}, {"STAGES", 3}, {"PAD", 4},
                           {"SPLIT_K", 1}, {"GROUP_M", 8}});
  REQUIRE(s.valid(c));
  // gemm_simt.cu: rows of BM + PAD and BN + PAD floats per k, STAGES stages.
  CHECK(simt->launch(p, c, dev).steps[0].dynamic_smem == 3u * 8u * (132u + 132u) * 4u);
}

TEST_CASE("gemm_mma shared-memory constraint counts tf32 as 4 bytes", "[gemm]") {
  auto mma = make_gemm_mma_template();
  const Device dev = Device::h200();
  const Problem p = make_problem(*mma, "4096x4096x4096", {{"dtype", "tf32"}, {"layout", "NT"}});
  const SearchSpace s = mma->space(p, dev);
  const Config big = s.make({{"BM", 128}, {"BN", 256}, {"BK", 64}, {"WM", 64}, {"WN", 64},
                             {"STAGES", 4}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  CHECK_FALSE(s.valid(big));  // 4 x 384 x 64 x 4 bytes = 384 KiB
  const Config ok = test::with(s, big, {{"STAGES", 2}, {"BK", 32}});
  REQUIRE(s.valid(ok));
  CHECK(mma->launch(p, ok, dev).steps[0].dynamic_smem <= 227u * 1024u);
}

TEST_CASE("gemm_mma can_implement refuses > 1024 threads and WN not dividing BN", "[gemm]") {
  auto mma = make_gemm_mma_template();
  const Problem p = make_problem(*mma, "4096x4096x4096", {{"layout", "NT"}});
  const SearchSpace s = mma->space(p, Device::h200());
  std::string why;
  // 16 x 16 warps of 16 x 16: 8192 threads.
  const Config many = s.make({{"BM", 256}, {"BN", 256}, {"BK", 32}, {"WM", 16}, {"WN", 16},
                              {"STAGES", 2}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  CHECK_FALSE(mma->can_implement(p, many, &why));
  CHECK_THAT(why, Catch::Contains("1024"));
  // A 128-column warp tile in a 64-column block tile.
  const Config wide_warp = s.make({{"BM", 128}, {"BN", 64}, {"BK", 32}, {"WM", 64}, {"WN", 128},
                                   {"STAGES", 3}, {"SPLIT_K", 1}, {"GROUP_M", 8}});
  why.clear();
  CHECK_FALSE(mma->can_implement(p, wide_warp, &why));
  CHECK_THAT(why, Catch::Contains("WM x WN"));
}

TEST_CASE("gemm_mma split-K leaves no split without a k tile", "[gemm]") {
  auto mma = make_gemm_mma_template();
  const Problem p = make_problem(*mma, "64x64x48", {{"layout", "NT"}});  // 3 k tiles of 16
  const SearchSpace s = mma->space(p, Device::h200());
  const Config c = s.make({{"BM", 64}, {"BN", 64}, {"BK", 16}, {"WM", 32}, {"WN", 32},
                           {"STAGES", 2}, {"SPLIT_K", 2}, {"GROUP_M", 1}});
  REQUIRE(s.valid(c));
  CHECK_FALSE(s.valid(test::with(s, c, {{"SPLIT_K", 4}})));  // 4 splits of 3 tiles: one empty
}
