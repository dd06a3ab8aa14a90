// ktune built-in template "copy": y[i] = alpha * x[i] over n elements, f32 or f16 (math in
// f32). Tunables: VEC elements per vector access, THREADS per block, ITEMS vectors per
// thread, GRID_STRIDE loop (1) or one pass over a grid sized to the data (0). Elements past
// the last full vector go through a scalar tail, so any n and VEC work with pointers aligned
// to VEC elements (cudaMalloc gives 256 bytes). Every parameter has a default below, so the
// file also compiles on its own (nvcc -c -I templates copy.cu, or NVRTC without defines).
#ifndef VEC
#define VEC 4
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef GRID_STRIDE
#define GRID_STRIDE 0
#endif
#ifndef KT_DTYPE  // 0 = f32, 1 = f16
#define KT_DTYPE 0
#endif

#include "common/grid_dependency.cuh"

#if KT_DTYPE == 1
#include <cuda_fp16.h>
typedef __half element_t;
__device__ __forceinline__ float to_float(element_t v) { return __half2float(v); }
__device__ __forceinline__ element_t from_float(float v) { return __float2half_rn(v); }
#else
typedef float element_t;
__device__ __forceinline__ float to_float(element_t v) { return v; }
__device__ __forceinline__ element_t from_float(float v) { return v; }
#endif

/// VEC consecutive elements moved by one load and one store.
struct __align__(sizeof(element_t) * VEC) vector_t {
  element_t e[VEC];
};

/// Scales one vector in place.
__device__ __forceinline__ void scale(vector_t& v, float alpha) {
#pragma unroll
  for (int j = 0; j < VEC; ++j) v.e[j] = from_float(alpha * to_float(v.e[j]));
}

extern "C" __global__ void __launch_bounds__(THREADS)
ktune_copy(element_t* __restrict__ y, const element_t* __restrict__ x, float alpha,
           long long n) {
  kt_grid_dependency_wait();  // first: nothing is read or written before the previous grid is done
  const long long vectors = n / VEC;
  const vector_t* __restrict__ xv = reinterpret_cast<const vector_t*>(x);
  vector_t* __restrict__ yv = reinterpret_cast<vector_t*>(y);
  const long long tile = static_cast<long long>(THREADS) * ITEMS;  // vectors per block pass
#if GRID_STRIDE
  for (long long base = blockIdx.x * tile; base < vectors; base += gridDim.x * tile) {
#else
  {
    const long long base = blockIdx.x * tile;
#endif
    vector_t v[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {  // all loads first, then the stores
      const long long i = base + k * THREADS + threadIdx.x;
      if (i < vectors) v[k] = xv[i];
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const long long i = base + k * THREADS + threadIdx.x;
      if (i < vectors) {
        scale(v[k], alpha);
        yv[i] = v[k];
      }
    }
  }
  // Scalar tail: the last n % VEC elements, one per thread of the first block.
  const long long tail_start = vectors * VEC;
  if (blockIdx.x == 0 && tail_start + threadIdx.x < n) {
    const long long i = tail_start + threadIdx.x;
    y[i] = from_float(alpha * to_float(x[i]));
  }
}
