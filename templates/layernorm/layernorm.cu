// LayerNorm / RMSNorm forward template over a row-major [rows, hidden] tensor, fp32 / fp16 /
// bf16 I/O, fp32 statistics. LayerNorm: y = (x - mean) * rstd * gamma + beta, saving mean and
// rstd per row; RMSNorm: y = x * rstd * gamma with rstd = 1 / sqrt(mean(x^2) + eps), saving
// rstd. Groups of TPR consecutive threads own one row (THREADS / TPR rows per block), moving
// VEC elements per access (hidden % VEC == 0). The row is kept in registers (ROW_MODE 0, the
// row is read once), in dynamic shared memory (ROW_MODE 1, THREADS / TPR rows of hidden
// elements) or re-read from global memory / L2 (ROW_MODE 2). Statistics are two-pass (STATS 0:
// mean, then the sum of squared deviations from the kept row) or Welford/Chan (STATS 1: one
// pass, per-thread statistics merged across the group). KT_HIDDEN is a problem define.
// Register mode only: the row is held as the loaded vectors (16-bit types packed, two per
// register) and converted to fp32 in each pass; with CLUSTER > 1 one row is split across a
// thread-block cluster of CLUSTER CTAs (one group = one CTA holds hidden / CLUSTER elements),
// the row sums combined through distributed shared memory (STATS 1: each CTA's mean and M2 in
// one exchange, merged in rank order); with RPG > 1 each group normalizes
// RPG consecutive rows one after the other, with PREFETCH = 1 loading row k + 1 before row k is
// reduced (loads stay in flight across the reductions and the writes), and gamma / beta held
// across the rows in registers (PARAMS = 1) or in dynamic shared memory (PARAMS = 2, the CTA's
// part of the row: loaded once, re-read per row at shared-memory latency).
// ROW_MODE 3 streams rows through shared memory: thread 0 starts one bulk asynchronous copy
// (cp.async.bulk, completing on an mbarrier) per tile of THREADS / TPR consecutive rows (with
// CLUSTER > 1: the CTA's part of one row) into a ring of STAGES tiles; each CTA handles RPG
// tiles, strided by the number of CTAs (clusters) of the grid so that every CTA gets RPG or
// RPG - 1 of them, so STAGES tiles of loads stay in flight without registers while the threads reduce
// and write the current tile, whose vectors they first copy into registers (then as ROW_MODE 0).
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
#define CLUSTER 1  // CTAs per row (ROW_MODE 0, TPR == THREADS, two-pass); 1 = no cluster
#endif
#ifndef RPG
#define RPG 1  // rows per group, one after another (ROW_MODE 0)
#endif
#ifndef PREFETCH
#define PREFETCH 0  // RPG > 1: 1 = row k + 1 loaded before row k is reduced
#endif
#ifndef PARAMS
#define PARAMS 0  // RPG > 1, gamma / beta held across rows: 0 no, 1 registers, 2 shared memory
#endif
#ifndef STAGES
#define STAGES 2  // ROW_MODE 3: tiles of rows in flight in the shared-memory ring
#endif
#ifndef MIN_WARPS
#define MIN_WARPS 0  // resident warps per SM asked of the compiler (0: its own choice)
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
#define KT_ITEMS ((KT_NVC + TPR - 1) / TPR)  // ROW_MODE 0 / 3: vectors of a row per thread
#define KT_SLICE (KT_NVC * VEC)  // elements of a row held by one CTA
// Dynamic shared memory: PARAMS 2 gamma (and beta) of the slice, rounded to 128 bytes, then
// (ROW_MODE 3) STAGES tiles of KT_RPB slices.
#if PARAMS == 2
#define KT_PARAM_BYTES \
  ((KT_SLICE * (int)sizeof(kt_io_t) * (KT_NORM == 0 ? 2 : 1) + 127) / 128 * 128)
#else
#define KT_PARAM_BYTES 0
#endif

// __launch_bounds__: MIN_WARPS > 0 asks for MIN_WARPS * 32 / THREADS resident blocks per SM
// (a register cap of 65536 / (32 * MIN_WARPS) per thread).
#if MIN_WARPS * 32 >= THREADS
#define KT_MIN_BLOCKS (MIN_WARPS * 32 / THREADS)
#else
#define KT_MIN_BLOCKS 1
#endif

#if CLUSTER > 1
#define KT_CLUSTER_DIMS __cluster_dims__(CLUSTER, 1, 1)
#else
#define KT_CLUSTER_DIMS
#endif

typedef KtVec<kt_io_t, VEC> Vec;

/// gamma (and beta for LayerNorm) of vector idx, as loaded (HINT 2: global read-only path;
/// 0 for shared memory).
template <int HINT = 2>
__device__ __forceinline__ void kt_load_params_raw(const kt_io_t* gamma, const kt_io_t* beta,
                                                   int idx, Vec& g, Vec& b) {
  g.template load<HINT>(gamma + (long long)idx * VEC);
#if KT_NORM == 0
  b.template load<HINT>(beta + (long long)idx * VEC);
#else
  (void)beta;
  b.raw = g.raw;  // unused by RMSNorm
#endif
}

/// gamma (and beta for LayerNorm) as fp32 from their loaded vectors.
__device__ __forceinline__ void kt_params_float(const Vec& g, const Vec& b, float (&gf)[VEC],
                                                float (&bf)[VEC]) {
  g.template to_float<KtIO>(gf);
#if KT_NORM == 0
  b.template to_float<KtIO>(bf);
#else
  (void)b;
#pragma unroll
  for (int j = 0; j < VEC; ++j) bf[j] = 0.0f;
#endif
}

/// gamma (and beta for LayerNorm) of vector idx as fp32.
__device__ __forceinline__ void kt_load_params(const kt_io_t* gamma, const kt_io_t* beta, int idx,
                                               float (&gf)[VEC], float (&bf)[VEC]) {
  Vec g, b;
  kt_load_params_raw(gamma, beta, idx, g, b);
  kt_params_float(g, b, gf, bf);
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

#if CLUSTER > 1
// LayerNorm with STATS 1 exchanges each CTA's (mean, M2); the sums exchange one value.
typedef KtClusterExchange<CLUSTER, (KT_NORM == 0 && STATS == 1) ? 2 : 1> KtExchange;
#else
struct KtExchange {};  // no cluster: nothing to exchange
#endif

/// Sum of a row's partial sums: over the group of TPR threads, then (CLUSTER > 1) over the
/// CTAs of the cluster through `ex` (exchange number j).
template <class Exchange>
__device__ __forceinline__ float kt_row_sum(float v, float* scratch, Exchange& ex,
                                            unsigned int j) {
  v = kt_group_reduce_shfl<TPR, KtSumOp>(v, scratch);
#if CLUSTER > 1
  v = ex.sum(v, j);
#else
  (void)ex;
  (void)j;
#endif
  return v;
}

/// ROW_MODE 0: a held vector as fp32, converted where it is used (each pass). The conversion
/// is volatile asm for 16-bit types, so that the compiler cannot merge the passes' conversions
/// into fp32 copies of the row (ptxas reported the same registers either way in the configs
/// checked: the hold is packed in both).
__device__ __forceinline__ void kt_unpack(const Vec& t, float (&f)[VEC]) {
#if KT_DTYPE == 1
#pragma unroll
  for (int j = 0; j < VEC; ++j) asm volatile("cvt.f32.f16 %0, %1;" : "=f"(f[j]) : "h"(t.v[j]));
#elif KT_DTYPE == 2
#pragma unroll
  for (int j = 0; j < VEC; ++j) {
    unsigned int u;
    asm volatile("shl.b32 %0, %1, 16;" : "=r"(u) : "r"((unsigned int)t.v[j]));
    f[j] = __uint_as_float(u);
  }
#else
  t.template to_float<KtIO>(f);
#endif
}

/// Independent partial sums a thread keeps over its held values: four chains of additions
/// instead of one (a row's 32 values per lane: 8 dependent adds each, not 32).
#define KT_PARTS 4

/// The total of a thread's KT_PARTS partial sums, added pairwise.
__device__ __forceinline__ float kt_parts_total(const float (&part)[KT_PARTS]) {
  static_assert(KT_PARTS == 4, "kt_parts_total adds four partial sums");
  return (part[0] + part[1]) + (part[2] + part[3]);
}

/// ROW_MODE 0 / 3: sum of the values of the held vectors (those beyond the row are zero).
__device__ __forceinline__ float kt_held_sum(const Vec (&held)[KT_ITEMS]) {
  float part[KT_PARTS] = {};
#pragma unroll
  for (int i = 0; i < KT_ITEMS; ++i) {
    float f[VEC];
    kt_unpack(held[i], f);
#pragma unroll
    for (int j = 0; j < VEC; ++j) part[(i * VEC + j) % KT_PARTS] += f[j];
  }
  return kt_parts_total(part);
}

/// ROW_MODE 0 / 3: sum of the squared deviations from `mean` of the held vectors that lie in
/// the row (`lane`: this thread's place in its row group).
__device__ __forceinline__ float kt_held_sq_dev(const Vec (&held)[KT_ITEMS], float mean, int lane) {
  float part[KT_PARTS] = {};
#pragma unroll
  for (int i = 0; i < KT_ITEMS; ++i) {
    if (lane + i * TPR < KT_NVC) {
      float f[VEC];
      kt_unpack(held[i], f);
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        part[(i * VEC + j) % KT_PARTS] += (f[j] - mean) * (f[j] - mean);
    }
  }
  return kt_parts_total(part);
}

/// ROW_MODE 0: loads this thread's vectors of `row` (those from vector `first` on that its
/// group holds) into r; vectors out of the row, or all when !active, are zero.
__device__ __forceinline__ void kt_load_row(Vec (&r)[KT_ITEMS], const kt_io_t* x, long long row,
                                            bool active, int first, int lane) {
  const kt_io_t* xr = x + (active ? row : 0) * (long long)KT_HIDDEN;
#pragma unroll
  for (int i = 0; i < KT_ITEMS; ++i) {
    if (active && lane + i * TPR < KT_NVC)
      r[i].template load<CACHE_HINT>(xr + (long long)(first + lane + i * TPR) * VEC);
    else
      r[i].raw = typename Vec::raw_t();
  }
}

#if ROW_MODE == 3
/// ROW_MODE 3, one thread: starts the bulk copy of tile `t` (KT_RPB consecutive rows; with
/// CLUSTER > 1 the CTA's part of one row, from element `first`) into `stage`, completing on
/// `bar`; a tile past the last row is not started (nobody waits for it).
__device__ __forceinline__ void kt_issue_tile(kt_io_t* stage, unsigned long long* bar,
                                              const kt_io_t* x, long long t, long long rows,
                                              int first) {
  const long long r0 = t * KT_RPB;
  if (r0 >= rows) return;
  const long long n = rows - r0 < KT_RPB ? rows - r0 : KT_RPB;  // rows are contiguous
  kt_bulk_load(stage, x + r0 * KT_HIDDEN + first,
               (unsigned int)(n * KT_SLICE * (long long)sizeof(kt_io_t)), bar);
}
#endif

/// One group of TPR threads (or, with CLUSTER > 1, CLUSTER CTAs) normalizes one row (RPG rows
/// with ROW_MODE 0 / 3); mean_out may be null (RMSNorm).
extern "C" __global__ void __launch_bounds__(THREADS, KT_MIN_BLOCKS) KT_CLUSTER_DIMS
layernorm_fwd(const kt_io_t* x, const kt_io_t* gamma, const kt_io_t* beta, kt_io_t* y,
              float* mean_out, float* rstd_out, long long rows, float eps) {
  kt_grid_dependency_wait();  // first: nothing is read or written before the previous grid is done
  __shared__ float scratch[3 * (THREADS / 32) + 3];
  const int lane = threadIdx.x % TPR;
  const float inv_h = 1.0f / (float)KT_HIDDEN;

#if ROW_MODE == 0 || ROW_MODE == 3
  // ---- the row in registers: read once --------------------------------------------------
  // CLUSTER > 1: the row sums are exchanged through st.async + mbarriers (reduce.cuh), set up
  // (one relaxed cluster barrier) before the first exchange.
  __shared__ KtExchange exch;
  unsigned int exchange = 0;
  extern __shared__ __align__(128) unsigned char kt_dyn_smem[];
#if ROW_MODE == 3
  __shared__ __align__(8) unsigned long long kt_full[STAGES];  // one per stage of the ring
  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) kt_mbar_init(&kt_full[s], 1);
    kt_mbar_init_fence();
  }
#endif
#if CLUSTER > 1
  exch.init();  // a cluster barrier: also publishes the mbarriers above
  const int first = (int)(blockIdx.x % CLUSTER) * KT_NVC;  // == %cluster_ctarank * KT_NVC
  const long long group = blockIdx.x / CLUSTER;
  const bool writes_stats = blockIdx.x % CLUSTER == 0;
#else
#if ROW_MODE == 3
  __syncthreads();  // the mbarriers are initialized
#endif
  const int first = 0;
  const long long group = (long long)blockIdx.x * KT_RPB + threadIdx.x / TPR;
  const bool writes_stats = true;
#endif
  Vec cur[KT_ITEMS];
#if ROW_MODE == 3
  // Tiles tile0 + k * tstep for k < RPG (KT_RPB rows each); the first STAGES are started now,
  // while gamma / beta are fetched.
  kt_io_t* const kt_ring = reinterpret_cast<kt_io_t*>(kt_dyn_smem + KT_PARAM_BYTES);
  const long long tile0 = blockIdx.x / CLUSTER, tstep = gridDim.x / CLUSTER;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
      if (s < RPG)
        kt_issue_tile(kt_ring + s * (KT_RPB * KT_SLICE), &kt_full[s], x, tile0 + s * tstep, rows,
                      first * VEC);
  }
  (void)group;
#else
  kt_load_row(cur, x, group * RPG, group * RPG < rows, first, lane);  // in flight while gamma / beta are fetched
#endif
#if PARAMS == 1
  Vec gp[KT_ITEMS], bp[KT_ITEMS];  // gamma / beta as loaded, shared by the group's rows
#pragma unroll
  for (int i = 0; i < KT_ITEMS; ++i)
    if (lane + i * TPR < KT_NVC) kt_load_params_raw(gamma, beta, first + lane + i * TPR, gp[i], bp[i]);
#elif PARAMS == 2
  // The CTA's part of gamma (then beta): KT_NVC vectors each, loaded by the whole block.
  kt_io_t* const sg = reinterpret_cast<kt_io_t*>(kt_dyn_smem);
  kt_io_t* const sb = sg + KT_NVC * VEC;
  // A fixed count of vectors per thread when the block divides the slice (no remainder code:
  // every one-warp block of the hidden-1024 winners runs this), else a strided loop.
  auto fill = [&](int i) {
    Vec g, b;
    kt_load_params_raw(gamma, beta, first + i, g, b);
    g.template store<0>(sg + i * VEC);
#if KT_NORM == 0
    b.template store<0>(sb + i * VEC);
#endif
  };
#if KT_NVC % THREADS == 0
#pragma unroll
  for (int j = 0; j < KT_NVC / THREADS; ++j) fill(threadIdx.x + j * THREADS);
#else
  for (int i = threadIdx.x; i < KT_NVC; i += THREADS) fill(i);
#endif
  __syncthreads();
#endif
#pragma unroll 1
  for (int k = 0; k < RPG; ++k) {
#if ROW_MODE == 3
    const long long tile = tile0 + k * tstep;
    if (tile * KT_RPB >= rows) break;  // uniform over the CTA and the cluster
    const int stage = k % STAGES;
    kt_mbar_wait(kt_smem_addr(&kt_full[stage]), (unsigned int)((k / STAGES) & 1));
    const long long row = tile * KT_RPB + threadIdx.x / TPR;
    const bool active = row < rows;
    {
      const kt_io_t* src = kt_ring + stage * (KT_RPB * KT_SLICE) + (threadIdx.x / TPR) * KT_SLICE;
#pragma unroll
      for (int i = 0; i < KT_ITEMS; ++i) {
        if (active && lane + i * TPR < KT_NVC)
          cur[i].template load<0>(src + (lane + i * TPR) * VEC);
        else
          cur[i].raw = typename Vec::raw_t();
      }
    }
    kt_fence_proxy_async_smem();  // these reads of the stage before the bulk copy refilling it
    __syncthreads();              // every thread holds its vectors of the stage: refill it
    if (threadIdx.x == 0 && k + STAGES < RPG)
      kt_issue_tile(kt_ring + stage * (KT_RPB * KT_SLICE), &kt_full[stage], x,
                    tile + STAGES * tstep, rows, first * VEC);
#else
    const long long row = group * RPG + k;
    const bool active = row < rows;  // uniform over a cluster
#endif
#if PREFETCH && ROW_MODE == 0
    Vec nxt[KT_ITEMS];  // the next row, in flight while this one is reduced and written
    kt_load_row(nxt, x, row + 1, k + 1 < RPG && row + 1 < rows, first, lane);
#endif
    kt_io_t* yr = y + (active ? row : 0) * (long long)KT_HIDDEN;
    float mean = 0.0f, rstd;
#if KT_NORM == 1
    // (squared deviations from 0: f - 0 is exact, so these are the squares)
    rstd = rsqrtf(kt_row_sum(kt_held_sq_dev(cur, 0.0f, lane), scratch, exch, exchange++) * inv_h + eps);
#elif STATS == 0
    mean = kt_row_sum(kt_held_sum(cur), scratch, exch, exchange++) * inv_h;
    rstd = rsqrtf(kt_row_sum(kt_held_sq_dev(cur, mean, lane), scratch, exch, exchange++) * inv_h + eps);
#elif KT_NVC % TPR == 0
    // Every thread holds KT_ITEMS whole vectors, so every part has the same count: exact
    // per-thread statistics, merged by the division-free butterfly of equal halves and, across
    // a cluster, in one closed form over the CTAs' equal parts (mean of the means; M2 the sum
    // of the M2s plus count x the squared deviations of the means), added in rank order on
    // every CTA (the same bits everywhere). One exchange per row where two-pass needs two.
    constexpr float kHeld = (float)(KT_ITEMS * VEC);
    float part_mean = kt_held_sum(cur) * (1.0f / kHeld);
    float part_m2 = kt_held_sq_dev(cur, part_mean, lane);
    const float count = kt_group_moments_equal<TPR>(part_mean, part_m2, kHeld, scratch);
#if CLUSTER > 1
    {
      const float mine[2] = {part_mean, part_m2};
      const float(*all)[2] = exch.gather(mine, exchange++);
      float means = 0.0f;
#pragma unroll
      for (int r = 0; r < CLUSTER; ++r) means += all[r][0];
      const float row_mean = means * (1.0f / CLUSTER);
      float m2s = 0.0f, devs = 0.0f;
#pragma unroll
      for (int r = 0; r < CLUSTER; ++r) {
        const float d = all[r][0] - row_mean;
        m2s += all[r][1];
        devs += d * d;
      }
      part_mean = row_mean;
      part_m2 = m2s + devs * count;
    }
#else
    (void)exchange;
    (void)count;
#endif
    mean = part_mean;
    rstd = rsqrtf(part_m2 * inv_h + eps);
#else
    // Per-thread exact statistics of the values held (unequal counts: a tail), then a Chan
    // merge across the group.
    KtWelford s = {0.0f, 0.0f, 0.0f};
    int held = 0;
#pragma unroll
    for (int i = 0; i < KT_ITEMS; ++i)
      if (lane + i * TPR < KT_NVC) held += VEC;
    if (held > 0) {
      s.n = (float)held;
      s.mean = kt_held_sum(cur) / s.n;  // the vectors beyond the row are zero
      s.m2 = kt_held_sq_dev(cur, s.mean, lane);
    }
    s = kt_group_welford<TPR>(s, scratch);
#if CLUSTER > 1
    {
      // The CTAs hold equal slices of the row (s.n values each): their (mean, M2) merged in
      // rank order on every CTA (the same bits everywhere), one exchange per row where
      // two-pass needs two.
      const float mine[2] = {s.mean, s.m2};
      const float(*all)[2] = exch.gather(mine, exchange++);
      KtWelford row = {0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int r = 0; r < CLUSTER; ++r) row = kt_welford_merge(row, {s.n, all[r][0], all[r][1]});
      s = row;
    }
#else
    (void)exchange;
#endif
    mean = s.mean;
    rstd = rsqrtf(s.m2 * inv_h + eps);
#endif
    if (active) {
#pragma unroll
      for (int i = 0; i < KT_ITEMS; ++i) {
        const int idx = first + lane + i * TPR;
        if (lane + i * TPR < KT_NVC) {
          float f[VEC];
          kt_unpack(cur[i], f);
#if PARAMS == 1
          float gf[VEC], bf[VEC];
          kt_params_float(gp[i], bp[i], gf, bf);
          kt_norm_write(f, mean, rstd, gf, bf, yr, idx);
#elif PARAMS == 2
          Vec g, b;
          kt_load_params_raw<0>(sg, sb, lane + i * TPR, g, b);
          float gf[VEC], bf[VEC];
          kt_params_float(g, b, gf, bf);
          kt_norm_write(f, mean, rstd, gf, bf, yr, idx);
#else
          kt_norm_store(f, mean, rstd, gamma, beta, yr, idx);
#endif
        }
        // At most 4 vectors' gamma / beta fetched ahead of their use: the compiler would hoist
        // every load of the unrolled loop (long rows: 100+ registers, spills under a cap).
        if (i % 4 == 3) asm volatile("" ::: "memory");
      }
      if (lane == 0 && writes_stats) {
        if (mean_out) mean_out[row] = mean;
        rstd_out[row] = rstd;
      }
    }
#if ROW_MODE == 3
    // the next tile's vectors come from the ring
#elif PREFETCH
#pragma unroll
    for (int i = 0; i < KT_ITEMS; ++i) cur[i].raw = nxt[i].raw;
#else
    if (k + 1 < RPG) kt_load_row(cur, x, row + 1, row + 1 < rows, first, lane);
#endif
  }
  // CLUSTER > 1: a CTA may leave now: every byte sent to it has arrived, nothing reads it.
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
