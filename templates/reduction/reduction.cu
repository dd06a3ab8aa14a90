// Reduction template: sum, max or mean over the last dimension of a row-major [rows, cols]
// tensor (a whole-tensor reduction is rows = 1), fp32 / fp16 / bf16 input, fp32 accumulation
// and fp32 output. Groups of TPR consecutive threads own one row each (THREADS / TPR rows per
// block; TPR = 32 is warp-per-row, TPR = THREADS block-per-row). With SPLIT > 1 a row is cut
// into SPLIT chunks done by SPLIT blocks (grid.y), combined either by a second kernel over a
// [rows, SPLIT] partial buffer (MULTI = 0), by atomics into the zero/0xff-filled output
// (MULTI = 1), or by the last block of the row to finish (MULTI = 2: partials plus a per-row
// arrival counter that the launch zeroes and the last block resets). Each thread keeps ITEMS vector loads of VEC elements in flight; the group
// result is combined by warp shuffles (TREE = 0) or a shared-memory tree (TREE = 1).
// Rows must start 16-byte aligned for VEC > 1: rows == 1 or cols % VEC == 0 (the space says so);
// the cols % VEC tail is done element by element.
#include "common/grid_dependency.cuh"
#include "common/reduce.cuh"
#include "common/vector.cuh"

#ifndef THREADS
#define THREADS 256  // threads per block
#endif
#ifndef TPR
#define TPR 256  // threads per row (power of two, divides THREADS)
#endif
#ifndef VEC
#define VEC 4  // elements per vector load
#endif
#ifndef ITEMS
#define ITEMS 4  // vector loads in flight per thread
#endif
#ifndef SPLIT
#define SPLIT 1  // blocks per row (launch geometry; the kernel reads gridDim.y)
#endif
#ifndef MULTI
#define MULTI 0  // SPLIT > 1: 0 second pass over partials, 1 atomics, 2 last block combines
#endif
#ifndef TREE
#define TREE 0  // 0 = warp shuffles, 1 = shared-memory tree
#endif
#ifndef CACHE_HINT
#define CACHE_HINT 1  // loads: 0 default, 1 streaming, 2 read-only path
#endif
#ifndef KT_FN
#define KT_FN 0  // 0 = sum, 1 = max, 2 = mean
#endif

#if KT_FN == 1
typedef KtMaxOp Op;
#else
typedef KtSumOp Op;
#endif

/// Group reduction selected by TREE.
__device__ __forceinline__ float kt_row_reduce(float v, float* scratch) {
#if TREE == 1
  return kt_group_reduce_tree<TPR, Op>(v, scratch);
#else
  return kt_group_reduce_shfl<TPR, Op>(v, scratch);
#endif
}

/// Atomic combine into out (MULTI = 1). For max the output starts as 0xffffffff, which acts
/// as "below everything" for both the signed and the unsigned view used here.
__device__ __forceinline__ void kt_atomic_combine(float* out, float v) {
#if KT_FN == 1
  if (__float_as_int(v) >= 0) {  // sign bit clear (-0.0f takes the unsigned path)
    atomicMax(reinterpret_cast<int*>(out), __float_as_int(v));
  } else {
    atomicMin(reinterpret_cast<unsigned int*>(out), __float_as_uint(v));
  }
#else
  atomicAdd(out, v);
#endif
}

typedef KtVec<kt_io_t, VEC> Vec;

/// out[row] (SPLIT = 1, MULTI = 1 or 2) or partial[row * gridDim.y + blockIdx.y] (MULTI = 0)
/// = reduction of x[row, :] (or of this block's chunk of it), times `scale` when final.
/// `arrivals` (MULTI = 2 only) holds one zeroed counter per row.
extern "C" __global__ void __launch_bounds__(THREADS)
reduce_rows(const kt_io_t* x, float* out, float* partial, long long rows, long long cols,
            float scale, unsigned int* arrivals) {
  kt_grid_dependency_wait();  // first: nothing is read or written before the previous grid is done
  __shared__ float scratch[TREE == 1 ? THREADS : THREADS / 32 + 1];
  const int lane = threadIdx.x % TPR;
  const long long row = (long long)blockIdx.x * (THREADS / TPR) + threadIdx.x / TPR;
  const bool active = row < rows;
  const kt_io_t* src = x + (active ? row : 0) * cols;

  const long long nvec = cols / VEC;
  const long long chunk = (nvec + gridDim.y - 1) / gridDim.y;
  const long long begin = (long long)blockIdx.y * chunk;
  const long long end = begin + chunk < nvec ? begin + chunk : nvec;

  float acc[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) acc[i] = Op::identity();
  if (active) {
    for (long long v = begin + lane; v < end; v += (long long)TPR * ITEMS) {
      Vec buf[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        if (v + (long long)i * TPR < end) buf[i].template load<CACHE_HINT>(src + (v + (long long)i * TPR) * VEC);
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        if (v + (long long)i * TPR < end) {
          float f[VEC];
          buf[i].template to_float<KtIO>(f);
#pragma unroll
          for (int j = 0; j < VEC; ++j) acc[i] = Op::combine(acc[i], f[j]);
        }
      }
    }
    // The cols % VEC tail, by the first chunk.
    if (blockIdx.y == 0) {
      for (long long e = nvec * VEC + lane; e < cols; e += TPR)
        acc[0] = Op::combine(acc[0], KtIO::to_float(src[e]));
    }
  }
  float total = acc[0];
#pragma unroll
  for (int i = 1; i < ITEMS; ++i) total = Op::combine(total, acc[i]);
  total = kt_row_reduce(total, scratch);

#if MULTI == 2
  if (gridDim.y > 1) {  // one row per block here (SPLIT > 1 needs TPR == THREADS)
    __shared__ int is_last;
    if (threadIdx.x == 0) {
      partial[row * gridDim.y + blockIdx.y] = total;
      __threadfence();  // the partial is visible before the arrival is counted
      is_last = atomicAdd(arrivals + row, 1u) == gridDim.y - 1;
    }
    __syncthreads();
    if (is_last) {  // block-uniform
      __threadfence();
      float acc = Op::identity();
      for (int i = threadIdx.x; i < (int)gridDim.y; i += THREADS)
        acc = Op::combine(acc, __ldcg(partial + row * gridDim.y + i));
      acc = kt_row_reduce(acc, scratch);
      if (threadIdx.x == 0) {
        out[row] = acc * scale;
        arrivals[row] = 0u;  // ready for the next launch
      }
    }
    return;
  }
#else
  (void)arrivals;
#endif
  if (active && lane == 0) {
    if (gridDim.y == 1) {
      out[row] = total * scale;
    } else if (MULTI == 1) {
      kt_atomic_combine(out + row, KT_FN == 1 ? total : total * scale);
    } else {
      partial[row * gridDim.y + blockIdx.y] = total;
    }
  }
}

/// Second pass of MULTI = 0: out[row] = reduction of partial[row, 0:splits] times `scale`,
/// one warp per row, 8 rows per 256-thread block.
extern "C" __global__ void __launch_bounds__(256)
reduce_partials(const float* partial, float* out, long long rows, int splits, float scale) {
  kt_grid_dependency_wait();  // first: nothing is read or written before the previous grid is done
  const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together: no block-wide barrier below
  float acc = Op::identity();
  for (int i = lane; i < splits; i += 32) acc = Op::combine(acc, partial[row * splits + i]);
  acc = kt_warp_reduce<32, Op>(acc);
  if (lane == 0) out[row] = acc * scale;
}
