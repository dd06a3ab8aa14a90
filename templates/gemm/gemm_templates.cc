// The gemm template family: "gemm_simt" (fp32 on CUDA cores, templates/gemm/gemm_simt.cu),
// "gemm_mma" (f16 / bf16 / tf32 on tensor cores with mma.sync, templates/gemm/gemm_mma.cu) and
// "gemm_wgmma" (f16 / bf16, layout NT, Hopper wgmma for sm_90a, templates/gemm/gemm_wgmma.cu).
// Each declares its tunables and constraints, the structural checks its kernel's
// static_asserts rely on, and its launch geometry; problem parsing, launch plans and the
// workload are shared (gemm_problem.h). A Hopper (wgmma) variant is a third class beside
// these, with its own .cu, reusing the same problem, workload and launch-plan helpers.
#include <algorithm>

#include "builtin_templates.h"
#include "gemm_problem.h"
#include "ktune/error.h"

namespace ktune {

namespace {

using gemm::GemmShape;

/// True when `value` is a power of two.
bool is_pow2(Value value) { return value > 0 && (value & (value - 1)) == 0; }

/// Sets `why` (when given) and returns false.
bool reject(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return false;
}

/// What every gemm template shares: op, dimensions, attributes, checks, defines, workload.
class GemmTemplateBase : public KernelTemplate {
 public:
  std::string op() const override { return "gemm"; }
  std::vector<std::string> dim_names() const override { return {"M", "N", "K"}; }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return gemm::gemm_attr_domains(dtypes());
  }
  void check_problem(const Problem& problem) const override {
    KernelTemplate::check_problem(problem);
    gemm::check_gemm_dims(problem);
  }
  Problem example_problem() const override {
    return make_problem(*this, "1024x1024x1024", {{"layout", "NT"}});
  }
  std::vector<std::string> problem_defines(const Problem& problem) const override {
    check_problem(problem);
    return gemm::gemm_problem_defines(gemm::gemm_shape(problem));
  }
  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    return gemm::make_gemm_workload(gemm::gemm_shape(problem));
  }
  std::string vendor_reference() const override { return "cublas"; }
  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    check_problem(problem);
    const GemmShape s = gemm::gemm_shape(problem);
    if (!structure_ok(s, config, why)) return false;
    return gemm::grid_fits(s, config["BM"], config["BN"], config["SPLIT_K"], why);
  }
  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    require_implementable(problem, config);
    const GemmShape s = gemm::gemm_shape(problem);
    return gemm::gemm_launch_plan(s, geometry(s, config), device);
  }

 protected:
  /// Accepted dtype attribute values, default first.
  virtual std::vector<std::string> dtypes() const = 0;
  /// The rules the kernel's static_asserts rely on; false with a reason when broken.
  virtual bool structure_ok(const GemmShape& s, const Config& c, std::string* why) const = 0;
  /// Entry, tiles, threads and shared memory of a config.
  virtual gemm::GemmLaunchGeometry geometry(const GemmShape& s, const Config& c) const = 0;
  /// "max threads per block" of a device as constraint text (1024 when unknown).
  static std::string max_threads(const Device& device) {
    return std::to_string(device.max_threads_per_block > 0 ? device.max_threads_per_block : 1024);
  }
  /// The embedded source at `path` under templates/.
  static const std::string& embedded(const char* path) { return embedded_source(path); }
  /// Constraints leaving out configs that only repeat others: tiles larger than the padded
  /// problem (pure padding; tiles up to `floor` stay allowed, the smallest a template needs
  /// for whole warps), and GROUP_M > 1 when there is a single row or column of tiles (the
  /// visiting order is then the same for every GROUP_M).
  static void prune_equivalent_configs(SearchSpace::Builder& b, const GemmShape& s,
                                       Value floor) {
    b.constraint("BM <= " + std::to_string(gemm::tile_cover(s.M, floor)))
        .constraint("BN <= " + std::to_string(gemm::tile_cover(s.N, floor)))
        .constraint("GROUP_M == 1 or (BM < " + std::to_string(s.M) + " and BN < " +
                    std::to_string(s.N) + ")");
  }
};

/// gemm_simt tiles up to 32 x 32 stay in every space: smaller tiles (4 x 4 per thread) would
/// leave fewer than 32 threads.
constexpr Value kSimtTileFloor = 32;

/// The shape class a default config is chosen for.
enum class ShapeClass {
  regular,     ///< both M and N above 64
  skinny_m,    ///< M <= 64 (GEMV-like: a stream over B)
  skinny_n     ///< N <= 64 < M (a stream over A)
};

/// Skinny rows first: M <= 64 is a stream over B whatever N is.
ShapeClass shape_class(const GemmShape& s) {
  if (s.M <= 64) return ShapeClass::skinny_m;
  if (s.N <= 64) return ShapeClass::skinny_n;
  return ShapeClass::regular;
}

/// Waves of blocks the default split-K aims for, and the fewest k tiles a split keeps:
/// skinny shapes are bandwidth streams (many blocks in flight), others need one full wave.
int default_waves(ShapeClass c) { return c == ShapeClass::regular ? 1 : 3; }
/// See default_waves.
std::int64_t default_min_k_tiles(ShapeClass c) { return c == ShapeClass::regular ? 16 : 8; }

// ---------------------------------------------------------------------------------------
// gemm_simt

/// Structural rules of gemm_simt.cu's static_asserts; false with a reason when broken.
bool simt_structure_ok(const Config& c, std::string* why) {
  const Value bm = c["BM"], bn = c["BN"], tm = c["TM"], tn = c["TN"], wr = c["WARP_ROWS"];
  if (bm % tm != 0 || bn % tn != 0) return reject(why, "BM/BN must be multiples of TM/TN");
  const Value tx = bm / tm, ty = bn / tn, threads = tx * ty;
  if (threads % 32 != 0 || threads > 1024)
    return reject(why, "(BM/TM)*(BN/TN) = " + std::to_string(threads) +
                           " threads is not a multiple of 32 up to 1024");
  if (!is_pow2(wr) || wr > 32 || tx % wr != 0 || ty % (32 / wr) != 0)
    return reject(why, "a warp of WARP_ROWS x 32/WARP_ROWS threads must tile the " +
                           std::to_string(tx) + " x " + std::to_string(ty) + " thread grid");
  if (c["STAGES"] < 1 || c["STAGES"] > 3) return reject(why, "STAGES must be 1, 2 or 3");
  return true;
}

/// Dynamic shared memory of a gemm_simt config (bytes).
std::int64_t simt_smem_bytes(const Config& c) {
  return c["STAGES"] * c["BK"] * (c["BM"] + c["BN"] + 2 * c["PAD"]) * 4;
}

/// Threads of a gemm_simt block.
Value simt_threads(const Config& c) { return (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]); }

/// Registers per thread that stage the next tile on its way to shared memory. STAGES 1 stages
/// it in registers too (fetch, then store): ptxas spills 1212 bytes at 32x256x32 of 16x8 when
/// the estimate left it out.
Value simt_staging_registers(const Config& c) { return (c["BM"] + c["BN"]) * c["BK"] / simt_threads(c); }

/// Rough registers per thread of a gemm_simt config: accumulators, fragments, staging.
std::int64_t simt_register_estimate(const Config& c) {
  return c["TM"] * c["TN"] + c["TM"] + c["TN"] + simt_staging_registers(c);
}

/// False for a config that the kernel's own estimate (gemm_simt.cu, kRegisterEstimate: no
/// staging counted at STAGES 1) would put under a two-blocks-per-SM register cap that its
/// staging does not fit (64x256x32 of 8x8 at STAGES 1: 128 registers, 156 bytes spilled).
bool simt_fits_kernel_register_cap(const Config& c) {
  const Value threads = simt_threads(c);
  const Value kernel_estimate =
      simt_register_estimate(c) - (c["STAGES"] >= 2 ? 0 : simt_staging_registers(c)) + 40;
  if (kernel_estimate * 2 * threads > 65536) return true;  // one block per SM: up to 255 registers
  return (simt_register_estimate(c) + 40) * 2 * threads <= 65536;
}

/// Default tiles of gemm_simt for a shape (see benchmarks/NOTES.md, GEMM second round).
struct SimtDefaults {
  Value bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, warp_rows = 4, stages = 2, split_k = 1,
        group_m = 8;
};

/// The first WARP_ROWS (a power of two) whose warp shape tiles a rows x cols thread grid.
Value simt_warp_rows(Value rows, Value cols) {
  for (Value wr = 1; wr < 32; wr *= 2)
    if (rows % wr == 0 && cols % (32 / wr) == 0) return wr;
  return 32;
}

/// Regular shapes: 128 x 128 x 8 tiles of 8 x 8 per thread (256 threads, two blocks per SM)
/// with 3 stages (H200, 4096^3 / 8192^3 NT: 47.7 / 48.5 TFLOP/s against 46.6 / 47.5 with 2
/// stages and 45.6 / 46.0 for 128 x 256 tiles of 8 x 16 with one block per SM; results/
/// 2026-12-01-h200/session4/call2/simt.log, benchmarks/NOTES.md, SIMT GEMM fourth round).
/// Skinny M: a 16-64 row tile over up to 128 columns (128 threads when N allows), k tiles of
/// 16, split-K for three waves; skinny N the same transposed.
SimtDefaults simt_defaults(const GemmShape& s, const Device& device) {
  SimtDefaults d;
  const ShapeClass c = shape_class(s);
  if (c == ShapeClass::regular) d.stages = 3;
  // short side: the padded skinny dimension; long side: up to 128 of the other one.
  auto skinny = [&](std::int64_t short_dim, std::int64_t long_dim, Value& short_tile,
                    Value& long_tile, Value& short_thread, Value& long_thread) {
    short_tile = gemm::tile_cover(short_dim, 16);
    long_tile = std::min<Value>(128, gemm::tile_cover(long_dim, kSimtTileFloor));
    short_thread = short_tile == 64 ? 8 : 4;
    long_thread = short_tile == 16 || long_tile / 8 * (short_tile / short_thread) < 32 ? 4 : 8;
    d.bk = 16;
  };
  if (c == ShapeClass::skinny_m) skinny(s.M, s.N, d.bm, d.bn, d.tm, d.tn);
  if (c == ShapeClass::skinny_n) skinny(s.N, s.M, d.bn, d.bm, d.tn, d.tm);
  if (c != ShapeClass::regular) d.warp_rows = simt_warp_rows(d.bm / d.tm, d.bn / d.tn);
  d.split_k = gemm::default_split_k(s, d.bm, d.bn, d.bk, device, default_waves(c),
                                    default_min_k_tiles(c));
  if (d.bm >= s.M || d.bn >= s.N) d.group_m = 1;  // one tile row or column: no grouping
  return d;
}

class GemmSimtTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "gemm_simt"; }
  std::string description() const override {
    return "fp32 GEMM on CUDA cores: block/thread tiles, vector loads, double buffering, "
           "split-K, NN/NT/TN/TT, alpha/beta, bias";
  }
  const std::string& source() const override { return embedded("gemm/gemm_simt.cu"); }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const GemmShape s = gemm::gemm_shape(problem);
    const SimtDefaults d = simt_defaults(s, device);
    SearchSpace::Builder b;
    b.param("BM", {16, 32, 64, 128, 256}, d.bm)
        .param("BN", {16, 32, 64, 128, 256}, d.bn)
        .param("BK", {8, 16, 32}, d.bk)
        .param("TM", {4, 8, 16}, d.tm)
        .param("TN", {4, 8, 16}, d.tn)
        .param("WARP_ROWS", {1, 2, 4, 8, 16}, d.warp_rows)
        .param("VEC", {1, 2, 4}, std::min<Value>(4, std::max(s.align_a(), s.align_b())))
        .param("STAGES", {1, 2, 3}, d.stages)
        .param("PAD", {0, 4}, 4)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, d.split_k)
        .param("GROUP_M", {1, 4, 8, 16}, d.group_m)
        .constraint("BM % TM == 0 and BN % TN == 0")
        .constraint("(BM // TM) * (BN // TN) % 32 == 0")
        .constraint("32 <= (BM // TM) * (BN // TN) <= " + max_threads(device))
        .constraint("(BM // TM) % WARP_ROWS == 0 and (BN // TN) % (32 // WARP_ROWS) == 0")
        .constraint("TM * TN <= 128")
        .constraint("STAGES * BK * (BM + BN + 2 * PAD) * 4 <= " +
                    std::to_string(gemm::smem_limit(device)))
        .constraint("registers: TM*TN + TM + TN + staging <= 192",
                    [](const Config& c) { return simt_register_estimate(c) <= 192; })
        .constraint("registers: within the two-block cap the kernel's own estimate asks for",
                    [](const Config& c) { return simt_fits_kernel_register_cap(c); })
        // Wider vectors than either leading dimension allows would repeat narrower configs.
        .constraint("VEC <= " + std::to_string(std::max(s.align_a(), s.align_b())))
        // Every split gets at least one k tile.
        .constraint("SPLIT_K * BK < " + std::to_string(s.K) + " + BK");
    prune_equivalent_configs(b, s, kSimtTileFloor);
    return b.build();
  }

 protected:
  std::vector<std::string> dtypes() const override { return {"f32"}; }
  bool structure_ok(const GemmShape&, const Config& c, std::string* why) const override {
    return simt_structure_ok(c, why);
  }
  gemm::GemmLaunchGeometry geometry(const GemmShape&, const Config& c) const override {
    return {"gemm_simt", c["BM"], c["BN"], c["SPLIT_K"],
            static_cast<unsigned>((c["BM"] / c["TM"]) * (c["BN"] / c["TN"])),
            static_cast<unsigned>(simt_smem_bytes(c))};
  }
};

// ---------------------------------------------------------------------------------------
// gemm_mma

/// Structural rules of gemm_mma.cu's static_asserts; false with a reason when broken.
bool mma_structure_ok(const GemmShape& s, const Config& c, std::string* why) {
  const Value bm = c["BM"], bn = c["BN"], bk = c["BK"], wm = c["WM"], wn = c["WN"];
  if (!is_pow2(bm) || !is_pow2(bn) || !is_pow2(bk))
    return reject(why, "BM, BN, BK must be powers of two (swizzled shared tiles)");
  if (wm % 16 != 0 || wn % 16 != 0 || bm % wm != 0 || bn % wn != 0)
    return reject(why, "warp tile WM x WN must be multiples of 16 dividing BM x BN");
  const Value threads = 32 * (bm / wm) * (bn / wn);
  if (threads > 1024) return reject(why, std::to_string(threads) + " threads exceed 1024");
  const Value k_step = s.precision == gemm::Precision::tf32 ? 8 : 16;
  if (bk % k_step != 0) return reject(why, "BK must be a multiple of the mma k");
  const Value elt = static_cast<Value>(dtype_size(s.input_dtype()));
  if (std::min({bm, bn, bk}) * elt < 32)
    return reject(why, "tile rows must span at least 32 bytes (swizzle)");
  if (c["STAGES"] < 2) return reject(why, "STAGES must be >= 2");
  return true;
}

/// Dynamic shared memory of a gemm_mma config (bytes).
std::int64_t mma_smem_bytes(const GemmShape& s, const Config& c) {
  return c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] *
         static_cast<std::int64_t>(dtype_size(s.input_dtype()));
}

/// Default tiles of gemm_mma for a shape (see benchmarks/NOTES.md, GEMM second round).
struct MmaDefaults {
  Value bm = 128, bn = 128, bk = 32, wm = 64, wn = 32, stages = 4, split_k = 1, group_m = 8;
};

/// Regular shapes: 128 x 128 tiles, BK of 64 bytes, 8 warps of 64 x 32; large ones (at least
/// two waves of 128 x 256 tiles) 128 x 256 tiles with BK of 128 bytes, 3 stages and 8 warps
/// of 64 x 64 (benchmarks/NOTES.md, GEMM third round: half the shared-memory fill traffic
/// per flop of 128 x 128 and half the barriers per flop of BK = 32). Skinny M: a 16-64
/// row tile over 64 columns, or 32 (16-column warps) when 64-column tiles leave fewer than
/// two waves, with 256-byte k rows; no split-K when the tiles alone fill the SMs, else split-K
/// for three waves (a stream over B with many loads in flight, each row read in 256-byte runs
/// rather than scattered 128-byte sectors; measured at N = K = 8192, M 1-64: 32-column tiles
/// without split-K 1.03-1.24x cuBLAS, 64-column tiles split 4 ways 0.86-1.14x, results/
/// 2026-12-01-h200/session4/call2); skinny N the same transposed.
MmaDefaults mma_defaults(const GemmShape& s, const Device& device) {
  MmaDefaults d;
  const bool tf32 = s.precision == gemm::Precision::tf32;
  d.bk = tf32 ? 16 : 32;
  const ShapeClass c = shape_class(s);
  const std::int64_t sms = device.sm_count > 0 ? device.sm_count : 132;
  // short side: the padded skinny dimension; long side: up to 64 of the other one.
  auto skinny = [&](std::int64_t short_dim, std::int64_t long_dim, Value& short_tile,
                    Value& long_tile, Value& short_warp, Value& long_warp) {
    short_tile = gemm::tile_cover(short_dim, 16);
    long_tile = std::min<Value>(64, gemm::tile_cover(long_dim, 16));
    if (long_tile == 64 && (long_dim + 63) / 64 < 2 * sms) long_tile = 32;
    short_warp = std::min<Value>(short_tile, 32);
    // 1 x 4 or 2 x 2 warps over 64 columns, 1 x 2 or 2 x 2 over 32
    long_warp = std::min<Value>(long_tile, short_tile == 64 && long_tile == 64 ? 32 : 16);
    d.bk = tf32 ? 64 : 128;  // 256-byte runs of each row per k tile (DRAM locality)
  };
  const auto elt = static_cast<Value>(dtype_size(s.input_dtype()));
  // Only with 16-byte copies of both operands: narrower ones multiply the copies per thread
  // (an odd leading dimension: 96 two-byte loads per thread and k tile, spilling).
  const bool wide_copies = std::min(s.align_a(), s.align_b()) * elt >= 16;
  // (N > 128: a 256-column tile over N <= 128 columns is refused by the space's tile cover.)
  if (c == ShapeClass::regular && wide_copies && s.N > 128 &&
      ((s.M + 127) / 128) * ((s.N + 255) / 256) >= 2 * sms) {
    d.bn = 256;
    d.wn = 64;
    d.bk = tf32 ? 32 : 64;
    d.stages = 3;
  }
  if (c == ShapeClass::skinny_m) skinny(s.M, s.N, d.bm, d.bn, d.wm, d.wn);
  if (c == ShapeClass::skinny_n) skinny(s.N, s.M, d.bn, d.bm, d.wn, d.wm);
  // Devices with less shared memory than the H200: fewer stages, then shallower k tiles.
  auto smem = [&] { return d.stages * (d.bm + d.bn) * d.bk * elt; };
  while (smem() > gemm::smem_limit(device) && d.stages > 2) --d.stages;
  while (smem() > gemm::smem_limit(device) && d.bk * elt > 32) d.bk /= 2;
  const std::int64_t tiles = ((s.M + d.bm - 1) / d.bm) * ((s.N + d.bn - 1) / d.bn);
  d.split_k = c != ShapeClass::regular && tiles >= sms
                  ? 1  // a skinny stream whose tiles fill the SMs: no reduce launch
                  : gemm::default_split_k(s, d.bm, d.bn, d.bk, device, default_waves(c),
                                          default_min_k_tiles(c));
  if (d.bm >= s.M || d.bn >= s.N) d.group_m = 1;  // one tile row or column: no grouping
  return d;
}

class GemmMmaTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "gemm_mma"; }
  std::string description() const override {
    return "f16/bf16/tf32 GEMM on tensor cores (mma.sync, ldmatrix, cp.async pipeline, "
           "swizzled smem, tile rasterization, split-K), NN/NT/TN/TT, alpha/beta, bias";
  }
  const std::string& source() const override { return embedded("gemm/gemm_mma.cu"); }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    const GemmShape s = gemm::gemm_shape(problem);
    const bool tf32 = s.precision == gemm::Precision::tf32;
    const std::int64_t elt = static_cast<std::int64_t>(dtype_size(s.input_dtype()));
    const MmaDefaults d = mma_defaults(s, device);
    SearchSpace::Builder b;
    b.param("BM", {16, 32, 64, 128, 256}, d.bm)
        .param("BN", {16, 32, 64, 128, 256}, d.bn)
        .param("BK", {8, 16, 32, 64, 128, 256}, d.bk)
        .param("WM", {16, 32, 64, 128}, d.wm)
        .param("WN", {16, 32, 64, 128}, d.wn)
        .param("STAGES", {2, 3, 4, 5, 6, 8}, d.stages)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, d.split_k)
        .param("GROUP_M", {1, 4, 8, 16}, d.group_m)
        .constraint("BM % WM == 0 and BN % WN == 0")
        .constraint("32 * (BM // WM) * (BN // WN) <= " + max_threads(device))
        .constraint("WM * WN <= 4096")  // at most 128 fp32 accumulators per thread
        // The register file: accumulators, double-buffered A / B fragments and about 24 more
        // per thread, for every warp of the block (ptxas caps each thread at 65536 / threads):
        // more warps than that fit spill (128x256 of 16x64 warps: 300 bytes at 64 registers).
        .constraint("(WM * WN // 32 + WM // 2 + WN // 2 + 24) * 32 * (BM // WM) * (BN // WN) <= 65536")
        .constraint(std::string("BK % ") + (tf32 ? "8" : "16") + " == 0")
        .constraint("BM * " + std::to_string(elt) + " >= 32 and BN * " + std::to_string(elt) +
                    " >= 32 and BK * " + std::to_string(elt) + " >= 32")
        .constraint("STAGES * (BM + BN) * BK * " + std::to_string(elt) + " <= " +
                    std::to_string(gemm::smem_limit(device)))
        .constraint("SPLIT_K * BK < " + std::to_string(s.K) + " + BK");
    prune_equivalent_configs(b, s, 16);
    return b.build();
  }

 protected:
  std::vector<std::string> dtypes() const override { return {"f16", "bf16", "tf32"}; }
  bool structure_ok(const GemmShape& s, const Config& c, std::string* why) const override {
    return mma_structure_ok(s, c, why);
  }
  gemm::GemmLaunchGeometry geometry(const GemmShape& s, const Config& c) const override {
    return {"gemm_mma", c["BM"], c["BN"], c["SPLIT_K"],
            static_cast<unsigned>(32 * (c["BM"] / c["WM"]) * (c["BN"] / c["WN"])),
            static_cast<unsigned>(mma_smem_bytes(s, c))};
  }
};

// ---------------------------------------------------------------------------------------
// gemm_wgmma

/// Structural rules of gemm_wgmma.cu / gemm_wgmma.cuh (static_asserts and the loader's
/// 16-byte copies); false with a reason naming the input when broken.
bool wgmma_structure_ok(const GemmShape& s, const Config& c, std::string* why) {
  if (s.a_transposed || !s.b_transposed)
    return reject(why, std::string("layout ") + (s.a_transposed ? 'T' : 'N') +
                           (s.b_transposed ? 'T' : 'N') +
                           " is not supported: gemm_wgmma reads both operands K-major (layout "
                           "NT: A stored M x K, B stored N x K); use gemm_mma");
  const Value pad_k = c.has("PAD_K") ? c["PAD_K"] : 0;
  if (pad_k != 0 && pad_k != 1)
    return reject(why, "PAD_K = " + std::to_string(pad_k) + " must be 0 or 1");
  if (s.K % 8 != 0 && pad_k == 0)
    return reject(why, "K = " + std::to_string(s.K) +
                           " is not a multiple of 8: rows of A and B are copied in 16-byte "
                           "chunks (PAD_K = 1 pads copies of them to K = " +
                           std::to_string((s.K + 7) / 8 * 8) + "; or use gemm_mma)");
  const Value bm = c["BM"], bn = c["BN"], bk = c["BK"], wgs = c["WGS"];
  if (wgs < 1 || bm % (64 * wgs) != 0)
    return reject(why, "BM = " + std::to_string(bm) + " must be a multiple of 64 * WGS (" +
                           std::to_string(wgs) + " warpgroups of 64-row wgmma)");
  if (bn != 64 && bn != 128 && bn != 256)
    return reject(why, "BN = " + std::to_string(bn) + " must be 64, 128 or 256 (wgmma N)");
  if (bk != 64 && bk != 128)
    return reject(why, "BK = " + std::to_string(bk) + " must be 64 or 128 (128-byte swizzle rows)");
  if ((bm / wgs) * bn > 16384)
    return reject(why, "(BM / WGS) * BN = " + std::to_string((bm / wgs) * bn) +
                           " exceeds 128 fp32 accumulators per thread");
  if (c["STAGES"] < 3) return reject(why, "STAGES must be >= 3");
  if (const std::string v = gemm::cluster_k_violation(c, "PRODUCER"); !v.empty())
    return reject(why, v);
  return true;
}

/// Dynamic shared memory of a gemm_wgmma config (bytes): the stages plus 1 KiB that lets the
/// kernel align them to 1024 bytes (PRODUCER > 0 adds up to 96 bytes of static mbarriers);
/// a k-split cluster needs at least BM x BN floats there (rank 1..'s partial tile).
std::int64_t wgmma_smem_bytes(const Config& c) {
  const std::int64_t stages = c["STAGES"] * (c["BM"] + c["BN"]) * c["BK"] * 2;
  return std::max(stages, gemm::cluster_k_partial_bytes(c)) + 1024;
}

/// Default tiles of gemm_wgmma for a shape.
struct WgmmaDefaults {
  Value bm = 128, bn = 128, bk = 64, wgs = 2, stages = 4, split_k = 1, group_m = 8;
};

/// Regular shapes with at least one wave of 128 x 256 tiles: 128 x 256 x 64, two consumer
/// warpgroups of 64 x 256 (128 accumulators each), 4 stages (193 KiB). Other regular shapes:
/// 128 x 128 x 64, two warpgroups, 5 stages. Skinny M (<= 64): one warpgroup of 64 rows over
/// 128 columns, split-K for three waves; skinny N (<= 64): 128 x 64 tiles.
WgmmaDefaults wgmma_defaults(const GemmShape& s, const Device& device) {
  WgmmaDefaults d;
  const ShapeClass c = shape_class(s);
  const std::int64_t sms = device.sm_count > 0 ? device.sm_count : 132;
  if (c == ShapeClass::regular) {
    d.stages = 5;
    if (((s.M + 127) / 128) * ((s.N + 255) / 256) >= sms) {
      d.bn = 256;
      d.stages = 4;
    }
  } else if (c == ShapeClass::skinny_m) {
    d.bm = 64;
    d.wgs = 1;
    d.bn = std::min<Value>(128, gemm::tile_cover(s.N, 64));
  } else {
    d.bn = 64;
    d.bm = std::min<Value>(128, gemm::tile_cover(s.M, 64));
    d.wgs = d.bm / 64;
  }
  d.bm = std::min<Value>(d.bm, gemm::tile_cover(s.M, 64));
  d.bn = std::min<Value>(d.bn, gemm::tile_cover(s.N, 64));
  if (d.bm < 64 * d.wgs) d.wgs = 1;
  auto smem = [&] { return d.stages * (d.bm + d.bn) * d.bk * 2 + 1024; };
  while (smem() > gemm::smem_limit(device) && d.stages > 3) --d.stages;
  while (smem() > gemm::smem_limit(device) && d.bn > 64) d.bn /= 2;  // devices with less smem
  d.split_k = gemm::default_split_k(s, d.bm, d.bn, d.bk, device, default_waves(c),
                                    default_min_k_tiles(c));
  if (d.bm >= s.M || d.bn >= s.N) d.group_m = 1;  // one tile row or column: no grouping
  return d;
}

class GemmWgmmaTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "gemm_wgmma"; }
  std::string description() const override {
    return "f16/bf16 GEMM on Hopper tensor cores (sm_90a wgmma.mma_async from 128B-swizzled "
           "smem descriptors, cp.async multistage pipeline or a producer warpgroup with "
           "mbarriers, 1-2 consumer warpgroups, rasterization, split-K through a workspace or "
           "across a thread-block cluster, K padded when not a multiple of 8), layout NT, "
           "alpha/beta, bias";
  }
  const std::string& source() const override { return embedded("gemm/gemm_wgmma.cu"); }
  /// Layout NT only (both operands K-major, as the loader and the wgmma descriptors read
  /// them), so that a problem left at its default layout is one this template can do.
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    auto domains = GemmTemplateBase::attr_domains();
    domains["layout"] = {"NT"};
    return domains;
  }
  void check_problem(const Problem& problem) const override {
    // Another valid layout goes to gemm_mma; one that is no layout at all is refused below
    // like every gemm template refuses it.
    const std::vector<std::string> gemm_layouts = GemmTemplateBase::attr_domains().at("layout");
    if (auto it = problem.attrs.find("layout");
        it != problem.attrs.end() && it->second != "NT" &&
        std::find(gemm_layouts.begin(), gemm_layouts.end(), it->second) != gemm_layouts.end())
      throw Error(ErrorCode::unsupported,
                  "problem " + problem.key() + ": layout " + it->second +
                      " is not supported: gemm_wgmma reads both operands K-major (layout NT: A "
                      "stored M x K, B stored N x K); use gemm_mma");
    GemmTemplateBase::check_problem(problem);
  }
  /// wgmma exists only in the architecture-specific sm_90a target.
  std::string target_arch(const Device&, const Config&) const override { return "sm_90a"; }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    device.check_runs(target_arch(device, Config()), "template " + name());
    const GemmShape s = gemm::gemm_shape(problem);
    const WgmmaDefaults d = wgmma_defaults(s, device);
    SearchSpace::Builder b;
    b.param("BM", {64, 128, 256}, d.bm)
        .param("BN", {64, 128, 256}, d.bn)
        .param("BK", {64, 128}, d.bk)
        .param("WGS", {1, 2}, d.wgs)
        .param("STAGES", {3, 4, 5, 6}, d.stages)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, d.split_k)
        .param("GROUP_M", {1, 4, 8, 16}, d.group_m)
        .param("PRODUCER", {0, 1, 2}, 0)
        .param("CLUSTER_K", {1, 2, 4, 8}, 1)
        // K % 8 != 0: A and B are first copied into rows padded to a multiple of 8.
        .param("PAD_K", {0, 1}, s.K % 8 != 0 ? 1 : 0)
        .constraint(s.K % 8 != 0 ? "PAD_K == 1" : "PAD_K == 0")
        .constraint("BM % (64 * WGS) == 0")
        // A k-split cluster replaces SPLIT_K's workspace; every rank gets at least one k tile.
        .constraint("CLUSTER_K == 1 or (SPLIT_K == 1 and PRODUCER == 0)")
        .constraint("CLUSTER_K * BK < " + std::to_string(s.K) + " + BK")
        .constraint("(BM // WGS) * BN <= 16384")  // at most 128 fp32 accumulators per thread
        // PRODUCER > 0 adds 2 * STAGES static mbarriers (<= 96 bytes, counted as 128 or 256)
        .constraint("STAGES * (BM + BN) * BK * 2 + 1024 + 128 * PRODUCER <= " +
                    std::to_string(gemm::smem_limit(device)))
        .constraint("SPLIT_K * BK < " + std::to_string(s.K) + " + BK");
    prune_equivalent_configs(b, s, 64);
    return b.build();
  }

 protected:
  std::vector<std::string> dtypes() const override { return {"f16", "bf16"}; }
  bool structure_ok(const GemmShape& s, const Config& c, std::string* why) const override {
    return wgmma_structure_ok(s, c, why);
  }
  gemm::GemmLaunchGeometry geometry(const GemmShape&, const Config& c) const override {
    return {"gemm_wgmma", c["BM"], c["BN"], c["SPLIT_K"],
            static_cast<unsigned>(128 * (c["WGS"] + (c["PRODUCER"] > 0 ? 1 : 0))),
            static_cast<unsigned>(wgmma_smem_bytes(c))};
  }

 public:
  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    require_implementable(problem, config);
    const GemmShape s = gemm::gemm_shape(problem);
    const bool pad = config.has("PAD_K") && config["PAD_K"] == 1;
    GemmShape run = s;  // the shape the main kernel sees
    if (pad) run.K = (s.K + 7) / 8 * 8;
    LaunchPlan plan = gemm::gemm_launch_plan(run, geometry(run, config), device);
    gemm::apply_cluster_k(config, plan);
    if (pad) add_pad_steps(s, run.K, device, plan);
    return plan;
  }

 private:
  /// PAD_K: scratch copies of A (M x K) and B (N x K) with rows of `padded_k` elements (zero
  /// filled) made by two gemm_wgmma_pad_k steps before the main kernel, which reads them.
  static void add_pad_steps(const GemmShape& s, std::int64_t padded_k, const Device& device,
                            LaunchPlan& plan) {
    const std::size_t first = (s.bias ? 4 : 3) + plan.scratch.size();  // workload buffers first
    std::vector<LaunchStep> pads;
    for (std::size_t operand = 0; operand < 2; ++operand) {
      const std::int64_t rows = operand == 0 ? s.M : s.N;
      plan.scratch.push_back(BufferSpec{operand == 0 ? "A_padded" : "B_padded",
                                        s.input_dtype(),
                                        static_cast<std::size_t>(rows * padded_k),
                                        Role::scratch, 0});
      LaunchStep step;
      step.entry = "gemm_wgmma_pad_k";
      step.grid[0] = gemm::grid_stride_blocks(rows * (padded_k / 8), 256, device);  // 16 B each
      step.block[0] = 256;
      step.args = {KernelArg::buf(operand), KernelArg::buf(first + operand),
                   KernelArg::i32(rows), KernelArg::i32(s.K), KernelArg::i32(padded_k)};
      pads.push_back(step);
      plan.steps[0].args[operand] = KernelArg::buf(first + operand);
    }
    plan.steps.insert(plan.steps.begin(), pads.begin(), pads.end());
  }
};

}  // namespace

std::shared_ptr<KernelTemplate> make_gemm_simt_template() {
  return std::make_shared<GemmSimtTemplate>();
}

std::shared_ptr<KernelTemplate> make_gemm_mma_template() {
  return std::make_shared<GemmMmaTemplate>();
}

std::shared_ptr<KernelTemplate> make_gemm_wgmma_template() {
  return std::make_shared<GemmWgmmaTemplate>();
}

}  // namespace ktune
