// gemm_wgmma: C = alpha * op(A) * op(B) + beta * C (+ bias[col]) on Hopper tensor cores with
// wgmma.mma_async (sm_90a): f16 / bf16 inputs, fp32 accumulation, C (and bias) in the input
// type or fp32 as the shared epilogue writes them. Both operands are read by the tensor cores
// straight from K-major, 128-byte-swizzled shared-memory tiles through matrix descriptors
// (gemm_wgmma_layout.cuh), filled by a STAGES-deep cp.async pipeline with zero fill at the
// matrix edges (any M, N; K a multiple of 8). Blocks visit tiles in GROUP_M-swizzled order;
// SPLIT_K > 1 writes fp32 partials that gemm_wgmma_splitk_reduce sums and finishes;
// CLUSTER_K > 1 splits K across the CTAs of a thread-block cluster instead, rank 0 adding the
// others' fp32 tiles from their shared memory (wg::cluster_k_reduce) before its epilogue.
// Layout NT only (A stored M x K, B stored N x K: both k-contiguous); the host template
// refuses the others. K must be a multiple of 8 (16-byte row chunks); with PAD_K = 1 the plan
// first copies A and B into rows of K rounded up to 8 (zero filled, gemm_wgmma_pad_k) and
// runs the kernel over that K.
//
// Tunables (defaults let the file compile on its own): BM x BN block tile (BN 64/128/256),
// BK k tile (64 or 128), WGS consumer warpgroups stacked along M (each BM / WGS rows, a
// multiple of 64), STAGES (>= 3), SPLIT_K, GROUP_M, PRODUCER (0: every thread loads and
// computes, one bar.sync per k tile; 1: an extra producer warpgroup loads, consumers wait on
// per-stage mbarriers, registers moved to the consumers with setmaxnreg, the producer fences
// landed copies (wait_group lagging STAGES - 2 tiles) before arriving; 2: as 1, but the
// arrivals are cp.async.mbarrier.arrive.noinc and the consumers fence after their wait),
// CLUSTER_K (1, or 2 to 8 CTAs per k-split cluster with SPLIT_K = 1 and PRODUCER = 0), PAD_K
// (0, or 1: also define the K-padding entry; the kernel itself is the same).
// Problem defines: gemm_common.cuh.
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
#ifndef CLUSTER_K
#define CLUSTER_K 1
#endif
#ifndef PAD_K
#define PAD_K 0
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
static_assert(CLUSTER_K == 1 || (SPLIT_K == 1 && PRODUCER == 0),
              "a k-split cluster (CLUSTER_K > 1) needs SPLIT_K = 1 and PRODUCER = 0");
static_assert(CLUSTER_K >= 1 && CLUSTER_K <= 8, "CLUSTER_K: 1 to 8 CTAs (portable cluster size)");
/// Ranges K is split into: by SPLIT_K (workspace) or by CLUSTER_K (cluster).
constexpr int kSplits = CLUSTER_K > 1 ? CLUSTER_K : SPLIT_K;
static_assert(KT_A_T == 0 && KT_B_T == 1, "gemm_wgmma reads A (M x K) and B (N x K) K-major");

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K or CLUSTER_K; clusters of 1 x 1 x
/// CLUSTER_K); block: 128 * (WGS + PRODUCER) threads (with PRODUCER, warpgroup 0 is the
/// producer); dynamic shared memory Shape::kSmemBytes (STAGES stages + 1 KiB for 1024-byte
/// alignment; with CLUSTER_K > 1 at least BM * BN floats + 1 KiB). `bias` is ignored unless
/// KT_BIAS; `workspace` (SPLIT_K x M x N floats) only used when SPLIT_K > 1.
#if CLUSTER_K > 1
#define KTG_CLUSTER_DIMS __cluster_dims__(1, 1, CLUSTER_K)
#else
#define KTG_CLUSTER_DIMS
#endif
extern "C" __global__ void __launch_bounds__(kBlockThreads, 1) KTG_CLUSTER_DIMS
    gemm_wgmma(const InT* __restrict__ A, const InT* __restrict__ B, OutT* C, const OutT* bias,
               float* workspace, int M, int N, int K, float alpha, float beta) {
  extern __shared__ __align__(128) char smem_raw[];
  // Swizzled tiles must start on 1024-byte boundaries (the pattern's phase is the row).
  const unsigned smem = (ktg::smem_address(smem_raw) + 1023u) & ~1023u;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const ktg::TileCoord tile = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int m0 = tile.m * BM;
  const int n0 = tile.n * BN;
  const ktg::KRange kr = ktg::split_k_range(K, BK, blockIdx.z, kSplits);
  const int k_tiles = kr.end - kr.begin;
  const bool interior = m0 + BM <= M && n0 + BN <= N;
#if PRODUCER
  __shared__ __align__(8) unsigned long long ws_bars[2 * STAGES];
  const unsigned bars = ktg::smem_address(ws_bars);
  ktg::wg::init_ws_barriers<Shape>(bars, threadIdx.x, WGS);
  __syncthreads();
  if (threadIdx.x < 128) {  // producer warpgroup
    ktg::wg::regs_dec<40>();
    ALoader a;
    BLoader b;
    a.init(A, K, m0, M, K, kr.begin * BK, threadIdx.x);  // A is M x K
    b.init(B, K, n0, N, K, kr.begin * BK, threadIdx.x);  // B is N x K
    ktg::wg::produce_ws<Shape, PRODUCER == 2>(a, b, smem, bars, k_tiles);
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
  // end its lines are requested into L2, so that those reads do not wait out DRAM latency.
  auto prefetch_c = [&](int t) {
    if (SPLIT_K == 1 && (CLUSTER_K == 1 || blockIdx.z == 0) && interior && beta != 0.0f &&
        t == (k_tiles > 4 ? k_tiles - 4 : 0))
      ktg::wg::prefetch_tile_l2<Shape>(C, N, m0, n0, tid);
  };
#if PRODUCER
  ktg::wg::consume_ws<Shape, PRODUCER == 2>(acc, smem, bars, k_tiles, wg, prefetch_c);
#else
  ALoader a;
  BLoader b;
  a.init(A, K, m0, M, K, kr.begin * BK, tid);  // A is M x K
  b.init(B, K, n0, N, K, kr.begin * BK, tid);  // B is N x K
  ktg::wg::main_loop<Shape>(acc, a, b, smem, k_tiles, wg, prefetch_c);
#endif

#if CLUSTER_K > 1
  // Rank r of the cluster (blockIdx.z: the cluster spans z) reduced k range r; rank 0 sums.
  float* partials = reinterpret_cast<float*>(smem_raw + (smem - ktg::smem_address(smem_raw)));
  if (!ktg::wg::cluster_k_reduce<Shape, CLUSTER_K>(acc, partials, smem, tid)) return;
#endif
  ktg::wg::store_tile<Shape, SPLIT_K, KT_BIAS != 0>(acc, C, bias, workspace,
                                                    CLUSTER_K > 1 ? 0 : blockIdx.z, M, N, m0,
                                                    n0, tid, alpha, beta);
}

#if SPLIT_K > 1
KTG_DEFINE_SPLIT_K_REDUCE(gemm_wgmma_splitk_reduce, OutT)
#endif
#if PAD_K
KTG_DEFINE_PAD_K(gemm_wgmma_pad_k, InT)
#endif
