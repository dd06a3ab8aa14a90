// conv2d_mma: forward 2-D convolution, NHWC activations x KRSC filters -> NHWC output
// (+ bias[k], ReLU), as an implicit GEMM on tensor cores: M = N*P*Q output pixels, N = K
// output channels, K = R*S*C. f16 / bf16 inputs with mma.sync m16n8k16 and fp32
// accumulation. The filter tile is a plain k-contiguous matrix tile (the GEMM family's
// AsyncTileLoader); the activation tile is gathered by the implicit-GEMM iterator of
// conv_common.cuh with cp.async zero-fill for padding taps; both land in the GEMM family's
// swizzled shared tiles, read by its WarpMma through a STAGES-deep pipeline. SPLIT_K > 1
// splits R*S*C and finishes in conv2d_splitk_reduce; SMALL_C reads channel-padded copies.
//
// Tunables (defaults let the file compile on its own): BM x BN block tile, BK k tile
// (channels per k step when C >= BK), WM x WN warp tile, STAGES, SPLIT_K, GROUP_M,
// ITER (0 analytic offsets, 1 precomputed), SMALL_C. Problem defines: conv_common.cuh.
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
#ifndef ITER
#define ITER 1
#endif
#ifndef KT_DTYPE
#define KT_DTYPE 1
#endif

#include "conv/conv_common.cuh"
#include "gemm/gemm_mma_warp.cuh"
#include "gemm/gemm_smem_copy.cuh"

namespace {

using InT = ktg::gemm_in_t;

constexpr int kWarpsM = BM / WM;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kVecA = ktc::activation_vector<InT, 16>();  // elements per activation copy
constexpr int kVecB = ktc::filter_vector<InT, 16>();      // elements per filter copy

using AIter = ktc::ImplicitGemmA<BM, BK, kVecA, kThreads, ITER != 0>;
using ALayout = ktg::SwizzledTile<BM, BK, static_cast<int>(sizeof(InT))>;
using BLoader = ktg::AsyncTileLoader<BN, BK, InT, kVecB, kThreads>;
using Warp = ktg::WarpMma<InT, WM, WN, true, true, ALayout, BLoader::Layout>;
constexpr int kStageBytes = ALayout::kBytes + BLoader::Layout::kBytes;

static_assert(KT_DTYPE == 1 || KT_DTYPE == 2, "conv2d_mma takes f16 or bf16 (fp32 is conv2d_simt)");
static_assert(BM % WM == 0 && BN % WN == 0, "block tile must be a multiple of the warp tile");
static_assert(BK % Warp::kStep == 0, "BK must be a multiple of the mma k");
static_assert(kThreads <= 1024, "at most 1024 threads per block");
static_assert(STAGES >= 2, "the cp.async pipeline needs at least two stages");

/// Issues this thread's copies of the activation tile for the k tile at k0 (cp.async with
/// zero-fill for padding taps; 2-byte chunks are copied synchronously).
__device__ __forceinline__ void load_a(char* sA, const InT* __restrict__ x, const AIter& it,
                                       int k0, const ktc::ConvDims& d, int tid) {
  constexpr int kBytes = kVecA * static_cast<int>(sizeof(InT));
#pragma unroll
  for (int i = 0; i < AIter::kPerThread; ++i) {
    if (!AIter::owns(i, tid)) break;
    const long long off = it.offset(i, k0, d);
    char* dst = sA + ALayout::offset(AIter::row_of(i, tid), AIter::col_of(i, tid));
    const InT* src = off >= 0 ? x + off : x;
    if constexpr (kBytes >= 4) {
      ktg::cp_async_zfill<kBytes>(dst, src, off >= 0 ? kBytes : 0);
    } else {
      *reinterpret_cast<unsigned short*>(dst) =
          off >= 0 ? *reinterpret_cast<const unsigned short*>(src) : 0;
    }
  }
}

/// Issues the copies of both operands of k tile `kt` into pipeline stage `stage`.
__device__ __forceinline__ void load_stage(char* smem, int stage, int kt, const InT* x,
                                           const InT* w, AIter& it, const ktc::ConvDims& d,
                                           int n0, int tid) {
  char* sA = smem + stage * kStageBytes;
  char* sB = sA + ALayout::kBytes;
  const int k0 = kt * BK;
  load_a(sA, x, it, k0, d, tid);
  it.advance(d);
  BLoader::load(sB, w, ktc::kGemmK, n0, k0, d.K, ktc::kGemmK, tid);  // w is K x (R*S*C)
}

}  // namespace

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K); block: kThreads; dynamic shared
/// memory STAGES * kStageBytes. x: N x H x W x channels; w: K x R x S x channels; y: N x P x
/// Q x K. `bias` is read only with KT_BIAS; `workspace` (SPLIT_K x M x K floats) only when
/// SPLIT_K > 1.
extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_mma(const InT* __restrict__ x, const InT* __restrict__ w, InT* y, const InT* bias,
               float* workspace, int N, int H, int W, int K, int P, int Q) {
  extern __shared__ __align__(128) char smem[];
  const ktc::ConvDims d{N, H, W, K, P, Q};
  const int M = d.pixels();
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (K + BN - 1) / BN;
  const ktg::TileCoord tile = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int m0 = tile.m * BM;
  const int n0 = tile.n * BN;
  const int wm0 = (warp / kWarpsN) * WM;
  const int wn0 = (warp % kWarpsN) * WN;
  const ktg::KRange kr = ktg::split_k_range(ktc::kGemmK, BK, blockIdx.z, SPLIT_K);
  const int k_tiles = kr.end - kr.begin;

  AIter it;
  it.init(m0, kr.begin * BK, d, tid);

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
    if (s < k_tiles) load_stage(smem, s, kr.begin + s, x, w, it, d, n0, tid);
    ktg::cp_async_commit();
  }

  for (int t = 0; t < k_tiles; ++t) {
    ktg::cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed
    __syncthreads();                   // everyone's have; everyone is done with tile t - 1
    const int next = t + STAGES - 1;   // refills the stage tile t - 1 used
    if (next < k_tiles) load_stage(smem, next % STAGES, kr.begin + next, x, w, it, d, n0, tid);
    ktg::cp_async_commit();
    const char* sA = smem + (t % STAGES) * kStageBytes;
    const char* sB = sA + ALayout::kBytes;
#pragma unroll
    for (int k = 0; k < BK; k += Warp::kStep) Warp::step(sA, sB, wm0, wn0, k, acc, lane);
  }
  ktg::cp_async_wait<0>();

  const int g = lane >> 2;
  const int t4 = lane & 3;
#pragma unroll
  for (int mi = 0; mi < Warp::kMi; ++mi)
#pragma unroll
    for (int ni = 0; ni < Warp::kNi; ++ni)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + wm0 + mi * 16 + g + half * 8;
        const int col = n0 + wn0 + ni * 8 + t4 * 2;
        ktc::store_pair<SPLIT_K>(y, bias, workspace, blockIdx.z, M, K, row, col,
                                 acc[mi][ni][half * 2], acc[mi][ni][half * 2 + 1]);
      }
}

KTC_DEFINE_HELPER_KERNELS(InT)
