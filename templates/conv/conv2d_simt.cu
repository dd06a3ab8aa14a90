// conv2d_simt: forward 2-D convolution in fp32 on the CUDA cores (the counterpart of cuDNN
// fp32 without TF32), NHWC activations x KRSC filters -> NHWC output (+ bias[k], ReLU), as an
// implicit GEMM: M = N*P*Q output pixels, N = K output channels, K = R*S*C. Each thread
// computes a TM x TN block of outputs from k-major shared tiles read with float4 loads. The
// activation tile is gathered by the implicit-GEMM iterator of conv_common.cuh (VEC-wide
// loads inside a pixel's channels, zeros for padding taps), the filter tile with VEC-wide
// guarded loads; both are staged in registers and stored transposed into shared memory,
// double-buffered so that the loads of the next k tile overlap the products of this one.
// SPLIT_K > 1 splits R*S*C and finishes in conv2d_splitk_reduce; SMALL_C reads
// channel-padded copies (C = 3 becomes 4: float4 loads).
//
// Tunables: BM x BN block tile, BK k tile, TM x TN thread tile (4 or 8), VEC (1, 2, 4),
// SPLIT_K, GROUP_M, ITER (0 analytic offsets, 1 precomputed), SMALL_C.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef ITER
#define ITER 1
#endif
#ifndef KT_DTYPE
#define KT_DTYPE 0
#endif

#include "conv/conv_common.cuh"

namespace {

static_assert(KT_DTYPE == 0, "conv2d_simt computes fp32 convolutions only");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are multiples of 4 (float4 reads)");

constexpr int kThreadsM = BM / TM;  // threads along the pixels
constexpr int kThreadsN = BN / TN;  // threads along the output channels
constexpr int kThreads = kThreadsM * kThreadsN;
constexpr int kPad = 4;             // floats of padding per shared row (conflict-free stores)
constexpr int kALd = BM + kPad;     // row length of the [k][m] activation tile
constexpr int kBLd = BN + kPad;     // row length of the [k][n] filter tile
constexpr int kStageFloats = BK * (kALd + kBLd);
constexpr int kVecA = ktc::activation_vector<float, VEC>();
constexpr int kVecB = ktc::filter_vector<float, VEC>();

static_assert(BM % TM == 0 && BN % TN == 0, "block tile must be a multiple of the thread tile");
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads must be whole warps, <= 1024");

using AIter = ktc::ImplicitGemmA<BM, BK, kVecA, kThreads, ITER != 0>;

/// Loads V consecutive floats (V-aligned) or zeros.
template <int V>
__device__ __forceinline__ void load_vec(float (&v)[V], const float* p, bool valid) {
  if (!valid) {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = 0.0f;
  } else if constexpr (V == 4) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
  } else if constexpr (V == 2) {
    const float2 q = *reinterpret_cast<const float2*>(p);
    v[0] = q.x; v[1] = q.y;
  } else {
    v[0] = *p;
  }
}

/// One k tile of both operands held in registers between the global loads and the
/// transposing stores to shared memory.
struct StagedTiles {
  static constexpr int kBChunksPerRow = BK / kVecB;
  static constexpr int kBChunks = BN * kBChunksPerRow;
  static constexpr int kBPerThread = ktc::cdiv(kBChunks, kThreads);
  float a[AIter::kPerThread][kVecA];
  float b[kBPerThread][kVecB];

  /// True when this thread's i-th filter chunk exists.
  __device__ __forceinline__ static bool owns_b(int i, int tid) {
    return kBChunks % kThreads == 0 || tid + i * kThreads < kBChunks;
  }

  /// Global -> registers for the k tile at k0 (advances the activation iterator).
  __device__ __forceinline__ void load(const float* __restrict__ x, const float* __restrict__ w,
                                       AIter& it, int k0, int n0, const ktc::ConvDims& d,
                                       int tid) {
#pragma unroll
    for (int i = 0; i < AIter::kPerThread; ++i) {
      if (!AIter::owns(i, tid)) break;
      const long long off = it.offset(i, k0, d);
      load_vec<kVecA>(a[i], x + (off >= 0 ? off : 0), off >= 0);
    }
    it.advance(d);
#pragma unroll
    for (int i = 0; i < kBPerThread; ++i) {
      if (!owns_b(i, tid)) break;
      const int idx = tid + i * kThreads;
      const int row = idx / kBChunksPerRow;
      const int k = k0 + (idx - row * kBChunksPerRow) * kVecB;
      const bool valid = n0 + row < d.K && k < ktc::kGemmK;  // chunks never straddle kGemmK
      load_vec<kVecB>(b[i], w + (valid ? static_cast<long long>(n0 + row) * ktc::kGemmK + k : 0),
                      valid);
    }
  }

  /// Registers -> shared stage as k-major [k][m] and [k][n] tiles.
  __device__ __forceinline__ void store(float* stage, int tid) const {
    float* sA = stage;
    float* sB = stage + BK * kALd;
#pragma unroll
    for (int i = 0; i < AIter::kPerThread; ++i) {
      if (!AIter::owns(i, tid)) break;
      const int row = AIter::row_of(i, tid), col = AIter::col_of(i, tid);
#pragma unroll
      for (int e = 0; e < kVecA; ++e) sA[(col + e) * kALd + row] = a[i][e];
    }
#pragma unroll
    for (int i = 0; i < kBPerThread; ++i) {
      if (!owns_b(i, tid)) break;
      const int idx = tid + i * kThreads;
      const int row = idx / kBChunksPerRow;
      const int col = (idx - row * kBChunksPerRow) * kVecB;
#pragma unroll
      for (int e = 0; e < kVecB; ++e) sB[(col + e) * kBLd + row] = b[i][e];
    }
  }
};

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K); block: kThreads; dynamic shared
/// memory 2 * kStageFloats * 4 bytes. Arguments as conv2d_mma.
extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_simt(const float* __restrict__ x, const float* __restrict__ w, float* y,
                const float* bias, float* workspace, int N, int H, int W, int K, int P, int Q) {
  extern __shared__ __align__(16) float smem[];
  const ktc::ConvDims d{N, H, W, K, P, Q};
  const int M = d.pixels();
  const int tid = threadIdx.x;
  const int thread_m = tid / kThreadsN;
  const int thread_n = tid % kThreadsN;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (K + BN - 1) / BN;
  const ktg::TileCoord tile = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int m0 = tile.m * BM;
  const int n0 = tile.n * BN;
  const ktg::KRange kr = ktg::split_k_range(ktc::kGemmK, BK, blockIdx.z, SPLIT_K);

  AIter it;
  it.init(m0, kr.begin * BK, d, tid);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  StagedTiles staged;
  if (kr.begin < kr.end) {
    staged.load(x, w, it, kr.begin * BK, n0, d, tid);
    staged.store(smem, tid);
  }
  __syncthreads();

  for (int kt = kr.begin; kt < kr.end; ++kt) {
    const int stage = (kt - kr.begin) & 1;
    const bool has_next = kt + 1 < kr.end;
    if (has_next) staged.load(x, w, it, (kt + 1) * BK, n0, d, tid);
    const float* sA = smem + stage * kStageFloats;
    const float* sB = sA + BK * kALd;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM];
      float b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 q = *reinterpret_cast<const float4*>(sA + k * kALd +
                                                          (i / 4) * kThreadsM * 4 + thread_m * 4);
        a[i] = q.x; a[i + 1] = q.y; a[i + 2] = q.z; a[i + 3] = q.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 q = *reinterpret_cast<const float4*>(sB + k * kBLd +
                                                          (j / 4) * kThreadsN * 4 + thread_n * 4);
        b[j] = q.x; b[j + 1] = q.y; b[j + 2] = q.z; b[j + 3] = q.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (has_next) staged.store(smem + (stage ^ 1) * kStageFloats, tid);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + (i / 4) * kThreadsM * 4 + thread_m * 4 + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 2) {
      const int col = n0 + (j / 4) * kThreadsN * 4 + thread_n * 4 + j % 4;
      ktc::store_pair<SPLIT_K>(y, bias, workspace, blockIdx.z, M, K, row, col, acc[i][j],
                               acc[i][j + 1]);
    }
  }
}

KTC_DEFINE_HELPER_KERNELS(float)
