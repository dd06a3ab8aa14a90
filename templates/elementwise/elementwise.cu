// Elementwise template: y = f(x) for an activation f, y = x + z / x * z, and the fused chain
// y = act(alpha * x + bias[col]) over a row-major [rows, cols] tensor; fp32 / fp16 / bf16
// storage with fp32 math. Elements are processed as a flat range of n = rows * cols: each
// thread moves ITEMS vectors of VEC elements per tile (UNROLL of them loaded before the first
// store), tiles are THREADS * ITEMS vectors, and the grid either covers every tile once or is
// a multiple of the SM count walking the tiles with a grid stride (the launch decides; the
// kernel loops either way). The n % VEC tail elements are done by block 0.
// Pointers must be aligned to 16 bytes (any cudaMalloc result is).
#include "common/grid_dependency.cuh"
#include "common/vector.cuh"

#ifndef VEC
#define VEC 4  // elements per vector access (VEC * element size <= 16 bytes)
#endif
#ifndef ITEMS
#define ITEMS 4  // vectors per thread per tile
#endif
#ifndef UNROLL
#define UNROLL 4  // vectors loaded before the first store (divides ITEMS)
#endif
#ifndef THREADS
#define THREADS 256  // threads per block
#endif
#ifndef GRID_MODE
#define GRID_MODE 0  // 0: one thread per chunk, 1: SM-count multiple with grid stride (launch only)
#endif
#ifndef GRID_MULT
#define GRID_MULT 1  // blocks per SM when GRID_MODE == 1 (launch only)
#endif
#ifndef CACHE_HINT
#define CACHE_HINT 0  // 0: default caching, 1: streaming loads and stores
#endif
#ifndef KT_KIND
#define KT_KIND 0  // 0: y = act(x), 1: y = x + z, 2: y = x * z, 3: y = act(alpha * x + bias[col])
#endif
#ifndef KT_ACT
#define KT_ACT 0  // 0: relu, 1: gelu (tanh form), 2: gelu (erf form), 3: silu, 4: identity
#endif

/// The activation selected by KT_ACT, in fp32.
__device__ __forceinline__ float kt_activation(float v) {
#if KT_ACT == 0
  return fmaxf(v, 0.0f);
#elif KT_ACT == 1
  // 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)): one ex2 and one rcp on the special-function
  // unit instead of tanhf's longer sequence, and no cancellation in 1 + tanh for u << 0.
  const float minus_2u = -1.5957691216057308f * fmaf(0.044715f * v, v * v, v);
  return __fdividef(v, 1.0f + __expf(minus_2u));
#elif KT_ACT == 2
  return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
#elif KT_ACT == 3
  return __fdividef(v, 1.0f + __expf(-v));
#else
  return v;
#endif
}

/// The output value of element e (flat index) from its input(s).
__device__ __forceinline__ float kt_apply(float xv, float zv, const kt_io_t* bias, long long col,
                                          float alpha) {
#if KT_KIND == 1
  return xv + zv;
#elif KT_KIND == 2
  return xv * zv;
#elif KT_KIND == 3
  return kt_activation(alpha * xv + KtIO::to_float(__ldg(bias + col)));
#else
  (void)zv; (void)bias; (void)col; (void)alpha;
  return kt_activation(xv);
#endif
}

typedef KtVec<kt_io_t, VEC> Vec;

/// y[e] = op(x[e], z[e], bias[e % cols]) for e < n. z and bias may be null when unused.
extern "C" __global__ void __launch_bounds__(THREADS)
elementwise_kernel(const kt_io_t* x, const kt_io_t* z, const kt_io_t* bias, kt_io_t* y,
                   long long n, long long cols, float alpha) {
  kt_grid_dependency_wait();  // first: nothing is read or written before the previous grid is done
  const long long nvec = n / VEC;
  const long long tile = (long long)THREADS * ITEMS;
  for (long long start = (long long)blockIdx.x * tile; start < nvec;
       start += (long long)gridDim.x * tile) {
#pragma unroll
    for (int g = 0; g < ITEMS; g += UNROLL) {
      Vec xv[UNROLL];
#if KT_KIND == 1 || KT_KIND == 2
      Vec zv[UNROLL];
#endif
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long vi = start + (long long)(g + u) * THREADS + threadIdx.x;
        if (vi < nvec) {
          xv[u].template load<CACHE_HINT>(x + vi * VEC);
#if KT_KIND == 1 || KT_KIND == 2
          zv[u].template load<CACHE_HINT>(z + vi * VEC);
#endif
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const long long vi = start + (long long)(g + u) * THREADS + threadIdx.x;
        if (vi < nvec) {
          float a[VEC], out[VEC];
          xv[u].template to_float<KtIO>(a);
#if KT_KIND == 1 || KT_KIND == 2
          float b[VEC];
          zv[u].template to_float<KtIO>(b);
#endif
#if KT_KIND == 3
          long long col = (vi * VEC) % cols;
#else
          const long long col = 0;
#endif
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
#if KT_KIND == 1 || KT_KIND == 2
            out[j] = kt_apply(a[j], b[j], bias, col, alpha);
#else
            out[j] = kt_apply(a[j], 0.0f, bias, col, alpha);
#endif
#if KT_KIND == 3
            if (++col == cols) col = 0;
#endif
          }
          Vec r;
          r.template from_float<KtIO>(out);
          r.template store<CACHE_HINT>(y + vi * VEC);
        }
      }
    }
  }
  // The n % VEC elements after the last whole vector.
  if (blockIdx.x == 0) {
    const long long e = nvec * VEC + threadIdx.x;
    if (e < n) {
      const float zv = (KT_KIND == 1 || KT_KIND == 2) ? KtIO::to_float(z[e]) : 0.0f;
      y[e] = KtIO::from_float(kt_apply(KtIO::to_float(x[e]), zv, bias, e % cols, alpha));
    }
  }
}
