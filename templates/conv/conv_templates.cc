// The conv2d template family: "conv2d_mma" (f16 / bf16 on tensor cores with mma.sync,
// templates/conv/conv2d_mma.cu), "conv2d_wgmma" (f16 / bf16 on Hopper wgmma, sm_90a,
// templates/conv/conv2d_wgmma.cu) and "conv2d_simt" (fp32 on CUDA cores,
// templates/conv/conv2d_simt.cu), all implicit GEMMs over NHWC / KRSC. Each declares its
// tunables and constraints, the structural checks its kernel's static_asserts rely on, and
// its launch geometry; problem parsing, launch plans and the workload are shared
// (conv_problem.h).
#include <algorithm>

#include "builtin_templates.h"
#include "conv_problem.h"
#include "ktune/error.h"
#include "templates/gemm/gemm_problem.h"

namespace ktune {

namespace {

using conv::ConvShape;

/// True when `value` is a power of two.
bool is_pow2(Value value) { return value > 0 && (value & (value - 1)) == 0; }

/// Sets `why` (when given) and returns false.
bool reject(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return false;
}

/// Elements per activation copy of a config: the power of two dividing the channels the
/// kernel sees (padded on the small-C path), capped by `max_elems`.
Value activation_vector(const ConvShape& s, bool small_c, Value max_elems) {
  const std::int64_t channels = small_c ? s.padded_channels() : s.C;
  Value v = max_elems;
  while (v > 1 && channels % v != 0) v /= 2;
  return v;
}

/// What both conv templates share: op, dimensions, attributes, checks, defines, workload,
/// the small-C / split-K / iterator rules and the launch.
class ConvTemplateBase : public KernelTemplate {
 public:
  std::string op() const override { return "conv2d"; }
  std::vector<std::string> dim_names() const override {
    return {"N", "H", "W", "C", "K", "R", "S"};
  }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return conv::conv_attr_domains(dtypes());
  }
  void check_problem(const Problem& problem) const override {
    KernelTemplate::check_problem(problem);
    conv::check_conv_geometry(problem);
  }
  Problem example_problem() const override {
    return make_problem(*this, "32x56x56x64x64x3x3", {{"pad", "1"}, {"dtype", dtypes()[0]}});
  }
  std::vector<std::string> problem_defines(const Problem& problem) const override {
    check_problem(problem);
    return conv::conv_problem_defines(conv::conv_shape(problem));
  }
  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    return conv::make_conv_workload(conv::conv_shape(problem));
  }
  std::string vendor_reference() const override { return "cudnn"; }
  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    check_problem(problem);
    const ConvShape s = conv::conv_shape(problem);
    if (!structure_ok(s, config, why)) return false;
    if (config["SMALL_C"] != 0 && !conv::small_c_applies(s))
      return reject(why, "SMALL_C = 1 needs C not a multiple of 4 and at most 16 (C = " +
                             std::to_string(s.C) + ")");
    if (config["SPLIT_K"] < 1 || config["SPLIT_K"] > 65535)
      return reject(why, "SPLIT_K must be in [1, 65535]");
    if (config["ITER"] != 0 && threads(config) % chunks_per_row(s, config) != 0)
      return reject(why, "ITER = 1 (precomputed offsets) needs the threads to be a multiple "
                         "of the BK / vector chunks of a tile row");
    return true;
  }
  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    require_implementable(problem, config);
    const ConvShape s = conv::conv_shape(problem);
    return conv::conv_launch_plan(
        s,
        {name(), config["BM"], config["BN"], config["SPLIT_K"], config["SMALL_C"] != 0,
         static_cast<unsigned>(threads(config)), static_cast<unsigned>(smem_bytes(s, config))},
        device);
  }

 protected:
  /// Accepted dtype attribute values, default first.
  virtual std::vector<std::string> dtypes() const = 0;
  /// The rules the kernel's static_asserts rely on; false with a reason when broken.
  virtual bool structure_ok(const ConvShape& s, const Config& c, std::string* why) const = 0;
  /// Threads per block of a (structurally valid) config.
  virtual Value threads(const Config& c) const = 0;
  /// Dynamic shared memory of a config (bytes).
  virtual std::int64_t smem_bytes(const ConvShape& s, const Config& c) const = 0;
  /// Widest activation copy (elements) the config allows before channel alignment.
  virtual Value max_copy_elems(const ConvShape& s, const Config& c) const = 0;

  /// Activation chunks per tile row (BK / elements per copy) of a config.
  Value chunks_per_row(const ConvShape& s, const Config& c) const {
    return c["BK"] / activation_vector(s, c["SMALL_C"] != 0, max_copy_elems(s, c));
  }
  /// The space's rule for ITER = 1: the correctness condition of can_implement, and at most
  /// 8 activation chunks per thread (4 registers each are kept).
  SearchSpace::Predicate precomputed_rule(const ConvShape& s) const {
    return [this, s](const Config& c) {
      if (c["ITER"] == 0) return true;
      const Value t = threads(c), per_row = chunks_per_row(s, c);
      return t > 0 && t % per_row == 0 && c["BM"] * per_row <= 8 * t;
    };
  }
  /// Default ITER of a shape: precomputed when copies are at least 4 elements wide.
  static Value default_iter(const ConvShape& s) {
    return activation_vector(s, conv::small_c_applies(s), 8) >= 4 ? 1 : 0;
  }
  /// Default block rows: 128, or 64 when 128-row tiles would not give every SM one block.
  static Value default_bm(const ConvShape& s, Value bn, const Device& device) {
    const std::int64_t tiles = (s.pixels() + 127) / 128 * ((s.K + bn - 1) / bn);
    return tiles < std::max(1, device.sm_count) ? 64 : 128;
  }
  /// Default split of R*S*C: doubled while the blocks stay within two per SM and every split
  /// keeps at least one k tile (stage-4 layers: 50-100 tiles on 132 SMs).
  static Value default_split(const ConvShape& s, Value bm, Value bn, Value bk,
                             const Device& device) {
    const std::int64_t tiles = (s.pixels() + bm - 1) / bm * ((s.K + bn - 1) / bn);
    const std::int64_t reduced = conv::small_c_applies(s) ? s.R * s.S * s.padded_channels()
                                                          : s.gemm_k();
    Value split = 1;
    while (split < 16 && tiles * split * 2 <= 2 * std::max(1, device.sm_count) &&
           split * 2 * bk < reduced + bk)
      split *= 2;
    return split;
  }
  /// SMALL_C values offered for a shape (1 first, the default, when it applies).
  static std::vector<Value> small_c_values(const ConvShape& s) {
    return conv::small_c_applies(s) ? std::vector<Value>{1, 0} : std::vector<Value>{0};
  }
  /// Constraint text: every split of R*S*C gets at least one k tile.
  static std::string split_k_rule(const ConvShape& s, bool small_c_possible) {
    const std::int64_t k = small_c_possible ? s.R * s.S * s.padded_channels() : s.gemm_k();
    return "SPLIT_K * BK < " + std::to_string(k) + " + BK";
  }
  /// "max threads per block" of a device as constraint text (1024 when unknown).
  static std::string max_threads(const Device& device) {
    return std::to_string(device.max_threads_per_block > 0 ? device.max_threads_per_block : 1024);
  }
};

// ---------------------------------------------------------------------------------------
// conv2d_mma

class Conv2dMmaTemplate final : public ConvTemplateBase {
 public:
  std::string name() const override { return "conv2d_mma"; }
  std::string description() const override {
    return "f16/bf16 conv2d as implicit GEMM on tensor cores (mma.sync, cp.async pipeline, "
           "NHWC/KRSC, stride/pad/dilation, analytic or precomputed offsets, small-C path, "
           "split-K, bias+ReLU)";
  }
  const std::string& source() const override {
    return embedded_source("conv/conv2d_mma.cu");
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const ConvShape s = conv::conv_shape(problem);
    const std::string threads = "32 * (BM // WM) * (BN // WN)";
    const Value bn_default = s.K <= 64 ? 64 : 128;
    const Value bm_default = default_bm(s, bn_default, device);
    SearchSpace::Builder b;
    b.param("BM", {32, 64, 128, 256}, bm_default)
        .param("BN", {16, 32, 64, 128, 256}, bn_default)
        .param("BK", {16, 32, 64}, 32)
        .param("WM", {16, 32, 64, 128}, 64)
        .param("WN", {16, 32, 64, 128}, 32)
        .param("STAGES", {2, 3, 4, 5}, 4)
        .param("SPLIT_K", {1, 2, 4, 8, 16},
               default_split(s, bm_default, bn_default, 32, device))
        .param("GROUP_M", {1, 4, 8, 16}, 8)
        .param("ITER", {0, 1}, default_iter(s))
        .param("SMALL_C", small_c_values(s))
        .constraint("BM % WM == 0 and BN % WN == 0")
        .constraint(threads + " <= " + max_threads(device))
        .constraint("WM * WN <= 4096")  // at most 128 fp32 accumulators per thread
        // Register file: accumulators + ~40 for addresses and fragments, 64 K per block.
        .constraint("(WM * WN // 32 + 40) * " + threads + " <= 65536")
        .constraint("STAGES * (BM + BN) * BK * 2 <= " +
                    std::to_string(gemm::smem_limit(device)))
        .constraint(split_k_rule(s, conv::small_c_applies(s)))
        .constraint("ITER = 1: threads a multiple of the chunks per row, <= 8 chunks per thread",
                    precomputed_rule(s));
    return b.build();
  }

 protected:
  std::vector<std::string> dtypes() const override { return {"f16", "bf16"}; }
  bool structure_ok(const ConvShape&, const Config& c, std::string* why) const override {
    const Value bm = c["BM"], bn = c["BN"], bk = c["BK"], wm = c["WM"], wn = c["WN"];
    if (!is_pow2(bm) || !is_pow2(bn) || !is_pow2(bk) || bk < 16)
      return reject(why, "BM, BN, BK must be powers of two, BK >= 16 (swizzled tiles, mma k)");
    if (bn < 16) return reject(why, "BN must be >= 16 (swizzled filter tile rows)");
    if (wm % 16 != 0 || wn % 16 != 0 || bm % wm != 0 || bn % wn != 0)
      return reject(why, "warp tile WM x WN must be multiples of 16 dividing BM x BN");
    if (threads(c) > 1024) return reject(why, std::to_string(threads(c)) + " threads exceed 1024");
    if (c["STAGES"] < 2) return reject(why, "STAGES must be >= 2");
    return true;
  }
  Value threads(const Config& c) const override {
    return 32 * (c["BM"] / c["WM"]) * (c["BN"] / c["WN"]);
  }
  std::int64_t smem_bytes(const ConvShape&, const Config& c) const override {
    return c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] * 2;
  }
  Value max_copy_elems(const ConvShape&, const Config&) const override { return 8; }
};

// ---------------------------------------------------------------------------------------
// conv2d_simt

/// Rough registers per thread of a conv2d_simt config: accumulators, fragments, staging.
std::int64_t simt_register_estimate(const Config& c) {
  const Value threads = (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]);
  const Value staging = (c["BM"] + c["BN"]) * c["BK"] / std::max<Value>(1, threads);
  return c["TM"] * c["TN"] + c["TM"] + c["TN"] + staging;
}

class Conv2dSimtTemplate final : public ConvTemplateBase {
 public:
  std::string name() const override { return "conv2d_simt"; }
  std::string description() const override {
    return "fp32 conv2d as implicit GEMM on CUDA cores (register-staged double buffering, "
           "NHWC/KRSC, stride/pad/dilation, analytic or precomputed offsets, small-C path, "
           "split-K, bias+ReLU)";
  }
  const std::string& source() const override {
    return embedded_source("conv/conv2d_simt.cu");
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const ConvShape s = conv::conv_shape(problem);
    const std::string threads = "(BM // TM) * (BN // TN)";
    SearchSpace::Builder b;
    const Value bn_default = s.K <= 32 ? 32 : 64;
    b.param("BM", {32, 64, 128, 256}, 128)
        .param("BN", {32, 64, 128, 256}, bn_default)
        .param("BK", {8, 16, 32}, 16)
        .param("TM", {4, 8}, 8)
        .param("TN", {4, 8}, 4)
        .param("VEC", {1, 2, 4}, 4)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, default_split(s, 128, bn_default, 16, device))
        .param("GROUP_M", {1, 8}, 8)
        .param("ITER", {0, 1}, default_iter(s))
        .param("SMALL_C", small_c_values(s))
        .constraint(threads + " % 32 == 0")
        .constraint("32 <= " + threads + " <= " + max_threads(device))
        .constraint("2 * BK * (BM + BN + 8) * 4 <= " + std::to_string(gemm::smem_limit(device)))
        .constraint("registers: TM*TN + TM + TN + staging <= 160",
                    [](const Config& c) { return simt_register_estimate(c) <= 160; })
        .constraint("registers: (estimate + 24) * threads <= 65536", [](const Config& c) {
          const Value t = (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]);
          return (simt_register_estimate(c) + 24) * t <= 65536;
        })
        .constraint(split_k_rule(s, conv::small_c_applies(s)))
        .constraint("ITER = 1: threads a multiple of the chunks per row, <= 8 chunks per thread",
                    precomputed_rule(s));
    return b.build();
  }

 protected:
  std::vector<std::string> dtypes() const override { return {"f32"}; }
  bool structure_ok(const ConvShape&, const Config& c, std::string* why) const override {
    const Value bm = c["BM"], bn = c["BN"], tm = c["TM"], tn = c["TN"];
    if (tm % 4 != 0 || tn % 4 != 0) return reject(why, "TM and TN must be multiples of 4");
    if (bm % tm != 0 || bn % tn != 0) return reject(why, "BM/BN must be multiples of TM/TN");
    const Value t = threads(c);
    if (t % 32 != 0 || t > 1024)
      return reject(why, "(BM/TM)*(BN/TN) = " + std::to_string(t) +
                             " threads is not a multiple of 32 up to 1024");
    if (!is_pow2(c["VEC"]) || c["VEC"] > 4) return reject(why, "VEC must be 1, 2 or 4");
    return true;
  }
  Value threads(const Config& c) const override {
    return (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]);
  }
  std::int64_t smem_bytes(const ConvShape&, const Config& c) const override {
    return 2 * c["BK"] * (c["BM"] + c["BN"] + 8) * 4;
  }
  Value max_copy_elems(const ConvShape&, const Config& c) const override { return c["VEC"]; }
};

// ---------------------------------------------------------------------------------------
// conv2d_wgmma

/// Smallest of 64, 128, 256 covering `value` (256 when larger): the useful wgmma tile.
Value wgmma_cover(std::int64_t value) { return std::min<Value>(256, gemm::tile_cover(value, 64)); }

class Conv2dWgmmaTemplate final : public ConvTemplateBase {
 public:
  std::string name() const override { return "conv2d_wgmma"; }
  std::string description() const override {
    return "f16/bf16 conv2d as implicit GEMM on Hopper tensor cores (sm_90a wgmma.mma_async "
           "from 128B-swizzled smem descriptors, NHWC rows gathered by cp.async with zero "
           "fill, cp.async multistage pipeline, 1-3 consumer warpgroups (64-256-row tiles), "
           "stride/pad/dilation, precomputed or analytic offsets, wgmma batch issued before "
           "or after the gather, persistent blocks prefetching the next tile during the "
           "epilogue, a producer warpgroup gathering into an mbarrier ring, split-K through "
           "a workspace or across a thread-block cluster (partial tiles summed through "
           "distributed shared memory), bias+ReLU, direct or smem-staged epilogue; C a "
           "multiple of 8)";
  }
  const std::string& source() const override {
    return embedded_source("conv/conv2d_wgmma.cu");
  }
  /// wgmma exists only in the architecture-specific sm_90a target.
  std::string target_arch(const Device&, const Config&) const override { return "sm_90a"; }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    device.check_runs(target_arch(device, Config()), "template " + name());
    const ConvShape s = conv::conv_shape(problem);
    const std::int64_t limit = gemm::smem_limit(device);
    const std::int64_t sms = device.sm_count > 0 ? device.sm_count : 132;
    // Defaults, from the 12-trial tunings of the 23 ResNet-50 layers at batch 32 on the H200
    // (benchmarks/results/2026-12-01-h200/session4/call4): no winner split K, and the winner
    // was the widest 128-row tile that still gives at least ~0.7 of a wave of blocks.
    // - BN: as many output channels as K needs (<= 256; <= 128 for reductions of <= 2 k
    //   tiles, which cannot pipeline inside a block), halved while 128 x BN tiles number
    //   fewer than 0.7 x SMs (M = 6272, K = 256: 98 tiles of 128 x 128; M = 1568, K = 512:
    //   104 of 128 x 64). Split-K only when even 128 x 64 tiles are that few.
    // - WGS = 1 for 128 x 128 tiles that fit in one wave (one 128-thread block per SM, each
    //   warpgroup two 64-row wgmma per k step, as the 3x3 / 256-channel winners).
    // - STAGES: as many as fit up to 6 when the tiles fit in one wave (one block per SM
    //   anyway); otherwise 64-wide tiles stop at 4 so that two blocks share an SM; never more
    //   than the k tiles + 1 of a split.
    // - ITER = 0 for reductions of <= 2 k tiles (precomputed origins are not amortized).
    const Value bk = 64;
    Value bm = 128;
    const std::int64_t all_k_tiles = (s.gemm_k() + bk - 1) / bk;
    Value bn = all_k_tiles <= 2 ? std::min<Value>(128, wgmma_cover(s.K)) : wgmma_cover(s.K);
    auto tiles = [&](Value m, Value n) {
      return (s.pixels() + m - 1) / m * ((s.K + n - 1) / n);
    };
    while (bn > 64 && tiles(bm, bn) * 10 < sms * 7) bn /= 2;
    const Value split =
        tiles(bm, bn) * 10 < sms * 7 ? default_split(s, bm, bn, bk, device) : 1;
    // - CLUSTER_K = 2 with 128 x 128 tiles instead of 128 x 64 ones for long reductions
    //   (>= 64 k tiles) whose 128 x 128 tiles, doubled, make 0.7-1 wave: the stage-4 3x3
    //   layers (M = 1568, K = 512, R*S*C = 4608) ran 294-297 TFLOP/s that way against 265-270
    //   for 104 tiles of 128 x 64 (results/2026-12-01-h200/session6, call 3); the 1x1 layer of
    //   the same M and K (R*S*C = 2048, 32 k tiles) lost (257 against 273).
    Value cluster_k = 1;
    if (split == 1 && bn == 64 && all_k_tiles >= 64 && tiles(bm, 128) * 2 <= sms &&
        tiles(bm, 128) * 2 * 10 >= sms * 7) {
      bn = 128;
      cluster_k = 2;
    }
    const bool one_wave = tiles(bm, bn) * split * cluster_k <= sms;
    // (the cluster default keeps two warpgroups, as measured)
    Value wgs = bn == 128 && one_wave && cluster_k == 1 ? 1 : 2;
    // - BM = 192 (three warpgroups of 64 rows) where its tiles quantize into waves better:
    //   ResNet-50's M = 25088 and 6272 are 196 and 49 tiles of 128 rows, i.e. 1.48 and 0.74
    //   waves on 132 SMs, but 131 and 33 tiles of 192 rows. Taken when the tile area an SM
    //   computes in the busiest wave position (waves x BM x BN) drops by >= 1/8; BN = 256
    //   where it is no worse by that measure than 128 (fewer, wider tiles: 192 x 256 ran
    //   9-18 % faster than 192 x 128 on three such 1x1 layers, 35 % slower where it halved
    //   the tiles of a single wave; results/2026-12-01-h200/session10/call1).
    // - Also 192 rows where that area ties over >= 4 waves (M = 100352) for tiles that reduce
    //   >= 4 k tiles, 128 channels wide or 64 behind a wider filter, as persistent blocks
    //   (PERSIST 1: the next tile's first copies land during the epilogue): s1_3x3 282
    //   against 236-244 TFLOP/s, s2_1x1_256_128 257-262 against 218 (session10/call3); the
    //   1x1 over 64 channels lost (s1_1x1_256_64 168 against 176, session10/call4).
    // - And 192 x 128 tiles split over a 2-CTA cluster for filters wider than 1x1 whose
    //   128 x 128 tiles make one partial wave and whose 192-row pairs still fit one: M = 6272
    //   3x3 (98 tiles -> 66 x 2 CTAs) 379-380 against 299-335 TFLOP/s (session10/call3).
    Value persist = 0;
    auto busiest = [&](Value m, Value n) { return (tiles(m, n) + sms - 1) / sms * m * n; };
    if (split == 1 && cluster_k == 1) {
      const Value bn3 = bn >= 256 && busiest(192, 256) <= busiest(192, 128) ? 256 : 128;
      if (bn3 <= wgmma_cover(s.K) && busiest(192, bn3) * 8 <= busiest(bm, bn) * 7) {
        bm = 192;
        bn = bn3;
        wgs = 3;
      } else if ((bn == 128 || (bn == 64 && (s.R > 1 || s.S > 1))) && all_k_tiles >= 4 &&
                 tiles(bm, bn) >= 4 * sms &&
                 busiest(192, bn) <= busiest(bm, bn)) {
        bm = 192;
        wgs = 3;
        persist = 1;
      } else if ((s.R > 1 || s.S > 1) && bn == 128 && one_wave && all_k_tiles >= 32 &&
                 tiles(192, 128) * 2 <= sms && 192 * 128 / 2 * 8 <= busiest(bm, bn) * 7) {
        bm = 192;
        wgs = 3;
        cluster_k = 2;
      }
    }
    // - EPI = 1 (staged, 16-byte row stores) wherever K % 8 == 0: first the winner on 9 of 13
    //   1x1 layers (session 4), then on 3x3 layers too once 192-row tiles came (442 against
    //   347-351 TFLOP/s at 28x28; 335 against 299-302 for 128 x 128 at 14x14; session10).
    const Value epi = s.K % 8 == 0 ? 1 : 0;
    // Stages fit beside what a persistent block keeps apart from them (its staged output
    // tile: the next tile's first copies land during the epilogue); k tiles are counted per
    // split or cluster rank.
    const std::int64_t k_tiles = all_k_tiles / split / cluster_k;
    const std::int64_t beside = persist > 0 && epi != 0 ? bm * (bn * 2 + 16) : 0;
    Value stages = bn == 64 && !one_wave ? 4 : 6;
    while (stages > 3 &&
           (stages * (bm + bn) * bk * 2 + beside + 1024 > limit || stages > k_tiles + 1))
      --stages;
    const Value iter = all_k_tiles <= 2 ? 0 : 1;
    const std::int64_t gemm_k = s.gemm_k();
    SearchSpace::Builder b;
    b.param("BM", {64, 128, 192, 256}, bm)
        .param("BN", {64, 128, 256}, bn)
        .param("BK", {64, 128}, bk)
        .param("WGS", {1, 2, 3}, wgs)
        .param("STAGES", {3, 4, 5, 6}, stages)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, split)
        .param("GROUP_M", {1, 4, 8, 16}, 8)
        .param("ITER", {1, 0}, iter)
        .param("EPI", {0, 1}, epi)
        .param("LOOP", {1, 0}, 1)
        .param("PERSIST", {0, 1, 2, 3}, persist)
        .param("CLUSTER_K", {1, 2, 4}, cluster_k)
        .param("PRODUCER", {0, 1, 2}, 0)
        .constraint("BM % (64 * WGS) == 0")
        // A k-split cluster replaces SPLIT_K's workspace; every rank gets at least one k tile.
        .constraint("CLUSTER_K == 1 or (SPLIT_K == 1 and PERSIST == 0)")
        // A producer warpgroup gathers for non-persistent, non-cluster blocks only.
        .constraint("PRODUCER == 0 or (PERSIST == 0 and CLUSTER_K == 1)")
        // Three consumer warpgroups beside a producer get 128 registers each (512 threads).
        .constraint("PRODUCER == 0 or WGS < 3 or BN <= 128")
        .constraint("CLUSTER_K * BK < " + std::to_string(s.gemm_k()) + " + BK")
        // Persistent blocks run the LOOP = 1 pipeline without split-K; PERSIST blocks per SM
        // is also the register bound (__launch_bounds__ minimum): accumulators + ~64 each.
        .constraint("PERSIST == 0 or (SPLIT_K == 1 and LOOP == 1)")
        .constraint("PERSIST <= 1 or PERSIST * WGS * ((BM // WGS) * BN // 128 + 64) <= 512")
        .constraint("shared memory (PERSIST with EPI = 1: staging after the stages; PRODUCER: "
                    "+128 bytes of mbarriers) <= " + std::to_string(limit),
                    [s, limit](const Config& c) {
                      const Value producer = c.has("PRODUCER") ? c["PRODUCER"] : 0;
                      return wgmma_smem_bytes(s, c) + (producer > 0 ? 128 : 0) <= limit;
                    })
        .constraint("(BM // WGS) * BN <= 16384")  // at most 128 fp32 accumulators per thread
        .constraint("STAGES * (BM + BN) * BK * 2 + 1024 <= " + std::to_string(limit))
        .constraint(split_k_rule(s, false))
        // Wider tiles than the output channels (or a second 64 k columns past R*S*C) only pad.
        .constraint("BN <= " + std::to_string(wgmma_cover(s.K)))
        .constraint("BK <= " + std::to_string(gemm_k <= 64 ? 64 : 128));
    return b.build();
  }

  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    check_problem(problem);
    const ConvShape s = conv::conv_shape(problem);
    if (s.C % 8 != 0)
      return reject(why, "C = " + std::to_string(s.C) +
                             " is not a multiple of 8: activation rows are gathered in 16-byte "
                             "chunks of 8 channels of one filter tap (use conv2d_mma)");
    if (!structure_ok(s, config, why)) return false;
    if (config["SPLIT_K"] < 1 || config["SPLIT_K"] > 65535)
      return reject(why, "SPLIT_K must be in [1, 65535]");
    if (config["ITER"] != 0 && config["ITER"] != 1)
      return reject(why, "ITER must be 0 (analytic offsets) or 1 (precomputed)");
    if (config["EPI"] != 0 && config["EPI"] != 1)
      return reject(why, "EPI must be 0 (direct stores) or 1 (staged through shared memory)");
    if (config.has("LOOP") && config["LOOP"] != 0 && config["LOOP"] != 1)
      return reject(why, "LOOP must be 1 (wgmma batch before the gather) or 0 (gather first)");
    if (const std::string v = gemm::cluster_k_violation(config, "PERSIST"); !v.empty())
      return reject(why, v);
    if (config.has("PRODUCER")) {
      const Value producer = config["PRODUCER"];
      if (producer < 0 || producer > 2)
        return reject(why, "PRODUCER = " + std::to_string(producer) + " must be 0, 1 or 2");
      if (producer > 0 && ((config.has("PERSIST") && config["PERSIST"] != 0) ||
                           gemm::cluster_k_of(config) != 1))
        return reject(why, "PRODUCER = " + std::to_string(producer) +
                               " (producer warpgroup) needs PERSIST = 0 and CLUSTER_K = 1");
    }
    if (config.has("PERSIST")) {
      const Value persist = config["PERSIST"];
      if (persist < 0 || persist > 3)
        return reject(why, "PERSIST = " + std::to_string(persist) + " must be in [0, 3]");
      if (persist > 0 && config["SPLIT_K"] != 1)
        return reject(why, "PERSIST = " + std::to_string(persist) +
                               " (persistent blocks) needs SPLIT_K = 1");
      if (persist > 0 && config.has("LOOP") && config["LOOP"] != 1)
        return reject(why, "PERSIST = " + std::to_string(persist) +
                               " (persistent blocks) runs the LOOP = 1 pipeline");
      const Value wgs = config["WGS"];
      if (persist > 1 &&
          persist * wgs * ((config["BM"] / wgs) * config["BN"] / 128 + 64) > 512)
        return reject(why, "PERSIST = " + std::to_string(persist) +
                               " blocks per SM leave too few registers for " +
                               std::to_string((config["BM"] / wgs) * config["BN"] / 128) +
                               " accumulators per thread");
    }
    return true;
  }

  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    require_implementable(problem, config);
    const ConvShape s = conv::conv_shape(problem);
    LaunchPlan plan = conv::conv_launch_plan(
        s,
        {name(), config["BM"], config["BN"], config["SPLIT_K"], false,
         static_cast<unsigned>(threads(config)), static_cast<unsigned>(smem_bytes(s, config))},
        device);
    gemm::apply_cluster_k(config, plan);
    // Persistent blocks: at most PERSIST per SM, each striding over the tiles.
    if (config.has("PERSIST") && config["PERSIST"] > 0) {
      const std::int64_t sms = device.sm_count > 0 ? device.sm_count : 132;
      plan.steps[0].grid[0] = static_cast<unsigned>(
          std::min<std::int64_t>(plan.steps[0].grid[0], config["PERSIST"] * sms));
    }
    return plan;
  }

 protected:
  std::vector<std::string> dtypes() const override { return {"f16", "bf16"}; }
  /// The static_asserts of conv2d_wgmma.cu / gemm_wgmma.cuh, with reasons naming the value.
  bool structure_ok(const ConvShape&, const Config& c, std::string* why) const override {
    const Value bm = c["BM"], bn = c["BN"], bk = c["BK"], wgs = c["WGS"];
    if (wgs < 1 || bm % (64 * wgs) != 0)
      return reject(why, "BM = " + std::to_string(bm) + " must be a multiple of 64 * WGS (" +
                             std::to_string(wgs) + " warpgroups of 64-row wgmma)");
    if (bn != 64 && bn != 128 && bn != 256)
      return reject(why, "BN = " + std::to_string(bn) + " must be 64, 128 or 256 (wgmma N)");
    if (bk != 64 && bk != 128)
      return reject(why, "BK = " + std::to_string(bk) +
                             " must be 64 or 128 (128-byte swizzle rows)");
    if ((bm / wgs) * bn > 16384)
      return reject(why, "(BM / WGS) * BN = " + std::to_string((bm / wgs) * bn) +
                             " exceeds 128 fp32 accumulators per thread");
    if (c["STAGES"] < 3) return reject(why, "STAGES must be >= 3");
    if (wgs >= 3 && bn > 128 && c.has("PRODUCER") && c["PRODUCER"] > 0)
      return reject(why, "BN = " + std::to_string(bn) + " with WGS = " + std::to_string(wgs) +
                             " and a producer warpgroup: 512 threads leave 128 registers per "
                             "consumer thread, too few for " + std::to_string(bn / 2) +
                             " accumulators (BN <= 128)");
    return true;
  }
  Value threads(const Config& c) const override {
    return 128 * (c["WGS"] + (c.has("PRODUCER") && c["PRODUCER"] > 0 ? 1 : 0));
  }
  /// The stages the main loop touches plus 1 KiB that lets the kernel align them to 1024
  /// bytes. k tile t of a split goes to stage t % STAGES, so a split of fewer k tiles than
  /// STAGES uses only that many (1x1 over 64 channels: one stage, so more blocks fit per SM).
  std::int64_t smem_bytes(const ConvShape& s, const Config& c) const override {
    return wgmma_smem_bytes(s, c);
  }
  /// See smem_bytes (static: the space's shared-memory constraint calls it).
  static std::int64_t wgmma_smem_bytes(const ConvShape& s, const Config& c) {
    const Value cluster_k = gemm::cluster_k_of(c);
    const Value splits = std::max<Value>(1, cluster_k > 1 ? cluster_k : c["SPLIT_K"]);
    const std::int64_t k_tiles = (s.gemm_k() + c["BK"] - 1) / c["BK"];
    const std::int64_t per_split = (k_tiles + splits - 1) / splits;
    const std::int64_t stages = std::max<std::int64_t>(1, std::min<std::int64_t>(c["STAGES"], per_split));
    const std::int64_t pipeline = stages * (c["BM"] + c["BN"]) * c["BK"] * 2;
    // EPI = 1 stages the output tile (BM rows of BN * 2 + 16 bytes) in the same memory, or
    // with PERSIST after the stages (the next tile's first copies land during the epilogue).
    const std::int64_t staged = c["EPI"] != 0 ? c["BM"] * (c["BN"] * 2 + 16) : 0;
    if (c.has("PERSIST") && c["PERSIST"] > 0) return pipeline + staged + 1024;
    return std::max({pipeline, staged, gemm::cluster_k_partial_bytes(c)}) + 1024;
  }
  Value max_copy_elems(const ConvShape&, const Config&) const override { return 8; }
};

}  // namespace

std::shared_ptr<KernelTemplate> make_conv2d_mma_template() {
  return std::make_shared<Conv2dMmaTemplate>();
}

std::shared_ptr<KernelTemplate> make_conv2d_simt_template() {
  return std::make_shared<Conv2dSimtTemplate>();
}

std::shared_ptr<KernelTemplate> make_conv2d_wgmma_template() {
  return std::make_shared<Conv2dWgmmaTemplate>();
}

}  // namespace ktune
