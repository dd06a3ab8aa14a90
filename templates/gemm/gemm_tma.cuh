// Tensor-memory-accelerator copies of GEMM tiles (sm_90): the tensor map a kernel receives by
// value (encoded by the runner from the launch plan's TensorMap2D: a row-major matrix, boxes
// copied with the 128-byte swizzle, zeros outside the matrix) and the one-instruction copy of a
// box into shared memory, completing on an mbarrier (common/mbarrier.cuh). With 128-byte rows
// the swizzle is SwizzledTile's (16-byte chunk c of row r at chunk c ^ (r % 8)), provided the
// destination is 1024-byte aligned.
#pragma once

#include "common/mbarrier.cuh"

namespace ktg {

/// A CUtensorMap as a kernel parameter (pass it `const __grid_constant__`): 128 opaque bytes.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

/// One thread: copies the box of `map` whose first element is (column c_inner, row c_outer)
/// into shared memory at `dst` (1024-byte aligned), its bytes completing on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const TensorMap* map, int c_inner,
                                            int c_outer, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(kt_smem_addr(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c_inner), "r"(c_outer),
      "r"(kt_smem_addr(bar))
      : "memory");
}

}  // namespace ktg
