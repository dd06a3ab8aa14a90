// conv2d_wgmma: forward 2-D convolution, NHWC activations x KRSC filters -> NHWC output
// (+ bias[k], ReLU), as an implicit GEMM on Hopper tensor cores with wgmma.mma_async
// (sm_90a): M = N*P*Q output pixels, N = K output channels, K = R*S*C; f16 / bf16 inputs,
// fp32 accumulation. Both operands go through the gemm_wgmma pieces (gemm_wgmma.cuh): the
// filter tile is a plain K-major tile of the K x (R*S*C) filter matrix (MatrixTileLoader),
// the activation tile is gathered per output pixel and filter tap (ConvTileLoader,
// conv2d_wgmma.cuh, zero fill for padding), both into 128-byte-swizzled shared tiles read
// through matrix descriptors by the multistage cp.async pipeline (wg::pipeline_*). The
// epilogue adds the bias and applies ReLU (conv_common.cuh); SPLIT_K > 1 splits R*S*C into
// fp32 partials summed by conv2d_splitk_reduce. C must be a multiple of 8 (the host
// template refuses others; conv2d_mma takes them).
//
// Tunables (defaults let the file compile on its own): BM x BN block tile (BN 64/128/256),
// BK k tile (64 or 128), WGS consumer warpgroups stacked along M (BM / WGS rows each, a
// multiple of 64), STAGES (>= 3), SPLIT_K, GROUP_M, ITER (1: per-row pixel origins kept in
// registers, 0: recomputed per k tile), EPI (0: accumulator pairs stored straight to global
// memory; 1: staged through shared memory and written as 16-byte row chunks, when K % 8 == 0
// and SPLIT_K == 1), LOOP (1: each k tile's wgmma batch is issued before the gather of a
// later tile; 0: gather first: wg::pipeline_steady either way), PERSIST,
// CLUSTER_K (> 1: the CLUSTER_K CTAs of a thread-block cluster split R*S*C of one output tile
// and rank 0 adds the others' accumulators from their shared memory before its epilogue: split-K
// without a workspace or a second kernel; SPLIT_K = 1, PERSIST = 0), PRODUCER (0: every thread
// gathers and computes; 1 / 2: an extra warpgroup gathers both tiles into an mbarrier ring
// (wg::produce_ws / consume_ws as in gemm_wgmma: 1 fences landed copies with a lagged
// wait_group, 2 arrives with cp.async.mbarrier.arrive.noinc) while the consumer warpgroups
// only wait and issue wgmma, registers moved to them with setmaxnreg; PERSIST = 0,
// CLUSTER_K = 1). Problem defines: conv_common.cuh.
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
#ifndef ITER
#define ITER 1
#endif
#ifndef EPI
#define EPI 0
#endif
#ifndef LOOP
#define LOOP 1
#endif
#ifndef PERSIST
#define PERSIST 0
#endif
#ifndef CLUSTER_K
#define CLUSTER_K 1
#endif
#ifndef PRODUCER
#define PRODUCER 0
#endif
#ifndef KT_DTYPE
#define KT_DTYPE 1
#endif

#include "conv/conv2d_wgmma.cuh"

namespace {

using InT = ktg::gemm_in_t;
using Shape = ktg::wg::MainLoopShape<BM, BN, BK, WGS, STAGES>;
// Threads that issue the copies: all of them, or the producer warpgroup.
constexpr int kLoadThreads = PRODUCER ? 128 : Shape::kThreads;
constexpr int kBlockThreads = Shape::kThreads + (PRODUCER ? 128 : 0);
// A 1x1 filter at stride 1 without padding reads pixel m's own C channels: x is then the
// plain (N*H*W) x C row-major A matrix (P = H, Q = W), loaded like a GEMM operand without any
// gather arithmetic or pixel decomposition (ITER does not matter there).
#if KT_R == 1 && KT_S == 1 && KT_STRIDE == 1 && KT_PAD == 0
#define KTC_PLAIN_A 1
using ALoader = ktg::wg::MatrixTileLoader<BM, BK, kLoadThreads, InT>;
#else
#define KTC_PLAIN_A 0
using ALoader = ktc::ConvTileLoader<BM, BK, kLoadThreads, ITER != 0, InT>;
#endif
using BLoader = ktg::wg::MatrixTileLoader<BN, BK, kLoadThreads, InT>;
// PRODUCER: registers per producer thread (its gather keeps per-chunk pixel origins and
// pointers) and per consumer thread after setmaxnreg (multiples of 8, at most 256). The block
// keeps the registers it was launched with (kEntryRegs per thread: ptxas compiles a kernel
// that uses setmaxnreg to its launch-bounds cap, 168 for 384 threads): what the producer
// gives back is all the consumers may take, or their setmaxnreg.inc would wait forever.
constexpr int kEntryFit = (65536 / kBlockThreads) / 8 * 8;
constexpr int kEntryRegs = kEntryFit > 256 ? 256 : kEntryFit;
constexpr int kProducerRegs = ALoader::kChunks > 8 ? 128 : 88;
constexpr int kConsumerFit =
    (kEntryRegs * kBlockThreads - kProducerRegs * 128) / (128 * WGS) / 8 * 8;
constexpr int kConsumerRegs = kConsumerFit > 256 ? 256 : kConsumerFit;
static_assert(PRODUCER == 0 || kConsumerRegs >= kEntryRegs,
              "the consumers must not end with fewer registers than they started with");

static_assert(KT_DTYPE == 1 || KT_DTYPE == 2, "conv2d_wgmma takes f16 or bf16");
static_assert(PERSIST == 0 || SPLIT_K == 1, "persistent blocks (PERSIST) need SPLIT_K = 1");
static_assert(CLUSTER_K == 1 || (SPLIT_K == 1 && PERSIST == 0),
              "a k-split cluster (CLUSTER_K > 1) needs SPLIT_K = 1 and PERSIST = 0");
static_assert(PRODUCER == 0 || (PERSIST == 0 && CLUSTER_K == 1),
              "the producer warpgroup (PRODUCER > 0) needs PERSIST = 0 and CLUSTER_K = 1");
static_assert(PRODUCER >= 0 && PRODUCER <= 2, "PRODUCER: 0, 1 or 2");
static_assert(CLUSTER_K >= 1 && CLUSTER_K <= 8, "CLUSTER_K: 1 to 8 CTAs (portable cluster size)");
static_assert(SMALL_C == 0, "conv2d_wgmma has no small-C path (C must be a multiple of 8)");

}  // namespace

/// Barrier of the threads that run the epilogue: the block, or (PRODUCER, whose warpgroup has
/// left) the 128 * WGS consumer threads on named barrier 1.
__device__ __forceinline__ void epilogue_sync() {
#if PRODUCER
  asm volatile("bar.sync 1, %0;\n" ::"n"(Shape::kThreads) : "memory");
#else
  __syncthreads();
#endif
}

/// Bytes per row of the EPI = 1 staging tile: BN outputs plus 16 bytes, so that the 8 rows a
/// warp's accumulator pairs fall in start 4 banks apart (conflict-free 4-byte writes).
constexpr int kStagedPitch = BN * 2 + 16;
/// Ranges R*S*C is split into: by SPLIT_K (workspace) or by CLUSTER_K (cluster).
constexpr int kSplits = CLUSTER_K > 1 ? CLUSTER_K : SPLIT_K;
/// Stages a block touches: k tile t of a split goes to stage t % STAGES.
constexpr int kStagesUsed = ((ktc::kGemmK + BK - 1) / BK + kSplits - 1) / kSplits < STAGES
                                ? ((ktc::kGemmK + BK - 1) / BK + kSplits - 1) / kSplits
                                : STAGES;
/// Byte offset of the EPI = 1 staging tile in the aligned shared memory: over the freed
/// stages, or (PERSIST, where the next tile's first copies are in flight during the
/// epilogue) past the stages.
constexpr int kStagedOffset = PERSIST ? kStagesUsed * Shape::kStageBytes : 0;

/// The epilogue of the block tile at (m0, n0): bias + ReLU, converted, stored into y (or
/// split-K partials of split `split` into the workspace). `staged`: the EPI = 1 staging tile.
__device__ __forceinline__ void store_output(const float (&acc)[Shape::kMi][Shape::kAcc], InT* y,
                                             const InT* bias, float* workspace, int split,
                                             int M, int K, int m0, int n0, int tid,
                                             char* staged) {
  // Accumulator fragment of a 64 x BN wgmma: warp w of the warpgroup owns rows w * 16 + g and
  // w * 16 + g + 8 (g = lane / 4); register 4j + 2h + c is column 8j + 2 * (lane % 4) + c of
  // row half h.
  const int lane = tid & 31;
  const int row_base = m0 + (tid / 128) * Shape::kWgRows + ((tid & 127) >> 5) * 16 + (lane >> 2);
  const int col_base = n0 + (lane & 3) * 2;
#if EPI
  if (SPLIT_K == 1 && (K & 7) == 0) {
    // Staged: every warpgroup has retired its wgmma reads and every copy has landed (main_loop
    // waits for both per thread); after the barrier the stages are free for the output tile
    // (PERSIST: the staging area lies past the stages, and the barrier makes sure every thread
    // has read the previous tile's staged rows).
    epilogue_sync();
    const int row_in_tile = row_base - m0;
#pragma unroll
    for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        char* s_row = staged + (row_in_tile + mi * 64 + h * 8) * kStagedPitch + (lane & 3) * 4;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = col_base + j * 8;  // col + 1 < K exactly when col < K (K even)
          const bool inside = col < K;
          const InT pair[2] = {
              ktg::from_float<InT>(inside ? ktc::finish(acc[mi][j * 4 + h * 2], bias, col) : 0.0f),
              ktg::from_float<InT>(inside ? ktc::finish(acc[mi][j * 4 + h * 2 + 1], bias, col + 1)
                                          : 0.0f)};
          *reinterpret_cast<unsigned*>(s_row + j * 16) = *reinterpret_cast<const unsigned*>(pair);
        }
      }
    epilogue_sync();
    // 16-byte chunks, consecutive threads along a row: each quarter warp stores 128
    // contiguous bytes (K % 8 == 0: a chunk is entirely inside or outside the K columns).
    constexpr int kRowChunks = BN / 8;
    constexpr int kIters = BM * kRowChunks / Shape::kThreads;
    static_assert((BM * kRowChunks) % Shape::kThreads == 0, "whole chunks per thread");
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int idx = tid + i * Shape::kThreads;
      const int r = idx / kRowChunks;
      const int c = idx % kRowChunks;
      if (m0 + r < M && n0 + c * 8 < K)
        *reinterpret_cast<uint4*>(y + static_cast<long long>(m0 + r) * K + n0 + c * 8) =
            *reinterpret_cast<const uint4*>(staged + r * kStagedPitch + c * 16);
    }
    return;
  }
#endif
  if (SPLIT_K == 1 && m0 + BM <= M && n0 + BN <= K && (K & 1) == 0) {
    // Interior tile: no bounds checks, one 4-byte store per column pair.
#pragma unroll
    for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        InT* y_row = y + static_cast<long long>(row_base + mi * 64 + h * 8) * K + col_base;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const int col = col_base + j * 8;
          const InT pair[2] = {
              ktg::from_float<InT>(ktc::finish(acc[mi][j * 4 + h * 2], bias, col)),
              ktg::from_float<InT>(ktc::finish(acc[mi][j * 4 + h * 2 + 1], bias, col + 1))};
          *reinterpret_cast<unsigned*>(y_row + j * 8) = *reinterpret_cast<const unsigned*>(pair);
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
        ktc::store_pair<SPLIT_K>(y, bias, workspace, split, M, K,
                                 row_base + mi * 64 + h * 8, col_base + j * 8,
                                 acc[mi][j * 4 + h * 2], acc[mi][j * 4 + h * 2 + 1]);
}

/// Main kernel. Grid: (tiles_m * tiles_n, 1, SPLIT_K or CLUSTER_K; clusters of 1 x 1 x
/// CLUSTER_K), or with PERSIST (SPLIT_K = 1) at most PERSIST x SMs blocks that stride over the
/// tiles; block: 128 * WGS threads; dynamic shared memory: kStagesUsed stages (with EPI, at
/// least BM rows of kStagedPitch bytes; with EPI and PERSIST, those rows after the stages;
/// with CLUSTER_K > 1 at least BM * BN floats) + 1 KiB for 1024-byte alignment.
/// x: N x H x W x C; w: K x R x S x C; y: N x P x Q x K. `bias` is read only with KT_BIAS;
/// `workspace` (SPLIT_K x M x K floats) only when SPLIT_K > 1.
#if CLUSTER_K > 1
#define KTC_CLUSTER_DIMS __cluster_dims__(1, 1, CLUSTER_K)
#else
#define KTC_CLUSTER_DIMS
#endif
extern "C" __global__ void __launch_bounds__(kBlockThreads, PERSIST > 1 ? PERSIST : 1)
    KTC_CLUSTER_DIMS conv2d_wgmma(const InT* __restrict__ x, const InT* __restrict__ w, InT* y,
                                  const InT* bias, float* workspace, int N, int H, int W, int K,
                                  int P, int Q) {
  extern __shared__ __align__(128) char smem_raw[];
  // Swizzled tiles must start on 1024-byte boundaries (the pattern's phase is the row).
  const unsigned smem = (ktg::smem_address(smem_raw) + 1023u) & ~1023u;
  char* const aligned = smem_raw + (smem - ktg::smem_address(smem_raw));  // generic pointer
  char* staged = aligned + kStagedOffset;
  const ktc::ConvDims d{N, H, W, K, P, Q};
  const int M = d.pixels();
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (K + BN - 1) / BN;
  const ktg::KRange kr = ktg::split_k_range(ktc::kGemmK, BK, blockIdx.z, kSplits);
  const int k_tiles = kr.end - kr.begin;

  ALoader a;
  BLoader b;
  // Points the loaders at block tile `tc`, first k tile of this split (`tid`: the thread's
  // index among the loading threads).
  auto start_tile = [&](const ktg::TileCoord& tc, int tid) {
#if KTC_PLAIN_A
    a.init(x, ktc::kGemmK, tc.m * BM, M, ktc::kGemmK, kr.begin * BK, tid);  // x is M x C
#else
    a.init(x, d, tc.m * BM, kr.begin * BK, tid);
#endif
    b.init(w, ktc::kGemmK, tc.n * BN, K, ktc::kGemmK, kr.begin * BK, tid);  // w: K x (R*S*C)
  };

#if PRODUCER
  // Warp-specialized: warpgroup 0 gathers, warpgroups 1 .. WGS compute and store.
  __shared__ __align__(8) unsigned long long ws_bars[2 * STAGES];
  const unsigned bars = ktg::smem_address(ws_bars);
  ktg::wg::init_ws_barriers<Shape>(bars, threadIdx.x, WGS);
  __syncthreads();
  const ktg::TileCoord ptc = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  if (threadIdx.x < 128) {
    ktg::wg::regs_dec<kProducerRegs>();
    start_tile(ptc, threadIdx.x);
    ktg::wg::produce_ws<Shape, PRODUCER == 2>(a, b, smem, bars, k_tiles);
    return;
  }
  ktg::wg::regs_inc<kConsumerRegs>();
  const int tid = threadIdx.x - 128;  // consumer thread index
  const int wg = tid / 128;
  float acc[Shape::kMi][Shape::kAcc];
#pragma unroll
  for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
    for (int j = 0; j < Shape::kAcc; ++j) acc[mi][j] = 0.0f;
  ktg::wg::consume_ws<Shape, PRODUCER == 2>(acc, smem, bars, k_tiles, wg);
  store_output(acc, y, bias, workspace, blockIdx.z, M, K, ptc.m * BM, ptc.n * BN, tid, staged);
#else
  const int tid = threadIdx.x;
  const int wg = tid / 128;
  float acc[Shape::kMi][Shape::kAcc];
#if PERSIST
  // Persistent blocks: tile blockIdx.x, then every gridDim.x-th. Once a tile's reduction is
  // done (every warpgroup retired its wgmma, every copy landed, then a barrier), the first
  // STAGES - 2 k tiles of the next tile are issued, so that their copies are in flight while
  // this tile's epilogue stores.
  const int total = tiles_m * tiles_n;
  ktg::TileCoord tc = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  start_tile(tc, tid);
  ktg::wg::pipeline_prologue<Shape>(a, b, smem, k_tiles);
  for (int t = blockIdx.x; t < total; t += gridDim.x) {
#pragma unroll
    for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
      for (int j = 0; j < Shape::kAcc; ++j) acc[mi][j] = 0.0f;
    ktg::wg::pipeline_steady<Shape, true>(acc, a, b, smem, k_tiles, wg);
    const int m0 = tc.m * BM;
    const int n0 = tc.n * BN;
    __syncthreads();  // every warpgroup's wgmma reads of every stage are retired
    if (t + static_cast<int>(gridDim.x) < total) {
      tc = ktg::tile_coords(t + gridDim.x, tiles_m, tiles_n, GROUP_M);
      start_tile(tc, tid);
      ktg::wg::pipeline_prologue<Shape>(a, b, smem, k_tiles);
    }
    store_output(acc, y, bias, workspace, 0, M, K, m0, n0, tid, staged);
  }
#else
  const ktg::TileCoord tc = ktg::tile_coords(blockIdx.x, tiles_m, tiles_n, GROUP_M);
#pragma unroll
  for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
    for (int j = 0; j < Shape::kAcc; ++j) acc[mi][j] = 0.0f;
  start_tile(tc, tid);
  // LOOP = 1: each k tile's wgmma batch before the gather of a later tile; 0: gather first.
  ktg::wg::pipeline_prologue<Shape>(a, b, smem, k_tiles);
  ktg::wg::pipeline_steady<Shape, LOOP != 0>(acc, a, b, smem, k_tiles, wg);
#if CLUSTER_K > 1
  // Rank r of the cluster (blockIdx.z: the cluster spans z) reduced k range r; rank 0 sums.
  float* partials = reinterpret_cast<float*>(aligned);
  if (!ktg::wg::cluster_k_reduce<Shape, CLUSTER_K>(acc, partials, smem, tid)) return;
  store_output(acc, y, bias, workspace, 0, M, K, tc.m * BM, tc.n * BN, tid, staged);
#else
  store_output(acc, y, bias, workspace, blockIdx.z, M, K, tc.m * BM, tc.n * BN, tid, staged);
#endif
#endif  // PERSIST
#endif  // PRODUCER
}

KTC_DEFINE_HELPER_KERNELS(InT)
