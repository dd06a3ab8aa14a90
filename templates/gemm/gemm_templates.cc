// The gemm template family: "gemm_simt" (fp32 on CUDA cores, templates/gemm/gemm_simt.cu) and
// "gemm_mma" (f16 / bf16 / tf32 on tensor cores with mma.sync, templates/gemm/gemm_mma.cu).
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
    if (!structure_ok(gemm::gemm_shape(problem), config, why)) return false;
    if (config["SPLIT_K"] > 65535) return reject(why, "SPLIT_K exceeds grid.z");
    return true;
  }
  LaunchPlan launch(const Problem& problem, const Config& config,
                    const Device& device) const override {
    std::string why;
    if (!can_implement(problem, config, &why))
      throw Error(ErrorCode::invalid_argument, name() + " " + config.str() + ": " + why);
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
  /// Default split count: 1.
  static constexpr Value kNoSplit = 1;
};

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
  if (c["STAGES"] != 1 && c["STAGES"] != 2) return reject(why, "STAGES must be 1 or 2");
  return true;
}

/// Dynamic shared memory of a gemm_simt config (bytes).
std::int64_t simt_smem_bytes(const Config& c) {
  return c["STAGES"] * c["BK"] * (c["BM"] + c["BN"] + 2 * c["PAD"]) * 4;
}

/// Rough registers per thread of a gemm_simt config: accumulators, fragments, staging.
std::int64_t simt_register_estimate(const Config& c) {
  const Value threads = (c["BM"] / c["TM"]) * (c["BN"] / c["TN"]);
  const Value staging = c["STAGES"] == 2 ? (c["BM"] + c["BN"]) * c["BK"] / threads : 0;
  return c["TM"] * c["TN"] + c["TM"] + c["TN"] + staging;
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
    SearchSpace::Builder b;
    b.param("BM", {32, 64, 128, 256}, 128)
        .param("BN", {32, 64, 128, 256}, 128)
        .param("BK", {8, 16, 32}, 8)
        .param("TM", {4, 8, 16}, 8)
        .param("TN", {4, 8, 16}, 8)
        .param("WARP_ROWS", {1, 2, 4, 8, 16}, 4)
        .param("VEC", {1, 2, 4}, std::min<Value>(4, std::max(s.align_a(), s.align_b())))
        .param("STAGES", {1, 2}, 2)
        .param("PAD", {0, 4}, 4)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, kNoSplit)
        .param("GROUP_M", {1, 4, 8, 16}, 8)
        .constraint("BM % TM == 0 and BN % TN == 0")
        .constraint("(BM // TM) * (BN // TN) % 32 == 0")
        .constraint("32 <= (BM // TM) * (BN // TN) <= " + max_threads(device))
        .constraint("(BM // TM) % WARP_ROWS == 0 and (BN // TN) % (32 // WARP_ROWS) == 0")
        .constraint("TM * TN <= 128")
        .constraint("STAGES * BK * (BM + BN + 2 * PAD) * 4 <= " +
                    std::to_string(gemm::smem_limit(device)))
        .constraint("registers: TM*TN + TM + TN + staging <= 192",
                    [](const Config& c) { return simt_register_estimate(c) <= 192; })
        // Wider vectors than either leading dimension allows would repeat narrower configs.
        .constraint("VEC <= " + std::to_string(std::max(s.align_a(), s.align_b())))
        // Every split gets at least one k tile.
        .constraint("SPLIT_K * BK < " + std::to_string(s.K) + " + BK");
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
    SearchSpace::Builder b;
    b.param("BM", {16, 32, 64, 128, 256}, 128)
        .param("BN", {16, 32, 64, 128, 256}, 128)
        .param("BK", {8, 16, 32, 64}, tf32 ? 16 : 32)
        .param("WM", {16, 32, 64, 128}, 64)
        .param("WN", {16, 32, 64, 128}, 32)
        .param("STAGES", {2, 3, 4, 5}, 4)
        .param("SPLIT_K", {1, 2, 4, 8, 16}, kNoSplit)
        .param("GROUP_M", {1, 4, 8, 16}, 8)
        .constraint("BM % WM == 0 and BN % WN == 0")
        .constraint("32 * (BM // WM) * (BN // WN) <= " + max_threads(device))
        .constraint("WM * WN <= 4096")  // at most 128 fp32 accumulators per thread
        .constraint(std::string("BK % ") + (tf32 ? "8" : "16") + " == 0")
        .constraint("BM * " + std::to_string(elt) + " >= 32 and BN * " + std::to_string(elt) +
                    " >= 32 and BK * " + std::to_string(elt) + " >= 32")
        .constraint("STAGES * (BM + BN) * BK * " + std::to_string(elt) + " <= " +
                    std::to_string(gemm::smem_limit(device)))
        .constraint("SPLIT_K * BK < " + std::to_string(s.K) + " + BK");
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

}  // namespace

std::shared_ptr<KernelTemplate> make_gemm_simt_template() {
  return std::make_shared<GemmSimtTemplate>();
}

std::shared_ptr<KernelTemplate> make_gemm_mma_template() {
  return std::make_shared<GemmMmaTemplate>();
}

}  // namespace ktune
