// gemm_mma: C = alpha * op(A) * op(B) + beta * C (+ bias[col]) on tensor cores with mma.sync:
// f16 / bf16 inputs (m16n8k16) or fp32 inputs as TF32 (m16n8k8), fp32 accumulation. A
// STAGES-deep cp.async pipeline fills XOR-swizzled shared-memory tiles (zero-filled beyond
// the matrix edges, so any M, N, K works), warps read fragments with ldmatrix, blocks visit
// tiles in GROUP_M-swizzled order, and SPLIT_K > 1 writes fp32 partials that the entry
// gemm_mma_splitk_reduce sums and finishes.
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

using ALoader = ktg::AsyncTileLoader<kARows, kACols, InT, KT_ALIGN_A, kThreads>;
using BLoader = ktg::AsyncTileLoader<kBRows, kBCols, InT, KT_ALIGN_B, kThreads>;
using Warp = ktg::WarpMma<InT, WM, WN, kAKContiguous, kBKContiguous, ALoader::Layout,
                          BLoader::Layout>;
constexpr int kStageBytes = ALoader::Layout::kBytes + BLoader::Layout::kBytes;

static_assert(BM % WM == 0 && BN % WN == 0, "block tile must be a multiple of the warp tile");
static_assert(BK % Warp::kStep == 0, "BK must be a multiple of the mma k");
static_assert(kThreads <= 1024, "at most 1024 threads per block");
static_assert(STAGES >= 2, "the cp.async pipeline needs at least two stages");
static_assert(KT_DTYPE != 0, "gemm_mma takes f16, bf16 or tf32 (fp32 SIMT is gemm_simt)");

/// Issues the copies of k tile `kt` into pipeline stage `stage`.
__device__ __forceinline__ void load_stage(char* smem, int stage, int kt, const InT* A,
                                           const InT* B, int M, int N, int K, int m0, int n0,
                                           int tid) {
  char* sA = smem + stage * kStageBytes;
  char* sB = sA + ALoader::Layout::kBytes;
  const int k0 = kt * BK;
  if constexpr (kAKContiguous)
    ALoader::load(sA, A, K, m0, k0, M, K, tid);  // A is M x K
  else
    ALoader::load(sA, A, M, k0, m0, K, M, tid);  // A is K x M
  if constexpr (kBKContiguous)
    BLoader::load(sB, B, K, n0, k0, N, K, tid);  // B is N x K
  else
    BLoader::load(sB, B, N, k0, n0, K, N, tid);  // B is K x N
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

  // Prologue: STAGES - 1 groups in flight (empty groups keep the wait counts exact).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(smem, s, kr.begin + s, A, B, M, N, K, m0, n0, tid);
    ktg::cp_async_commit();
  }

  for (int t = 0; t < k_tiles; ++t) {
    ktg::cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed
    __syncthreads();                   // everyone's have; everyone is done with tile t - 1
    const int next = t + STAGES - 1;   // refills the stage tile t - 1 used
    if (next < k_tiles) load_stage(smem, next % STAGES, kr.begin + next, A, B, M, N, K, m0, n0, tid);
    ktg::cp_async_commit();
    const char* sA = smem + (t % STAGES) * kStageBytes;
    const char* sB = sA + ALoader::Layout::kBytes;
#pragma unroll
    for (int k = 0; k < BK; k += Warp::kStep) Warp::step(sA, sB, wm0, wn0, k, acc, lane);
  }
  ktg::cp_async_wait<0>();

  // Each thread holds column pairs (2t, 2t + 1): one 2-element access per pair when aligned.
  const int g = lane >> 2;
  const int t4 = lane & 3;
  const bool paired = ktg::pairs_aligned<SPLIT_K>(C, workspace, N);
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
