// LayerNorm / RMSNorm forward template over a row-major [rows, hidden] tensor, fp32 / fp16 /
// bf16 I/O, fp32 statistics. LayerNorm: y = (x - mean) * rstd * gamma + beta, saving mean and
// rstd per row; RMSNorm: y = x * rstd * gamma with rstd = 1 / sqrt(mean(x^2) + eps), saving
// rstd. Groups of TPR consecutive threads own one row (THREADS / TPR rows per block), moving
// VEC elements per access (hidden % VEC == 0). The row is kept in registers (ROW_MODE 0, the
// row is read once), in dynamic shared memory (ROW_MODE 1, THREADS / TPR rows of hidden
// elements) or re-read from global memory / L2 (ROW_MODE 2). Statistics are two-pass (STATS 0:
// mean, then the sum of squared deviations from the kept row) or Welford/Chan (STATS 1: one
// pass, per-thread statistics merged across the group). KT_HIDDEN is a problem define.
// Register mode only: with CLUSTER > 1 one row is split across a thread-block cluster of
// CLUSTER CTAs (one group = one CTA holds hidden / CLUSTER elements), the row sums combined
// through distributed shared memory; with RPG > 1 each group normalizes RPG consecutive rows
// one after the other, gamma / beta kept in registers across them.
#include "common/reduce.cuh"
#include "common/vector.cuh"

#ifndef THREADS
#define THREADS 256  // threads per block
#endif
#ifndef TPR
#define TPR 256  // threads per row (power of two, divides THREADS)
#endif
#ifndef VEC
#define VEC 4  // elements per vector access (divides KT_HIDDEN)
#endif
#ifndef ROW_MODE
#define ROW_MODE 0  // 0 registers, 1 shared memory, 2 re-read from global
#endif
#ifndef STATS
#define STATS 0  // 0 two-pass, 1 Welford / Chan merge (LayerNorm only)
#endif
#ifndef CACHE_HINT
#define CACHE_HINT 0  // x loads and y stores: 0 default, 1 streaming
#endif
#ifndef CLUSTER
#define CLUSTER 1  // CTAs per row (ROW_MODE 0, TPR == THREADS, two-pass, RPG 1); 1 = no cluster
#endif
#ifndef RPG
#define RPG 1  // rows per group, one after another (ROW_MODE 0)
#endif
#ifndef KT_NORM
#define KT_NORM 0  // 0 LayerNorm, 1 RMSNorm
#endif
#ifndef KT_HIDDEN
#define KT_HIDDEN 4096  // row length (problem define)
#endif

#define KT_RPB (THREADS / TPR)  // rows per block
#define KT_NV (KT_HIDDEN / VEC)  // vectors per row
#define KT_NVC (KT_NV / CLUSTER)  // vectors of a row held by one CTA of a cluster

#if CLUSTER > 1
#define KT_CLUSTER_DIMS __cluster_dims__(CLUSTER, 1, 1)
#else
#define KT_CLUSTER_DIMS
#endif

typedef KtVec<kt_io_t, VEC> Vec;

/// gamma (and beta for LayerNorm) of vector idx as fp32.
__device__ __forceinline__ void kt_load_params(const kt_io_t* gamma, const kt_io_t* beta, int idx,
                                               float (&gf)[VEC], float (&bf)[VEC]) {
  Vec g;
  g.template load<2>(gamma + (long long)idx * VEC);
  g.template to_float<KtIO>(gf);
#if KT_NORM == 0
  Vec b;
  b.template load<2>(beta + (long long)idx * VEC);
  b.template to_float<KtIO>(bf);
#else
  (void)beta;
#pragma unroll
  for (int j = 0; j < VEC; ++j) bf[j] = 0.0f;
#endif
}

/// Writes one output vector: y = (v - mean) * rstd * g + b (RMSNorm: v * rstd * g).
__device__ __forceinline__ void kt_norm_write(const float (&v)[VEC], float mean, float rstd,
                                              const float (&gf)[VEC], const float (&bf)[VEC],
                                              kt_io_t* y, int idx) {
  float out[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) {
#if KT_NORM == 0
    out[j] = (v[j] - mean) * rstd * gf[j] + bf[j];
#else
    (void)mean;
    out[j] = v[j] * rstd * gf[j];
#endif
  }
  Vec r;
  r.template from_float<KtIO>(out);
  r.template store<CACHE_HINT>(y + (long long)idx * VEC);
}

/// Writes one output vector, loading its gamma / beta first.
__device__ __forceinline__ void kt_norm_store(const float (&v)[VEC], float mean, float rstd,
                                              const kt_io_t* gamma, const kt_io_t* beta,
                                              kt_io_t* y, int idx) {
  float gf[VEC], bf[VEC];
  kt_load_params(gamma, beta, idx, gf, bf);
  kt_norm_write(v, mean, rstd, gf, bf, y, idx);
}

/// Sum of a row's partial sums: over the group of TPR threads, then (CLUSTER > 1) over the
/// CTAs of the cluster through `slot`.
__device__ __forceinline__ float kt_row_sum(float v, float* scratch, float* slot) {
  v = kt_group_reduce_shfl<TPR, KtSumOp>(v, scratch);
#if CLUSTER > 1
  v = kt_cluster_sum<CLUSTER>(v, slot);
#else
  (void)slot;
#endif
  return v;
}

/// One group of TPR threads (or, with CLUSTER > 1, CLUSTER CTAs) normalizes one row (RPG rows
/// with ROW_MODE 0); mean_out may be null (RMSNorm).
extern "C" __global__ void __launch_bounds__(THREADS) KT_CLUSTER_DIMS
layernorm_fwd(const kt_io_t* x, const kt_io_t* gamma, const kt_io_t* beta, kt_io_t* y,
              float* mean_out, float* rstd_out, long long rows, float eps) {
  __shared__ float scratch[3 * (THREADS / 32) + 3];
  const int lane = threadIdx.x % TPR;
  const float inv_h = 1.0f / (float)KT_HIDDEN;

#if ROW_MODE == 0
  // ---- the row in registers: read once --------------------------------------------------
  __shared__ float cluster_slot[2];  // CLUSTER > 1: the two row-sum exchanges
#if CLUSTER > 1
  const int first = (int)(blockIdx.x % CLUSTER) * KT_NVC;  // == %cluster_ctarank * KT_NVC
  const long long group = blockIdx.x / CLUSTER;
  const bool writes_stats = blockIdx.x % CLUSTER == 0;
#else
  const int first = 0;
  const long long group = (long long)blockIdx.x * KT_RPB + threadIdx.x / TPR;
  const bool writes_stats = true;
#endif
  const int kItems = (KT_NVC + TPR - 1) / TPR;
#if RPG > 1
  float gp[kItems][VEC], bp[kItems][VEC];  // gamma / beta, shared by the group's rows
#pragma unroll
  for (int i = 0; i < kItems; ++i)
    if (lane + i * TPR < KT_NVC) kt_load_params(gamma, beta, first + lane + i * TPR, gp[i], bp[i]);
#endif
#pragma unroll 1
  for (int k = 0; k < RPG; ++k) {
    const long long row = group * RPG + k;
    const bool active = row < rows;  // uniform over a cluster (CLUSTER > 1: RPG == 1)
    const kt_io_t* xr = x + (active ? row : 0) * (long long)KT_HIDDEN;
    kt_io_t* yr = y + (active ? row : 0) * (long long)KT_HIDDEN;
    float mean = 0.0f, rstd;
    float v[kItems][VEC];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      Vec t;
      if (active && lane + i * TPR < KT_NVC) {
        t.template load<CACHE_HINT>(xr + (long long)(first + lane + i * TPR) * VEC);
        t.template to_float<KtIO>(v[i]);
      } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[i][j] = 0.0f;
      }
    }
#if KT_NORM == 1
    float sq = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i)
#pragma unroll
      for (int j = 0; j < VEC; ++j) sq += v[i][j] * v[i][j];
    rstd = rsqrtf(kt_row_sum(sq, scratch, &cluster_slot[0]) * inv_h + eps);
#elif STATS == 0
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i)
#pragma unroll
      for (int j = 0; j < VEC; ++j) sum += v[i][j];
    mean = kt_row_sum(sum, scratch, &cluster_slot[0]) * inv_h;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (lane + i * TPR < KT_NVC) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) q += (v[i][j] - mean) * (v[i][j] - mean);
      }
    }
    rstd = rsqrtf(kt_row_sum(q, scratch, &cluster_slot[1]) * inv_h + eps);
#else
    // Per-thread exact statistics of the values held, then a Chan merge across the group.
    KtWelford s = {0.0f, 0.0f, 0.0f};
    float sum = 0.0f;
    int held = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (lane + i * TPR < KT_NVC) {
        held += VEC;
#pragma unroll
        for (int j = 0; j < VEC; ++j) sum += v[i][j];
      }
    }
    if (held > 0) {
      s.n = (float)held;
      s.mean = sum / s.n;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (lane + i * TPR < KT_NVC) {
#pragma unroll
          for (int j = 0; j < VEC; ++j) s.m2 += (v[i][j] - s.mean) * (v[i][j] - s.mean);
        }
      }
    }
    s = kt_group_welford<TPR>(s, scratch);
    mean = s.mean;
    rstd = rsqrtf(s.m2 * inv_h + eps);
#endif
    if (active) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int idx = first + lane + i * TPR;
        if (lane + i * TPR < KT_NVC) {
#if RPG > 1
          kt_norm_write(v[i], mean, rstd, gp[i], bp[i], yr, idx);
#else
          kt_norm_store(v[i], mean, rstd, gamma, beta, yr, idx);
#endif
        }
      }
      if (lane == 0 && writes_stats) {
        if (mean_out) mean_out[row] = mean;
        rstd_out[row] = rstd;
      }
    }
  }
#if CLUSTER > 1
  kt_cluster_sync();  // no CTA leaves while another may still read its cluster_slot
#endif
#else
  const long long row = (long long)blockIdx.x * KT_RPB + threadIdx.x / TPR;
  const bool active = row < rows;
  const kt_io_t* xr = x + (active ? row : 0) * (long long)KT_HIDDEN;
  kt_io_t* yr = y + (active ? row : 0) * (long long)KT_HIDDEN;
  float mean = 0.0f, rstd;
  // ---- the row kept in shared memory (ROW_MODE 1) or re-read from global (ROW_MODE 2) ----
#if ROW_MODE == 1
  extern __shared__ __align__(16) unsigned char kt_row_smem[];
  kt_io_t* kept = reinterpret_cast<kt_io_t*>(kt_row_smem) + (threadIdx.x / TPR) * (long long)KT_HIDDEN;
  const kt_io_t* again = kept;  // each thread re-reads only the vectors it stored: no barrier
#else
  const kt_io_t* again = xr;
#endif
#if KT_NORM == 1 || STATS == 0
  float acc = 0.0f;
#else
  KtWelford s = {0.0f, 0.0f, 0.0f};
#endif
  if (active) {
#pragma unroll 4
    for (int idx = lane; idx < KT_NV; idx += TPR) {
      Vec t;
      t.template load<ROW_MODE == 1 ? CACHE_HINT : 0>(xr + (long long)idx * VEC);
#if ROW_MODE == 1
      t.template store<0>(kept + (long long)idx * VEC);
#endif
      float f[VEC];
      t.template to_float<KtIO>(f);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
#if KT_NORM == 1
        acc += f[j] * f[j];
#elif STATS == 0
        acc += f[j];
#else
        kt_welford_push(s, f[j]);
#endif
      }
    }
  }
#if KT_NORM == 1
  acc = kt_group_reduce_shfl<TPR, KtSumOp>(acc, scratch);
  rstd = rsqrtf(acc * inv_h + eps);
#elif STATS == 0
  mean = kt_group_reduce_shfl<TPR, KtSumOp>(acc, scratch) * inv_h;
  float q = 0.0f;
  if (active) {
#pragma unroll 4
    for (int idx = lane; idx < KT_NV; idx += TPR) {
      Vec t;
      t.template load<0>(again + (long long)idx * VEC);
      float f[VEC];
      t.template to_float<KtIO>(f);
#pragma unroll
      for (int j = 0; j < VEC; ++j) q += (f[j] - mean) * (f[j] - mean);
    }
  }
  q = kt_group_reduce_shfl<TPR, KtSumOp>(q, scratch);
  rstd = rsqrtf(q * inv_h + eps);
#else
  s = kt_group_welford<TPR>(s, scratch);
  mean = s.mean;
  rstd = rsqrtf(s.m2 * inv_h + eps);
#endif
  if (active) {
#pragma unroll 4
    for (int idx = lane; idx < KT_NV; idx += TPR) {
      Vec t;
      t.template load<ROW_MODE == 2 ? CACHE_HINT : 0>(again + (long long)idx * VEC);
      float f[VEC];
      t.template to_float<KtIO>(f);
      kt_norm_store(f, mean, rstd, gamma, beta, yr, idx);
    }
  }
  if (active && lane == 0) {
    if (mean_out) mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
#endif
}
