// gemm_reference: the independent GPU reference of the gemm workloads, used instead of the host
// reference when a shape is too large for the CPU (Workload::device_reference). It shares no
// code with the tuned kernels: one deliberately plain kernel, a 64 x 64 output tile per block
// of 256 threads (4 x 4 outputs each, strided by 16), k panels of 16 staged in shared memory
// as doubles, fp64 accumulation, and the epilogue C = alpha * acc + beta * C + bias[col]
// computed in double and rounded once to the output type. Self-contained (no headers), so it
// compiles with no include path.
//
// Defines (set by templates/gemm/gemm_reference.cc from the checked problem):
//   REF_IN    element type of A and B: 0 = f32 (also TF32 problems: fp32 data), 1 = f16, 2 = bf16
//   REF_OUT   element type of C and bias: 0 = f32, 1 = f16, 2 = bf16
//   REF_A_T   0 = A stored M x K (k contiguous); 1 = stored K x M (m contiguous)
//   REF_B_T   0 = B stored K x N (n contiguous); 1 = stored N x K (k contiguous)
//   REF_BIAS  1 = add bias[col]
#ifndef REF_IN
#define REF_IN 1
#endif
#ifndef REF_OUT
#define REF_OUT 1
#endif
#ifndef REF_A_T
#define REF_A_T 0
#endif
#ifndef REF_B_T
#define REF_B_T 1
#endif
#ifndef REF_BIAS
#define REF_BIAS 0
#endif

namespace {

constexpr int kTile = 64;     // output rows and columns per block
constexpr int kDepth = 16;    // k per shared-memory panel
constexpr int kSide = 16;     // threads per block side (16 x 16 = 256 threads)
constexpr int kPerThread = kTile / kSide;  // outputs per thread per direction

#if REF_IN == 0
typedef float in_t;
#else
typedef unsigned short in_t;  // f16 / bf16 bits
#endif
#if REF_OUT == 0
typedef float out_t;
#else
typedef unsigned short out_t;
#endif

/// A 16-bit float (REF_IN or REF_OUT code 1 = f16, 2 = bf16) as a double.
__device__ __forceinline__ double bits_to_double(unsigned short bits, int code) {
  if (code == 2) return static_cast<double>(__int_as_float(static_cast<int>(bits) << 16));
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return static_cast<double>(f);
}

/// A double rounded to nearest-even into a 16-bit float (code 1 = f16, 2 = bf16).
__device__ __forceinline__ unsigned short double_to_bits(double v, int code) {
  unsigned short bits;
  if (code == 1) {
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(v));
    return bits;
  }
#if __CUDA_ARCH__ >= 900
  asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(bits) : "d"(v));
  return bits;
#else
  const unsigned u = static_cast<unsigned>(__float_as_int(static_cast<float>(v)));
  return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}

/// Element i of an fp32 buffer as a double.
__device__ __forceinline__ double load_element(const float* p, long long i, int) {
  return static_cast<double>(p[i]);
}

/// Element i of a 16-bit float buffer (code 1 = f16, 2 = bf16) as a double.
__device__ __forceinline__ double load_element(const unsigned short* p, long long i, int code) {
  return bits_to_double(p[i], code);
}

/// Stores a double, rounded once, as element i of an fp32 buffer.
__device__ __forceinline__ void store_element(float* p, long long i, double v, int) {
  p[i] = static_cast<float>(v);
}

/// Stores a double, rounded once, as element i of a 16-bit float buffer.
__device__ __forceinline__ void store_element(unsigned short* p, long long i, double v,
                                              int code) {
  p[i] = double_to_bits(v, code);
}

/// Row (of op(A), or column of op(B)) and k of the e-th element a block reads of a 64 x 16
/// panel, so that consecutive threads read consecutive addresses of the stored layout.
__device__ __forceinline__ void panel_position(int e, bool k_contiguous, int& r, int& k) {
  r = k_contiguous ? e / kDepth : e % kTile;
  k = k_contiguous ? e % kDepth : e / kTile;
}

/// Element (r, k) of an operand viewed as rows x K: stored rows x K when k_contiguous (A 'N',
/// B 'T'), else K x rows; zero outside the matrix.
__device__ __forceinline__ double operand_element(const in_t* p, bool k_contiguous, int r, int k,
                                                  int rows, int K) {
  if (r >= rows || k >= K) return 0.0;
  return load_element(p,
                      k_contiguous ? static_cast<long long>(r) * K + k
                                   : static_cast<long long>(k) * rows + r,
                      REF_IN);
}

}  // namespace

/// C = alpha * op(A) * op(B) + beta * C (+ bias[col]) in fp64. Grid: one block per 64 x 64
/// tile of C, linear (tile = blockIdx.x, tiles_n per tile row); block: 256 threads. C holds
/// its input values when the kernel starts (beta != 0 reads it).
extern "C" __global__ void __launch_bounds__(256)
    gemm_reference(const in_t* __restrict__ A, const in_t* __restrict__ B, out_t* C,
                   const out_t* bias, int M, int N, int K, double alpha, double beta) {
  __shared__ double sa[kDepth][kTile + 1];  // op(A) panel as [k][m]
  __shared__ double sb[kDepth][kTile + 1];  // op(B) panel as [k][n]
  const int tiles_n = (N + kTile - 1) / kTile;
  const int m0 = static_cast<int>(blockIdx.x / tiles_n) * kTile;
  const int n0 = static_cast<int>(blockIdx.x % tiles_n) * kTile;
  const int tx = threadIdx.x % kSide;
  const int ty = threadIdx.x / kSide;

  double acc[kPerThread][kPerThread];
  for (int i = 0; i < kPerThread; ++i)
    for (int j = 0; j < kPerThread; ++j) acc[i][j] = 0.0;

  for (int k0 = 0; k0 < K; k0 += kDepth) {
    // Consecutive threads read consecutive addresses of each operand's stored layout.
    for (int e = threadIdx.x; e < kTile * kDepth; e += kSide * kSide) {
      int r, k;
      panel_position(e, !REF_A_T, r, k);
      sa[k][r] = operand_element(A, !REF_A_T, m0 + r, k0 + k, M, K);
      panel_position(e, REF_B_T, r, k);
      sb[k][r] = operand_element(B, REF_B_T, n0 + r, k0 + k, N, K);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kDepth; ++k) {
      double a[kPerThread], b[kPerThread];
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        a[i] = sa[k][ty + kSide * i];
        b[i] = sb[k][tx + kSide * i];
      }
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  for (int i = 0; i < kPerThread; ++i)
    for (int j = 0; j < kPerThread; ++j) {
      const int row = m0 + ty + kSide * i;
      const int col = n0 + tx + kSide * j;
      if (row >= M || col >= N) continue;
      const long long idx = static_cast<long long>(row) * N + col;
      double v = alpha * acc[i][j];
      if (beta != 0.0) v += beta * load_element(C, idx, REF_OUT);
#if REF_BIAS
      v += load_element(bias, col, REF_OUT);
#endif
      store_element(C, idx, v, REF_OUT);
    }
}
