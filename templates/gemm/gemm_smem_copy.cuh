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

/// Asynchronous copy of Bytes (4, 8 or 16) from global to shared memory when `full`, else
/// zero-fill of the destination without reading global memory (the ignore-src form: one
/// predicated LDGSTS, no byte-count arithmetic).
template <int Bytes>
__device__ __forceinline__ void cp_async_or_zero(void* smem, const void* gmem, bool full) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (Bytes == 16) {
    asm volatile(
        "{\n .reg .pred p;\n setp.eq.u32 p, %2, 0;\n"
        " cp.async.cg.shared.global [%0], [%1], 16, p;\n}\n" ::"r"(smem_address(smem)),
        "l"(gmem), "r"(static_cast<unsigned>(full))
        : "memory");
  } else {
    asm volatile(
        "{\n .reg .pred p;\n setp.eq.u32 p, %3, 0;\n"
        " cp.async.ca.shared.global [%0], [%1], %2, p;\n}\n" ::"r"(smem_address(smem)),
        "l"(gmem), "n"(Bytes), "r"(static_cast<unsigned>(full))
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

/// The AsyncTileLoader copies of a tile that slides along k, with the per-thread state
/// hoisted out of the k loop: the source pointer of the thread's first chunk, its byte offset
/// in a stage, and how many rows / columns remain inside the matrix from it. Chunk i of a
/// thread sits a compile-time (row, column) step from the first, so each k tile costs one
/// compare, one clamp and one pointer add per chunk instead of the full index arithmetic.
/// KAlongCols: the tile's columns run along k (a k-contiguous operand), else its rows do.
template <int Rows, int Cols, class T, int Align, int Threads, bool KAlongCols>
struct AsyncTileStream {
  using Loader = AsyncTileLoader<Rows, Cols, T, Align, Threads>;
  using Layout = typename Loader::Layout;
  static constexpr int kElt = Loader::kElt;
  static constexpr int kChunkElems = Loader::kChunkElems;
  static constexpr int kChunkBytes = Loader::kChunkBytes;
  static constexpr int kChunksPerRow = Loader::kChunksPerRow;
  static constexpr int kChunks = Loader::kChunks;
  static constexpr int kPerThread = Loader::kPerThread;
  // Threads and kChunksPerRow are powers of two: one divides the other, so chunk i of thread
  // tid lies (i * Threads) / kChunksPerRow rows and (i * Threads) % kChunksPerRow chunks from
  // the thread's first chunk (tid / kChunksPerRow, tid % kChunksPerRow).
  static_assert((Threads & (Threads - 1)) == 0 && (kChunksPerRow & (kChunksPerRow - 1)) == 0,
                "threads and chunks per row must be powers of two");
  __host__ __device__ static constexpr int row_step(int i) { return (i * Threads) / kChunksPerRow; }
  __host__ __device__ static constexpr int col_step(int i) { return ((i * Threads) % kChunksPerRow) * kChunkElems; }

  const T* src;   ///< element of the thread's first chunk in the current k tile
  long long ld;   ///< leading dimension (elements)
  int row;        ///< tile row of the first chunk
  int col;        ///< tile column of the first chunk (elements)
  int rows_left;  ///< rows inside the matrix from the first chunk's row (current k tile)
  int cols_left;  ///< columns inside the matrix from the first chunk's column

  /// Positions the stream at the tile whose first element is (row0, col0) of a row-major
  /// matrix with leading dimension `ld`; rows >= row_limit and columns >= col_limit read as 0.
  /// col_limit must be a multiple of the chunk width (as the leading dimension is, being
  /// divisible by Align), so that every chunk lies wholly inside the matrix or wholly outside.
  __device__ __forceinline__ void init(const T* global, long long ld_, int row0, int col0,
                                       int row_limit, int col_limit, int tid) {
    ld = ld_;
    row = tid / kChunksPerRow;
    col = (tid % kChunksPerRow) * kChunkElems;
    rows_left = row_limit - row0 - row;
    cols_left = col_limit - col0 - col;
    src = global + (static_cast<long long>(row0 + row) * ld + col0 + col);
  }

  /// Issues this thread's copies of the current k tile into the stage tile at `smem`.
  __device__ __forceinline__ void load(char* smem) const {
    const int base = Layout::offset(row, col);
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (kChunks % Threads != 0 && row * kChunksPerRow + col / kChunkElems + i * Threads >= kChunks)
        break;
      constexpr int kPeriod = 8;  // rows after which the swizzle pattern repeats
      const int dr = row_step(i);
      const int dc = col_step(i);
      const int dst = (dc == 0 && dr % kPeriod == 0) ? base + dr * Layout::kRowBytes
                                                     : Layout::offset(row + dr, col + dc);
      const bool inside = dr < rows_left && dc < cols_left;  // whole chunk or none
      const T* p = src + (dr * ld + dc);
      if constexpr (kChunkBytes >= 4) {
        cp_async_or_zero<kChunkBytes>(smem + dst, p, inside);
      } else {
        *reinterpret_cast<unsigned short*>(smem + dst) =
            inside ? *reinterpret_cast<const unsigned short*>(p) : 0;
      }
    }
  }

  /// Moves to the next k tile, `k` elements further along k.
  __device__ __forceinline__ void advance(int k) {
    if constexpr (KAlongCols) {
      src += k;
      cols_left -= k;
    } else {
      src += k * ld;
      rows_left -= k;
    }
  }
};

}  // namespace ktg
