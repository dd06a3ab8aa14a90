// gemm_mma: C = alpha * op(A) * op(B) + beta * C (+ bias[col]) on tensor cores with mma.sync:
// f16 / bf16 inputs (m16n8k16) or fp32 inputs as TF32 (m16n8k8), fp32 accumulation. A
// STAGES-deep cp.async pipeline fills XOR-swizzled shared-memory tiles (zero-filled beyond
// the matrix edges, so any M, N, K works), warps read fragments with ldmatrix, blocks visit
// tiles in GROUP_M-swizzled order, and SPLIT_K > 1 writes fp32 partials that the entry
// gemm_mma_splitk_reduce sums and finishes. Block tiles inside C finish through shared
// memory (C read and written back in 16-byte row chunks); edge tiles and split-K store
// accumulator pairs directly.
//
// Tunables (defaults let the file compile on its own): BM x BN block tile, BK k tile,
// WM x WN warp tile, STAGES (2..5), SPLIT_K, GROUP_M. Problem defines: gemm_common.cuh.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif

#include "gemm/gemm_common.cuh"
#include "gemm/gemm_mma_warp.cuh"
#include "gemm/gemm_smem_copy.cuh"

namespace {

using InT = ktg::gemm_in_t;
using OutT = ktg::gemm_out_t;

constexpr int kWarpsM = BM / WM;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr bool kAKContiguous = KT_A_T == 0;  // A tile in smem as [m][k], else [k][m]
constexpr bool kBKContiguous = KT_B_T != 0;  // B tile in smem as [n][k], else [k][n]
constexpr int kARows = kAKContiguous ? BM : BK;
constexpr int kACols = kAKContiguous ? BK : BM;
constexpr int kBRows = kBKContiguous ? BN : BK;
constexpr int kBCols = kBKContiguous ? BK : BN;

// Copies of the A and B tiles: per-thread state set once, one pointer step per k tile.
using AStream = ktg::AsyncTileStream<kARows, kACols, InT, KT_ALIGN_A, kThreads, kAKContiguous>;
using BStream = ktg::AsyncTileStream<kBRows, kBCols, InT, KT_ALIGN_B, kThreads, kBKContiguous>;
using Warp = ktg::WarpMma<InT, WM, WN, kAKContiguous, kBKContiguous, AStream::Layout,
                          BStream::Layout>;
constexpr int kABytes = AStream::Layout::kBytes;
constexpr int kStageBytes = kABytes + BStream::Layout::kBytes;
constexpr int kKSteps = BK / Warp::kStep;  // mma k steps per k tile

static_assert(BM % WM == 0 && BN % WN == 0, "block tile must be a multiple of the warp tile");
static_assert(BK % Warp::kStep == 0, "BK must be a multiple of the mma k");
static_assert(kThreads <= 1024, "at most 1024 threads per block");
static_assert(STAGES >= 2, "the cp.async pipeline needs at least two stages");
static_assert(KT_DTYPE != 0, "gemm_mma takes f16, bf16 or tf32 (fp32 SIMT is gemm_simt)");

/// The stage after the one at byte offset `offset` (ring of STAGES).
__device__ __forceinline__ int next_stage(int offset) {
  return offset + kStageBytes == STAGES * kStageBytes ? 0 : offset + kStageBytes;
}

/// Shared-memory image of the block's BM x BN tile of C for the staged epilogue: OutT
/// row-major, 16-byte chunks XOR-swizzled by row so that both the accumulator-pair accesses
/// of a warp (8 rows x 4 lanes) and the row-wise 16-byte accesses are free of bank conflicts.
struct CTile {
  static constexpr int kElt = static_cast<int>(sizeof(OutT));
  static constexpr int kRowBytes = BN * kElt;
  static constexpr int kChunks = kRowBytes / 16;      // 16-byte chunks per row
  static constexpr int kChunkElems = 16 / kElt;       // elements per chunk
  static constexpr int kUnit = (8 * kElt + 15) / 16;  // chunks 4 lanes' pairs span in a row
  static constexpr int kSwizzleRows = ktg::cmin(8, kChunks / kUnit);
  static constexpr int kBytes = BM * kRowBytes;
  static constexpr int kTileChunks = BM * kChunks;
  static_assert(kRowBytes % 16 == 0 && (kChunks & (kChunks - 1)) == 0,
                "a C tile row must be a power-of-two number of 16-byte chunks");

  /// Byte offset of element (row, col) of the tile.
  __device__ __forceinline__ static int offset(int row, int col) {
    const int byte = col * kElt;
    const int chunk = (byte >> 4) ^ ((row % kSwizzleRows) * kUnit);
    return row * kRowBytes + (chunk << 4) + (byte & 15);
  }
};

// The staged epilogue reuses the pipeline's shared memory: only where the C tile fits in it.
constexpr bool kStagedEpilogue = SPLIT_K == 1 && CTile::kBytes <= STAGES * kStageBytes;
// Its C tile is prefetched into L2 kCPrefetchTiles k tiles before the loop ends (beta != 0),
// so that the epilogue's copies of C hit L2 rather than DRAM: only with 16-bit inputs whose
// tiles are both k-contiguous (NT), the one orientation that leaves registers for the test
// at 64 x 64 warp tiles under NVRTC (248 of 255; the others use 254).
constexpr bool kCPrefetch = kStagedEpilogue && sizeof(InT) == 2 && kAKContiguous && kBKContiguous;
constexpr int kCPrefetchTiles = BK * static_cast<int>(sizeof(InT)) >= 128 ? 3 : 6;

/// Prefetches the block's C tile (BM rows of BN elements from `c_block`, leading dimension
/// N) into L2, one 128-byte line per request, spread over the block's threads.
__device__ __forceinline__ void prefetch_c_tile(const OutT* c_block, int N, int tid) {
  constexpr int kLinesPerRow = ktg::cdiv(CTile::kRowBytes, 128);
  constexpr int kLines = BM * kLinesPerRow;
#pragma unroll
  for (int i = 0; i < ktg::cdiv(kLines, kThreads); ++i) {
    const int idx = tid + i * kThreads;
    if (kLines % kThreads != 0 && idx >= kLines) break;
    const int row = idx / kLinesPerRow;
    const int col = (idx % kLinesPerRow) * (128 / CTile::kElt);
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(c_block + (static_cast<long long>(row) * N + col)));
  }
}

/// True when the staged epilogue may write the block's tile: SPLIT_K == 1 and the C tile
/// fits in the pipeline's shared memory (kStagedEpilogue), the tile lies inside C, and every
/// row of it starts on a 16-byte boundary (C aligned, N * sizeof(OutT) a multiple of 16).
__device__ __forceinline__ bool staged_epilogue_ok(const OutT* C, int M, int N, int m0, int n0) {
  return kStagedEpilogue && m0 + BM <= M && n0 + BN <= N &&
         reinterpret_cast<unsigned long long>(C) % 16 == 0 &&
         (static_cast<long long>(N) * CTile::kElt) % 16 == 0;
}

/// Epilogue of an interior block tile through shared memory (the pipeline stages, free once
/// the main loop is done): C read with 16-byte cp.async copies of whole rows (beta != 0),
/// each thread combining its accumulator pairs with C (alpha, beta, bias) in place, then the
/// tile written back with 16-byte coalesced stores. Called by every thread of the block.
__device__ __forceinline__ void staged_epilogue(const float (&acc)[Warp::kMi][Warp::kNi][4],
                                                OutT* C, const OutT* bias, int N, int m0, int n0,
                                                int wm0, int wn0, int tid, float alpha,
                                                float beta, char* smem) {
  constexpr int kPerThread = ktg::cdiv(CTile::kTileChunks, kThreads);
  OutT* c_block = C + (static_cast<long long>(m0) * N + n0);
  __syncthreads();  // every warp has read its last fragments from the stages
  if (beta != 0.0f) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = tid + i * kThreads;
      if (CTile::kTileChunks % kThreads != 0 && idx >= CTile::kTileChunks) break;
      const int row = idx / CTile::kChunks;
      const int col = (idx % CTile::kChunks) * CTile::kChunkElems;
      ktg::cp_async_or_zero<16>(smem + CTile::offset(row, col),
                                c_block + (static_cast<long long>(row) * N + col), true);
    }
    ktg::cp_async_commit();
    ktg::cp_async_wait<0>();
    __syncthreads();
  }
  using Pair = ktg::ElementPair<OutT>;
  // fp32 C takes the bias in the row-wise pass (the same sum in the same order, no rounding
  // in between), which keeps the bias values out of the registers the accumulators fill.
  constexpr bool kBiasInPairs = KT_BIAS != 0 && sizeof(OutT) != 4;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t4 = lane & 3;
#pragma unroll
  for (int ni = 0; ni < Warp::kNi; ++ni) {
    const int col = wn0 + ni * 8 + t4 * 2;
    const float bias0 = kBiasInPairs ? ktg::to_float(bias[n0 + col]) : 0.0f;
    const float bias1 = kBiasInPairs ? ktg::to_float(bias[n0 + col + 1]) : 0.0f;
#pragma unroll
    for (int mi = 0; mi < Warp::kMi; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        Pair* p = reinterpret_cast<Pair*>(smem + CTile::offset(wm0 + mi * 16 + h * 8 + g, col));
        float v0 = alpha * acc[mi][ni][2 * h];
        float v1 = alpha * acc[mi][ni][2 * h + 1];
        if (beta != 0.0f) {
          const Pair old = *p;
          v0 += beta * ktg::to_float(old.x);
          v1 += beta * ktg::to_float(old.y);
        }
        Pair out;
        out.x = ktg::from_float<OutT>(v0 + bias0);
        out.y = ktg::from_float<OutT>(v1 + bias1);
        *p = out;
      }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int idx = tid + i * kThreads;
    if (CTile::kTileChunks % kThreads != 0 && idx >= CTile::kTileChunks) break;
    const int row = idx / CTile::kChunks;
    const int col = (idx % CTile::kChunks) * CTile::kChunkElems;
    uint4 v = *reinterpret_cast<const uint4*>(smem + CTile::offset(row, col));
    if constexpr (KT_BIAS != 0 && sizeof(OutT) == 4) {
      v.x = __float_as_uint(__uint_as_float(v.x) + ktg::to_float(bias[n0 + col]));
      v.y = __float_as_uint(__uint_as_float(v.y) + ktg::to_float(bias[n0 + col + 1]));
      v.z = __float_as_uint(__uint_as_float(v.z) + ktg::to_float(bias[n0 + col + 2]));
      v.w = __float_as_uint(__uint_as_float(v.w) + ktg::to_float(bias[n0 + col + 3]));
    }
    *reinterpret_cast<uint4*>(c_block + (static_cast<long long>(row) * N + col)) = v;
  }
}

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K); block: kThreads; dynamic shared
/// memory STAGES * kStageBytes. `bias` is ignored unless KT_BIAS; `workspace` (SPLIT_K x M x N
/// floats) is used only when SPLIT_K > 1.
extern "C" __global__ void __launch_bounds__(kThreads)
    gemm_mma(const InT* __restrict__ A, const InT* __restrict__ B, OutT* C, const OutT* bias,
             float* workspace, int M, int N, int K, float alpha, float beta) {
  extern __shared__ __align__(128) char smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const ktg::TileCoord tile = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int m0 = tile.m * BM;
  const int n0 = tile.n * BN;
  const int wm0 = (warp / kWarpsN) * WM;
  const int wn0 = (warp % kWarpsN) * WN;
  const ktg::KRange kr = ktg::split_k_range(K, BK, blockIdx.z, SPLIT_K);
  const int k_tiles = kr.end - kr.begin;

  float acc[Warp::kMi][Warp::kNi][4];
#pragma unroll
  for (int mi = 0; mi < Warp::kMi; ++mi)
#pragma unroll
    for (int ni = 0; ni < Warp::kNi; ++ni)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[mi][ni][q] = 0.0f;

  AStream a_tiles;
  BStream b_tiles;
  const int k_first = kr.begin * BK;
  if constexpr (kAKContiguous)
    a_tiles.init(A, K, m0, k_first, M, K, tid);  // A is M x K
  else
    a_tiles.init(A, M, k_first, m0, K, M, tid);  // A is K x M
  if constexpr (kBKContiguous)
    b_tiles.init(B, K, n0, k_first, N, K, tid);  // B is N x K
  else
    b_tiles.init(B, N, k_first, n0, K, N, tid);  // B is K x N

  // Prologue: STAGES - 1 groups in flight (empty groups keep the wait counts exact), then
  // the first k step's fragments.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      a_tiles.load(smem + s * kStageBytes);
      b_tiles.load(smem + s * kStageBytes + kABytes);
      a_tiles.advance(BK);
      b_tiles.advance(BK);
    }
    ktg::cp_async_commit();
  }
  ktg::cp_async_wait<STAGES - 2>();
  __syncthreads();
  int read_stage = 0;                           // byte offset of the stage being read
  int write_stage = (STAGES - 1) * kStageBytes;  // byte offset of the stage being filled
  Warp::Fragments frag[2];
  Warp::load(smem, smem + kABytes, wm0, wn0, 0, frag[0], lane);

  // Each k tile: issue the copies of tile t + STAGES - 1 into the stage tile t - 1 used (all
  // warps passed the barrier after their last read of it), then k steps whose fragments were
  // loaded one step ahead. Before the last step, wait for tile t + 1 and cross the barrier,
  // so that its first fragments load while the last step's mma instructions run.
  for (int t = 0; t < k_tiles; ++t) {
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      if (ks == 0) {
        if (t + STAGES - 1 < k_tiles) {
          a_tiles.load(smem + write_stage);
          b_tiles.load(smem + write_stage + kABytes);
          a_tiles.advance(BK);
          b_tiles.advance(BK);
        }
        ktg::cp_async_commit();
        write_stage = next_stage(write_stage);
        if constexpr (kCPrefetch)
          if (t == k_tiles - kCPrefetchTiles && beta != 0.0f &&
              staged_epilogue_ok(C, M, N, m0, n0))
            prefetch_c_tile(C + (static_cast<long long>(m0) * N + n0), N, tid);
      }
      if (ks == kKSteps - 1) {
        ktg::cp_async_wait<STAGES - 2>();  // this thread's copies of tile t + 1 have landed
        __syncthreads();                   // everyone's have
        read_stage = next_stage(read_stage);
      }
      const char* sA = smem + read_stage;
      Warp::load(sA, sA + kABytes, wm0, wn0, ((ks + 1) % kKSteps) * Warp::kStep,
                 frag[(ks + 1) % 2], lane);
      Warp::mma(frag[ks % 2], acc);
      if constexpr (kKSteps == 1) frag[0] = frag[1];
    }
  }
  ktg::cp_async_wait<0>();
  if constexpr (kStagedEpilogue) {
    if (staged_epilogue_ok(C, M, N, m0, n0)) {  // the same for the whole block (barriers)
      staged_epilogue(acc, C, bias, N, m0, n0, wm0, wn0, tid, alpha, beta, smem);
      return;
    }
  }

  // Each thread holds column pairs (2t, 2t + 1): one 2-element access per pair when aligned.
  const int g = lane >> 2;
  const int t4 = lane & 3;
  const bool paired = ktg::pairs_aligned<SPLIT_K>(C, workspace, N);
  if (SPLIT_K == 1 && paired && m0 + wm0 + WM <= M && n0 + wn0 + WN <= N) {
    // The warp's tile lies inside C: no bounds checks, and the reads of C (beta != 0) and of
    // the bias are issued together, ahead of the stores (the stores may alias them, so
    // interleaved, every read would wait out a full memory latency after the last store).
    using Pair = ktg::ElementPair<OutT>;
    const long long ldc = N;
    const int col0 = n0 + wn0 + t4 * 2;
    OutT* c_warp = C + (static_cast<long long>(m0 + wm0 + g) * ldc + col0);
    float bias_v[Warp::kNi][2];
#pragma unroll
    for (int ni = 0; ni < Warp::kNi; ++ni) {
      bias_v[ni][0] = KT_BIAS ? ktg::to_float(bias[col0 + ni * 8]) : 0.0f;
      bias_v[ni][1] = KT_BIAS ? ktg::to_float(bias[col0 + ni * 8 + 1]) : 0.0f;
    }
    // Rows of sub-tiles whose C values are read together: all of them for 16-bit C (64
    // registers at 64 x 64), half for fp32 C, within the main loop's register budget.
    constexpr int kBatch = sizeof(OutT) == 2 || Warp::kMi == 1 ? Warp::kMi : Warp::kMi / 2;
#pragma unroll
    for (int m_batch = 0; m_batch < Warp::kMi; m_batch += kBatch) {
      Pair old[kBatch][Warp::kNi][2];  // raw C pairs (one register each for 16-bit C)
      if (beta != 0.0f) {
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
          for (int ni = 0; ni < Warp::kNi; ++ni)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              old[b][ni][h] = *reinterpret_cast<const Pair*>(
                  c_warp + (((m_batch + b) * 16 + h * 8) * ldc + ni * 8));
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
#pragma unroll
        for (int ni = 0; ni < Warp::kNi; ++ni)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int mi = m_batch + b;
            float v0 = alpha * acc[mi][ni][2 * h];
            float v1 = alpha * acc[mi][ni][2 * h + 1];
            if (beta != 0.0f) {
              v0 += beta * ktg::to_float(old[b][ni][h].x);
              v1 += beta * ktg::to_float(old[b][ni][h].y);
            }
            Pair out;
            out.x = ktg::from_float<OutT>(v0 + bias_v[ni][0]);
            out.y = ktg::from_float<OutT>(v1 + bias_v[ni][1]);
            *reinterpret_cast<Pair*>(c_warp + ((mi * 16 + h * 8) * ldc + ni * 8)) = out;
          }
    }
    return;
  }
#pragma unroll
  for (int mi = 0; mi < Warp::kMi; ++mi)
#pragma unroll
    for (int ni = 0; ni < Warp::kNi; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + wm0 + mi * 16 + g + h * 8;
        const int col = n0 + wn0 + ni * 8 + t4 * 2;
        ktg::store_accumulator_pair<SPLIT_K, KT_BIAS != 0>(
            C, bias, workspace, blockIdx.z, M, N, row, col, acc[mi][ni][2 * h],
            acc[mi][ni][2 * h + 1], alpha, beta, paired);
      }
}

#if SPLIT_K > 1
KTG_DEFINE_SPLIT_K_REDUCE(gemm_mma_splitk_reduce, OutT)
#endif
