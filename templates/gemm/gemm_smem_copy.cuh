// Global-to-shared tile copies of the GEMM family (reused by implicit-GEMM convolution):
// cp.async wrappers with zero-fill, the XOR-swizzled shared-memory tile layout read by
// ldmatrix, and a guarded asynchronous tile loader that zero-fills rows and columns beyond
// the matrix edge, so that any M, N, K works with full-width copies inside the matrix.
#pragma once

#include "gemm/gemm_common.cuh"

namespace ktg {

/// 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Asynchronous copy of Bytes (4, 8 or 16) from global to shared memory; only the first
/// `src_bytes` are read, the rest of the destination is zero-filled (0 reads nothing).
template <int Bytes>
__device__ __forceinline__ void cp_async_zfill(void* smem, const void* gmem, int src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)),
                 "l"(gmem), "r"(src_bytes)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_address(smem)),
                 "l"(gmem), "n"(Bytes), "r"(src_bytes)
                 : "memory");
  }
}

/// Closes the current group of cp.async copies.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most Pending groups of this thread's cp.async copies are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

/// Shared-memory layout of a Rows x Cols tile (Cols contiguous, Elt bytes per element) whose
/// 16-byte chunks are XOR-swizzled within each row, so that the 8 rows an ldmatrix (or a
/// column-wise read) touches at the same logical chunk fall into distinct bank groups.
/// Rows must be a power-of-two number of 16-byte chunks.
template <int Rows, int Cols, int Elt>
struct SwizzledTile {
  static constexpr int kRowBytes = Cols * Elt;                 ///< bytes per row
  static constexpr int kChunks = kRowBytes / 16;              ///< 16-byte chunks per row
  static constexpr int kSwizzle = kChunks < 8 ? kChunks : 8;  ///< chunks permuted together
  static constexpr int kRowGroup = 8 / kSwizzle;              ///< rows sharing one permutation
  static constexpr int kBytes = Rows * kRowBytes;             ///< bytes of the tile
  static_assert(kRowBytes % 16 == 0 && (kChunks & (kChunks - 1)) == 0,
                "a swizzled tile row must be a power-of-two number of 16-byte chunks");

  /// Byte offset of element (row, col).
  __device__ __forceinline__ static int offset(int row, int col) {
    const int byte = col * Elt;
    const int chunk = (byte >> 4) ^ ((row / kRowGroup) & (kSwizzle - 1));
    return row * kRowBytes + (chunk << 4) + (byte & 15);
  }
};

/// Copies a Rows x Cols tile of a row-major global matrix (Cols contiguous, leading dimension
/// `ld`, divisible by Align elements) into a SwizzledTile with Threads threads. The tile
/// starts at (row0, col0); rows >= row_limit and columns >= col_limit read as zero. Chunks
/// are min(16 bytes, Align elements): cp.async (4/8/16 bytes, zero-fill for partial chunks)
/// when at least 4 bytes, else a synchronous 2-byte copy (visible after the next barrier).
template <int Rows, int Cols, class T, int Align, int Threads>
struct AsyncTileLoader {
  static constexpr int kElt = static_cast<int>(sizeof(T));                 ///< element bytes
  static constexpr int kChunkElems = cmin(Align, 16 / kElt);              ///< elements per copy
  static constexpr int kChunkBytes = kChunkElems * kElt;                  ///< bytes per copy
  static constexpr int kChunksPerRow = Cols / kChunkElems;                ///< copies per row
  static constexpr int kChunks = Rows * kChunksPerRow;                    ///< copies per tile
  static constexpr int kPerThread = cdiv(kChunks, Threads);              ///< copies per thread
  using Layout = SwizzledTile<Rows, Cols, kElt>;                          ///< smem layout
  static_assert(Cols % kChunkElems == 0, "tile width must be a multiple of the copy width");

  /// Issues this thread's copies of the tile into `smem` (the tile's first byte).
  __device__ __forceinline__ static void load(char* smem, const T* __restrict__ global,
                                              long long ld, int row0, int col0, int row_limit,
                                              int col_limit, int tid) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = tid + i * Threads;
      if (kChunks % Threads != 0 && idx >= kChunks) break;
      const int r = idx / kChunksPerRow;
      const int c = (idx - r * kChunksPerRow) * kChunkElems;
      const int grow = row0 + r;
      const int gcol = col0 + c;
      int valid = grow < row_limit ? col_limit - gcol : 0;
      valid = valid < 0 ? 0 : (valid > kChunkElems ? kChunkElems : valid);
      const T* src = valid > 0 ? global + grow * ld + gcol : global;
      char* dst = smem + Layout::offset(r, c);
      if constexpr (kChunkBytes >= 4) {
        cp_async_zfill<kChunkBytes>(dst, src, valid * kElt);
      } else {
        *reinterpret_cast<unsigned short*>(dst) =
            valid > 0 ? *reinterpret_cast<const unsigned short*>(src) : 0;
      }
    }
  }
};

}  // namespace ktg
