// gemm_simt: C = alpha * op(A) * op(B) + beta * C (+ bias[col]) in fp32 on the CUDA cores (no
// tensor cores, the counterpart of cuBLAS SGEMM without TF32). Each thread computes a TM x TN
// sub-tile from k-major shared-memory tiles read with vector loads; warps are WARP_ROWS x
// (32 / WARP_ROWS) threads, lanes paired so that shared memory returns every fragment read
// two lanes at a time; global tiles are read with VEC-wide guarded loads (narrower when the
// leading dimension is not a multiple; unchecked, from per-thread cursors, in blocks that lie
// inside the matrices) and staged in registers, which also transposes the k-contiguous
// operands. STAGES = 2 double-buffers shared memory so that the loads of the next k tile
// overlap the products of the current one; STAGES = 3 stores tiles two ahead, so that the
// next tile's first fragments are read before the tile's barrier. PAD floats of padding per
// shared row break bank conflicts of the transposing stores. Tile order and split-K are those
// of gemm_common.cuh (entry gemm_simt_splitk_reduce finishes SPLIT_K > 1).
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
constexpr int kLog2WarpRows = WARP_ROWS >= 16 ? 4 : WARP_ROWS >= 8 ? 3 : WARP_ROWS >= 4 ? 2
                              : WARP_ROWS >= 2 ? 1 : 0;
// Lanes l and l^1 share their thread row and lanes l and l^2 their thread column (both warp
// dimensions >= 2): shared memory then returns each 16-byte A or B fragment read packed, two
// lanes per request (2 cycles of the 128-byte/cycle return path per LDS.128 instead of 4).
constexpr bool kPairedLanes = WARP_ROWS >= 2 && kWarpCols >= 2;
constexpr int kVm = TM < 4 ? TM : 4;        // contiguous rows per shared-memory read
constexpr int kVn = TN < 4 ? TN : 4;        // contiguous columns per shared-memory read
constexpr int kALd = BM + PAD;              // shared row length of the [k][m] A tile
constexpr int kBLd = BN + PAD;              // shared row length of the [k][n] B tile
constexpr int kStageFloats = BK * (kALd + kBLd);
// Registers a thread needs (accumulators, one k step of fragments, the staged next tile, ~40
// for addresses, indices and scheduling slack); when two blocks fit the 64K-register file at
// that estimate, the kernel asks ptxas for two blocks per SM (at most 65536 / (2 * kThreads)
// registers): left alone, ptxas takes a few registers more in some layouts (135 for TN
// 128x128x8 with 8x8 threads) and halves the warps per SM. With 40 the 8x8, BK = 8 tiles fit
// 128 registers without spills in every layout and stage count; BK = 16 (TN spills at 128)
// gets one block.
constexpr int kRegisterEstimate =
    TM * TN + TM + TN + (STAGES >= 2 ? (BM + BN) * BK / kThreads : 0) + 40;
constexpr int kMinBlocksPerSm = kRegisterEstimate * 2 * kThreads <= 65536 ? 2 : 1;

static_assert(BM % TM == 0 && BN % TN == 0, "block tile must be a multiple of the thread tile");
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads must be whole warps, <= 1024");
static_assert(kThreadsM % WARP_ROWS == 0 && kThreadsN % kWarpCols == 0,
              "warp shape must divide the thread grid");
static_assert(TM % kVm == 0 && TN % kVn == 0 && PAD % 4 == 0, "vector shared reads");
static_assert(STAGES >= 1 && STAGES <= 3, "gemm_simt has 1 to 3 shared-memory stages");

/// Row of a lane inside its warp's WARP_ROWS x kWarpCols thread grid: lane bit 1 is the
/// row's lowest bit, lane bits 2.. its higher bits (row-major lanes without paired lanes).
__device__ __forceinline__ int lane_row(int lane) {
  if constexpr (!kPairedLanes) return lane / kWarpCols;
  return ((lane >> 1) & 1) | (((lane >> 2) & (WARP_ROWS / 2 - 1)) << 1);
}

/// Column of a lane inside its warp's thread grid: lane bit 0 is the column's lowest bit,
/// the lane bits above the row's its higher bits.
__device__ __forceinline__ int lane_col(int lane) {
  if constexpr (!kPairedLanes) return lane % kWarpCols;
  return (lane & 1) | ((lane >> (kLog2WarpRows + 1)) << 1);
}

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

  /// Reads this thread's i-th chunk from p (V-wide, unchecked).
  __device__ __forceinline__ void load_chunk(int i, const float* p) {
    if constexpr (V == 4) {
      const float4 x = *reinterpret_cast<const float4*>(p);
      v[i][0] = x.x; v[i][1] = x.y; v[i][2] = x.z; v[i][3] = x.w;
    } else if constexpr (V == 2) {
      const float2 x = *reinterpret_cast<const float2*>(p);
      v[i][0] = x.x; v[i][1] = x.y;
    } else {
      v[i][0] = *p;
    }
  }

  /// Addresses of this thread's chunks in a tile that lies inside the matrix: set once, then
  /// moved by a constant step per k tile (no per-tile index arithmetic).
  struct Cursor {
    const float* p[kPerThread];  ///< chunk i's first element
  };

  /// The cursor of the tile at (row0, col0) of a matrix with leading dimension `ld`.
  __device__ __forceinline__ static Cursor cursor(const float* g, long long ld, int row0,
                                                  int col0, int tid) {
    Cursor cur;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int r, c;
      chunk_at(i, tid, r, c);
      cur.p[i] = g + (row0 + r) * ld + col0 + c;
    }
    return cur;
  }

  /// Moves the cursor `step` elements on and reads the tile there (unchecked). Moving first
  /// lets the load use the moved pointer (moving after it costs a register copy per chunk).
  __device__ __forceinline__ void advance_and_load(Cursor& cur, long long step, int tid) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (!owns(i, tid)) break;
      cur.p[i] += step;
      load_chunk(i, cur.p[i]);
    }
  }

  /// Reads the tile at (row0, col0); rows >= row_limit and columns >= col_limit read as 0.
  /// Interior: the caller guarantees the whole tile lies inside (no checks).
  template <bool Interior>
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
      if (Interior || (grow < row_limit && gcol + V <= col_limit)) {
        load_chunk(i, p);
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

/// Global -> registers for k tile `kt` (Interior: the block's tiles lie inside A and B).
template <bool Interior>
__device__ __forceinline__ void load_tiles(ATile& a, BTile& b, const float* A, const float* B,
                                           int M, int N, int K, int m0, int n0, int kt,
                                           int tid) {
  const int k0 = kt * BK;
  if constexpr (KT_A_T)
    a.template load<Interior>(A, M, k0, m0, K, M, tid);
  else
    a.template load<Interior>(A, K, m0, k0, M, K, tid);
  if constexpr (KT_B_T)
    b.template load<Interior>(B, K, n0, k0, N, K, tid);
  else
    b.template load<Interior>(B, N, k0, n0, K, N, tid);
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

/// The k loop: accumulates the block's k tiles [kr.begin, kr.end) into `acc` (Interior:
/// every tile lies inside A and B, loads without bounds checks).
template <bool Interior>
__device__ __forceinline__ void main_loop(float (&acc)[TM][TN], const float* __restrict__ A,
                                          const float* __restrict__ B, float* smem, int M,
                                          int N, int K, int m0, int n0, ktg::KRange kr, int tid,
                                          int thread_m, int thread_n) {
  ATile a_regs;
  BTile b_regs;
  // Interior: cursors at tile kr.begin, moved one k tile per fetch (tiles are fetched in order).
  typename ATile::Cursor a_cur;
  typename BTile::Cursor b_cur;
  if constexpr (Interior) {
    const int k0 = kr.begin * BK;
    a_cur = KT_A_T ? ATile::cursor(A, M, k0, m0, tid) : ATile::cursor(A, K, m0, k0, tid);
    b_cur = KT_B_T ? BTile::cursor(B, K, n0, k0, tid) : BTile::cursor(B, N, k0, n0, tid);
  }
  const long long a_step = KT_A_T ? static_cast<long long>(BK) * M : BK;
  const long long b_step = KT_B_T ? BK : static_cast<long long>(BK) * N;
  // Interior: tiles are fetched in order from kr.begin; the cursors stop at the last k tile,
  // so that fetching past it re-reads that tile (in bounds) instead of branching around the
  // fetch and the shared-memory store.
  auto fetch = [&](int kt) {
    if constexpr (Interior) {
      const bool move = kt != kr.begin && kt < kr.end;
      a_regs.advance_and_load(a_cur, move ? a_step : 0, tid);
      b_regs.advance_and_load(b_cur, move ? b_step : 0, tid);
    } else {
      load_tiles<false>(a_regs, b_regs, A, B, M, N, K, m0, n0, kt, tid);
    }
  };
  if constexpr (STAGES >= 2) {  // tile kr.begin -> stage 0 (STAGES = 3 adds the next below)
    if (kr.begin < kr.end) {
      fetch(kr.begin);
      store_tiles(a_regs, b_regs, smem, tid);
    }
    if constexpr (STAGES == 2) __syncthreads();
  }

  // This thread's fragment bases in stage 0; read_off (floats) is the stage being read.
  const float* a_frag = smem + thread_m * kVm;
  const float* b_frag = smem + BK * kALd + thread_n * kVn;
  int read_off = 0;
  // Fragments of one k step: A's TM rows and B's TN columns of this thread.
  auto read_fragments = [&](float (&a)[TM], float (&b)[TN], int off, int k) {
#pragma unroll
    for (int i = 0; i < TM; i += kVm)
      read_shared<kVm>(a + i, a_frag + off + k * kALd + (i / kVm) * kThreadsM * kVm);
#pragma unroll
    for (int j = 0; j < TN; j += kVn)
      read_shared<kVn>(b + j, b_frag + off + k * kBLd + (j / kVn) * kThreadsN * kVn);
  };
  auto multiply = [&](const float (&a)[TM], const float (&b)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  };

  if constexpr (STAGES == 1) {
    for (int kt = kr.begin; kt < kr.end; ++kt) {
      fetch(kt);
      store_tiles(a_regs, b_regs, smem, tid);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float a[TM], b[TN];
        read_fragments(a, b, 0, k);
        multiply(a, b);
      }
      __syncthreads();
    }
  } else if constexpr (STAGES == 2) {
    // Tile kt + 1 is read from global memory while tile kt multiplies, and stored to the
    // other stage after it.
    for (int kt = kr.begin; kt < kr.end; ++kt) {
      const bool has_next = Interior || kt + 1 < kr.end;
      if (has_next) fetch(kt + 1);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float a[TM], b[TN];
        read_fragments(a, b, read_off, k);
        multiply(a, b);
      }
      if (has_next) store_tiles(a_regs, b_regs, smem + (read_off ^ kStageFloats), tid);
      read_off ^= kStageFloats;  // toggles between the two stages
      __syncthreads();
    }
  } else {
    // Three stages, tiles stored two ahead: tile kt + 2 is read from global memory while tile
    // kt multiplies and stored after it into the stage tile kt - 1 used. Tile kt + 1 was
    // stored before the previous barrier, so the first fragments of tile kt + 1 are read
    // before this tile's barrier and the barrier does not expose shared-memory latency (with
    // two stages they can only be read after it). Fragments are double-buffered: step
    // k + 1's are read while step k multiplies.
    if (kr.begin + 1 < kr.end) {
      fetch(kr.begin + 1);
      store_tiles(a_regs, b_regs, smem + kStageFloats, tid);
    }
    __syncthreads();
    float a[2][TM], b[2][TN];
    int next_off = kStageFloats;  // stage of tile kt + 1; tile kt + 2 goes to the third
    if (kr.begin < kr.end) read_fragments(a[0], b[0], 0, 0);
    for (int kt = kr.begin; kt < kr.end; ++kt) {
      const bool has_next2 = Interior || kt + 2 < kr.end;
      if (has_next2) fetch(kt + 2);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        if (k + 1 < BK)
          read_fragments(a[(k + 1) & 1], b[(k + 1) & 1], read_off, k + 1);
        else  // tile kt + 1 (in bounds for the last tile too: the stage exists)
          read_fragments(a[(k + 1) & 1], b[(k + 1) & 1], next_off, 0);
        multiply(a[k & 1], b[k & 1]);
      }
      const int free_off = 3 * kStageFloats - read_off - next_off;
      if (has_next2) store_tiles(a_regs, b_regs, smem + free_off, tid);
      read_off = next_off;
      next_off = free_off;
      __syncthreads();
    }
  }
}

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K); block: kThreads; dynamic shared
/// memory STAGES * kStageFloats * 4 bytes. `bias` is ignored unless KT_BIAS; `workspace`
/// (SPLIT_K x M x N floats) is used only when SPLIT_K > 1.
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    gemm_simt(const float* __restrict__ A, const float* __restrict__ B, float* C,
              const float* bias, float* workspace, int M, int N, int K, float alpha,
              float beta) {
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int thread_m = (warp / kWarpsN) * WARP_ROWS + lane_row(lane);
  const int thread_n = (warp % kWarpsN) * kWarpCols + lane_col(lane);
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

  // Blocks whose A rows, B columns and k tiles all lie inside the matrices load unchecked.
  if (m0 + BM <= M && n0 + BN <= N && K % BK == 0)
    main_loop<true>(acc, A, B, smem, M, N, K, m0, n0, kr, tid, thread_m, thread_n);
  else
    main_loop<false>(acc, A, B, smem, M, N, K, m0, n0, kr, tid, thread_m, thread_n);

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
