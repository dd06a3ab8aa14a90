// The gemm problem in typed form, its attribute domains, its NVRTC defines and the launch plan
// shared by the gemm templates (main kernel, optional split-K workspace and reduction step).
#include "gemm_problem.h"

#include <algorithm>
#include <limits>

#include "ktune/error.h"

namespace ktune::gemm {

namespace {

/// Largest power-of-two number of elements (at most 16 bytes' worth) dividing `ld`.
int vector_alignment(std::int64_t ld, DType dtype) {
  int align = static_cast<int>(16 / dtype_size(dtype));
  while (align > 1 && ld % align != 0) align /= 2;
  return align;
}

/// Threads per block of the split-K reduction step.
constexpr unsigned kReduceThreads = 256;

}  // namespace

DType GemmShape::input_dtype() const {
  switch (precision) {
    case Precision::f16: return DType::f16;
    case Precision::bf16: return DType::bf16;
    default: return DType::f32;
  }
}

DType GemmShape::output_dtype() const { return out_f32 ? DType::f32 : input_dtype(); }

int GemmShape::align_a() const { return vector_alignment(lda(), input_dtype()); }

int GemmShape::align_b() const { return vector_alignment(ldb(), input_dtype()); }

GemmShape gemm_shape(const Problem& problem) {
  GemmShape s;
  s.M = problem.dim("M");
  s.N = problem.dim("N");
  s.K = problem.dim("K");
  const std::string dtype = problem.attr("dtype", "f32");
  if (dtype == "f16") s.precision = Precision::f16;
  else if (dtype == "bf16") s.precision = Precision::bf16;
  else if (dtype == "tf32") s.precision = Precision::tf32;
  else if (dtype == "f32") s.precision = Precision::f32;
  else throw Error(ErrorCode::invalid_argument,
                   "problem " + problem.key() + ": gemm dtype \"" + dtype +
                       "\" is not one of f32, f16, bf16, tf32");
  const std::string layout = problem.attr("layout", "NN");
  if (layout.size() != 2 || (layout[0] != 'N' && layout[0] != 'T') ||
      (layout[1] != 'N' && layout[1] != 'T'))
    throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": gemm layout \"" +
                                                 layout + "\" is not one of NN, NT, TN, TT");
  s.a_transposed = layout[0] == 'T';
  s.b_transposed = layout[1] == 'T';
  s.bias = problem.attr("bias", "0") == "1";
  s.out_f32 = problem.attr("out", "same") == "f32" || s.precision == Precision::f32 ||
              s.precision == Precision::tf32;
  return s;
}

std::map<std::string, std::vector<std::string>> gemm_attr_domains(
    const std::vector<std::string>& dtypes) {
  return {{"dtype", dtypes},
          {"layout", {"NN", "NT", "TN", "TT"}},
          {"bias", {"0", "1"}},
          {"out", {"same", "f32"}}};
}

void check_gemm_dims(const Problem& problem) {
  // The kernels index in 32-bit ints and add tile sizes and K padding to M, N and K: 2^30
  // keeps every such sum (m0 + BM, (K + BK - 1) / BK, K rounded up to 8) far from 2^31.
  for (const char* dim : {"M", "N", "K"})
    if (problem.dim(dim) > kMaxGemmDim)
      throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": gemm dimension " +
                                                   dim + " must be <= 2^30 (32-bit kernel indices)");
}

bool grid_fits(const GemmShape& s, Value bm, Value bn, Value split_k, std::string* why) {
  const std::int64_t tiles = ((s.M + bm - 1) / bm) * ((s.N + bn - 1) / bn);
  if (tiles <= std::numeric_limits<std::int32_t>::max() && split_k <= 65535) return true;
  if (why)
    *why = std::to_string(tiles) + " tiles x " + std::to_string(split_k) +
           " splits exceed the CUDA grid limits";
  return false;
}

std::vector<std::string> gemm_problem_defines(const GemmShape& s) {
  const int dtype_code = s.precision == Precision::f32    ? 0
                         : s.precision == Precision::f16  ? 1
                         : s.precision == Precision::bf16 ? 2
                                                          : 3;
  return {"-DKT_DTYPE=" + std::to_string(dtype_code),
          std::string("-DKT_OUT_F32=") + (s.out_f32 ? "1" : "0"),
          std::string("-DKT_A_T=") + (s.a_transposed ? "1" : "0"),
          std::string("-DKT_B_T=") + (s.b_transposed ? "1" : "0"),
          std::string("-DKT_BIAS=") + (s.bias ? "1" : "0"),
          "-DKT_ALIGN_A=" + std::to_string(s.align_a()),
          "-DKT_ALIGN_B=" + std::to_string(s.align_b())};
}

std::string cluster_k_violation(const Config& config, const std::string& exclusive) {
  if (!config.has("CLUSTER_K")) return "";
  const Value ck = config["CLUSTER_K"];
  if (ck != 1 && ck != 2 && ck != 4 && ck != 8)
    return "CLUSTER_K = " + std::to_string(ck) +
           " must be 1, 2, 4 or 8 (CTAs of a k-split cluster)";
  if (ck > 1 && (config["SPLIT_K"] != 1 || (config.has(exclusive) && config[exclusive] != 0)))
    return "CLUSTER_K = " + std::to_string(ck) + " (k-split cluster) needs SPLIT_K = 1 and " +
           exclusive + " = 0";
  return "";
}

Value cluster_k_of(const Config& config) {
  return config.has("CLUSTER_K") ? config["CLUSTER_K"] : 1;
}

std::int64_t cluster_k_partial_bytes(const Config& config) {
  return cluster_k_of(config) > 1 ? config["BM"] * config["BN"] * 4 : 0;
}

void apply_cluster_k(const Config& config, LaunchPlan& plan) {
  if (cluster_k_of(config) > 1) plan.steps[0].grid[2] = static_cast<unsigned>(cluster_k_of(config));
}

unsigned grid_stride_blocks(std::int64_t items, std::int64_t threads, const Device& device) {
  const std::int64_t needed = (items + threads - 1) / threads;
  const std::int64_t cap = std::int64_t{std::max(1, device.sm_count)} * 16;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(needed, cap)));
}

std::int64_t smem_limit(const Device& device) {
  return std::max<std::int64_t>({device.smem_per_block_optin, device.smem_per_block, 48 * 1024});
}

std::int64_t tile_cover(std::int64_t value, std::int64_t floor) {
  std::int64_t tile = std::max<std::int64_t>(floor, 1);
  while (tile < value) tile *= 2;
  return tile;
}

std::int64_t default_split_k(const GemmShape& s, std::int64_t bm, std::int64_t bn,
                             std::int64_t bk, const Device& device, int waves,
                             std::int64_t min_k_tiles) {
  const std::int64_t tiles = ((s.M + bm - 1) / bm) * ((s.N + bn - 1) / bn);
  const std::int64_t target = static_cast<std::int64_t>(waves) * (device.sm_count > 0 ? device.sm_count : 132);
  const std::int64_t k_tiles = (s.K + bk - 1) / bk;
  std::int64_t split = 1;
  while (split < 16 && tiles * split < target && k_tiles / (split * 2) >= min_k_tiles) split *= 2;
  return split;
}

LaunchPlan gemm_launch_plan(const GemmShape& s, const GemmLaunchGeometry& g,
                            const Device& device) {
  const std::int64_t tiles = ((s.M + g.bm - 1) / g.bm) * ((s.N + g.bn - 1) / g.bn);
  if (std::string why; !grid_fits(s, g.bm, g.bn, g.split_k, &why))
    throw Error(ErrorCode::invalid_argument,
                "gemm " + std::to_string(s.M) + "x" + std::to_string(s.N) + ": " + why);
  const std::size_t c = 2;                                // buffer index of C
  const std::size_t bias = s.bias ? 3 : c;                // unused by the kernel without bias
  const std::size_t workspace = s.bias ? 4 : 3;           // first scratch buffer
  const KernelArg M = KernelArg::i32(s.M), N = KernelArg::i32(s.N), K = KernelArg::i32(s.K);
  const KernelArg alpha = KernelArg::f32(kAlpha), beta = KernelArg::f32(kBeta);

  LaunchPlan plan;
  LaunchStep main;
  main.entry = g.entry;
  main.grid[0] = static_cast<unsigned>(tiles);
  main.grid[2] = static_cast<unsigned>(g.split_k);
  main.block[0] = g.threads;
  main.dynamic_smem = g.smem_bytes;
  main.args = {KernelArg::buf(0), KernelArg::buf(1), KernelArg::buf(c), KernelArg::buf(bias),
               KernelArg::buf(g.split_k > 1 ? workspace : c), M, N, K, alpha, beta};
  plan.steps.push_back(main);
  if (g.split_k > 1) {
    plan.scratch.push_back(BufferSpec{"workspace", DType::f32,
                                      static_cast<std::size_t>(g.split_k * s.M * s.N),
                                      Role::scratch, 0});
    LaunchStep reduce;
    reduce.entry = g.entry + "_splitk_reduce";
    reduce.grid[0] = grid_stride_blocks(s.M * s.N, kReduceThreads, device);
    reduce.block[0] = kReduceThreads;
    reduce.args = {KernelArg::buf(workspace), KernelArg::buf(c), KernelArg::buf(bias), M, N,
                   alpha, beta};
    plan.steps.push_back(reduce);
  }
  return plan;
}

}  // namespace ktune::gemm
