// gemm_simt: C = alpha * op(A) * op(B) + beta * C (+ bias[col]) in fp32 on the CUDA cores (no
// tensor cores, the counterpart of cuBLAS SGEMM without TF32). Each thread computes a TM x TN
// sub-tile from k-major shared-memory tiles read with vector loads; warps are WARP_ROWS x
// (32 / WARP_ROWS) threads; global tiles are read with VEC-wide guarded loads (narrower when
// the leading dimension is not a multiple) and staged in registers, which also transposes
// the k-contiguous operands; STAGES = 2 double-buffers shared memory so that the loads of
// the next k tile overlap the products of the current one. PAD floats of padding per shared
// row break bank conflicts of the transposing stores. Tile order and split-K are those of
// gemm_common.cuh (entry gemm_simt_splitk_reduce finishes SPLIT_K > 1).
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WARP_ROWS
#define WARP_ROWS 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef PAD
#define PAD 4
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef KT_DTYPE
#define KT_DTYPE 0
#endif
#ifndef KT_ALIGN_A
#define KT_ALIGN_A 4
#endif
#ifndef KT_ALIGN_B
#define KT_ALIGN_B 4
#endif

#include "gemm/gemm_common.cuh"

namespace {

static_assert(KT_DTYPE == 0, "gemm_simt computes fp32 GEMM only");

constexpr int kThreadsM = BM / TM;          // threads along m
constexpr int kThreadsN = BN / TN;          // threads along n
constexpr int kThreads = kThreadsM * kThreadsN;
constexpr int kWarpCols = 32 / WARP_ROWS;   // threads of a warp along n
constexpr int kWarpsN = kThreadsN / kWarpCols;
constexpr int kVm = TM < 4 ? TM : 4;        // contiguous rows per shared-memory read
constexpr int kVn = TN < 4 ? TN : 4;        // contiguous columns per shared-memory read
constexpr int kALd = BM + PAD;              // shared row length of the [k][m] A tile
constexpr int kBLd = BN + PAD;              // shared row length of the [k][n] B tile
constexpr int kStageFloats = BK * (kALd + kBLd);

static_assert(BM % TM == 0 && BN % TN == 0, "block tile must be a multiple of the thread tile");
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads must be whole warps, <= 1024");
static_assert(kThreadsM % WARP_ROWS == 0 && kThreadsN % kWarpCols == 0,
              "warp shape must divide the thread grid");
static_assert(TM % kVm == 0 && TN % kVn == 0 && PAD % 4 == 0, "vector shared reads");
static_assert(STAGES == 1 || STAGES == 2, "gemm_simt has 1 or 2 shared-memory stages");

/// A Rows x Cols tile of a row-major fp32 matrix (Cols contiguous, leading dimension `ld`
/// divisible by V) held in registers: V-wide loads inside the matrix, element-wise guarded
/// loads with zeros at its edges; stored to shared memory as is or transposed.
template <int Rows, int Cols, int V>
struct RegisterTile {
  static constexpr int kChunksPerRow = Cols / V;
  static constexpr int kChunks = Rows * kChunksPerRow;
  static constexpr int kPerThread = ktg::cdiv(kChunks, kThreads);
  static_assert(Cols % V == 0, "tile width must be a multiple of the vector width");
  float v[kPerThread][V];

  /// True when this thread's i-th chunk exists.
  __device__ __forceinline__ static bool owns(int i, int tid) {
    return kChunks % kThreads == 0 || tid + i * kThreads < kChunks;
  }

  /// Tile row and first column of this thread's i-th chunk.
  __device__ __forceinline__ static void chunk_at(int i, int tid, int& r, int& c) {
    const int idx = tid + i * kThreads;
    r = idx / kChunksPerRow;
    c = (idx - r * kChunksPerRow) * V;
  }

  /// Reads the tile at (row0, col0); rows >= row_limit and columns >= col_limit read as 0.
  __device__ __forceinline__ void load(const float* __restrict__ g, long long ld, int row0,
                                       int col0, int row_limit, int col_limit, int tid) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (!owns(i, tid)) break;
      int r, c;
      chunk_at(i, tid, r, c);
      const int grow = row0 + r;
      const int gcol = col0 + c;
      const float* p = g + grow * ld + gcol;
      if (grow < row_limit && gcol + V <= col_limit) {
        if constexpr (V == 4) {
          const float4 x = *reinterpret_cast<const float4*>(p);
          v[i][0] = x.x; v[i][1] = x.y; v[i][2] = x.z; v[i][3] = x.w;
        } else if constexpr (V == 2) {
          const float2 x = *reinterpret_cast<const float2*>(p);
          v[i][0] = x.x; v[i][1] = x.y;
        } else {
          v[i][0] = *p;
        }
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
          v[i][e] = grow < row_limit && gcol + e < col_limit ? p[e] : 0.0f;
      }
    }
  }

  /// Writes the tile to shared memory as [row][col] with row length `ld`.
  __device__ __forceinline__ void store(float* s, int ld, int tid) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (!owns(i, tid)) break;
      int r, c;
      chunk_at(i, tid, r, c);
      float* p = s + r * ld + c;
      if constexpr (V == 4) {
        *reinterpret_cast<float4*>(p) = make_float4(v[i][0], v[i][1], v[i][2], v[i][3]);
      } else if constexpr (V == 2) {
        *reinterpret_cast<float2*>(p) = make_float2(v[i][0], v[i][1]);
      } else {
        *p = v[i][0];
      }
    }
  }

  /// Writes the tile to shared memory transposed, as [col][row] with row length `ld`.
  __device__ __forceinline__ void store_transposed(float* s, int ld, int tid) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (!owns(i, tid)) break;
      int r, c;
      chunk_at(i, tid, r, c);
#pragma unroll
      for (int e = 0; e < V; ++e) s[(c + e) * ld + r] = v[i][e];
    }
  }
};

constexpr int kVa = ktg::cmin(VEC, KT_ALIGN_A);  // vector width of A loads
constexpr int kVb = ktg::cmin(VEC, KT_ALIGN_B);  // vector width of B loads
// Global tiles: A is M x K (KT_A_T = 0) or K x M; B is K x N (KT_B_T = 0) or N x K.
using ATile = RegisterTile<KT_A_T ? BK : BM, KT_A_T ? BM : BK, kVa>;
using BTile = RegisterTile<KT_B_T ? BN : BK, KT_B_T ? BK : BN, kVb>;

/// Global -> registers for k tile `kt`.
__device__ __forceinline__ void load_tiles(ATile& a, BTile& b, const float* A, const float* B,
                                           int M, int N, int K, int m0, int n0, int kt,
                                           int tid) {
  const int k0 = kt * BK;
  if constexpr (KT_A_T)
    a.load(A, M, k0, m0, K, M, tid);
  else
    a.load(A, K, m0, k0, M, K, tid);
  if constexpr (KT_B_T)
    b.load(B, K, n0, k0, N, K, tid);
  else
    b.load(B, N, k0, n0, K, N, tid);
}

/// Registers -> shared stage as k-major [k][m] and [k][n] tiles.
__device__ __forceinline__ void store_tiles(const ATile& a, const BTile& b, float* stage,
                                            int tid) {
  float* sA = stage;
  float* sB = stage + BK * kALd;
  if constexpr (KT_A_T)
    a.store(sA, kALd, tid);
  else
    a.store_transposed(sA, kALd, tid);
  if constexpr (KT_B_T)
    b.store_transposed(sB, kBLd, tid);
  else
    b.store(sB, kBLd, tid);
}

/// Reads n (1, 2 or 4) contiguous floats (shared or global memory).
template <int n>
__device__ __forceinline__ void read_shared(float* dst, const float* src) {
  if constexpr (n == 4) {
    const float4 x = *reinterpret_cast<const float4*>(src);
    dst[0] = x.x; dst[1] = x.y; dst[2] = x.z; dst[3] = x.w;
  } else if constexpr (n == 2) {
    const float2 x = *reinterpret_cast<const float2*>(src);
    dst[0] = x.x; dst[1] = x.y;
  } else {
    dst[0] = *src;
  }
}

/// Writes n (1, 2 or 4) contiguous floats.
template <int n>
__device__ __forceinline__ void write_vector(float* dst, const float* src) {
  if constexpr (n == 4) {
    *reinterpret_cast<float4*>(dst) = make_float4(src[0], src[1], src[2], src[3]);
  } else if constexpr (n == 2) {
    *reinterpret_cast<float2*>(dst) = make_float2(src[0], src[1]);
  } else {
    dst[0] = src[0];
  }
}

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K); block: kThreads; dynamic shared
/// memory STAGES * kStageFloats * 4 bytes. `bias` is ignored unless KT_BIAS; `workspace`
/// (SPLIT_K x M x N floats) is used only when SPLIT_K > 1.
extern "C" __global__ void __launch_bounds__(kThreads)
    gemm_simt(const float* __restrict__ A, const float* __restrict__ B, float* C,
              const float* bias, float* workspace, int M, int N, int K, float alpha,
              float beta) {
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int thread_m = (warp / kWarpsN) * WARP_ROWS + lane / kWarpCols;
  const int thread_n = (warp % kWarpsN) * kWarpCols + lane % kWarpCols;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const ktg::TileCoord tile = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int m0 = tile.m * BM;
  const int n0 = tile.n * BN;
  const ktg::KRange kr = ktg::split_k_range(K, BK, blockIdx.z, SPLIT_K);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  ATile a_regs;
  BTile b_regs;
  if constexpr (STAGES == 2) {
    if (kr.begin < kr.end) {
      load_tiles(a_regs, b_regs, A, B, M, N, K, m0, n0, kr.begin, tid);
      store_tiles(a_regs, b_regs, smem, tid);
    }
    __syncthreads();
  }

  for (int kt = kr.begin; kt < kr.end; ++kt) {
    const int stage = STAGES == 2 ? (kt - kr.begin) & 1 : 0;
    const bool has_next = STAGES == 2 && kt + 1 < kr.end;
    if constexpr (STAGES == 2) {
      if (has_next) load_tiles(a_regs, b_regs, A, B, M, N, K, m0, n0, kt + 1, tid);
    } else {
      load_tiles(a_regs, b_regs, A, B, M, N, K, m0, n0, kt, tid);
      store_tiles(a_regs, b_regs, smem, tid);
      __syncthreads();
    }
    const float* sA = smem + stage * kStageFloats;
    const float* sB = sA + BK * kALd;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM];
      float b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += kVm)
        read_shared<kVm>(a + i, sA + k * kALd + (i / kVm) * kThreadsM * kVm + thread_m * kVm);
#pragma unroll
      for (int j = 0; j < TN; j += kVn)
        read_shared<kVn>(b + j, sB + k * kBLd + (j / kVn) * kThreadsN * kVn + thread_n * kVn);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if constexpr (STAGES == 2) {
      if (has_next) store_tiles(a_regs, b_regs, smem + (stage ^ 1) * kStageFloats, tid);
    }
    __syncthreads();
  }

  // Interior block tiles (no split-K, N a multiple of the vector, C aligned to it): no bounds
  // checks, kVn-wide accesses of C, and the reads of C (beta != 0) issued kVm rows at a time
  // ahead of the stores (interleaved with the stores that may alias them, every read would
  // wait out a full memory latency).
  if (SPLIT_K == 1 && m0 + BM <= M && n0 + BN <= N && N % kVn == 0 &&
      reinterpret_cast<unsigned long long>(C) % (kVn * sizeof(float)) == 0) {
    const long long ldc = N;
    float* c_thread = C + (static_cast<long long>(m0 + thread_m * kVm) * ldc + n0 + thread_n * kVn);
    float bias_v[TN];
#pragma unroll
    for (int j = 0; j < TN; ++j)
      bias_v[j] = KT_BIAS ? bias[n0 + (j / kVn) * kThreadsN * kVn + thread_n * kVn + j % kVn]
                          : 0.0f;
#pragma unroll
    for (int i0 = 0; i0 < TM; i0 += kVm) {
      float old[kVm][TN];
      const long long row_base = (i0 / kVm) * kThreadsM * kVm;
#pragma unroll
      for (int r = 0; r < kVm; ++r)
#pragma unroll
        for (int j = 0; j < TN; j += kVn) {
          if (beta != 0.0f)
            read_shared<kVn>(old[r] + j,
                             c_thread + ((row_base + r) * ldc + (j / kVn) * kThreadsN * kVn));
          else
#pragma unroll
            for (int e = 0; e < kVn; ++e) old[r][j + e] = 0.0f;
        }
#pragma unroll
      for (int r = 0; r < kVm; ++r)
#pragma unroll
        for (int j = 0; j < TN; j += kVn) {
          float out[kVn];
#pragma unroll
          for (int e = 0; e < kVn; ++e)
            out[e] = alpha * acc[i0 + r][j + e] + beta * old[r][j + e] + bias_v[j + e];
          write_vector<kVn>(c_thread + ((row_base + r) * ldc + (j / kVn) * kThreadsN * kVn), out);
        }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + (i / kVm) * kThreadsM * kVm + thread_m * kVm + i % kVm;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = n0 + (j / kVn) * kThreadsN * kVn + thread_n * kVn + j % kVn;
      ktg::store_accumulator<SPLIT_K, KT_BIAS != 0>(C, bias, workspace, blockIdx.z, M, N, row,
                                                   col, acc[i][j], alpha, beta);
    }
  }
}

#if SPLIT_K > 1
KTG_DEFINE_SPLIT_K_REDUCE(gemm_simt_splitk_reduce, float)
#endif
