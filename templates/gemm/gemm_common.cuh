// Shared pieces of the GEMM template family (and of implicit-GEMM convolution): the mapping of
// the problem defines to element types, float conversions, the swizzled order in which thread
// blocks visit output tiles (rasterization), the split-K range of a block, and the epilogue
// (C = alpha * acc + beta * C + bias[col]; element by element or in aligned column pairs)
// with its split-K reduction step.
//
// Problem defines (set by the host template from the checked problem; defaults here let the
// file compile on its own):
//   KT_DTYPE   0 = f32 (SIMT), 1 = f16, 2 = bf16, 3 = tf32 (fp32 data, TF32 tensor cores)
//   KT_OUT_F32 1 = C and bias are fp32; 0 = C and bias have the input type
//   KT_A_T     0 = A stored M x K row-major (k contiguous); 1 = stored K x M (m contiguous)
//   KT_B_T     0 = B stored K x N row-major (n contiguous); 1 = stored N x K (k contiguous)
//   KT_BIAS    1 = add bias[col] (N elements, output type) in the epilogue
//   KT_ALIGN_A / KT_ALIGN_B  elements by which the leading dimension of A / B is divisible
//              (capped at 16 bytes); vector widths never exceed them.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#ifndef KT_DTYPE
#define KT_DTYPE 1
#endif
#ifndef KT_OUT_F32
#define KT_OUT_F32 0
#endif
#ifndef KT_A_T
#define KT_A_T 0
#endif
#ifndef KT_B_T
#define KT_B_T 0
#endif
#ifndef KT_BIAS
#define KT_BIAS 0
#endif
#ifndef KT_ALIGN_A
#define KT_ALIGN_A 8
#endif
#ifndef KT_ALIGN_B
#define KT_ALIGN_B 8
#endif

namespace ktg {

#if KT_DTYPE == 1
using gemm_in_t = __half;
#elif KT_DTYPE == 2
using gemm_in_t = __nv_bfloat16;
#else
using gemm_in_t = float;
#endif

#if KT_OUT_F32
using gemm_out_t = float;
#else
using gemm_out_t = gemm_in_t;
#endif

/// Element value as float.
__device__ __forceinline__ float to_float(float v) { return v; }
/// Element value as float.
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
/// Element value as float.
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

/// Float rounded (to nearest even) into an element type.
template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// Compile-time type equality (NVRTC has no <type_traits>).
template <class A, class B> struct same_type { static constexpr bool value = false; };
template <class A> struct same_type<A, A> { static constexpr bool value = true; };

/// Compile-time minimum.
__host__ __device__ constexpr int cmin(int a, int b) { return a < b ? a : b; }
/// Compile-time ceiling division.
__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }

/// Output tile (row and column tile index) of a thread block.
struct TileCoord {
  int m;
  int n;
};

/// Rasterization: maps a linear block id to an output tile so that GROUP_M consecutive tile
/// rows are walked column by column (blocks running together share A rows and B columns in
/// L2). group_m = 1 is plain row-major order. Every id in [0, tiles_m * tiles_n) maps to a
/// distinct tile.
__device__ __forceinline__ TileCoord tile_coords(int pid, int tiles_m, int tiles_n,
                                                 int group_m) {
  const int per_group = group_m * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * group_m;
  const int size_m = cmin(tiles_m - first_m, group_m);
  const int in_group = pid - group * per_group;
  return {first_m + in_group % size_m, in_group / size_m};
}

/// The half-open range of BK-wide k tiles handled by split `split` of `splits`; the ranges
/// partition [0, ceil(K / bk)) and may be empty for the last splits.
struct KRange {
  int begin;
  int end;
};

/// K tiles of one split.
__device__ __forceinline__ KRange split_k_range(int K, int bk, int split, int splits) {
  const int tiles = (K + bk - 1) / bk;
  const int per_split = (tiles + splits - 1) / splits;
  const int begin = split * per_split;
  const int end = begin + per_split < tiles ? begin + per_split : tiles;
  return {begin, end > begin ? end : begin};
}

/// Final value of one output element: alpha * acc + beta * C (C not read when beta == 0)
/// + bias[col]; elements outside M x N are skipped.
template <bool HasBias, class OutT>
__device__ __forceinline__ void store_output(OutT* C, const OutT* bias, int M, int N, int row,
                                             int col, float acc, float alpha, float beta) {
  if (row >= M || col >= N) return;
  const long long i = static_cast<long long>(row) * N + col;
  float v = alpha * acc;
  if (beta != 0.0f) v += beta * to_float(C[i]);
  if constexpr (HasBias) v += to_float(bias[col]);
  C[i] = from_float<OutT>(v);
}

/// Split-K partial result of one element: the raw fp32 accumulator into slice `split` of the
/// workspace (splits x M x N floats); elements outside M x N are skipped.
__device__ __forceinline__ void store_partial(float* workspace, int split, int M, int N, int row,
                                              int col, float acc) {
  if (row >= M || col >= N) return;
  workspace[(static_cast<long long>(split) * M + row) * N + col] = acc;
}

/// Writes one accumulator either as the final output (splits == 1) or as a split-K partial.
template <int Splits, bool HasBias, class OutT>
__device__ __forceinline__ void store_accumulator(OutT* C, const OutT* bias, float* workspace,
                                                  int split, int M, int N, int row, int col,
                                                  float acc, float alpha, float beta) {
  if constexpr (Splits == 1)
    store_output<HasBias>(C, bias, M, N, row, col, acc, alpha, beta);
  else
    store_partial(workspace, split, M, N, row, col, acc);
}

/// Two elements of one type stored together (one 2-element memory access when aligned).
template <class T>
struct alignas(2 * sizeof(T)) ElementPair {
  T x;  ///< first column
  T y;  ///< second column
};

/// True when element pairs (even column, N even) of C, and of the workspace when it is used,
/// can be accessed as one aligned access: N even and both base pointers aligned.
template <int Splits, class OutT>
__device__ __forceinline__ bool pairs_aligned(const OutT* C, const float* workspace, int N) {
  const unsigned long long c = reinterpret_cast<unsigned long long>(C);
  const unsigned long long w = reinterpret_cast<unsigned long long>(workspace);
  return N % 2 == 0 && c % (2 * sizeof(OutT)) == 0 && (Splits == 1 || w % 8 == 0);
}

/// Two accumulators of adjacent columns (col even) written as store_accumulator writes them,
/// with one 2-element access of C (and of the workspace) when `paired` (pairs_aligned) and
/// both columns lie inside the matrix.
template <int Splits, bool HasBias, class OutT>
__device__ __forceinline__ void store_accumulator_pair(OutT* C, const OutT* bias,
                                                       float* workspace, int split, int M, int N,
                                                       int row, int col, float acc0, float acc1,
                                                       float alpha, float beta, bool paired) {
  if (!paired || row >= M || col + 1 >= N) {
    store_accumulator<Splits, HasBias>(C, bias, workspace, split, M, N, row, col, acc0, alpha,
                                       beta);
    store_accumulator<Splits, HasBias>(C, bias, workspace, split, M, N, row, col + 1, acc1,
                                       alpha, beta);
    return;
  }
  if constexpr (Splits == 1) {
    const long long i = static_cast<long long>(row) * N + col;
    float v0 = alpha * acc0;
    float v1 = alpha * acc1;
    if (beta != 0.0f) {
      const ElementPair<OutT> old = *reinterpret_cast<const ElementPair<OutT>*>(C + i);
      v0 += beta * to_float(old.x);
      v1 += beta * to_float(old.y);
    }
    if constexpr (HasBias) {
      v0 += to_float(bias[col]);
      v1 += to_float(bias[col + 1]);
    }
    ElementPair<OutT> out;
    out.x = from_float<OutT>(v0);
    out.y = from_float<OutT>(v1);
    *reinterpret_cast<ElementPair<OutT>*>(C + i) = out;
  } else {
    *reinterpret_cast<float2*>(workspace + (static_cast<long long>(split) * M + row) * N + col) =
        make_float2(acc0, acc1);
  }
}

/// Second step of split-K: sums the `splits` fp32 slices of the workspace and applies the
/// epilogue. Grid-stride loop over the M x N outputs (any grid size is correct).
template <bool HasBias, class OutT>
__device__ __forceinline__ void split_k_reduce(const float* __restrict__ workspace, OutT* C,
                                               const OutT* bias, int M, int N, int splits,
                                               float alpha, float beta) {
  const long long total = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    float sum = 0.0f;
    for (int s = 0; s < splits; ++s) sum += workspace[s * total + i];
    const int row = static_cast<int>(i / N);
    const int col = static_cast<int>(i - static_cast<long long>(row) * N);
    store_output<HasBias>(C, bias, M, N, row, col, sum, alpha, beta);
  }
}

/// Copies the rows x cols row-major matrix `src` into `dst` with rows of cols_padded elements
/// (cols_padded a multiple of 8, > cols), the extra columns zero: one 16-byte chunk of dst per
/// thread and step of a grid-stride loop (src read element by element: its rows need not be
/// aligned). A GEMM over the padded K reads the zero columns of both operands, which add 0.
template <class T>
__device__ __forceinline__ void pad_rows(const T* __restrict__ src, T* __restrict__ dst,
                                         int rows, int cols, int cols_padded) {
  static_assert(sizeof(T) == 2, "16-bit elements: 8 per 16-byte chunk");
  const int chunks_per_row = cols_padded / 8;
  const long long total = static_cast<long long>(rows) * chunks_per_row;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const int row = static_cast<int>(i / chunks_per_row);
    const int col0 = static_cast<int>(i - static_cast<long long>(row) * chunks_per_row) * 8;
    const T* s = src + static_cast<long long>(row) * cols;
    alignas(16) unsigned short chunk[8];
#pragma unroll
    for (int e = 0; e < 8; ++e)
      chunk[e] = col0 + e < cols ? reinterpret_cast<const unsigned short*>(s)[col0 + e] : 0;
    *reinterpret_cast<uint4*>(dst + static_cast<long long>(row) * cols_padded + col0) =
        *reinterpret_cast<const uint4*>(chunk);
  }
}

}  // namespace ktg

/// Defines the extern "C" K-padding entry NAME of a GEMM kernel file: ktg::pad_rows of a
/// rows x cols operand into rows of cols_padded elements (zero filled).
#define KTG_DEFINE_PAD_K(NAME, IN_T)                                                          \
  extern "C" __global__ void __launch_bounds__(256)                                           \
      NAME(const IN_T* __restrict__ src, IN_T* __restrict__ dst, int rows, int cols,          \
           int cols_padded) {                                                                 \
    ktg::pad_rows(src, dst, rows, cols, cols_padded);                                         \
  }

/// Defines the extern "C" split-K reduction entry NAME of a GEMM kernel file (only when
/// SPLIT_K > 1): sums the SPLIT_K fp32 slices of the workspace and applies the epilogue.
#define KTG_DEFINE_SPLIT_K_REDUCE(NAME, OUT_T)                                             \
  extern "C" __global__ void __launch_bounds__(256)                                        \
      NAME(const float* __restrict__ workspace, OUT_T* C, const OUT_T* bias, int M, int N, \
           float alpha, float beta) {                                                     \
    ktg::split_k_reduce<KT_BIAS != 0>(workspace, C, bias, M, N, SPLIT_K, alpha, beta);     \
  }
