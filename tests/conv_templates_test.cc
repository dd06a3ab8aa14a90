// conv2d_simt / conv2d_mma without a GPU: the fp64 direct-convolution reference against a
// naive im2col + matrix product written here (stride, padding, dilation, bias, ReLU, every
// dtype), problem checks and their messages, NVRTC defines, the workload (buffers, bytes,
// flops, tolerances, the GPU reference offered above its cost threshold), spaces (defaults
// valid on ResNet-50 and odd shapes; shared-memory, small-C and iterator rules), can_implement
// rejections, launch plans (small-C pre-pass, split-K), and NVRTC compiles for sm_90 of the
// defaults and a sample of each space.
#include <catch2/catch.hpp>

#include <random>

#include <cmath>

#include "builtin_templates.h"
#include "host_dtype.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "memory_bound_test_util.h"
#include "device_reference.h"
#include "nvrtc_compile.h"
#include "templates/conv/conv_problem.h"

using namespace ktune;

namespace {

/// Host buffers of a workload, filled for `seed`.
std::vector<HostBuffer> filled(const Workload& w, std::uint64_t seed) {
  std::vector<HostBuffer> host = test::host_buffers(w);
  w.fill(host, seed);
  return host;
}

/// The expected output computed the textbook way: an explicit im2col matrix
/// (N*P*Q rows x R*S*C columns, zeros for padding taps) times the filters as a K x R*S*C
/// matrix, then bias and ReLU, rounded to the output dtype.
std::vector<double> im2col_conv(const conv::ConvShape& s, const HostBuffer& x,
                                const HostBuffer& w, const HostBuffer* bias) {
  const std::int64_t P = s.P(), Q = s.Q(), rows = s.N * P * Q, cols = s.R * s.S * s.C;
  std::vector<double> im2col(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::int64_t n = 0; n < s.N; ++n)
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t q = 0; q < Q; ++q)
        for (std::int64_t r = 0; r < s.R; ++r)
          for (std::int64_t t = 0; t < s.S; ++t)
            for (std::int64_t c = 0; c < s.C; ++c) {
              const std::int64_t h = p * s.stride - s.pad + r * s.dilation;
              const std::int64_t v = q * s.stride - s.pad + t * s.dilation;
              if (h < 0 || h >= s.H || v < 0 || v >= s.W) continue;
              const std::int64_t row = (n * P + p) * Q + q, col = (r * s.S + t) * s.C + c;
              im2col[static_cast<std::size_t>(row * cols + col)] =
                  read_element(x, static_cast<std::size_t>(((n * s.H + h) * s.W + v) * s.C + c));
            }
  std::vector<double> y(static_cast<std::size_t>(rows * s.K));
  for (std::int64_t row = 0; row < rows; ++row)
    for (std::int64_t k = 0; k < s.K; ++k) {
      double sum = bias ? read_element(*bias, static_cast<std::size_t>(k)) : 0.0;
      for (std::int64_t col = 0; col < cols; ++col)
        sum += im2col[static_cast<std::size_t>(row * cols + col)] *
               read_element(w, static_cast<std::size_t>(k * cols + col));
      if (s.relu) sum = std::max(sum, 0.0);
      y[static_cast<std::size_t>(row * s.K + k)] = round_to_dtype(s.dtype, sum);
    }
  return y;
}

/// Value of a named define in a list of "-DNAME=value" options ("" when absent).
std::string define_value(const std::vector<std::string>& defines, const std::string& name) {
  const std::string prefix = "-D" + name + "=";
  for (const auto& d : defines)
    if (d.rfind(prefix, 0) == 0) return d.substr(prefix.size());
  return "";
}

}  // namespace

TEST_CASE("conv reference equals im2col times the filter matrix", "[conv]") {
  auto simt = make_conv2d_simt_template();
  auto mma = make_conv2d_mma_template();
  struct Case {
    const KernelTemplate* tmpl;
    const char* dtype;
    const char* shape;  // NxHxWxCxKxRxS
    std::map<std::string, std::string> attrs;
  };
  const std::vector<Case> cases = {
      {simt.get(), "f32", "1x5x5x3x4x3x3", {{"pad", "1"}}},
      {simt.get(), "f32", "2x7x6x5x3x3x3", {{"stride", "2"}, {"bias", "1"}}},
      {simt.get(), "f32", "1x9x8x2x3x3x3", {{"dilation", "2"}, {"pad", "2"}, {"relu", "1"}}},
      {mma.get(), "f16", "2x7x7x3x8x7x7", {{"stride", "2"}, {"pad", "3"}, {"bias", "1"}, {"relu", "1"}}},
      {mma.get(), "bf16", "1x6x5x8x5x1x1", {{"stride", "2"}}},
      {mma.get(), "f16", "1x11x13x4x6x5x5", {{"pad", "2"}, {"dilation", "2"}}},
  };
  for (const auto& c : cases) {
    auto attrs = c.attrs;
    attrs["dtype"] = c.dtype;
    Problem p = make_problem(*c.tmpl, c.shape, attrs);
    INFO(p.key());
    const conv::ConvShape s = conv::conv_shape(p);
    auto w = c.tmpl->workload(p);
    std::vector<HostBuffer> host = filled(*w, 5);
    std::vector<HostBuffer> expected = host;
    w->reference(expected);
    const std::vector<double> want = im2col_conv(s, host[0], host[1], s.bias ? &host[3] : nullptr);
    REQUIRE(want.size() == expected[2].spec.elements);
    double max_err = 0, max_ref = 0;
    std::size_t zeros = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      max_err = std::max(max_err, std::fabs(read_element(expected[2], i) - want[i]));
      max_ref = std::max(max_ref, std::fabs(want[i]));
      zeros += want[i] == 0.0;
    }
    // Summation order differs; rounding to the dtype may then differ by one unit.
    const double ulp = s.dtype == DType::f32 ? 1e-6 : s.dtype == DType::f16 ? 1e-3 : 8e-3;
    CHECK(max_err <= ulp * std::max(1.0, max_ref));
    CHECK(max_ref > 0);
    if (!s.relu) CHECK(zeros == 0);
    for (std::size_t i = 0; i < host.size(); ++i)
      if (host[i].spec.role == Role::input) CHECK(expected[i].bytes == host[i].bytes);
  }
}

TEST_CASE("conv reference: a hand-computed 1-channel example with padding and stride", "[conv]") {
  auto simt = make_conv2d_simt_template();
  // x = 1..9 in a 3x3 image, w = all ones 3x3, pad 1, stride 2: outputs at (0,0),(0,2),(2,0),(2,2)
  // sum the 2x2 corners: 1+2+4+5, 2+3+5+6, 4+5+7+8, 5+6+8+9.
  Problem p = make_problem(*simt, "1x3x3x1x1x3x3", {{"pad", "1"}, {"stride", "2"}});
  auto w = simt->workload(p);
  std::vector<HostBuffer> host = test::host_buffers(*w);
  test::set_values(host[0], {1, 2, 3, 4, 5, 6, 7, 8, 9});
  test::set_values(host[1], std::vector<double>(9, 1.0));
  w->reference(host);
  CHECK(test::values_of(host[2]) == std::vector<double>{12, 16, 24, 28});
}

TEST_CASE("conv workload: buffers, never-zero inputs, bytes, flops, tolerances, GPU reference",
          "[conv]") {
  auto mma = make_conv2d_mma_template();
  Problem p = make_problem(*mma, "2x9x9x16x32x3x3",
                           {{"dtype", "f16"}, {"pad", "1"}, {"stride", "2"}, {"bias", "1"}});
  const conv::ConvShape s = conv::conv_shape(p);
  CHECK(s.P() == 5);
  CHECK(s.Q() == 5);
  auto w = mma->workload(p);
  auto specs = w->buffers();
  REQUIRE(specs.size() == 4);
  CHECK(specs[0].elements == 2u * 9 * 9 * 16);
  CHECK(specs[1].elements == 32u * 3 * 3 * 16);
  CHECK(specs[2].elements == 2u * 5 * 5 * 32);
  CHECK(specs[2].role == Role::output);
  CHECK(specs[3].elements == 32u);
  for (const auto& b : filled(*w, 3))
    if (b.spec.role == Role::input)
      for (std::size_t i = 0; i < b.spec.elements; ++i) {
        const double v = read_element(b, i);
        REQUIRE(v != 0.0);
        REQUIRE(std::fabs(v) <= 1.0);
      }
  const double macs = 2.0 * 5 * 5 * 32 * 3 * 3 * 16;
  CHECK(w->flops() == 2 * macs);
  CHECK(w->reference_cost() == macs);
  CHECK(w->bytes() == (2.0 * 9 * 9 * 16 + 32.0 * 144 + 2.0 * 25 * 32 + 32) * 2);
  CHECK_FALSE(w->device_reference().has_value());  // small: the host reference is cheap

  auto simt = make_conv2d_simt_template();
  auto small = simt->workload(make_problem(*simt, "1x8x8x8x8x1x1"));
  auto deep = simt->workload(make_problem(*simt, "1x8x8x2048x8x3x3", {{"pad", "1"}}));
  CHECK(small->tolerance(specs[2]).rel_l2 == Approx(1e-5));
  CHECK(deep->tolerance(specs[2]).rel_l2 > small->tolerance(specs[2]).rel_l2);
  CHECK(w->tolerance(specs[2]).rel_l2 > small->tolerance(specs[2]).rel_l2);
  auto bf16 = mma->workload(make_problem(*mma, "1x8x8x8x8x1x1", {{"dtype", "bf16"}}));
  CHECK(bf16->tolerance(specs[2]).rel_l2 > w->tolerance(specs[2]).rel_l2);

  // ResNet-50's stage-1 3x3 layer at batch 32 is far above the threshold: GPU reference.
  Problem big = make_problem(*mma, "32x56x56x64x64x3x3",
                             {{"dtype", "bf16"}, {"pad", "1"}, {"relu", "1"}});
  auto wb = mma->workload(big);
  REQUIRE(wb->reference_cost() > conv::kDeviceReferenceCost);
  const auto ref = wb->device_reference();
  REQUIRE(ref.has_value());
  CHECK(ref->source.find("conv2d_reference") != std::string::npos);
  CHECK(ref->options == std::vector<std::string>{"-DKT_DTYPE=2"});
  REQUIRE(ref->plan.steps.size() == 1);
  const LaunchStep& step = ref->plan.steps[0];
  CHECK(step.entry == "conv2d_reference");
  REQUIRE(step.args.size() == 18);
  CHECK(step.args[2].buffer == 2u);  // y
  CHECK(step.args[3].buffer == 2u);  // no bias: y stands in, unused
  CHECK(step.args[11].i == 56);      // P
  CHECK(step.args[14].i == 1);       // pad
  CHECK(step.args[17].i == 1);       // relu
  CHECK(static_cast<std::int64_t>(step.grid[0]) * step.block[0] >= 1);
}

TEST_CASE("conv problems: checks name the bad attribute or dimension", "[conv]") {
  auto simt = make_conv2d_simt_template();
  auto mma = make_conv2d_mma_template();
  CHECK(simt->name() == "conv2d_simt");
  CHECK(mma->name() == "conv2d_mma");
  CHECK(mma->op() == "conv2d");
  CHECK(mma->vendor_reference() == "cudnn");
  CHECK(find_template("conv2d_mma")->name() == "conv2d_mma");
  CHECK(find_template("conv2d_simt")->dim_names().size() == 7);
  CHECK_THROWS_WITH(make_problem(*simt, "1x8x8x8x8x3x3", {{"dtype", "f16"}}),
                    Catch::Contains("dtype"));
  CHECK_THROWS_WITH(make_problem(*mma, "1x8x8x8x8x3x3", {{"dtype", "f32"}}),
                    Catch::Contains("dtype"));
  CHECK_THROWS_WITH(make_problem(*mma, "1x8x8x8x8x3x3", {{"stride", "5"}}),
                    Catch::Contains("stride"));
  CHECK_THROWS_WITH(make_problem(*mma, "1x8x8x8x8x3x3", {{"pad", "-1"}}), Catch::Contains("pad"));
  CHECK_THROWS_WITH(make_problem(*mma, "1x8x8x8x8x3x3", {{"relu", "yes"}}),
                    Catch::Contains("relu"));
  CHECK_THROWS_WITH(make_problem(*mma, "1x8x8x8x8x3x3", {{"groups", "2"}}),
                    Catch::Contains("groups"));
  CHECK_THROWS_AS(make_problem(*mma, "1x8x8x8x8x3", {}), Error);
  // A 7x7 filter does not fit an unpadded 5x5 input; dilation 4 of a 3x3 spans 9 pixels.
  CHECK_THROWS_WITH(make_problem(*mma, "1x5x5x8x8x7x7", {}), Catch::Contains("larger than"));
  CHECK_THROWS_WITH(make_problem(*mma, "1x8x8x8x8x3x3", {{"dilation", "4"}}),
                    Catch::Contains("larger than"));
  CHECK_NOTHROW(make_problem(*mma, "1x8x8x8x8x3x3", {{"dilation", "4"}, {"pad", "1"}}));
  CHECK_THROWS_WITH(make_problem(*simt, "65536x256x256x256x8x1x1", {}), Catch::Contains("2^30"));
  // Sizes are computed without overflow (4294967296^2 wrapped to 0 and was accepted), and
  // the implicit GEMM's M = N*P*Q stays far from 2^31 (the kernels add tile sizes to it).
  CHECK_THROWS_WITH(make_problem(*simt, "4294967296x4294967296x1x1x1x1x1", {}),
                    Catch::Contains("N = 4294967296"));
  CHECK_THROWS_WITH(make_problem(*simt, "7430739x1x1x1x1x1x1", {{"pad", "8"}}),
                    Catch::Contains("N*P*Q = 2147483571"));
  Problem p = make_problem(*mma, "1x8x8x8x8x3x3", {});
  CHECK(p.attr("dtype") == "f16");
  CHECK(p.attr("stride") == "1");
  CHECK(p.attr("pad") == "0");
  p.attrs.erase("relu");
  CHECK_THROWS_WITH(mma->check_problem(p), Catch::Contains("relu"));
  CHECK_NOTHROW(simt->example_problem());
  CHECK_NOTHROW(mma->example_problem());
  Problem gemm_problem = make_problem(*find_template("gemm_mma"), "8x8x8", {});
  CHECK_THROWS_AS(mma->space(gemm_problem, Device::h200()), Error);
}

TEST_CASE("conv problem defines carry dtype, filter geometry and the epilogue", "[conv]") {
  auto mma = make_conv2d_mma_template();
  Problem p = make_problem(*mma, "32x224x224x3x64x7x7",
                           {{"dtype", "bf16"}, {"stride", "2"}, {"pad", "3"}, {"relu", "1"}});
  const auto defines = mma->problem_defines(p);
  CHECK(define_value(defines, "KT_DTYPE") == "2");
  CHECK(define_value(defines, "KT_C") == "3");
  CHECK(define_value(defines, "KT_R") == "7");
  CHECK(define_value(defines, "KT_S") == "7");
  CHECK(define_value(defines, "KT_STRIDE") == "2");
  CHECK(define_value(defines, "KT_PAD") == "3");
  CHECK(define_value(defines, "KT_DIL") == "1");
  CHECK(define_value(defines, "KT_BIAS") == "0");
  CHECK(define_value(defines, "KT_RELU") == "1");
  const conv::ConvShape s = conv::conv_shape(p);
  CHECK(s.P() == 112);
  CHECK(s.Q() == 112);
  CHECK(s.channel_alignment() == 1);
  CHECK(s.padded_channels() == 4);
  CHECK(conv::small_c_applies(s));
  auto simt = make_conv2d_simt_template();
  const conv::ConvShape f = conv::conv_shape(make_problem(*simt, "1x8x8x6x8x1x1", {}));
  CHECK(f.channel_alignment() == 2);
  CHECK(conv::conv_shape(make_problem(*simt, "1x8x8x64x8x1x1", {})).channel_alignment() == 4);
  CHECK_FALSE(conv::small_c_applies(conv::conv_shape(make_problem(*simt, "1x8x8x64x8x1x1", {}))));
}

TEST_CASE("conv spaces: every default is valid and implementable over sampled boundary shapes",
          "[conv]") {
  // Batch, image, channels, filters, filter size, stride and padding drawn from boundary
  // values: a default the space refuses is never measured (no speed-up reference).
  struct Case {
    std::shared_ptr<const KernelTemplate> tmpl;
    Device device;
    std::vector<std::int64_t> channels;
  };
  const std::vector<std::int64_t> any_c = {1, 3, 8, 17, 64, 512}, c8 = {8, 16, 64, 512};
  const std::vector<Case> cases = {{make_conv2d_simt_template(), Device::h200(), any_c},
                                   {make_conv2d_simt_template(), Device::offline("sm_86"), any_c},
                                   {make_conv2d_mma_template(), Device::h200(), any_c},
                                   {make_conv2d_mma_template(), Device::offline("sm_86"), any_c},
                                   {make_conv2d_wgmma_template(), Device::h200(), c8}};
  const std::vector<std::int64_t> batches = {1, 3, 32}, sides = {1, 2, 7, 14, 31, 56, 224},
                                  filters = {1, 5, 64, 256, 2048}, windows = {1, 3, 5, 7};
  std::mt19937_64 rng(26);
  auto pick = [&](const std::vector<std::int64_t>& v) { return v[rng() % v.size()]; };
  int checked = 0;
  for (const Case& c : cases)
    for (int i = 0; i < 300; ++i) {
      const std::int64_t n = pick(batches), h = pick(sides), w = pick(sides), ch = pick(c.channels),
                         k = pick(filters), r = pick(windows), s = pick(windows);
      const std::map<std::string, std::string> attrs = {
          {"stride", std::to_string(1 + rng() % 2)}, {"pad", std::to_string(rng() % 4)},
          {"dilation", std::to_string(1 + rng() % 2)}};
      const std::string shape = std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) +
                                "x" + std::to_string(ch) + "x" + std::to_string(k) + "x" +
                                std::to_string(r) + "x" + std::to_string(s);
      Problem p;
      try {
        p = make_problem(*c.tmpl, shape, attrs);
      } catch (const Error&) {
        continue;  // an empty output (the window larger than the padded image): refused by name
      }
      const SearchSpace space = c.tmpl->space(p, c.device);
      const Config d = space.default_config();
      std::string why;
      INFO(c.tmpl->name() << " " << c.device.arch() << " " << p.key() << " " << d.str() << ": "
                          << space.violated(d).value_or("valid"));
      REQUIRE(space.valid(d));
      REQUIRE(c.tmpl->can_implement(p, d, &why));
      ++checked;
    }
  CHECK(checked > 1000);
}

TEST_CASE("conv spaces: defaults valid on ResNet-50 and odd shapes, rules reject", "[conv]") {
  const Device h200 = Device::h200();
  auto simt = make_conv2d_simt_template();
  auto mma = make_conv2d_mma_template();
  const std::vector<std::pair<const char*, std::map<std::string, std::string>>> shapes = {
      {"32x224x224x3x64x7x7", {{"stride", "2"}, {"pad", "3"}}},
      {"32x56x56x64x64x1x1", {}},
      {"32x56x56x64x64x3x3", {{"pad", "1"}}},
      {"32x28x28x512x128x1x1", {}},
      {"32x14x14x256x256x3x3", {{"pad", "1"}}},
      {"32x7x7x512x2048x1x1", {}},
      {"32x56x56x256x512x1x1", {{"stride", "2"}}},
      {"1x1x1x1x1x1x1", {}},
      {"3x17x13x17x5x3x3", {{"dilation", "2"}, {"pad", "2"}}},
      {"2x31x29x6x33x5x5", {{"stride", "2"}, {"bias", "1"}, {"relu", "1"}}},
  };
  for (const auto& [shape, attrs] : shapes)
    for (const KernelTemplate* t : {static_cast<const KernelTemplate*>(simt.get()),
                                    static_cast<const KernelTemplate*>(mma.get())}) {
      Problem p = make_problem(*t, shape, attrs);
      SearchSpace space = t->space(p, h200);
      INFO(p.key() << " " << space.violated(space.default_config()).value_or("valid"));
      CHECK(space.valid(space.default_config()));
      CHECK(t->can_implement(p, space.default_config()));
    }
  CHECK(mma->space(make_problem(*mma, "1x1x1x1x1x1x1", {}), h200).count_valid() > 100);

  // Defaults fill the H200: stage 4 (M = 1568) gets 64-row tiles and a split of R*S*C,
  // stage 1 (M = 100352) neither.
  Problem s4 = make_problem(*mma, "32x7x7x512x512x3x3", {{"pad", "1"}});
  const Config d4 = mma->space(s4, h200).default_config();
  CHECK(d4["BM"] == 64);
  CHECK(d4["SPLIT_K"] == 2);  // 25 x 4 tiles x 2 splits <= 2 blocks per SM
  const Config d1 = mma->space(make_problem(*mma, "32x56x56x64x64x3x3", {{"pad", "1"}}), h200)
                        .default_config();
  CHECK(d1["BM"] == 128);
  CHECK(d1["SPLIT_K"] == 1);

  // Small C: SMALL_C is offered (default on) only where it applies.
  Problem stem = make_problem(*mma, "32x224x224x3x64x7x7", {{"stride", "2"}, {"pad", "3"}});
  SearchSpace ss = mma->space(stem, h200);
  CHECK(ss.default_config()["SMALL_C"] == 1);
  Problem wide = make_problem(*mma, "32x56x56x64x64x3x3", {{"pad", "1"}});
  SearchSpace ws = mma->space(wide, h200);
  CHECK(ws.default_config()["SMALL_C"] == 0);
  CHECK(ws.params()[*ws.find("SMALL_C")].values.size() == 1);
  std::string why;
  CHECK_FALSE(mma->can_implement(wide, ss.default_config(), &why));  // SMALL_C = 1 on C = 64
  CHECK_THAT(why, Catch::Contains("SMALL_C"));

  // Shared memory: 5 stages of (256 + 128) x 64 halves (240 KiB) do not fit.
  Config huge = test::with(ws, ws.default_config(),
                           {{"BM", 256}, {"BN", 128}, {"BK", 64}, {"STAGES", 5}, {"WM", 64},
                            {"WN", 64}});
  REQUIRE_FALSE(ws.valid(huge));
  CHECK_THAT(*ws.violated(huge), Catch::Contains("STAGES"));
  // Registers: a 256 x 256 tile's fp32 accumulators alone fill the register file.
  Config full = test::with(ws, huge, {{"BN", 256}, {"STAGES", 2}});
  REQUIRE_FALSE(ws.valid(full));
  CHECK_THAT(*ws.violated(full), Catch::Contains("65536"));
  // Structure: a warp tile larger than the block tile is refused by can_implement too.
  Config bad_warp = test::with(ws, ws.default_config(), {{"BM", 32}, {"WM", 64}});
  CHECK_FALSE(ws.valid(bad_warp));
  CHECK_FALSE(mma->can_implement(wide, bad_warp, &why));
  CHECK_THAT(why, Catch::Contains("WM"));
  // Precomputed offsets with 1-element copies (C = 17) need threads % (BK / 1) == 0.
  Problem odd_c = make_problem(*mma, "2x9x9x17x16x3x3", {{"pad", "1"}});
  SearchSpace os = mma->space(odd_c, h200);
  CHECK(os.default_config()["ITER"] == 0);
  Config few_threads = test::with(os, os.default_config(),
                                  {{"BM", 32}, {"BN", 16}, {"WM", 32}, {"WN", 16}, {"BK", 64},
                                   {"ITER", 1}});
  CHECK_FALSE(mma->can_implement(odd_c, few_threads, &why));
  CHECK_THAT(why, Catch::Contains("ITER"));
  CHECK_FALSE(os.valid(few_threads));
  CHECK(mma->can_implement(odd_c, test::with(os, few_threads, {{"ITER", 0}})));
  // Split-K: R*S*C = 36 (C = 3 padded to 4, 3x3) has two 32-wide k tiles: at most 2 splits.
  Problem tiny_k = make_problem(*mma, "1x8x8x3x8x3x3", {});
  SearchSpace ts = mma->space(tiny_k, h200);
  CHECK(ts.valid(test::with(ts, ts.default_config(), {{"SPLIT_K", 2}})));
  CHECK_FALSE(ts.valid(test::with(ts, ts.default_config(), {{"SPLIT_K", 4}})));

  Problem ps = make_problem(*simt, "32x14x14x256x256x3x3", {{"pad", "1"}});
  SearchSpace sp = simt->space(ps, h200);
  Config big = test::with(sp, sp.default_config(), {{"BM", 256}, {"BN", 128}, {"BK", 32},
                                                    {"TM", 8}, {"TN", 8}});
  CHECK(sp.valid(big));  // 512 threads x ~128 registers, 2 * 32 * 392 * 4 = 98 KiB
  Config too_many = test::with(sp, big, {{"BN", 256}, {"BK", 8}});
  REQUIRE_FALSE(sp.valid(too_many));  // 1024 threads x ~100 registers exceed the register file
  CHECK_THAT(*sp.violated(too_many), Catch::Contains("registers"));
  // 5 stages of 128 x 128 x 64 halves (160 KiB) fit an H200 block, not an sm_86 one.
  Config deep = test::with(ws, ws.default_config(), {{"BM", 128}, {"BN", 128}, {"BK", 64},
                                                     {"STAGES", 5}});
  CHECK(ws.valid(deep));
  SearchSpace ws86 = mma->space(wide, Device::offline("sm_86"));
  REQUIRE_FALSE(ws86.valid(deep));
  CHECK_THAT(*ws86.violated(deep), Catch::Contains("STAGES"));
  Config vec2 = test::with(sp, sp.default_config(), {{"VEC", 2}});
  CHECK(sp.valid(vec2));
  CHECK(simt->can_implement(ps, vec2));
}

TEST_CASE("conv launch plans: small-C pre-pass, split-K step, scratch and arguments", "[conv]") {
  const Device h200 = Device::h200();
  auto mma = make_conv2d_mma_template();
  Problem stem = make_problem(*mma, "2x17x17x3x8x7x7",
                              {{"stride", "2"}, {"pad", "3"}, {"bias", "1"}});
  SearchSpace ss = mma->space(stem, h200);
  Config c = test::with(ss, ss.default_config(),
                        {{"BM", 64}, {"BN", 32}, {"WM", 32}, {"WN", 16}, {"SPLIT_K", 2},
                         {"SMALL_C", 1}, {"BK", 32}, {"STAGES", 3}});
  REQUIRE(ss.valid(c));
  LaunchPlan plan = mma->launch(stem, c, h200);
  REQUIRE(plan.steps.size() == 4);
  REQUIRE(plan.scratch.size() == 3);
  CHECK(plan.steps[0].entry == "conv2d_pad_channels");
  CHECK(plan.steps[1].entry == "conv2d_pad_channels");
  CHECK(plan.steps[2].entry == "conv2d_mma");
  CHECK(plan.steps[3].entry == "conv2d_splitk_reduce");
  CHECK(plan.scratch[0].elements == 2u * 17 * 17 * 4);  // x padded to 4 channels
  CHECK(plan.scratch[1].elements == 8u * 7 * 7 * 4);    // w padded
  CHECK(plan.scratch[2].elements == 2u * 2 * 9 * 9 * 8);  // 2 splits x N*P*Q x K floats
  CHECK(plan.scratch[2].dtype == DType::f32);
  // Buffers: x 0, w 1, y 2, bias 3, then scratch 4 (x padded), 5 (w padded), 6 (workspace).
  CHECK(plan.steps[0].args[0].buffer == 0u);
  CHECK(plan.steps[0].args[1].buffer == 4u);
  CHECK(plan.steps[0].args[2].i == 2 * 17 * 17);
  CHECK(plan.steps[1].args[1].buffer == 5u);
  const LaunchStep& main = plan.steps[2];
  CHECK(main.args[0].buffer == 4u);
  CHECK(main.args[1].buffer == 5u);
  CHECK(main.args[3].buffer == 3u);
  CHECK(main.args[4].buffer == 6u);
  CHECK(main.args[9].i == 9);   // P
  CHECK(main.args[10].i == 9);  // Q
  CHECK(main.grid[0] == 3u * 1u);  // ceil(162 / 64) x ceil(8 / 32)
  CHECK(main.grid[2] == 2u);
  CHECK(main.block[0] == 32u * 2u * 2u);
  CHECK(main.dynamic_smem == 3u * (64u + 32u) * 32u * 2u);
  CHECK(plan.steps[3].args[0].buffer == 6u);
  CHECK(plan.steps[3].args[3].i == 2 * 9 * 9);

  auto simt = make_conv2d_simt_template();
  Problem one = make_problem(*simt, "1x1x1x1x1x1x1", {});
  SearchSpace os = simt->space(one, h200);
  Config plain = test::with(os, os.default_config(), {{"SMALL_C", 0}});
  LaunchPlan single = simt->launch(one, plain, h200);
  REQUIRE(single.steps.size() == 1);
  CHECK(single.scratch.empty());
  CHECK(single.steps[0].entry == "conv2d_simt");
  CHECK(single.steps[0].args[0].buffer == 0u);
  CHECK(single.steps[0].args[3].buffer == 2u);  // no bias: y stands in, unused
  CHECK(single.steps[0].args[4].buffer == 2u);  // no workspace
  CHECK_THROWS_AS(simt->launch(one, test::with(os, plain, {{"BM", 32}, {"TM", 8}, {"BN", 32},
                                                           {"TN", 8}}), h200),
                  Error);  // 16 threads: not a whole warp
}

TEST_CASE("conv templates compile for sm_90: defaults without spills, sampled configs",
          "[conv][nvrtc]") {
  auto simt = make_conv2d_simt_template();
  auto mma = make_conv2d_mma_template();
  test::expect_space_compiles(*mma, make_problem(*mma, "32x56x56x64x64x3x3", {{"pad", "1"}}), 2, 1);
  test::expect_space_compiles(
      *mma, make_problem(*mma, "32x224x224x3x64x7x7",
                         {{"dtype", "bf16"}, {"stride", "2"}, {"pad", "3"}, {"bias", "1"},
                          {"relu", "1"}}),
      2, 2);
  test::expect_space_compiles(
      *mma, make_problem(*mma, "3x17x13x17x5x3x3", {{"dilation", "2"}, {"pad", "2"}}), 1, 3);
  test::expect_space_compiles(*simt, make_problem(*simt, "32x14x14x256x256x3x3", {{"pad", "1"}}),
                              2, 4);
  test::expect_space_compiles(
      *simt, make_problem(*simt, "32x224x224x3x64x7x7", {{"stride", "2"}, {"pad", "3"}, {"relu", "1"}}),
      1, 5);
  test::expect_space_compiles(
      *simt, make_problem(*simt, "2x31x29x6x33x5x5", {{"stride", "2"}, {"bias", "1"}}), 1, 6);
}

TEST_CASE("conv GPU reference compiles for sm_90 in every dtype", "[conv][nvrtc]") {
  auto simt = make_conv2d_simt_template();
  auto mma = make_conv2d_mma_template();
  const std::vector<Problem> problems = {
      make_problem(*simt, "32x56x56x64x64x3x3", {{"pad", "1"}}),
      make_problem(*mma, "32x56x56x64x64x3x3", {{"pad", "1"}, {"dtype", "f16"}}),
      make_problem(*mma, "32x56x56x64x64x3x3", {{"pad", "1"}, {"dtype", "bf16"}})};
  for (const Problem& p : problems) {
    INFO(p.key());
    const auto ref = (p.attr("dtype") == "f32" ? simt : mma)->workload(p)->device_reference();
    REQUIRE(ref.has_value());
    const detail::NvrtcOutput out = detail::compile_device_reference(*ref, "sm_90");
    INFO(out.log);
    REQUIRE(out.ok);
    CHECK_FALSE(out.cubin.empty());
  }
}

TEST_CASE("conv2d_simt shared-memory constraint counts the 8 padding columns", "[conv]") {
  auto simt = make_conv2d_simt_template();
  const Problem p = make_problem(*simt, "32x14x14x256x256x3x3", {{"pad", "1"}});
  Device small = Device::h200();
  small.smem_per_block_optin = 48 * 1024;
  const SearchSpace s = simt->space(p, small);
  const Config c = test::with(s, s.default_config(), {{"BM", 64}, {"BN", 128}, {"BK", 32},
                                                      {"TM", 8}, {"TN", 4}, {"SPLIT_K", 1},
                                                      {"ITER", 0}});
  // 2 x 32 x (64 + 128 + 8) x 4 = 51200 bytes > 48 KiB
  CHECK(simt->launch(p, c, small).steps[0].dynamic_smem == 51200u);
  CHECK_FALSE(s.valid(c));
  CHECK(s.valid(test::with(s, c, {{"BK", 16}})));  // 25600 bytes
}

TEST_CASE("conv2d_mma can_implement refuses BK below the mma k", "[conv]") {
  auto mma = make_conv2d_mma_template();
  const Problem p = make_problem(*mma, "32x56x56x64x64x3x3", {{"pad", "1"}});
  const SearchSpace s = mma->space(p, Device::h200());
  std::vector<Value> values = s.default_config().values();
  values[*s.find("BK")] = 8;  // outside the domain: a hand-written or imported config
  values[*s.find("ITER")] = 0;
  const Config bk8(s.names(), values);
  std::string why;
  CHECK_FALSE(mma->can_implement(p, bk8, &why));
  CHECK_THAT(why, Catch::Contains("BK"));
}
