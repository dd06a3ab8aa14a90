// The "layernorm" template (templates/layernorm/layernorm.cu): LayerNorm forward with gamma /
// beta (saving mean and rstd per row) and RMSNorm forward with gamma (saving rstd), over a
// row-major [rows, hidden] tensor, hidden 64..65536, f32 / f16 / bf16 I/O, fp32 statistics,
// eps = 1e-5. Problem shape convention: "rows x hidden"; attribute norm=layernorm|rmsnorm.
// Tunables: threads per row and per block, vector width, row kept in registers / shared
// memory / re-read, two-pass vs Welford statistics, streaming cache hints, a row split over a
// thread-block cluster (distributed shared memory), several rows per thread group with the next
// row prefetched and gamma / beta held in registers or shared memory, rows streamed through
// a ring of STAGES shared-memory tiles by bulk asynchronous copies (ROW_MODE 3), and the
// resident warps per SM asked of the compiler (__launch_bounds__).
#include <algorithm>
#include <cmath>

#include "builtin_templates.h"
#include "host_dtype.h"
#include "ktune/error.h"
#include "templates/common/memory_bound_support.h"

namespace ktune {

namespace {

using memory_bound::ceil_div;

/// The epsilon added to the variance (as torch's default).
constexpr double kEps = 1e-5;
/// Smallest and largest hidden size the template accepts.
constexpr std::int64_t kMinHidden = 64, kMaxHidden = 65536;
/// Register-resident row: the held vectors (packed: 16-bit types two per register) on top of
/// ~32 registers of bookkeeping.
constexpr std::int64_t kBookkeepingRegs = 32;
/// Registers the estimate may run over a cap and still be in the space (see RegisterRow::fits).
constexpr std::int64_t kEstimateSlack = 8;
/// Rows per group (RPG): powers of two and the steps between them, so that a default can fill
/// the last wave of blocks.
const std::vector<Value> kRpgDomain = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
/// The largest RPG the register-mode defaults pick (measured up to 16).
constexpr Value kMaxDefaultRpg = 16;
/// Registers of one SM, and the most resident threads per SM (sm_80 / sm_90).
constexpr std::int64_t kRegsPerSm = 65536, kThreadsPerSm = 2048;
/// Static shared memory of the kernel (reduction scratch), kept out of the dynamic budget.
constexpr std::int64_t kStaticSmemReserve = 1024;

/// The row's mean and variance in double (two-pass).
std::pair<double, double> row_moments(const HostBuffer& x, std::size_t base, std::int64_t h) {
  double sum = 0;
  for (std::int64_t i = 0; i < h; ++i) sum += read_element(x, base + static_cast<std::size_t>(i));
  const double mean = sum / static_cast<double>(h);
  double sq = 0;
  for (std::int64_t i = 0; i < h; ++i) {
    const double d = read_element(x, base + static_cast<std::size_t>(i)) - mean;
    sq += d * d;
  }
  return {mean, sq / static_cast<double>(h)};
}

/// LayerNorm buffers: x, gamma, beta, y, mean, rstd. RMSNorm: x, gamma, y, rstd.
class LayernormWorkload final : public Workload {
 public:
  LayernormWorkload(std::int64_t rows, std::int64_t hidden, DType dtype, bool rms)
      : rows_(rows), hidden_(hidden), dtype_(dtype), rms_(rms) {}

  std::vector<BufferSpec> buffers() const override {
    const auto n = static_cast<std::size_t>(rows_ * hidden_);
    const auto h = static_cast<std::size_t>(hidden_), r = static_cast<std::size_t>(rows_);
    if (rms_)
      return {{"x", dtype_, n, Role::input, 0}, {"gamma", dtype_, h, Role::input, 0},
              {"y", dtype_, n, Role::output, 0}, {"rstd", DType::f32, r, Role::output, 0}};
    return {{"x", dtype_, n, Role::input, 0},       {"gamma", dtype_, h, Role::input, 0},
            {"beta", dtype_, h, Role::input, 0},    {"y", dtype_, n, Role::output, 0},
            {"mean", DType::f32, r, Role::output, 0}, {"rstd", DType::f32, r, Role::output, 0}};
  }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    check(buffers);
    // Rows of random sign and wide magnitude; every 4th row has a large mean and a small
    // spread (catches E[x^2] - E[x]^2 cancellation).
    fill_wide_magnitude(buffers[0], seed, -6, 3);
    FillRng rng(seed ^ 0x9e3779b97f4a7c15ull);
    const double center = dtype_ == DType::f32 ? 256.0 : (dtype_ == DType::f16 ? 64.0 : 16.0);
    for (std::int64_t r = 3; r < rows_; r += 4)
      fill_uniform_around(buffers[0], rng, static_cast<std::size_t>(r * hidden_),
                          static_cast<std::size_t>(hidden_), center, 0.5);
    fill_uniform_around(buffers[1], rng, 0, static_cast<std::size_t>(hidden_), 1.0, 0.5);
    if (!rms_) fill_wide_magnitude(buffers[2], seed ^ 0x2545f4914f6cdd1dull, -6, -1);
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    check(buffers);
    const HostBuffer& x = buffers[0];
    const HostBuffer& gamma = buffers[1];
    HostBuffer& y = buffers[rms_ ? 2 : 3];
    for (std::int64_t r = 0; r < rows_; ++r) {
      const auto base = static_cast<std::size_t>(r * hidden_);
      double mean = 0, rstd;
      if (rms_) {
        double sq = 0;
        for (std::int64_t i = 0; i < hidden_; ++i) {
          const double v = read_element(x, base + static_cast<std::size_t>(i));
          sq += v * v;
        }
        rstd = 1.0 / std::sqrt(sq / static_cast<double>(hidden_) + kEps);
        write_element(buffers[3], static_cast<std::size_t>(r), rstd);
      } else {
        const auto [m, var] = row_moments(x, base, hidden_);
        mean = m;
        rstd = 1.0 / std::sqrt(var + kEps);
        write_element(buffers[4], static_cast<std::size_t>(r), mean);
        write_element(buffers[5], static_cast<std::size_t>(r), rstd);
      }
      for (std::int64_t i = 0; i < hidden_; ++i) {
        const auto c = static_cast<std::size_t>(i);
        const double v = (read_element(x, base + c) - mean) * rstd * read_element(gamma, c) +
                         (rms_ ? 0.0 : read_element(buffers[2], c));
        write_element(y, base + c, v);
      }
    }
  }

  Tolerance tolerance(const BufferSpec& output) const override {
    Tolerance t;
    if (output.name == "mean") {
      t.rel_l2 = 1e-4;
    } else if (output.name == "rstd") {
      t.rel_l2 = 2e-3;
    } else {  // y: fp32 statistics (mean error of large-mean rows) plus output rounding
      t.rel_l2 = dtype_ == DType::f32 ? 2e-3 : (dtype_ == DType::f16 ? 4e-3 : 2e-2);
    }
    return t;
  }

  double bytes() const override {
    const double s = static_cast<double>(dtype_size(dtype_));
    const double n = static_cast<double>(rows_) * static_cast<double>(hidden_);
    const double params = (rms_ ? 1.0 : 2.0) * static_cast<double>(hidden_) * s;
    const double stats = (rms_ ? 1.0 : 2.0) * 4.0 * static_cast<double>(rows_);
    return 2.0 * n * s + params + stats;
  }

  double reference_cost() const override {
    return 3.0 * static_cast<double>(rows_) * static_cast<double>(hidden_);  // 2 passes + y
  }

  /// Above kDeviceReferenceCost: ref_norm, one block per row, two-pass statistics in double.
  std::optional<DeviceReference> device_reference() const override {
    if (reference_cost() <= memory_bound::kDeviceReferenceCost) return std::nullopt;
    DeviceReference ref =
        memory_bound::reference_program(dtype_, {std::string("-DREF_NORM=") + (rms_ ? "1" : "0")});
    const KernelArg none = KernelArg::i64(0);
    std::vector<KernelArg> args;
    if (rms_)
      args = {KernelArg::buf(0), KernelArg::buf(1), none, KernelArg::buf(2), none,
              KernelArg::buf(3)};
    else
      args = {KernelArg::buf(0), KernelArg::buf(1), KernelArg::buf(2), KernelArg::buf(3),
              KernelArg::buf(4), KernelArg::buf(5)};
    args.push_back(KernelArg::i64(hidden_));
    args.push_back(KernelArg::f64(kEps));
    ref.plan.steps.push_back(memory_bound::reference_step("ref_norm", rows_, 1, std::move(args)));
    return ref;
  }

 private:
  void check(const std::vector<HostBuffer>& host) const {
    memory_bound::check_host_buffers(*this, host, "layernorm");
  }

  std::int64_t rows_, hidden_;
  DType dtype_;
  bool rms_;
};

/// Register-mode geometry: what one thread holds for its part of a row.
struct RegisterRow {
  std::int64_t hidden, vec, tpr, threads, cluster, rpg, prefetch, params, min_warps, elem_bytes;
  bool rms;
  /// Vectors of the row each thread holds (its CTA holds hidden / cluster of the row).
  std::int64_t items() const { return ceil_div(hidden / cluster / vec, tpr); }
  /// 32-bit registers of one held vector.
  std::int64_t vector_regs() const { return ceil_div(vec * elem_bytes, 4); }
  /// The row (+ the prefetched next row, + gamma / beta with PARAMS 1), one register per held
  /// vector for its address / conversion temporaries (NVRTC spills rows of 32+ narrow vectors
  /// without it), plus bookkeeping.
  std::int64_t registers() const {
    const std::int64_t copies = 1 + prefetch + (params == 1 ? (rms ? 1 : 2) : 0);
    return items() * (vector_regs() * copies + 1) + kBookkeepingRegs;
  }
  /// The register cap of __launch_bounds__: 255, the whole file over THREADS, and with
  /// MIN_WARPS > 0 the file over MIN_WARPS warps.
  std::int64_t register_cap() const {
    std::int64_t cap = std::min<std::int64_t>(255, kRegsPerSm / threads);
    if (min_warps > 0) cap = std::min(cap, kRegsPerSm / (32 * min_warps));
    return cap;
  }
  /// Within the per-thread register budget, give or take the estimate's slack: the estimate
  /// runs a few registers high for packed 16-bit rows (ptxas fits LayerNorm f16 65536 over 8
  /// CTAs of 256 threads, row + prefetched row + 36 others, in 64 registers without spills; the
  /// estimate says 68), so configs up to kEstimateSlack over the cap stay in the space for the
  /// measurements to judge.
  bool fits() const { return registers() <= register_cap() + kEstimateSlack; }
  /// Resident blocks per SM: what MIN_WARPS asks for (the compiler then uses up to the cap),
  /// else what the estimated register count allows; within the thread and 32-block limits.
  std::int64_t blocks_per_sm() const {
    const std::int64_t by_regs = min_warps > 0 ? 32 * min_warps / threads
                                               : kRegsPerSm / (threads * (ceil_div(registers(), 8) * 8));
    return std::max<std::int64_t>(1, std::min({kThreadsPerSm / threads, std::int64_t{32}, by_regs}));
  }
};

/// The register-mode geometry of a config.
RegisterRow register_row(std::int64_t hidden, DType dtype, bool rms, const Config& c) {
  return {hidden,      c["VEC"],     c["TPR"],    c["THREADS"],  c["CLUSTER"],
          c["RPG"],    c["PREFETCH"], c["PARAMS"], c["MIN_WARPS"], static_cast<std::int64_t>(dtype_size(dtype)),
          rms};
}

/// Register-mode fit of a config.
bool registers_fit(std::int64_t hidden, DType dtype, bool rms, const Config& c) {
  return register_row(hidden, dtype, rms, c).fits();
}

/// Bytes of one CTA's part of a row, hidden / cluster elements (ROW_MODE 3: what one bulk copy
/// per row moves; PARAMS 2: the part of gamma, and of beta, that the CTA keeps).
std::int64_t slice_bytes(std::int64_t hidden, DType dtype, Value cluster) {
  return hidden / cluster * static_cast<std::int64_t>(dtype_size(dtype));
}

/// slice_bytes of a config.
std::int64_t slice_bytes(std::int64_t hidden, DType dtype, const Config& c) {
  return slice_bytes(hidden, dtype, c["CLUSTER"]);
}

/// PARAMS 2: the CTA's part of gamma (and beta for LayerNorm) in dynamic shared memory; 0 for
/// the other PARAMS values.
std::int64_t param_smem_bytes(std::int64_t hidden, DType dtype, bool rms, Value cluster,
                              Value params) {
  return params == 2 ? slice_bytes(hidden, dtype, cluster) * (rms ? 1 : 2) : 0;
}

/// param_smem_bytes of a config.
std::int64_t param_smem_bytes(std::int64_t hidden, DType dtype, bool rms, const Config& c) {
  return param_smem_bytes(hidden, dtype, rms, c["CLUSTER"], c["PARAMS"]);
}

/// ROW_MODE 3: the ring of `stages` tiles (`rows_per_block` slices each) after PARAMS 2's gamma
/// (and beta), which the kernel rounds up to 128 bytes.
std::int64_t ring_bytes(std::int64_t hidden, DType dtype, bool rms, Value cluster, Value params,
                        Value stages, Value rows_per_block) {
  const std::int64_t gamma_beta =
      (param_smem_bytes(hidden, dtype, rms, cluster, params) + 127) / 128 * 128;
  return gamma_beta + stages * rows_per_block * slice_bytes(hidden, dtype, cluster);
}

/// ring_bytes of a config.
std::int64_t ring_smem_bytes(std::int64_t hidden, DType dtype, bool rms, const Config& c) {
  return ring_bytes(hidden, dtype, rms, c["CLUSTER"], c["PARAMS"], c["STAGES"],
                    c["THREADS"] / c["TPR"]);
}

/// Blocks of a launch: one per RPG rows of a group, CLUSTER per row group.
std::int64_t grid_blocks(std::int64_t rows, const Config& c) {
  return ceil_div(rows, c["THREADS"] / c["TPR"] * c["RPG"]) * c["CLUSTER"];
}

/// Dynamic shared memory of a launch: ROW_MODE 1 rows, or PARAMS 2 gamma / beta.
std::int64_t dynamic_smem_bytes(std::int64_t hidden, DType dtype, bool rms, const Config& c);

/// Shared-memory-mode bytes: THREADS / TPR rows of hidden elements.
std::int64_t row_smem_bytes(std::int64_t hidden, DType dtype, const Config& c) {
  return c["THREADS"] / c["TPR"] * hidden * static_cast<std::int64_t>(dtype_size(dtype));
}

std::int64_t dynamic_smem_bytes(std::int64_t hidden, DType dtype, bool rms, const Config& c) {
  if (c["ROW_MODE"] == 1) return row_smem_bytes(hidden, dtype, c);
  if (c["ROW_MODE"] == 3) return ring_smem_bytes(hidden, dtype, rms, c);
  if (c["ROW_MODE"] == 0) return param_smem_bytes(hidden, dtype, rms, c);
  return 0;
}

class LayernormTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "layernorm"; }
  std::string op() const override { return "layernorm"; }
  std::string description() const override {
    return "LayerNorm (gamma, beta, saves mean/rstd) and RMSNorm forward over rows x hidden";
  }
  const std::string& source() const override { return embedded_source("layernorm/layernorm.cu"); }
  std::vector<std::string> dim_names() const override { return {"rows", "hidden"}; }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return {{"dtype", memory_bound::io_dtypes()}, {"norm", {"layernorm", "rmsnorm"}}};
  }
  void check_problem(const Problem& problem) const override {
    KernelTemplate::check_problem(problem);
    memory_bound::check_element_count(problem);
    const std::int64_t hidden = problem.dim("hidden");
    if (hidden < kMinHidden || hidden > kMaxHidden)
      throw Error(ErrorCode::unsupported, "problem " + problem.key() + ": hidden=" +
                                              std::to_string(hidden) + " is outside " +
                                              std::to_string(kMinHidden) + ".." +
                                              std::to_string(kMaxHidden));
  }
  Problem example_problem() const override {
    return Problem{"layernorm", {{"rows", 32768}, {"hidden", 4096}},
                   {{"dtype", "f16"}, {"norm", "layernorm"}}};
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const std::int64_t hidden = problem.dim("hidden"), rows = problem.dim("rows");
    const DType dtype = memory_bound::io_dtype(problem);
    const bool rms = problem.attr("norm") == "rmsnorm";
    const auto widths = memory_bound::vector_widths(dtype);
    const std::int64_t smem_limit =
        std::max(device.smem_per_block_optin, device.smem_per_block) - kStaticSmemReserve;
    // Thread-block clusters (CLUSTER > 1) and bulk copies (ROW_MODE 3) need sm_90.
    const bool before_sm90 = device.cc_major > 0 && device.cc_major < 9;

    // Default (benchmarks/NOTES.md, "third round"): widest vector dividing hidden, then
    // - short rows (<= 256 vectors): a warp (8..32 threads) per row with up to 8 vectors per
    //   lane, 256-thread blocks asked to keep 32 warps per SM, RPG rows per group with the next
    //   row prefetched and gamma / beta in shared memory, RPG as large as keeps >= 0.9 wave of
    //   blocks (one wave: no tail), streaming hints;
    // - rows of up to 64 KiB: 8..256 threads per row with up to 4 vectors per thread (as
    //   measured at 94-96 % of copy), 32 or 16 warps per SM;
    // - longer rows (and on sm_90 16-bit LayerNorm rows of 14-16 vectors of 8 per thread that
    //   split over 4 CTAs): a cluster of 2..8 CTAs per row, the first geometry whose registers fit
    //   of 256 threads at 24 warps per SM, 512 at 32 or 16, 1024 at 32; RPG filling the last
    //   wave, the next row prefetched, gamma / beta in shared memory, no streaming hints;
    //   16-bit LayerNorm streams that geometry through the shared-memory ring (ROW_MODE 3)
    //   with one-exchange statistics (STATS 1) instead where each CTA's part of the row splits
    //   evenly over its threads, or unevenly into 3.25-4 vectors per thread (bf16: only the
    //   14-16-vector rows above);
    // else the row in shared memory, else re-read; two-pass statistics otherwise.
    Value vec = 1;
    for (Value v : widths)
      if (hidden % v == 0) vec = v;
    const std::int64_t vectors = hidden / vec;
    const std::int64_t elem = static_cast<std::int64_t>(dtype_size(dtype));
    const std::int64_t sms = device.sm_count > 0 ? device.sm_count : 132;
    Value tpr = std::min<std::int64_t>(256, std::max<std::int64_t>(8, memory_bound::floor_pow2(vectors / 4)));
    Value threads = std::max<Value>(tpr, 256), cluster = 1, rpg = 1, prefetch = 0, params = 0;
    Value min_warps = 0, hint = 0, mode = 2, stats = 0;
    auto row_at = [&](Value t, Value th, Value c, Value r, Value pf, Value pa, Value mw) {
      return RegisterRow{hidden, vec, t, th, c, r, pf, pa, mw, elem, rms};
    };
    // Defaults keep 16 registers of margin under the cap (NVRTC spills LayerNorm at the
    // model's exact fit: gamma / beta / output conversions of a vector in flight).
    auto fits_with_margin = [](const RegisterRow& r) { return r.registers() + 16 <= r.register_cap(); };
    // RPG of the domain (>= 2 where rows allow) whose last wave of blocks is fullest: waves /
    // ceil(waves) largest, ties (within 0.01) to the larger RPG.
    auto pick_rpg = [&](Value groups_per_block, Value blocks_per_sm, Value blocks_per_group) {
      const double slots = static_cast<double>(sms * blocks_per_sm);
      Value best = 1;
      double best_fill = -1;
      for (Value r : kRpgDomain) {
        if (r == 1) continue;
        if (r > kMaxDefaultRpg) break;
        const double blocks = static_cast<double>(ceil_div(rows, groups_per_block * r) * blocks_per_group);
        if (blocks < 0.5 * slots) break;  // fewer than half the slots busy
        const double waves = blocks / slots;
        const double fill = waves / std::ceil(waves);
        if (fill >= best_fill - 0.01) best = r, best_fill = std::max(best_fill, fill);
      }
      return best;
    };
    // One CTA per row (the middle branch below), except 16-bit LayerNorm rows of 14-16 vectors
    // of 8 per thread on sm_90 that split over 4 CTAs, which take the cluster geometry of
    // longer rows (it comes out as 4 CTAs of 256 threads): 87.3-95.6 % of copy at 4096 x 28672
    // / 30720 / 32768 (f16 / bf16, H100), where one CTA per row ran 57.2-90.9 %
    // (results/2026-12-06-h100/session30). Rows that do not split over 4 (an odd number of
    // vectors, or 2 mod 4: other geometries, unmeasured) keep one CTA.
    const RegisterRow one_cta = row_at(tpr, threads, 1, 1, 0, 0, 0);
    const bool cluster_instead = !before_sm90 && !rms && elem == 2 && vec == 8 &&
                                 one_cta.items() >= 14 && one_cta.items() <= 16 &&
                                 hidden % (vec * 4) == 0;
    if (vectors <= 256) {
      tpr = std::min<std::int64_t>(32, std::max<std::int64_t>(8, memory_bound::floor_pow2(vectors / 4)));
      threads = 256, mode = 0, hint = 1;
      for (Value mw : {32, 24, 16}) {
        const RegisterRow probe = row_at(tpr, threads, 1, 2, 1, 2, mw);
        if (!fits_with_margin(probe)) continue;
        min_warps = mw;
        rpg = pick_rpg(threads / tpr, probe.blocks_per_sm(), 1);
        if (rpg > 1) prefetch = 1, params = 2;
        break;
      }
    } else if (hidden * elem <= 65536 && one_cta.fits() && !cluster_instead) {
      // The occupancy the first rounds measured at 94-96 % (4 blocks of 256 threads per SM at
      // <= 4 vectors per thread, else 2), now asked for explicitly: the packed row leaves the
      // compiler free to take 80-210 registers otherwise (NVRTC, sm_90), and these caps do
      // not spill.
      mode = 0;
      const Value items = one_cta.items();
      min_warps = items <= 4 ? 32 : 16;
      if (!row_at(tpr, threads, 1, 1, 0, 0, min_warps).fits()) min_warps = 0;
      // 16-bit rows of 13-16 vectors of 8 per thread (hidden 24584..32768) spill under the
      // 16-warp cap (8-376 bytes). Measured without it (H100, 4096 rows, % of copy):
      // RMSNorm 96.9-97.4 against 61.9-95.4 at hidden 28672 and 32768 (session 29 call 2),
      // and 94.3-96.8 against 91.6-96.6 at 25000 / 26624 (13 vectors; session 31 call 3);
      // LayerNorm 76.7 / 80.3 against 64.8 / 57.1 at 32768 (16 vectors), 72.6-73.6 against
      // 70.0-70.7 for bf16 at 29704 / 30696 (15), but f16 71.7 / 74.4 against 78.6 / 79.2
      // there and 71.9-76.3 against 84.2-89.6 at 28672 (14), so LayerNorm (here before
      // sm_90, or a row that does not split over 4 CTAs: cluster_instead) keeps the cap below
      // 16 vectors, f16 also at 15. Shorter rows and narrower vectors (measured neither way;
      // many do not spill) keep it too.
      const bool uncapped = rms ? items >= 13 : items >= 16 || (items == 15 && dtype == DType::bf16);
      if (elem == 2 && vec == 8 && uncapped) min_warps = 0;
    } else {
      const std::pair<Value, Value> shapes[] = {{256, 24}, {512, 32}, {512, 16}, {1024, 32}};
      for (const auto& [th, mw] : shapes) {
        if (before_sm90) break;  // no clusters: the row in shared memory, else re-read
        for (Value c : {2, 4, 8}) {
          if (hidden % (vec * c) != 0 || th * vec * c > hidden) continue;
          const RegisterRow probe = row_at(th, th, c, 2, 1, 2, mw);
          if (!fits_with_margin(probe)) continue;
          const Value r = pick_rpg(1, probe.blocks_per_sm(), c);
          const Value pa = r > 1 && param_smem_bytes(hidden, dtype, rms, c, 2) <= smem_limit ? 2 : 0;
          // No streaming hints: at [4096, 65536] every tuned winner (LayerNorm / RMSNorm, f16 /
          // f32) had CACHE_HINT 0, and the cluster defaults gained 3-5 points without them
          // (results/2026-12-01-h200/session6, calls 5-7).
          mode = 0, cluster = c, tpr = th, threads = th, rpg = r, prefetch = r > 1 ? 1 : 0;
          params = pa, min_warps = mw, hint = 0;
          // 16-bit LayerNorm: the same geometry streamed through the shared-memory ring with
          // one (mean, M2) exchange per row: 91.4-91.6 % of the copy at [4096, 65536] f16 on
          // two GPUs where this mode-0 two-pass default ran 89.2 % and 82.1 %
          // (results/2026-12-01-h200/session7, calls 3 and 6-7). Where the CTA's part of the
          // row does not split evenly over its threads, the ring wins or ties at 3.25 to 4
          // vectors per thread (H100, 4096 rows, % of copy): 4 CTAs, 3.5 / 3.75 (28672 /
          // 30720, f16 / bf16) 87.1-91.7 against mode 0's 86.4-90.3 (session30/call1);
          // 8 CTAs, 3.25 / 3.5 / 3.75 (53248 / 57344 / 61440), f16 only: 86.2-91.8 against
          // 85.9-90.3 (session32/calls 2-3); bf16 there lost, 81.1-88.4 against 84.7-89.1
          // (session32/call3). It lost at 2.25-2.75 (36864 / 40960 / 45056 f16): 68.0-78.7
          // against 76.3-82.2 (session31/call3, session32/call2). Elsewhere (under 3.25, over
          // 4: unmeasured) mode 0 stays. f32 and RMSNorm keep mode 0 (their ring is not
          // measured at this geometry; the tuner reaches it).
          const bool even_split = (vectors / c) % th == 0;
          const bool from_3_25_to_4_per_thread =
              4 * vectors >= 13 * c * th && vectors <= 4 * c * th;
          const bool uneven_ring =
              from_3_25_to_4_per_thread && (dtype == DType::f16 || cluster_instead);
          if (!rms && elem == 2 && r > 1 && (even_split || uneven_ring) &&
              slice_bytes(hidden, dtype, c) % 16 == 0 &&
              ring_bytes(hidden, dtype, rms, c, pa, 2, 1) <= smem_limit)
            mode = 3, stats = 1, prefetch = 0;
          break;
        }
        if (mode == 0 || mode == 3) break;
      }
      if (mode != 0 && mode != 3 && threads / tpr * hidden * elem <= smem_limit) mode = 1;
    }

    SearchSpace::Builder b;
    b.param("THREADS", {32, 64, 128, 256, 512, 1024}, threads)
        .param("TPR", {8, 16, 32, 64, 128, 256, 512, 1024}, tpr)
        .param("VEC", widths, vec)
        .param("ROW_MODE", {0, 1, 2, 3}, mode)
        .param("STATS", rms ? std::vector<Value>{0} : std::vector<Value>{0, 1}, stats)
        .param("CACHE_HINT", {0, 1}, hint)
        .param("CLUSTER", {1, 2, 4, 8}, cluster)
        .param("RPG", kRpgDomain, rpg)
        .param("PREFETCH", {0, 1}, prefetch)
        .param("PARAMS", {0, 1, 2}, params)
        .param("MIN_WARPS", {0, 16, 24, 32, 48, 64}, min_warps)
        .param("STAGES", {2, 3, 4, 6, 8}, 2);
    if (before_sm90)  // first, so that a config breaking it is told this reason
      b.constraint("CLUSTER == 1 and ROW_MODE != 3 on " + device.arch() +
                       " (thread-block clusters and bulk copies need sm_90)",
                   [](const Config& c) { return c["CLUSTER"] == 1 && c["ROW_MODE"] != 3; });
    b.constraint("TPR <= THREADS")
        .constraint("TPR * VEC * CLUSTER <= " + std::to_string(hidden))
        .constraint("VEC * CLUSTER divides hidden=" + std::to_string(hidden),
                    [hidden](const Config& c) { return hidden % (c["VEC"] * c["CLUSTER"]) == 0; })
        .constraint("CLUSTER == 1 or ((ROW_MODE == 0 or ROW_MODE == 3) and TPR == THREADS)")
        .constraint("RPG == 1 or ROW_MODE == 0 or ROW_MODE == 3")
        .constraint("PREFETCH == 0 or (RPG > 1 and ROW_MODE == 0)")
        .constraint("STAGES == 2 or ROW_MODE == 3")
        .constraint("PARAMS == 0 or RPG > 1")
        .constraint("MIN_WARPS == 0 or (MIN_WARPS * 32 >= THREADS and (MIN_WARPS * 32) % THREADS == 0)")
        .constraint("MIN_WARPS <= 48 or ROW_MODE == 0 or ROW_MODE == 3")
        .constraint("ROW_MODE 0 / 3: the row fits in registers",
                    [hidden, dtype, rms](const Config& c) {
                      return (c["ROW_MODE"] != 0 && c["ROW_MODE"] != 3) || registers_fit(hidden, dtype, rms, c);
                    })
        .constraint("ROW_MODE 3: a CTA's part of a row is a multiple of 16 bytes (bulk copies)",
                    [hidden, dtype](const Config& c) { return c["ROW_MODE"] != 3 || slice_bytes(hidden, dtype, c) % 16 == 0; })
        .constraint("ROW_MODE 3: the ring (+ PARAMS 2) fits in shared memory (" + std::to_string(smem_limit) + " B)",
                    [hidden, dtype, rms, smem_limit](const Config& c) {
                      return c["ROW_MODE"] != 3 || ring_smem_bytes(hidden, dtype, rms, c) <= smem_limit;
                    })
        .constraint("ROW_MODE 1: rows fit in shared memory (" + std::to_string(smem_limit) + " B)",
                    [hidden, dtype, smem_limit](const Config& c) {
                      return c["ROW_MODE"] != 1 || row_smem_bytes(hidden, dtype, c) <= smem_limit;
                    })
        .constraint("PARAMS 2: gamma / beta fit in shared memory (" + std::to_string(smem_limit) + " B)",
                    [hidden, dtype, rms, smem_limit](const Config& c) {
                      return param_smem_bytes(hidden, dtype, rms, c) <= smem_limit;
                    });
    if (device.max_threads_per_block > 0)
      b.constraint("THREADS <= " + std::to_string(device.max_threads_per_block));
    return b.build();
  }

  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    const std::int64_t hidden = problem.dim("hidden"), rows = problem.dim("rows");
    if (hidden % config["VEC"] != 0) {
      if (why) *why = "VEC=" + std::to_string(config["VEC"]) + " does not divide hidden=" +
                      std::to_string(hidden);
      return false;
    }
    if (hidden % (config["VEC"] * config["CLUSTER"]) != 0) {
      if (why) *why = "VEC * CLUSTER = " + std::to_string(config["VEC"] * config["CLUSTER"]) +
                      " does not divide hidden=" + std::to_string(hidden);
      return false;
    }
    const DType dtype = memory_bound::io_dtype(problem);
    if ((config["ROW_MODE"] == 0 || config["ROW_MODE"] == 3) &&
        !registers_fit(hidden, dtype, problem.attr("norm") == "rmsnorm", config)) {
      if (why) *why = "hidden=" + std::to_string(hidden) + " does not fit in registers with " +
                      config.str();
      return false;
    }
    if (config["ROW_MODE"] == 3 && slice_bytes(hidden, dtype, config) % 16 != 0) {
      if (why) *why = "ROW_MODE 3 copies whole 16-byte units: hidden=" + std::to_string(hidden) +
                      " / CLUSTER=" + std::to_string(config["CLUSTER"]) + " is " +
                      std::to_string(slice_bytes(hidden, dtype, config)) + " bytes";
      return false;
    }
    if (grid_blocks(rows, config) > memory_bound::kMaxGridX) {
      if (why) *why = "rows=" + std::to_string(rows) + " needs more than 2^31-1 blocks";
      return false;
    }
    return true;
  }

  std::vector<std::string> problem_defines(const Problem& problem) const override {
    check_problem(problem);
    return {memory_bound::dtype_define(problem),
            std::string("-DKT_NORM=") + (problem.attr("norm") == "rmsnorm" ? "1" : "0"),
            "-DKT_HIDDEN=" + std::to_string(problem.dim("hidden"))};
  }

  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device&) const override {
    require_implementable(problem, config);
    const std::int64_t rows = problem.dim("rows"), hidden = problem.dim("hidden");
    const bool rms = problem.attr("norm") == "rmsnorm";
    LaunchStep step;
    step.entry = "layernorm_fwd";
    step.grid_dependency_wait = true;  // layernorm.cu: kt_grid_dependency_wait() comes first
    const std::int64_t blocks = grid_blocks(rows, config);
    if (blocks > memory_bound::kMaxGridX)
      throw Error(ErrorCode::unsupported, "layernorm: " + config.str() + " cannot cover rows=" +
                                              std::to_string(rows));
    step.grid[0] = static_cast<unsigned>(blocks);  // CLUSTER > 1: the kernel's cluster dims
    step.block[0] = static_cast<unsigned>(config["THREADS"]);
    step.dynamic_smem = static_cast<unsigned>(
        dynamic_smem_bytes(hidden, memory_bound::io_dtype(problem), rms, config));
    const KernelArg none = KernelArg::i64(0);
    if (rms)
      step.args = {KernelArg::buf(0), KernelArg::buf(1), none, KernelArg::buf(2),
                   none, KernelArg::buf(3), KernelArg::i64(rows), KernelArg::f32(kEps)};
    else
      step.args = {KernelArg::buf(0), KernelArg::buf(1), KernelArg::buf(2), KernelArg::buf(3),
                   KernelArg::buf(4), KernelArg::buf(5), KernelArg::i64(rows), KernelArg::f32(kEps)};
    LaunchPlan plan;
    plan.steps.push_back(step);
    return plan;
  }

  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    memory_bound::check_reference_rows(problem);
    return std::make_unique<LayernormWorkload>(problem.dim("rows"), problem.dim("hidden"),
                                               memory_bound::io_dtype(problem),
                                               problem.attr("norm") == "rmsnorm");
  }

  std::string vendor_reference() const override { return "copy"; }
};

}  // namespace

std::shared_ptr<KernelTemplate> make_layernorm_template() {
  return std::make_shared<LayernormTemplate>();
}

}  // namespace ktune
