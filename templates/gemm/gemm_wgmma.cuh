// Reusable pieces of the Hopper (sm_90a) GEMM path (cp.async group commit / wait and the
// shared-memory address come from gemm_smem_copy.cuh): 16-byte cp.async copies, async-proxy
// and wgmma fences, wgmma.mma_async wrappers (64 x N x 16, fp32 accumulation, both operands
// from shared memory through 128B-swizzle descriptors), the operand-tile loader of a plain
// K-contiguous matrix, the multistage main loop (or the warp-specialized producer / consumer
// pair) that drives any pair of loaders, the sum of a k-split cluster's tiles, and the
// epilogue into a row-major output. An implicit-GEMM
// convolution plugs in by giving the loops its own A loader (same interface as
// wg::MatrixTileLoader: init once, load(stage) per k tile, advance()) that gathers NHWC
// rows into the same swizzled tile layout (gemm_wgmma_layout.cuh); its NHWC output is the
// row-major (N * P * Q) x K matrix store_tile writes.
//
// Needs KT_DTYPE (1 = f16, 2 = bf16) from gemm_common.cuh before inclusion.
#pragma once

#include "common/cluster.cuh"
#include "common/mbarrier.cuh"
#include "gemm/gemm_common.cuh"
#include "gemm/gemm_smem_copy.cuh"
#include "gemm/gemm_wgmma_layout.cuh"

#if KT_DTYPE == 2
#define KTG_WGMMA_TYPE "bf16"
#else
#define KTG_WGMMA_TYPE "f16"
#endif

namespace ktg {
namespace wg {

/// 16-byte cp.async (L2 only) from global to shared memory; src_bytes 0 writes 16 zero bytes
/// without reading the source.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

/// Orders this thread's generic-proxy shared-memory writes (the landed cp.async copies) before
/// later async-proxy reads (wgmma); each writing thread runs it before the barrier.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// wgmma.fence: orders earlier register and shared-memory accesses of the warpgroup before
/// the wgmma.mma_async instructions that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// Closes the batch of wgmma.mma_async issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most N committed wgmma batches of the warpgroup are in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/// Keeps the compiler from moving accesses of an accumulator across wgmma fences/waits.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

/// wgmma.mma_async 64 x N x 16 with fp32 accumulators (N = 64, 128, 256).
template <int N>
struct Wgmma;

/// D(64 x 64, fp32) += A(64 x 16) * B(16 x 64) from descriptors; d: this thread's 32
/// accumulators (row w*16 + lane/4 (+8), column 8j + 2*(lane%4) (+1); see store_tile).
template <> struct Wgmma<64> {
  static __device__ __forceinline__ void mma(float (&d)[32], unsigned long long desc_a,
                                             unsigned long long desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." KTG_WGMMA_TYPE "." KTG_WGMMA_TYPE " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(1));
  }
};

/// D(64 x 128, fp32) += A(64 x 16) * B(16 x 128) from descriptors; d: this thread's 64
/// accumulators (row w*16 + lane/4 (+8), column 8j + 2*(lane%4) (+1); see store_tile).
template <> struct Wgmma<128> {
  static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long desc_a,
                                             unsigned long long desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." KTG_WGMMA_TYPE "." KTG_WGMMA_TYPE " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(1));
  }
};

/// D(64 x 256, fp32) += A(64 x 16) * B(16 x 256) from descriptors; d: this thread's 128
/// accumulators (row w*16 + lane/4 (+8), column 8j + 2*(lane%4) (+1); see store_tile).
template <> struct Wgmma<256> {
  static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long desc_a,
                                             unsigned long long desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." KTG_WGMMA_TYPE "." KTG_WGMMA_TYPE " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1));
  }
};

/// Loader of one operand tile: ROWS rows x BK (64 or 128) k of a row-major matrix whose rows
/// are k-contiguous (A stored M x K, or B stored N x K), into the K-major 128B-swizzled layout
/// of gemm_wgmma_layout.cuh with cp.async. All THREADS threads of the block call every method.
/// Rows at or beyond `rows` and k at or beyond K are zero-filled (K must be a multiple of 8:
/// a 16-byte chunk is either entirely inside or entirely outside). When THREADS does not
/// divide the tile's chunks (three warpgroups over a 64-, 128- or 256-row tile), the last
/// round of copies is issued only by the threads whose chunk lies in the tile.
///
/// Interface a replacement loader (e.g. an implicit-GEMM NHWC gather for convolution) keeps:
///   load(tile): issue this thread's cp.async copies of the current k tile into the ROWS x BK
///               tile at shared address `tile` (1024-aligned), layout wgmma_tile_offset();
///               commits nothing (the main loop commits one group per k tile);
///   advance():  move to the next k tile.
template <int ROWS, int BK_, int THREADS, class T>
struct MatrixTileLoader {
  static_assert(sizeof(T) == 2, "16-bit elements (f16 / bf16)");
  static_assert(BK_ % kWgmmaAtomK == 0, "BK must be a multiple of 64 (128-byte rows)");
  static constexpr int kChunksPerRow = BK_ / 8;             ///< 16-byte chunks per tile row
  static constexpr int kRowStep = THREADS / kChunksPerRow;  ///< rows between a thread's chunks
  static constexpr int kTileChunks = ROWS * kChunksPerRow;  ///< 16-byte chunks of the tile
  /// Copies per thread (the last one only for some threads unless THREADS divides the tile).
  static constexpr int kChunks = (kTileChunks + THREADS - 1) / THREADS;
  static constexpr bool kWholeRounds = kTileChunks % THREADS == 0;  ///< every thread, every round
  static_assert(THREADS % kChunksPerRow == 0 && kRowStep % 8 == 0,
                "a thread's chunks must keep their swizzle phase (row step multiple of 8)");

  const T* src;        ///< this thread's first chunk in the current k tile
  long long step;      ///< elements between this thread's consecutive chunks (kRowStep rows)
  unsigned dst;        ///< byte offset of the first chunk inside the tile
  unsigned row_valid;  ///< bit i: chunk i's row is inside the matrix
  bool last_in_tile;   ///< the last round's chunk lies inside the tile (always, kWholeRounds)
  int k;               ///< k of this thread's chunk in the current k tile
  int K;               ///< the reduced dimension

  /// Tile rows row0 .. row0 + ROWS - 1 of a matrix of `rows` rows (leading dimension ld),
  /// starting at k tile column k_first.
  __device__ __forceinline__ void init(const T* matrix, long long ld, int row0, int rows,
                                       int K_, int k_first, int tid) {
    const int row = tid / kChunksPerRow;
    const int chunk = tid % kChunksPerRow;
    K = K_;
    k = k_first + chunk * 8;
    step = ld * kRowStep;
    row_valid = 0;
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (row0 + row + i * kRowStep < rows) row_valid |= 1u << i;
    last_in_tile = kWholeRounds || row + (kChunks - 1) * kRowStep < ROWS;
    // A thread whose first row is outside the matrix copies nothing; its pointer stays valid.
    const int safe_row = row0 + row < rows ? row0 + row : 0;
    src = matrix + static_cast<long long>(safe_row) * ld + k;
    dst = wgmma_chunk_offset(ROWS, row, chunk);
  }

  /// Issues this thread's copies of the current k tile into the tile at shared address `tile`.
  __device__ __forceinline__ void load(unsigned tile) const {
    const bool k_inside = k < K;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      if (!kWholeRounds && i == kChunks - 1 && !last_in_tile) break;
      const bool inside = k_inside && ((row_valid >> i) & 1u);
      // Chunks outside the matrix read nothing (src_bytes 0) from a pointer inside it.
      cp_async16(tile + dst + i * kRowStep * 128, inside ? src + i * step : src, inside ? 16 : 0);
    }
  }

  /// Moves to the next k tile.
  __device__ __forceinline__ void advance() {
    src += BK_;
    k += BK_;
  }
};

/// Shape of the main loop: a BM x BN block tile computed by WGS consumer warpgroups stacked
/// along M (each BM / WGS rows, in 64-row wgmma instructions), BK-deep k tiles, STAGES-deep
/// shared-memory ring.
template <int BM_, int BN_, int BK_, int WGS_, int STAGES_>
struct MainLoopShape {
  static constexpr int kBM = BM_;                         ///< block tile rows
  static constexpr int kBN = BN_;                         ///< block tile columns
  static constexpr int kStages = STAGES_;                 ///< shared-memory ring depth
  static constexpr int kThreads = 128 * WGS_;             ///< threads of the block
  static constexpr int kWgRows = BM_ / WGS_;              ///< rows per warpgroup
  static constexpr int kMi = kWgRows / 64;                ///< 64-row wgmma per k step
  static constexpr int kAcc = BN_ / 2;                    ///< accumulators per thread per kMi
  static constexpr int kKSteps = BK_ / 16;                ///< wgmma k steps per k tile
  static constexpr int kABytes = BM_ * BK_ * 2;           ///< A tile bytes
  static constexpr int kBBytes = BN_ * BK_ * 2;           ///< B tile bytes
  static constexpr int kStageBytes = kABytes + kBBytes;   ///< one stage
  static constexpr int kSmemBytes = STAGES_ * kStageBytes + kWgmmaSwizzleBytes;  ///< + align
  static constexpr int kPrefetch = STAGES_ - 2;           ///< k tiles loaded ahead
  static_assert(kWgRows % 64 == 0, "each warpgroup needs a multiple of 64 rows");
  static_assert(BN_ == 64 || BN_ == 128 || BN_ == 256, "BN must be 64, 128 or 256");
  static_assert(STAGES_ >= 3, "one stage read by wgmma in flight, one being read, one loading");
};

/// A main-loop hook that does nothing (see main_loop).
struct NoHook {
  /// Called with the k tile index.
  __device__ __forceinline__ void operator()(int) const {}
};

/// Keeps the compiler from moving accumulator reads or writes across an asynchronous wgmma
/// boundary (every accumulator register is an in/out operand of an empty asm).
template <class Shape>
__device__ __forceinline__ void fence_accumulators(float (&acc)[Shape::kMi][Shape::kAcc]) {
#pragma unroll
  for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
    for (int j = 0; j < Shape::kAcc; ++j) fence_operand(acc[mi][j]);
}

/// Issues warpgroup `wg`'s wgmma batch for the k tile at shared address `a_tile` (A, then B at
/// + kABytes) and commits it as one group: BK / 16 k steps x kMi 64-row slices.
template <class Shape>
__device__ __forceinline__ void issue_tile_mma(float (&acc)[Shape::kMi][Shape::kAcc],
                                               unsigned a_tile, int wg) {
  const unsigned b_tile = a_tile + Shape::kABytes;
  fence_accumulators<Shape>(acc);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < Shape::kKSteps; ++ks) {
    const unsigned long long db = wgmma_desc(wgmma_operand_addr(b_tile, Shape::kBN, 0, ks));
#pragma unroll
    for (int mi = 0; mi < Shape::kMi; ++mi) {
      const int row0 = wg * Shape::kWgRows + mi * 64;
      const unsigned long long da = wgmma_desc(wgmma_operand_addr(a_tile, Shape::kBM, row0, ks));
      Wgmma<Shape::kBN>::mma(acc[mi], da, db);
    }
  }
  wgmma_commit();
}

/// The multistage pipeline: acc[mi][*] += A tile rows * B tile for k tiles [0, k_tiles) of
/// the loaders. Every thread of the block issues cp.async copies (one group per k tile,
/// kPrefetch tiles ahead); each warpgroup issues its wgmma batch per k tile and keeps one batch
/// in flight. Stage reuse: the tile loaded at iteration t goes into the stage last read by k
/// tile t - 2, whose wgmma batch every warpgroup has retired (wait_group 1 at the end of
/// iteration t - 1) before the barrier of iteration t. In two parts, so that a persistent
/// block can issue the next tile's prologue during an epilogue: pipeline_prologue issues the
/// copies of k tiles 0 .. kPrefetch - 1 into stages 0 .. kPrefetch - 1 (one commit group
/// each, possibly empty; the stages must be free), pipeline_steady runs the k-tile loop that
/// expects exactly those groups in flight.
template <class Shape, class ALoader, class BLoader>
__device__ __forceinline__ void pipeline_prologue(ALoader& a, BLoader& b, unsigned smem,
                                                  int k_tiles) {
  constexpr int S = Shape::kStageBytes;
#pragma unroll
  for (int s = 0; s < Shape::kPrefetch; ++s) {
    if (s < k_tiles) {
      a.load(smem + s * S);
      b.load(smem + s * S + Shape::kABytes);
      a.advance();
      b.advance();
    }
    cp_async_commit();
  }
}

/// The k-tile loop of the pipeline (see pipeline_prologue); ends with every wgmma retired and
/// every copy landed (this thread's). kMmaFirst: each warpgroup issues tile t's wgmma batch
/// right after the barrier and only then the copies of tile t + kPrefetch, so the tensor cores
/// hold two batches (t - 1 running, t queued) while a heavy gather's address arithmetic issues
/// (conv2d_wgmma LOOP = 1); otherwise the copies come first. Stage reuse is the same either
/// way. `hook(t)` runs once per k tile right after the tile's wgmma batch is issued (while it
/// runs), e.g. to prefetch what the epilogue reads.
template <class Shape, bool kMmaFirst, class ALoader, class BLoader, class Hook = NoHook>
__device__ __forceinline__ void pipeline_steady(float (&acc)[Shape::kMi][Shape::kAcc],
                                                ALoader& a, BLoader& b, unsigned smem,
                                                int k_tiles, int wg, const Hook& hook = Hook()) {
  constexpr int S = Shape::kStageBytes;
  constexpr int kStages = Shape::kStages;
  constexpr int P = Shape::kPrefetch;
  int read = 0;       // stage of k tile t
  int write = P;      // stage of k tile t + P (P < kStages)
  for (int t = 0; t < k_tiles; ++t) {
    cp_async_wait<P - 1>();  // this thread's copies of tile t have landed
    fence_proxy_async();     // ... and are visible to the tensor cores' (async proxy) reads
    __syncthreads();         // everyone's have; every warpgroup retired tile t - 2's wgmma
    if constexpr (kMmaFirst) {
      issue_tile_mma<Shape>(acc, smem + read * S, wg);
      hook(t);
    }
    if (t + P < k_tiles) {  // into the stage of tile t - 2 (retired, see above)
      a.load(smem + write * S);
      b.load(smem + write * S + Shape::kABytes);
      a.advance();
      b.advance();
    }
    cp_async_commit();  // possibly empty: keeps the group count per iteration fixed
    write = write + 1 == kStages ? 0 : write + 1;
    if constexpr (!kMmaFirst) {
      issue_tile_mma<Shape>(acc, smem + read * S, wg);
      hook(t);
    }
    fence_accumulators<Shape>(acc);
    wgmma_wait<1>();  // tile t - 1 retired
    read = read + 1 == kStages ? 0 : read + 1;
  }
  wgmma_wait<0>();
  cp_async_wait<0>();
  fence_accumulators<Shape>(acc);
}

/// The whole pipeline with the copies issued first (see pipeline_prologue / pipeline_steady).
template <class Shape, class ALoader, class BLoader, class Hook = NoHook>
__device__ __forceinline__ void main_loop(float (&acc)[Shape::kMi][Shape::kAcc], ALoader& a,
                                          BLoader& b, unsigned smem, int k_tiles, int wg,
                                          const Hook& hook = Hook()) {
  pipeline_prologue<Shape>(a, b, smem, k_tiles);
  pipeline_steady<Shape, false>(acc, a, b, smem, k_tiles, wg, hook);
}


// ---------------------------------------------------------------------------------------
// Warp-specialized variant: one producer warpgroup fills the ring, consumers only compute.

// Warp-specialized main loop over k tiles [0, k_tiles): warpgroup 0 (`producer`) issues the
// loaders' cp.async copies into a STAGES ring, and once a tile's copies have landed (a
// lagged cp.async.wait_group, STAGES - 2 tiles behind) fences them for the async proxy and
// arrives on the stage's `full` barrier (128 arrivals); consumer warpgroup `wg` (0-based
// among consumers) waits on `full`, issues its wgmma batch, keeps one batch in flight, and
// after retiring tile t - 1 arrives (lane 0 of each warp) on that stage's `empty` barrier,
// which the producer waits on before refilling it. `bars` holds 2 * STAGES mbarriers (full
// then empty), initialized by init_ws_barriers. Loaders must be built for 128 threads.

/// Initializes the full (128 arrivals) and empty (4 per consumer warpgroup) barriers of the
/// warp-specialized loop (thread 0; the caller then synchronizes the block).
template <class Shape>
__device__ __forceinline__ void init_ws_barriers(unsigned bars, int tid, int consumer_wgs) {
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < Shape::kStages; ++s) {
      kt_mbar_init(bars + 8 * s, 128);
      kt_mbar_init(bars + 8 * (Shape::kStages + s), 4 * consumer_wgs);
    }
  }
}

/// Arrival on `bar` that the hardware performs once all of this thread's earlier cp.async
/// copies have landed (counts as one of the expected arrivals: .noinc).
__device__ __forceinline__ void mbar_arrive_on_copies(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/// The producer side of main_loop_ws (all 128 threads of the producer warpgroup). With
/// kAsyncArrive, each stage's full arrival is cp.async.mbarrier.arrive.noinc (no lag, no
/// wait_group in the producer) and the consumers fence the async proxy after their wait.
template <class Shape, bool kAsyncArrive, class ALoader, class BLoader>
__device__ __forceinline__ void produce_ws(ALoader& a, BLoader& b, unsigned smem, unsigned bars,
                                          int k_tiles) {
  constexpr int S = Shape::kStages;
  if constexpr (kAsyncArrive) {
    for (int t = 0; t < k_tiles; ++t) {
      const int s = t % S;
      // consumers freed it (the waits trap after ~2^28 polls: a hang fails the launch)
      if (t >= S) kt_mbar_wait<true>(bars + 8 * (S + s), ((t / S) & 1) ^ 1);
      a.load(smem + s * Shape::kStageBytes);
      b.load(smem + s * Shape::kStageBytes + Shape::kABytes);
      a.advance();
      b.advance();
      mbar_arrive_on_copies(bars + 8 * s);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");  // leave no copy behind at exit
    return;
  }
  // Tiles whose copies may still be in flight. The producer's wait for tile t - S's stage
  // needs the consumers past tile t - S + 1, whose full arrival came at producer iteration
  // t - S + 1 + L: it must precede iteration t, hence L <= S - 2.
  constexpr int L = S - 2;
  static_assert(L >= 1, "the warp-specialized loop needs STAGES >= 3");
  for (int t = 0; t < k_tiles; ++t) {
    const int s = t % S;
    if (t >= S) kt_mbar_wait<true>(bars + 8 * (S + s), ((t / S) & 1) ^ 1);  // consumers done
    a.load(smem + s * Shape::kStageBytes);
    b.load(smem + s * Shape::kStageBytes + Shape::kABytes);
    a.advance();
    b.advance();
    cp_async_commit();
    if (t >= L) {
      cp_async_wait<L>();  // tile t - L has landed (this thread's copies)
      fence_proxy_async();
      kt_mbar_arrive(bars + 8 * ((t - L) % S));
    }
  }
  cp_async_wait<0>();
  fence_proxy_async();
  for (int t = k_tiles > L ? k_tiles - L : 0; t < k_tiles; ++t)
    kt_mbar_arrive(bars + 8 * (t % S));
}

/// The consumer side of main_loop_ws (one warpgroup, `wg` = its index among consumers).
/// kAsyncArrive must match the producer's.
template <class Shape, bool kAsyncArrive, class Hook = NoHook>
__device__ __forceinline__ void consume_ws(float (&acc)[Shape::kMi][Shape::kAcc], unsigned smem,
                                          unsigned bars, int k_tiles, int wg,
                                          const Hook& hook = Hook()) {
  constexpr int S = Shape::kStages;
  const bool arriver = (threadIdx.x & 31) == 0;
  for (int t = 0; t < k_tiles; ++t) {
    const int s = t % S;
    kt_mbar_wait<true>(bars + 8 * s, (t / S) & 1);
    // The producer's copies were fenced by the producer, or (async arrival) are fenced here,
    // after the acquire, before the tensor cores read them.
    if constexpr (kAsyncArrive) fence_proxy_async();
    issue_tile_mma<Shape>(acc, smem + s * Shape::kStageBytes, wg);
    hook(t);
    fence_accumulators<Shape>(acc);
    wgmma_wait<1>();  // tile t - 1 retired: its stage may be refilled
    if (t > 0 && arriver) kt_mbar_arrive(bars + 8 * (S + (t - 1) % S));
  }
  wgmma_wait<0>();
  fence_accumulators<Shape>(acc);
}

/// setmaxnreg: the producer gives registers back, consumers take them (sm_90a; needs a
/// register cap at entry: __launch_bounds__(threads, 1)).
template <int N>
__device__ __forceinline__ void regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
/// See regs_dec.
template <int N>
__device__ __forceinline__ void regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}


// ---------------------------------------------------------------------------------------
// Epilogue: the accumulators of a BM x BN tile into a row-major M x N output (a GEMM's C, or
// a convolution's NHWC output seen as (N * P * Q) x K).

/// Asks L2 for the 128-byte lines of the output tile at (m0, n0) (all inside the matrix),
/// spread over the Shape::kThreads computing threads (`tid` among them).
template <class Shape, class OutT>
__device__ __forceinline__ void prefetch_tile_l2(const OutT* C, int N, int m0, int n0, int tid) {
  constexpr int kLinesPerRow = Shape::kBN * static_cast<int>(sizeof(OutT)) / 128;
  constexpr int kLines = Shape::kBM * kLinesPerRow;
#pragma unroll
  for (int l = 0; l < (kLines + Shape::kThreads - 1) / Shape::kThreads; ++l) {
    const int i = tid + l * Shape::kThreads;
    if (kLines % Shape::kThreads != 0 && i >= kLines) break;
    const OutT* line = C + static_cast<long long>(m0 + i / kLinesPerRow) * N + n0 +
                       (i % kLinesPerRow) * (128 / static_cast<int>(sizeof(OutT)));
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(line));
  }
}

/// Writes the tile's accumulators (computing thread `tid`, warpgroup tid / 128) as
/// alpha * acc + beta * C (+ bias[col]), or as fp32 split-K partials of split `split`
/// (Splits > 1, workspace Splits x M x N), skipping elements outside M x N.
/// Fragment of a 64 x BN wgmma: warp w of the warpgroup owns rows w * 16 + g and
/// w * 16 + g + 8 (g = lane / 4); register 4j + 2h + c is column 8j + 2 * (lane % 4) + c of
/// row half h.
template <class Shape, int Splits, bool HasBias, class OutT>
__device__ __forceinline__ void store_tile(const float (&acc)[Shape::kMi][Shape::kAcc], OutT* C,
                                           const OutT* bias, float* workspace, int split, int M,
                                           int N, int m0, int n0, int tid, float alpha,
                                           float beta) {
  constexpr int kGroups = Shape::kBN / 8;  // 8-column groups of a row
  const int lane = tid & 31;
  const int row_base = m0 + (tid / 128) * Shape::kWgRows + ((tid & 127) >> 5) * 16 + (lane >> 2);
  const int col_base = n0 + (lane & 3) * 2;
  const bool paired = pairs_aligned<Splits>(C, workspace, N);
  if (Splits == 1 && paired && m0 + Shape::kBM <= M && n0 + Shape::kBN <= N) {
    // No bounds checks; each batch of C reads (beta != 0) is issued ahead of its stores.
    using Pair = ElementPair<OutT>;
    constexpr int kBatch = sizeof(OutT) == 2 ? 16 : 8;  // column groups per batch
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
              v0 += beta * to_float(old[j][h].x);
              v1 += beta * to_float(old[j][h].y);
            }
            if constexpr (HasBias) {
              v0 += to_float(bias[col_base + (j0 + j) * 8]);
              v1 += to_float(bias[col_base + (j0 + j) * 8 + 1]);
            }
            Pair out;
            out.x = from_float<OutT>(v0);
            out.y = from_float<OutT>(v1);
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
    for (int j = 0; j < kGroups; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        store_accumulator_pair<Splits, HasBias>(
            C, bias, workspace, split, M, N, row_base + mi * 64 + h * 8, col_base + j * 8,
            acc[mi][j * 4 + h * 2], acc[mi][j * 4 + h * 2 + 1], alpha, beta, paired);
}

/// The reduction of a k-split cluster (CLUSTER_K of gemm_wgmma and conv2d_wgmma): kCluster
/// CTAs of one cluster computed the same output tile over kCluster ranges of the reduced
/// dimension. Ranks 1.. store their accumulators into
/// their own shared memory at `buf` (generic pointer, shared address `buf_addr`: the freed
/// stages, Shape::kThreads * kMi * kAcc floats), rank 0 adds them to its own in rank order
/// (distributed shared-memory loads: the same bits on every run) and returns true; the others
/// return false once rank 0 has read them (their shared memory must stay until then). Every
/// thread of every CTA of the cluster calls it after its main loop (stages no longer read).
/// Layout: 4 consecutive accumulators of a thread are one 16-byte chunk, consecutive threads'
/// chunks adjacent (index (i / 4) * kThreads + tid).
template <class Shape, int kCluster>
__device__ __forceinline__ bool cluster_k_reduce(float (&acc)[Shape::kMi][Shape::kAcc],
                                                 float* buf, unsigned buf_addr, int tid) {
  static_assert(Shape::kAcc % 4 == 0, "16-byte chunks of accumulators");
  constexpr int kChunks = Shape::kAcc / 4;  // per thread and mi
  const unsigned rank = kt_cluster_rank();
  __syncthreads();  // every thread of this CTA is past its main loop: the stages are free
  if (rank != 0) {
#pragma unroll
    for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
        reinterpret_cast<float4*>(buf)[(mi * kChunks + c) * Shape::kThreads + tid] =
            make_float4(acc[mi][4 * c], acc[mi][4 * c + 1], acc[mi][4 * c + 2],
                        acc[mi][4 * c + 3]);
  }
  kt_cluster_sync();  // the peers' tiles are written
  if (rank == 0) {
#pragma unroll 1
    for (int r = 1; r < kCluster; ++r) {
      const unsigned base = kt_cluster_map(buf_addr, static_cast<unsigned>(r));
#pragma unroll
      for (int mi = 0; mi < Shape::kMi; ++mi)
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          float4 v;
          asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                       : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                       : "r"(base + ((mi * kChunks + c) * Shape::kThreads + tid) * 16u)
                       : "memory");
          acc[mi][4 * c] += v.x;
          acc[mi][4 * c + 1] += v.y;
          acc[mi][4 * c + 2] += v.z;
          acc[mi][4 * c + 3] += v.w;
        }
    }
  }
  kt_cluster_sync();  // rank 0 has read every peer's tile: the peers may leave
  return rank == 0;
}

}  // namespace wg
}  // namespace ktg
