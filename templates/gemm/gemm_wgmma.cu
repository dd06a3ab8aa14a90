// gemm_wgmma: C = alpha * op(A) * op(B) + beta * C (+ bias[col]) on Hopper tensor cores with
// wgmma.mma_async (sm_90a): f16 / bf16 inputs, fp32 accumulation, C (and bias) in the input
// type or fp32 as the shared epilogue writes them. Both operands are read by the tensor cores
// straight from K-major, 128-byte-swizzled shared-memory tiles through matrix descriptors
// (gemm_wgmma_layout.cuh), filled by a STAGES-deep cp.async pipeline with zero fill at the
// matrix edges (any M, N; K a multiple of 8). Blocks visit tiles in GROUP_M-swizzled order;
// SPLIT_K > 1 writes fp32 partials that gemm_wgmma_splitk_reduce sums and finishes.
// Layout NT only (A stored M x K, B stored N x K: both k-contiguous); the host template
// refuses the others.
//
// Tunables (defaults let the file compile on its own): BM x BN block tile (BN 64/128/256),
// BK k tile (64 or 128), WGS consumer warpgroups stacked along M (each BM / WGS rows, a
// multiple of 64), STAGES (>= 3), SPLIT_K, GROUP_M, PRODUCER (0: every thread loads and
// computes, one bar.sync per k tile; 1: an extra producer warpgroup loads, consumers wait on
// per-stage mbarriers, registers moved to the consumers with setmaxnreg). Problem defines:
// gemm_common.cuh.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 64
#endif
#ifndef WGS
#define WGS 2
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
#ifndef PRODUCER
#define PRODUCER 0
#endif
#ifndef KT_B_T
#define KT_B_T 1
#endif

#include "gemm/gemm_common.cuh"
#include "gemm/gemm_wgmma.cuh"

namespace {

using InT = ktg::gemm_in_t;
using OutT = ktg::gemm_out_t;
using Shape = ktg::wg::MainLoopShape<BM, BN, BK, WGS, STAGES>;
// Threads that issue the copies: all of them, or the producer warpgroup.
constexpr int kLoadThreads = PRODUCER ? 128 : Shape::kThreads;
constexpr int kBlockThreads = Shape::kThreads + (PRODUCER ? 128 : 0);
using ALoader = ktg::wg::MatrixTileLoader<BM, BK, kLoadThreads, InT>;
using BLoader = ktg::wg::MatrixTileLoader<BN, BK, kLoadThreads, InT>;

static_assert(KT_DTYPE == 1 || KT_DTYPE == 2, "gemm_wgmma takes f16 or bf16 inputs");
static_assert(KT_A_T == 0 && KT_B_T == 1, "gemm_wgmma reads A (M x K) and B (N x K) K-major");

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K); block: 128 * (WGS + PRODUCER) threads
/// (with PRODUCER, warpgroup 0 is the producer); dynamic
/// shared memory Shape::kSmemBytes (STAGES stages + 1 KiB for 1024-byte alignment). `bias`
/// is ignored unless KT_BIAS; `workspace` (SPLIT_K x M x N floats) only used when SPLIT_K > 1.
extern "C" __global__ void __launch_bounds__(kBlockThreads, 1)
    gemm_wgmma(const InT* __restrict__ A, const InT* __restrict__ B, OutT* C, const OutT* bias,
               float* workspace, int M, int N, int K, float alpha, float beta) {
  extern __shared__ __align__(128) char smem_raw[];
  // Swizzled tiles must start on 1024-byte boundaries (the pattern's phase is the row).
  const unsigned smem = (ktg::wg::smem_addr(smem_raw) + 1023u) & ~1023u;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const ktg::TileCoord tile = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int m0 = tile.m * BM;
  const int n0 = tile.n * BN;
  const ktg::KRange kr = ktg::split_k_range(K, BK, blockIdx.z, SPLIT_K);
  const int k_tiles = kr.end - kr.begin;
  const bool interior = m0 + BM <= M && n0 + BN <= N;
#if PRODUCER
  __shared__ __align__(8) unsigned long long ws_bars[2 * STAGES];
  const unsigned bars = ktg::wg::smem_addr(ws_bars);
  ktg::wg::init_ws_barriers<Shape>(bars, threadIdx.x, WGS);
  __syncthreads();
  if (threadIdx.x < 128) {  // producer warpgroup
    ktg::wg::regs_dec<40>();
    ALoader a;
    BLoader b;
    a.init(A, K, m0, M, K, kr.begin * BK, threadIdx.x);  // A is M x K
    b.init(B, K, n0, N, K, kr.begin * BK, threadIdx.x);  // B is N x K
    ktg::wg::produce_ws<Shape>(a, b, smem, bars, k_tiles);
    return;
  }
  ktg::wg::regs_inc<232>();
  const int tid = threadIdx.x - 128;  // consumer thread index
#else
  const int tid = threadIdx.x;
#endif
  const int wg = tid / 128;  // consumer warpgroup

  float acc[Shape::kMi][Shape::kAcc];
#pragma unroll
  for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
    for (int j = 0; j < Shape::kAcc; ++j) acc[mi][j] = 0.0f;

  // The epilogue of an interior tile reads all of its C (beta != 0): a few k tiles before the
  // end, each consumer thread asks L2 for its share of the tile's 128-byte lines, so that the
  // reads after the main loop hit L2 instead of waiting out DRAM latency.
  auto prefetch_c = [&](int t) {
    if (SPLIT_K != 1 || !interior || beta == 0.0f || t != (k_tiles > 4 ? k_tiles - 4 : 0))
      return;
    constexpr int kLinesPerRow = BN * static_cast<int>(sizeof(OutT)) / 128;
    constexpr int kLines = BM * kLinesPerRow;  // a multiple of 128 (BM >= 64, BN >= 64)
#pragma unroll
    for (int l = 0; l < (kLines + Shape::kThreads - 1) / Shape::kThreads; ++l) {
      const int i = tid + l * Shape::kThreads;
      if (kLines % Shape::kThreads != 0 && i >= kLines) break;
      const OutT* line = C + static_cast<long long>(m0 + i / kLinesPerRow) * N + n0 +
                         (i % kLinesPerRow) * (128 / static_cast<int>(sizeof(OutT)));
      asm volatile("prefetch.global.L2 [%0];\n" ::"l"(line));
    }
  };
#if PRODUCER
  ktg::wg::consume_ws<Shape>(acc, smem, bars, k_tiles, wg, prefetch_c);
#else
  ALoader a;
  BLoader b;
  a.init(A, K, m0, M, K, kr.begin * BK, tid);  // A is M x K
  b.init(B, K, n0, N, K, kr.begin * BK, tid);  // B is N x K
  ktg::wg::main_loop<Shape>(acc, a, b, smem, k_tiles, wg, prefetch_c);
#endif

  // Accumulator fragment of a 64 x BN wgmma: warp w of the warpgroup owns rows w * 16 + g and
  // w * 16 + g + 8 (g = lane / 4); register 4j + 2h + c is column 8j + 2 * (lane % 4) + c of
  // row half h.
  const int lane = tid & 31;
  const int row_base = m0 + wg * Shape::kWgRows + ((tid & 127) >> 5) * 16 + (lane >> 2);
  const int col_base = n0 + (lane & 3) * 2;
  const bool paired = ktg::pairs_aligned<SPLIT_K>(C, workspace, N);
  if (SPLIT_K == 1 && paired && interior) {
    // No bounds checks; each batch of C reads (beta != 0) is issued ahead of its stores.
    using Pair = ktg::ElementPair<OutT>;
    constexpr int kBatch = sizeof(OutT) == 2 ? 16 : 8;  // column groups per batch (of BN / 8)
    constexpr int kGroups = BN / 8;
    constexpr int kStep = kBatch < kGroups ? kBatch : kGroups;
#pragma unroll
    for (int mi = 0; mi < Shape::kMi; ++mi) {
      OutT* c_row = C + static_cast<long long>(row_base + mi * 64) * N + col_base;
#pragma unroll
      for (int j0 = 0; j0 < kGroups; j0 += kStep) {
        Pair old[kStep][2];
        if (beta != 0.0f) {
#pragma unroll
          for (int j = 0; j < kStep; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              old[j][h] = *reinterpret_cast<const Pair*>(
                  c_row + static_cast<long long>(h * 8) * N + (j0 + j) * 8);
        }
#pragma unroll
        for (int j = 0; j < kStep; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = (j0 + j) * 4 + h * 2;
            float v0 = alpha * acc[mi][r];
            float v1 = alpha * acc[mi][r + 1];
            if (beta != 0.0f) {
              v0 += beta * ktg::to_float(old[j][h].x);
              v1 += beta * ktg::to_float(old[j][h].y);
            }
            if (KT_BIAS) {
              v0 += ktg::to_float(bias[col_base + (j0 + j) * 8]);
              v1 += ktg::to_float(bias[col_base + (j0 + j) * 8 + 1]);
            }
            Pair out;
            out.x = ktg::from_float<OutT>(v0);
            out.y = ktg::from_float<OutT>(v1);
            *reinterpret_cast<Pair*>(c_row + static_cast<long long>(h * 8) * N + (j0 + j) * 8) =
                out;
          }
      }
    }
    return;
  }
#pragma unroll
  for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        ktg::store_accumulator_pair<SPLIT_K, KT_BIAS != 0>(
            C, bias, workspace, blockIdx.z, M, N, row_base + mi * 64 + h * 8, col_base + j * 8,
            acc[mi][j * 4 + h * 2], acc[mi][j * 4 + h * 2 + 1], alpha, beta, paired);
}

#if SPLIT_K > 1
KTG_DEFINE_SPLIT_K_REDUCE(gemm_wgmma_splitk_reduce, OutT)
#endif
