// Shared pieces of the conv2d implicit-GEMM kernels (conv2d_mma.cu, conv2d_simt.cu): the
// problem constants, the implicit-GEMM view of NHWC activations as A[m][k] (m = output pixel
// (n, p, q), k = (r, s, c) filter tap and channel, matching the KRSC filter rows B[n][k]),
// the A-tile iterator in its two strategies (analytic: every tile's offsets recomputed from
// m and k; precomputed: per-row image offsets kept in registers and the (r, s, c) position
// advanced incrementally), the small-C path (channels zero-padded to a multiple of 4 by a
// pre-pass so that 8/16-byte copies apply), and the epilogue (bias, ReLU, split-K).
//
// Problem defines (set by the host template from the checked problem; defaults let every
// kernel file compile on its own):
//   KT_DTYPE 0 = f32, 1 = f16, 2 = bf16      KT_C, KT_R, KT_S  channels and filter size
//   KT_STRIDE, KT_PAD, KT_DIL                 stride, zero padding, dilation (both axes)
//   KT_BIAS 1 = add bias[k]                   KT_RELU 1 = max(0, .) after the bias
// Config define read here: SMALL_C (1 = kernels read channel-padded copies of x and w).
#pragma once

#ifndef KT_C
#define KT_C 64
#endif
#ifndef KT_R
#define KT_R 3
#endif
#ifndef KT_S
#define KT_S 3
#endif
#ifndef KT_STRIDE
#define KT_STRIDE 1
#endif
#ifndef KT_PAD
#define KT_PAD 1
#endif
#ifndef KT_DIL
#define KT_DIL 1
#endif
#ifndef KT_BIAS
#define KT_BIAS 0
#endif
#ifndef KT_RELU
#define KT_RELU 0
#endif
#ifndef SMALL_C
#define SMALL_C 0
#endif

#include "gemm/gemm_common.cuh"

namespace ktc {

using ktg::cdiv;
using ktg::cmin;

/// Channels as the main kernel sees them (padded to a multiple of 4 on the small-C path).
constexpr int kChannels = SMALL_C ? (KT_C + 3) / 4 * 4 : KT_C;
/// The implicit GEMM's reduced dimension: R * S * channels.
constexpr int kGemmK = KT_R * KT_S * kChannels;

/// Largest power-of-two number of elements (at most MaxElems) dividing `n`.
__host__ __device__ constexpr int pow2_divisor(int n, int max_elems) {
  return max_elems <= 1 || n % max_elems == 0 ? max_elems : pow2_divisor(n, max_elems / 2);
}

/// Elements of one global copy of an activation chunk: whole chunks stay inside one pixel's
/// channels (so a chunk is either fully valid or fully padding) and are naturally aligned.
template <class T, int MaxVec>
__host__ __device__ constexpr int activation_vector() {
  return pow2_divisor(kChannels, cmin(MaxVec, 16 / static_cast<int>(sizeof(T))));
}

/// Elements of one global copy of a filter chunk (rows of kGemmK elements).
template <class T, int MaxVec>
__host__ __device__ constexpr int filter_vector() {
  return pow2_divisor(kGemmK, cmin(MaxVec, 16 / static_cast<int>(sizeof(T))));
}

/// Output geometry passed to the kernels at run time.
struct ConvDims {
  int N, H, W, K, P, Q;
  /// Output pixels: the implicit GEMM's M.
  __device__ __forceinline__ int pixels() const { return N * P * Q; }
};

/// Position of output pixel m: image offset (elements) and top-left input coordinates.
struct PixelOrigin {
  long long image;  ///< offset of image n in x
  int h0;           ///< p * stride - pad (a large negative value marks m >= M)
  int w0;           ///< q * stride - pad
};

/// Decomposes output pixel m (rows past M get an origin no tap can reach).
__device__ __forceinline__ PixelOrigin pixel_origin(int m, const ConvDims& d) {
  if (m >= d.pixels()) return {0, -(1 << 29), 0};
  const int pq = d.P * d.Q;
  const int n = m / pq;
  const int rem = m - n * pq;
  const int p = rem / d.Q;
  const int q = rem - p * d.Q;
  return {static_cast<long long>(n) * d.H * d.W * kChannels, p * KT_STRIDE - KT_PAD,
          q * KT_STRIDE - KT_PAD};
}

/// Position (r, s, c) of reduced index k.
struct FilterTap {
  int r, s, c;
};

/// Decomposes k = (r * S + s) * channels + c (compile-time divisors).
__device__ __forceinline__ FilterTap filter_tap(int k) {
  const int rs = k / kChannels;
  return {rs / KT_S, rs % KT_S, k % kChannels};
}

/// Element offset in x of tap `t` for pixel origin `o`, or -1 when the tap reads padding
/// (outside the image, past R, or past M).
__device__ __forceinline__ long long tap_offset(const PixelOrigin& o, const FilterTap& t,
                                                const ConvDims& d) {
  const int h = o.h0 + t.r * KT_DIL;
  const int w = o.w0 + t.s * KT_DIL;
  if (t.r >= KT_R || static_cast<unsigned>(h) >= static_cast<unsigned>(d.H) ||
      static_cast<unsigned>(w) >= static_cast<unsigned>(d.W))
    return -1;
  return o.image + (static_cast<long long>(h) * d.W + w) * kChannels + t.c;
}

/// The A tile (Rows output pixels x Cols reduced indices) of the implicit GEMM, cut into
/// chunks of V consecutive channels; chunk idx = tid + i * Threads sits at row idx / (Cols/V),
/// column (idx % (Cols/V)) * V. Precomputed = true keeps each chunk's pixel origin (and the
/// offset of its top-left tap) in registers and advances one shared (r, s, c) position and
/// its offset delta per tile, so a chunk costs two range checks and an add (needs every
/// chunk of a thread in the same column: Threads a multiple of Cols / V); false recomputes
/// both from m and k for every tile (fewer registers, more integer work).
template <int Rows, int Cols, int V, int Threads, bool Precomputed>
struct ImplicitGemmA {
  static constexpr int kChunksPerRow = Cols / V;                ///< chunks per tile row
  static constexpr int kChunks = Rows * kChunksPerRow;          ///< chunks per tile
  static constexpr int kPerThread = cdiv(kChunks, Threads);     ///< chunks per thread
  static_assert(Cols % V == 0, "tile width must be a multiple of the copy width");
  static_assert(!Precomputed || Threads % kChunksPerRow == 0,
                "precomputed offsets need every chunk of a thread in one column");

  PixelOrigin origin[Precomputed ? kPerThread : 1];  ///< per chunk (precomputed only)
  long long corner[Precomputed ? kPerThread : 1];    ///< offset of tap (0, 0, 0) per chunk
  FilterTap tap;                                     ///< of this thread's column (precomputed)
  long long delta;                                   ///< offset of `tap` from tap (0, 0, 0)
  int m0;                                            ///< first pixel of the tile
  int tid;                                           ///< this thread

  /// True when this thread's i-th chunk exists.
  __device__ __forceinline__ static bool owns(int i, int tid) {
    return kChunks % Threads == 0 || tid + i * Threads < kChunks;
  }
  /// Tile row of this thread's i-th chunk.
  __device__ __forceinline__ static int row_of(int i, int tid) {
    return (tid + i * Threads) / kChunksPerRow;
  }
  /// Tile column (first element) of this thread's i-th chunk.
  __device__ __forceinline__ static int col_of(int i, int tid) {
    return ((tid + i * Threads) % kChunksPerRow) * V;
  }

  /// Prepares the iterator for the tile at pixel m0 whose first k tile starts at k_begin.
  __device__ __forceinline__ void init(int m_first, int k_begin, const ConvDims& d, int t) {
    m0 = m_first;
    tid = t;
    if constexpr (Precomputed) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        origin[i] = pixel_origin(owns(i, tid) ? m0 + row_of(i, tid) : d.pixels(), d);
        corner[i] = origin[i].image +
                    (static_cast<long long>(origin[i].h0) * d.W + origin[i].w0) * kChannels;
      }
      tap = filter_tap(k_begin + col_of(0, tid));
      update_delta(d);
    }
  }

  /// Element offset in x of this thread's i-th chunk of the k tile starting at k0, or -1 for
  /// a chunk of zeros.
  __device__ __forceinline__ long long offset(int i, int k0, const ConvDims& d) const {
    if constexpr (Precomputed) {
      const int h = origin[i].h0 + tap.r * KT_DIL;
      const int w = origin[i].w0 + tap.s * KT_DIL;
      const bool inside = tap.r < KT_R && static_cast<unsigned>(h) < static_cast<unsigned>(d.H) &&
                          static_cast<unsigned>(w) < static_cast<unsigned>(d.W);
      return inside ? corner[i] + delta : -1;
    } else {
      const int k = k0 + col_of(i, tid);
      if (k >= kGemmK) return -1;
      return tap_offset(pixel_origin(m0 + row_of(i, tid), d), filter_tap(k), d);
    }
  }

  /// Moves to the next k tile (precomputed: constant-time carry of c into s into r).
  __device__ __forceinline__ void advance(const ConvDims& d) {
    if constexpr (Precomputed) {
      tap.c += Cols % kChannels;
      int carry = Cols / kChannels;
      if (tap.c >= kChannels) {
        tap.c -= kChannels;
        ++carry;
      }
      tap.s += carry;
      tap.r += tap.s / KT_S;
      tap.s %= KT_S;
      update_delta(d);
    }
  }

 private:
  /// delta = offset of (r, s, c) relative to tap (0, 0, 0) of the same pixel.
  __device__ __forceinline__ void update_delta(const ConvDims& d) {
    delta = (static_cast<long long>(tap.r * KT_DIL) * d.W + tap.s * KT_DIL) * kChannels + tap.c;
  }
};

/// Adds the bias of output channel `col` and applies ReLU, as configured.
template <class T>
__device__ __forceinline__ float finish(float v, const T* bias, int col) {
  if constexpr (KT_BIAS != 0) v += ktg::to_float(bias[col]);
  if constexpr (KT_RELU != 0) v = v > 0.0f ? v : 0.0f;
  return v;
}

/// Stores two horizontally adjacent accumulators (columns col, col + 1 of pixel row `row`)
/// as final outputs (Splits == 1: bias, ReLU, one paired store when possible) or as split-K
/// partials into slice `split` of the workspace; elements outside M x K are skipped.
template <int Splits, class T>
__device__ __forceinline__ void store_pair(T* y, const T* bias, float* workspace, int split,
                                           int M, int K, int row, int col, float v0, float v1) {
  if (row >= M || col >= K) return;
  if constexpr (Splits > 1) {
    ktg::store_partial(workspace, split, M, K, row, col, v0);
    ktg::store_partial(workspace, split, M, K, row, col + 1, v1);
  } else {
    const long long i = static_cast<long long>(row) * K + col;
    v0 = finish(v0, bias, col);
    if constexpr (sizeof(T) == 2) {
      if (col + 1 < K && (K & 1) == 0) {  // even K, even col: a 4-byte aligned pair
        const T pair[2] = {ktg::from_float<T>(v0), ktg::from_float<T>(finish(v1, bias, col + 1))};
        *reinterpret_cast<unsigned*>(y + i) = *reinterpret_cast<const unsigned*>(pair);
        return;
      }
    }
    y[i] = ktg::from_float<T>(v0);
    if (col + 1 < K) y[i + 1] = ktg::from_float<T>(finish(v1, bias, col + 1));
  }
}

/// Stores one accumulator: final output (bias, ReLU) or split-K partial.
template <int Splits, class T>
__device__ __forceinline__ void store_one(T* y, const T* bias, float* workspace, int split,
                                          int M, int K, int row, int col, float v) {
  if (row >= M || col >= K) return;
  if constexpr (Splits > 1)
    ktg::store_partial(workspace, split, M, K, row, col, v);
  else
    y[static_cast<long long>(row) * K + col] = ktg::from_float<T>(finish(v, bias, col));
}

/// Second step of split-K: sums the slices of the workspace in a fixed order, then bias and
/// ReLU. Grid-stride over the M x K outputs.
template <class T>
__device__ __forceinline__ void split_k_finish(const float* __restrict__ workspace, T* y,
                                               const T* bias, int M, int K, int splits) {
  const long long total = static_cast<long long>(M) * K;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    float sum = 0.0f;
    for (int s = 0; s < splits; ++s) sum += workspace[s * total + i];
    y[i] = ktg::from_float<T>(finish(sum, bias, static_cast<int>(i % K)));
  }
}

/// Small-C pre-pass: copies `rows` rows of KT_C channels into rows of kChannels, the extra
/// channels zero. Grid-stride over the padded elements.
template <class T>
__device__ __forceinline__ void pad_channels(const T* __restrict__ src, T* __restrict__ dst,
                                             long long rows) {
  const long long total = rows * kChannels;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const long long row = i / kChannels;
    const int c = static_cast<int>(i - row * kChannels);
    dst[i] = c < KT_C ? src[row * KT_C + c] : ktg::from_float<T>(0.0f);
  }
}

}  // namespace ktc

/// Defines the helper entries of a conv kernel file: conv2d_splitk_reduce (SPLIT_K > 1) and
/// conv2d_pad_channels (SMALL_C), both over element type T.
#define KTC_DEFINE_HELPER_KERNELS(T)                                                         \
  extern "C" __global__ void __launch_bounds__(256)                                          \
      conv2d_splitk_reduce(const float* __restrict__ workspace, T* y, const T* bias, int M,  \
                           int K, int splits) {                                              \
    ktc::split_k_finish(workspace, y, bias, M, K, splits);                                   \
  }                                                                                          \
  extern "C" __global__ void __launch_bounds__(256)                                          \
      conv2d_pad_channels(const T* __restrict__ src, T* __restrict__ dst, long long rows) {  \
    ktc::pad_channels(src, dst, rows);                                                       \
  }
