// Independent GPU references of the memory-bound families (elementwise, reduction, layernorm),
// run by the worker once per seed instead of the host reference on large shapes
// (Workload::device_reference). Deliberately simple and separate from the tuned kernels: one
// element per thread step, double-precision math and accumulation, block trees in shared
// memory, no vectors, no shared headers. Outputs are rounded double -> float -> storage type,
// exactly as the host reference (lib/host_dtype.cc) writes them.
// REF_DTYPE: 0 f32, 1 f16, 2 bf16 storage of x / z / bias / gamma / beta / y.

#ifndef REF_DTYPE
#define REF_DTYPE 0
#endif
#ifndef REF_KIND
#define REF_KIND 0  // elementwise: 0 act(x), 1 x + z, 2 x * z, 3 act(alpha * x + bias[col])
#endif
#ifndef REF_ACT
#define REF_ACT 0  // elementwise: 0 relu, 1 gelu tanh, 2 gelu erf, 3 silu, 4 identity
#endif
#ifndef REF_FN
#define REF_FN 0  // reduction: 0 sum, 1 max, 2 mean
#endif
#ifndef REF_NORM
#define REF_NORM 0  // norm: 0 LayerNorm, 1 RMSNorm
#endif

#define REF_THREADS 256  // threads per block of every reference kernel

#if REF_DTYPE == 0
typedef float ref_t;
#else
typedef unsigned short ref_t;
#endif

/// Element i of a storage array as double (exact).
__device__ __forceinline__ double ref_load(const ref_t* p, long long i) {
#if REF_DTYPE == 0
  return (double)p[i];
#elif REF_DTYPE == 1
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i]));
  return (double)f;
#else
  return (double)__uint_as_float(((unsigned int)p[i]) << 16);
#endif
}

/// Stores v at element i, rounded to float, then to the storage type (nearest even).
__device__ __forceinline__ void ref_store(ref_t* p, long long i, double v) {
  const float f = __double2float_rn(v);
#if REF_DTYPE == 0
  p[i] = f;
#elif REF_DTYPE == 1
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  p[i] = h;
#else
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  p[i] = h;
#endif
}

/// Sum (or max when take_max) of v over the block; every thread gets the result.
__device__ double ref_block_reduce(double v, bool take_max) {
  __shared__ double tree[REF_THREADS];
  __syncthreads();  // an earlier call's readers are done
  tree[threadIdx.x] = v;
  __syncthreads();
  for (int s = REF_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const double o = tree[threadIdx.x + s];
      tree[threadIdx.x] = take_max ? fmax(tree[threadIdx.x], o) : tree[threadIdx.x] + o;
    }
    __syncthreads();
  }
  return tree[0];
}

/// The elementwise activation in double.
__device__ __forceinline__ double ref_activation(double v) {
#if REF_ACT == 0
  return v > 0.0 ? v : 0.0;
#elif REF_ACT == 1
  return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
#elif REF_ACT == 2
  return 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
#elif REF_ACT == 3
  return v / (1.0 + exp(-v));
#else
  return v;
#endif
}

/// Elementwise: y[e] = op(x[e], z[e], bias[e % cols]) for e < n, grid-stride.
extern "C" __global__ void __launch_bounds__(REF_THREADS)
ref_elementwise(const ref_t* x, const ref_t* z, const ref_t* bias, ref_t* y, long long n,
                long long cols, double alpha) {
  for (long long e = (long long)blockIdx.x * REF_THREADS + threadIdx.x; e < n;
       e += (long long)gridDim.x * REF_THREADS) {
    const double xv = ref_load(x, e);
#if REF_KIND == 1
    const double r = xv + ref_load(z, e);
#elif REF_KIND == 2
    const double r = xv * ref_load(z, e);
#elif REF_KIND == 3
    const double r = ref_activation(alpha * xv + ref_load(bias, e % cols));
#else
    const double r = ref_activation(xv);
#endif
    ref_store(y, e, r);
  }
}

/// Reduction, first pass: partial[row * gridDim.y + blockIdx.y] = sum or max of
/// x[row, blockIdx.y * chunk ...] (chunk elements, fewer at the end), in double.
extern "C" __global__ void __launch_bounds__(REF_THREADS)
ref_reduce_chunks(const ref_t* x, double* partial, long long cols, long long chunk) {
  const long long row = blockIdx.x;
  const long long begin = (long long)blockIdx.y * chunk;
  const long long end = begin + chunk < cols ? begin + chunk : cols;
  const bool take_max = REF_FN == 1;
  double acc = take_max ? __longlong_as_double((long long)0xfff0000000000000ull) : 0.0;  // -inf
  for (long long c = begin + threadIdx.x; c < end; c += REF_THREADS) {
    const double v = ref_load(x, row * cols + c);
    acc = take_max ? fmax(acc, v) : acc + v;
  }
  acc = ref_block_reduce(acc, take_max);
  if (threadIdx.x == 0) partial[row * gridDim.y + blockIdx.y] = acc;
}

/// Reduction, second pass: out[row] = combination of partial[row, 0:chunks] (divided by
/// cols for the mean), one thread per row.
extern "C" __global__ void __launch_bounds__(REF_THREADS)
ref_reduce_finish(const double* partial, float* out, long long rows, int chunks, long long cols) {
  const long long row = (long long)blockIdx.x * REF_THREADS + threadIdx.x;
  if (row >= rows) return;
  double acc = partial[row * chunks];
  for (int i = 1; i < chunks; ++i) {
    const double v = partial[row * chunks + i];
    acc = REF_FN == 1 ? fmax(acc, v) : acc + v;
  }
  if (REF_FN == 2) acc /= (double)cols;
  out[row] = __double2float_rn(acc);
}

/// LayerNorm / RMSNorm of one row per block, two-pass statistics in double:
/// y = (x - mean) * rstd * gamma + beta (RMSNorm: x * rstd * gamma); mean_out may be null.
extern "C" __global__ void __launch_bounds__(REF_THREADS)
ref_norm(const ref_t* x, const ref_t* gamma, const ref_t* beta, ref_t* y, float* mean_out,
         float* rstd_out, long long hidden, double eps) {
  const long long base = (long long)blockIdx.x * hidden;
  double mean = 0.0, sq = 0.0;
#if REF_NORM == 0
  double sum = 0.0;
  for (long long c = threadIdx.x; c < hidden; c += REF_THREADS) sum += ref_load(x, base + c);
  mean = ref_block_reduce(sum, false) / (double)hidden;
#endif
  for (long long c = threadIdx.x; c < hidden; c += REF_THREADS) {
    const double d = ref_load(x, base + c) - mean;
    sq += d * d;
  }
  const double rstd = 1.0 / sqrt(ref_block_reduce(sq, false) / (double)hidden + eps);
  for (long long c = threadIdx.x; c < hidden; c += REF_THREADS) {
    double v = (ref_load(x, base + c) - mean) * rstd * ref_load(gamma, c);
#if REF_NORM == 0
    v += ref_load(beta, c);
#endif
    ref_store(y, base + c, v);
  }
  if (threadIdx.x == 0) {
    if (mean_out) mean_out[blockIdx.x] = __double2float_rn(mean);
    rstd_out[blockIdx.x] = __double2float_rn(rstd);
  }
}
