// The implicit-GEMM A operand of conv2d_wgmma: a tile loader with the interface of
// ktg::wg::MatrixTileLoader (init once, load(tile) per k tile, advance()) that gathers the
// NHWC activation rows of BM output pixels into the K-major, 128-byte-swizzled shared tile
// that the wgmma descriptors read (gemm_wgmma_layout.cuh). A 16-byte chunk is 8 consecutive
// channels of one filter tap (r, s) of one pixel, so C must be a multiple of 8; padding
// taps, pixels past M and k past R*S*C are zero-filled by cp.async (ignore-src / src-size 0).
// The tap arithmetic is conv_common.cuh's ImplicitGemmA (precomputed per-row pixel origins
// and a per-thread (r, s, c) cursor, or analytic offsets); this file places its chunks. The
// main loop is gemm_wgmma.cuh's pipeline (with the wgmma batch first for LOOP = 1).
//
// Needs the conv problem defines (conv_common.cuh) and gemm_wgmma.cuh before inclusion.
#pragma once

#include "conv/conv_common.cuh"
#include "gemm/gemm_wgmma.cuh"

namespace ktc {

/// 16-byte cp.async (L2 only) that writes 16 zero bytes without reading `src` when `valid` is
/// false (the ignore-src predicate; nvcc 13 emits the same predicated LDGSTS as a src-size of
/// valid ? 16 : 0, without the size arithmetic).
__device__ __forceinline__ void cp_async16_pred(unsigned dst, const void* src, bool valid) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.eq.u32 p, %2, 0;\n"
      "cp.async.cg.shared.global [%0], [%1], 16, p;\n}\n" ::"r"(dst),
      "l"(src), "r"(static_cast<unsigned>(valid))
      : "memory");
}

/// Loader of the gathered activation tile (ROWS output pixels x BK_ reduced indices) for
/// THREADS threads, chunk (row, chunk) of thread tid at row tid / (BK_/8) + i * kRowStep,
/// chunk tid % (BK_/8): the same placement as MatrixTileLoader, so every chunk of a thread
/// keeps its swizzle phase and its filter tap. Precomputed = true keeps per-row pixel
/// origins in registers (ITER = 1), false recomputes them per k tile (ITER = 0).
template <int ROWS, int BK_, int THREADS, bool Precomputed, class T>
struct ConvTileLoader {
  static_assert(sizeof(T) == 2, "16-bit elements (f16 / bf16)");
  static_assert(kChannels % 8 == 0, "16-byte chunks need C a multiple of 8");
  static_assert(BK_ % ktg::kWgmmaAtomK == 0, "BK must be a multiple of 64 (128-byte rows)");
  /// The conv family's implicit-GEMM iterator over 8-channel chunks.
  using Iter = ImplicitGemmA<ROWS, BK_, 8, THREADS, Precomputed>;
  static constexpr int kChunksPerRow = BK_ / 8;             ///< 16-byte chunks per tile row
  static constexpr int kRowStep = THREADS / kChunksPerRow;  ///< rows between a thread's chunks
  static constexpr int kChunks = ROWS * kChunksPerRow / THREADS;  ///< copies per thread
  static_assert(THREADS % kChunksPerRow == 0 && kRowStep % 8 == 0,
                "a thread's chunks must keep their swizzle phase (row step multiple of 8)");
  static_assert((ROWS * kChunksPerRow) % THREADS == 0 && Iter::kPerThread == kChunks,
                "whole chunks per thread");

  Iter it;       ///< pixel origins and the current filter tap of this thread's column
  const T* x;    ///< NHWC activations
  ConvDims d;    ///< output geometry
  unsigned dst;  ///< byte offset of the thread's first chunk inside the tile
  int k0;        ///< first reduced index of the current k tile (analytic offsets only)
  /// x + tap (0, 0, 0) of each chunk's pixel, as bytes (precomputed offsets only).
  const char* corner_ptr[Precomputed ? kChunks : 1];

  /// Tile of output pixels m0 .. m0 + ROWS - 1, first k tile at reduced index k_first.
  __device__ __forceinline__ void init(const T* x_, const ConvDims& d_, int m0, int k_first,
                                       int tid) {
    x = x_;
    d = d_;
    k0 = k_first;
    it.init(m0, k_first, d, tid);
    if constexpr (Precomputed) {
#pragma unroll
      for (int i = 0; i < kChunks; ++i)
        corner_ptr[i] = reinterpret_cast<const char*>(x + it.corner[i]);
    }
    dst = ktg::wgmma_chunk_offset(ROWS, tid / kChunksPerRow, tid % kChunksPerRow);
  }

  /// Issues this thread's copies of the current k tile into the tile at shared address
  /// `tile` (1024-aligned); commits nothing.
  __device__ __forceinline__ void load(unsigned tile) const {
    if constexpr (Precomputed) {
      // Per chunk: two adds and two unsigned compares for the tap's (h, w), a 64-bit pointer
      // add and a predicated copy (ImplicitGemmA::offset's -1 sentinel cost ~27 instructions
      // a chunk: 64-bit selects and compares and a src-size derived from them). The same
      // rule: the tap is inside R and the image, rows past M have an unreachable h0.
      const bool tap_ok = it.tap.r < KT_R;
      const int dh = it.tap.r * KT_DIL;
      const int dw = it.tap.s * KT_DIL;
      const long long delta_bytes = it.delta * static_cast<long long>(sizeof(T));
#pragma unroll
      for (int i = 0; i < kChunks; ++i) {
        const int h = it.origin[i].h0 + dh;
        const int w = it.origin[i].w0 + dw;
        const bool inside = tap_ok && static_cast<unsigned>(h) < static_cast<unsigned>(d.H) &&
                            static_cast<unsigned>(w) < static_cast<unsigned>(d.W);
        // Zero chunks read nothing (ignore-src) from a pointer inside x.
        cp_async16_pred(tile + dst + i * kRowStep * 128,
                        inside ? corner_ptr[i] + delta_bytes : reinterpret_cast<const char*>(x),
                        inside);
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const long long off = it.offset(i, k0, d);
      // Padding chunks read nothing (src-size 0) from a valid pointer and write 16 zeros.
      ktg::wg::cp_async16(tile + dst + i * kRowStep * 128, off >= 0 ? x + off : x,
                          off >= 0 ? 16 : 0);
    }
  }

  /// Moves to the next k tile.
  __device__ __forceinline__ void advance() {
    it.advance(d);
    k0 += BK_;
  }
};

}  // namespace ktc
