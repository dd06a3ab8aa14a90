// The GEMM problem as the gemm template family sees it: C = alpha * op(A) * op(B) + beta * C
// (+ bias[col]), C row-major M x N. Layout letters (first for A, second for B) say whether an
// operand is stored transposed, BLAS-style, with every matrix row-major and tightly packed:
//   A: 'N' = M x K (lda = K, k contiguous)   'T' = K x M (lda = M, m contiguous)
//   B: 'N' = K x N (ldb = N, n contiguous)   'T' = N x K (ldb = K, k contiguous)
// Attributes: dtype (f32 SIMT; f16, bf16 tensor cores; tf32 = fp32 data on TF32 tensor cores),
// layout (NN NT TN TT), bias (0/1: per-column bias of N elements, output type), out (same =
// C has the input type; f32 = fp32 C). alpha = 1.5 and beta = 0.5 are fixed (both terms are
// exercised). Shared by the templates (problem checks, NVRTC defines, launch plans) and the
// workload (buffers, reference, tolerance).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/problem.h"
#include "ktune/space.h"
#include "ktune/template.h"

namespace ktune::gemm {

/// alpha of every gemm workload.
constexpr double kAlpha = 1.5;
/// beta of every gemm workload (C is read and updated in place).
constexpr double kBeta = 0.5;

/// How the product is computed: the problem's dtype attribute.
enum class Precision { f32, f16, bf16, tf32 };

/// A checked gemm problem in typed form.
struct GemmShape {
  std::int64_t M = 1;              ///< rows of C and op(A)
  std::int64_t N = 1;              ///< columns of C and op(B)
  std::int64_t K = 1;              ///< the reduced dimension
  Precision precision = Precision::f32;  ///< dtype attribute
  bool out_f32 = true;             ///< C (and bias) are fp32
  bool a_transposed = false;       ///< A stored K x M
  bool b_transposed = false;       ///< B stored N x K
  bool bias = false;               ///< per-column bias added

  /// Element type of A and B.
  DType input_dtype() const;
  /// Element type of C and bias.
  DType output_dtype() const;
  /// Leading dimension of A (elements between rows of its storage).
  std::int64_t lda() const { return a_transposed ? M : K; }
  /// Leading dimension of B.
  std::int64_t ldb() const { return b_transposed ? K : N; }
  /// Elements (<= 16 bytes' worth, a power of two) by which lda divides: the widest vector.
  int align_a() const;
  /// Elements by which ldb divides, as align_a().
  int align_b() const;
};

/// The typed form of a problem already accepted by check_gemm_problem.
GemmShape gemm_shape(const Problem& problem);

/// Attribute domains of a gemm template whose dtypes are `dtypes` (first = default).
std::map<std::string, std::vector<std::string>> gemm_attr_domains(
    const std::vector<std::string>& dtypes);

/// Largest M, N or K (2^30): the kernels' 32-bit tile arithmetic never reaches 2^31.
constexpr std::int64_t kMaxGemmDim = std::int64_t{1} << 30;
/// Checks what the generic check leaves out: M, N, K <= kMaxGemmDim. Throws Error.
void check_gemm_dims(const Problem& problem);
/// True when BM x BN tiles with SPLIT_K splits fit the CUDA grid (x < 2^31, z <= 65535);
/// else sets `why` (may be null). can_implement and the launch plan apply the same rule.
bool grid_fits(const GemmShape& s, Value bm, Value bn, Value split_k, std::string* why);

/// NVRTC defines of the problem (see templates/gemm/gemm_common.cuh).
std::vector<std::string> gemm_problem_defines(const GemmShape& shape);

/// The k-split cluster rules of gemm_wgmma and conv2d_wgmma (wg::cluster_k_reduce):
/// CLUSTER_K, when the config has it, is 1, 2, 4 or 8, and above 1 only with SPLIT_K = 1 and
/// `exclusive` (PRODUCER or PERSIST, when the config has it) 0. The reason, naming the value,
/// when a rule is broken; "" otherwise.
std::string cluster_k_violation(const Config& config, const std::string& exclusive);

/// CLUSTER_K of a config: the CTAs of its k-split cluster, 1 when it has no such parameter.
Value cluster_k_of(const Config& config);

/// Shared memory a k-split cluster needs beside the pipeline: ranks 1.. leave their fp32
/// partial tile (BM x BN floats) over the freed stages; 0 without a cluster.
std::int64_t cluster_k_partial_bytes(const Config& config);

/// Launches the main step of `plan` (its first) as CLUSTER_K blocks along z per tile, one
/// cluster each (no workspace); unchanged without a cluster.
void apply_cluster_k(const Config& config, LaunchPlan& plan);

/// Blocks of a grid-stride helper kernel (split-K reduce, K padding, conv helpers) over `items`
/// with `threads` per block: one item per thread, at most 16 blocks per SM (the loop strides
/// beyond), at least 1.
unsigned grid_stride_blocks(std::int64_t items, std::int64_t threads, const Device& device);

/// Shared memory a block may use on `device` (opt-in limit, at least 48 KiB).
std::int64_t smem_limit(const Device& device);

/// The smallest power of two >= value, and at least `floor`: the useful tile size along a
/// dimension (a larger tile only pads).
std::int64_t tile_cover(std::int64_t value, std::int64_t floor);

/// Default split-K count: the smallest power of two S <= 16 such that tiles * S fills `waves`
/// waves of the device's SMs (132 when unknown), without leaving any split fewer than
/// `min_k_tiles` k tiles of `bk`; 1 when the output tiles already fill the device.
std::int64_t default_split_k(const GemmShape& shape, std::int64_t bm, std::int64_t bn,
                             std::int64_t bk, const Device& device, int waves,
                             std::int64_t min_k_tiles);

/// Geometry of a gemm config that the launch plan needs.
struct GemmLaunchGeometry {
  std::string entry;        ///< main kernel; the split-K step is entry + "_splitk_reduce"
  std::int64_t bm = 0;      ///< block tile rows
  std::int64_t bn = 0;      ///< block tile columns
  std::int64_t split_k = 1; ///< k splits (grid.z)
  unsigned threads = 0;     ///< threads per block
  unsigned smem_bytes = 0;  ///< dynamic shared memory per block
};

/// Launch plan: the main kernel over (tiles, 1, split_k) and, when split_k > 1, the fp32
/// workspace (scratch) and the reduction step. Throws Error(invalid_argument) when the grid
/// exceeds CUDA's limits.
LaunchPlan gemm_launch_plan(const GemmShape& shape, const GemmLaunchGeometry& geometry,
                            const Device& device);

/// Buffers, inputs (uniform in [-1, 1], never zero), double-precision reference and
/// tolerance of a gemm problem.
std::unique_ptr<Workload> make_gemm_workload(const GemmShape& shape);

/// reference_cost() (multiply-adds) above which a gemm workload verifies with its device
/// reference instead of the host one (2e9 is about two seconds of host reference).
constexpr double kDeviceReferenceMinCost = 2e9;

/// The GPU reference of a shape (templates/gemm/gemm_reference.cu: fp64 accumulation, rounded
/// once to the output type): source, defines and a one-kernel plan over A, B, C (read for
/// beta, then overwritten) and bias. Throws Error(invalid_argument) when the grid is too big.
DeviceReference make_device_reference(const GemmShape& shape);

/// Double-precision reference, in place: c = alpha * op(a) * op(b) + beta * c (+ bias),
/// with a and b stored as the shape's layout says and c row-major M x N; results are rounded
/// to c's dtype. `bias` may be null when the shape has none. Converts panels on the fly (no
/// full double copies) and vectorizes over n; 1000^3 takes about a second on one core.
void reference_gemm(const GemmShape& shape, const HostBuffer& a, const HostBuffer& b,
                    const HostBuffer* bias, double alpha, double beta, HostBuffer& c);

}  // namespace ktune::gemm
