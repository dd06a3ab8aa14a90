// Cross-thread reductions for the kernel templates: warp shuffles, groups of kGroup consecutive
// threads of a block (kGroup a power of two from 1 to 1024) by shuffle + shared memory or by a
// shared-memory tree, Welford/Chan merging of (count, mean, M2) statistics, and sums over the
// CTAs of a thread-block cluster through distributed shared memory (sm_90): through cluster
// barriers (kt_cluster_sum), or through st.async and mbarriers (KtClusterExchange), which
// does not wait for the thread's other memory operations.
// Every group function contains __syncthreads() when kGroup > 32 (or always, for the tree): all
// threads of the block must call it, in uniform control flow.
#ifndef KTUNE_COMMON_REDUCE_CUH
#define KTUNE_COMMON_REDUCE_CUH

#include "common/dtype.cuh"
#include "common/cluster.cuh"
#include "common/mbarrier.cuh"

/// Sum as a reduction operator.
struct KtSumOp {
  static __device__ __forceinline__ float identity() { return 0.0f; }
  static __device__ __forceinline__ float combine(float a, float b) { return a + b; }
};

/// Maximum as a reduction operator (NaN-free inputs).
struct KtMaxOp {
  static __device__ __forceinline__ float identity() { return kt_neg_inf(); }
  static __device__ __forceinline__ float combine(float a, float b) { return fmaxf(a, b); }
};

/// Reduces v over aligned segments of kWidth lanes (a power of two <= 32) of a full warp; every
/// lane of a segment gets its result.
template <int kWidth, class OpT>
__device__ __forceinline__ float kt_warp_reduce(float v) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset >>= 1)
    v = OpT::combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Reduces v over each group of kGroup consecutive threads: shuffles within warps, then (kGroup > 32)
/// the warp results through `scratch` (at least blockDim.x / 32 floats). All threads of a group
/// get the result.
template <int kGroup, class OpT>
__device__ __forceinline__ float kt_group_reduce_shfl(float v, float* scratch) {
  v = kt_warp_reduce<(kGroup < 32 ? kGroup : 32), OpT>(v);
  if (kGroup > 32) {
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int warps_per_group = kGroup / 32;
    __syncthreads();  // the previous use of scratch is finished
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    const int first = warp & ~(warps_per_group - 1);
    float r = lane < warps_per_group ? scratch[first + lane] : OpT::identity();
    v = kt_warp_reduce<32, OpT>(r);
  }
  return v;
}

/// Reduces v over each group of kGroup consecutive threads with a shared-memory tree through
/// `scratch` (at least blockDim.x floats). All threads of a group get the result.
template <int kGroup, class OpT>
__device__ __forceinline__ float kt_group_reduce_tree(float v, float* scratch) {
  const int lane = threadIdx.x & (kGroup - 1);
  __syncthreads();  // the previous use of scratch is finished
  scratch[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int s = kGroup / 2; s > 0; s >>= 1) {
    if (lane < s) scratch[threadIdx.x] = OpT::combine(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    __syncthreads();
  }
  return scratch[threadIdx.x - lane];
}

/// Running statistics of a set of values: count, mean and sum of squared deviations (M2).
struct KtWelford {
  float n, mean, m2;
};

/// Adds one value to running statistics (Welford's update).
__device__ __forceinline__ void kt_welford_push(KtWelford& s, float x) {
  s.n += 1.0f;
  const float d = x - s.mean;
  s.mean += d / s.n;
  s.m2 += d * (x - s.mean);
}

/// Merges two sets of statistics (Chan et al.); empty sets are neutral. The weight b.n / n
/// is an approximate quotient (reciprocal times numerator, exact when n is a power of two, as
/// in a merge of equal halves): a full-precision division is a ~10-instruction sequence with a
/// slow-path branch, and a row's merges run one after another (18 per row in a cluster of 8).
__device__ __forceinline__ KtWelford kt_welford_merge(KtWelford a, KtWelford b) {
  const float n = a.n + b.n;
  if (n == 0.0f) return a;
  const float wb = __fdividef(b.n, n);
  const float d = b.mean - a.mean;
  KtWelford r;
  r.n = n;
  r.mean = a.mean + d * wb;
  r.m2 = a.m2 + b.m2 + d * d * a.n * wb;
  return r;
}

/// Merges statistics over aligned segments of kWidth lanes (power of two <= 32) of a warp.
template <int kWidth>
__device__ __forceinline__ KtWelford kt_warp_welford(KtWelford s) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset >>= 1) {
    KtWelford o;
    o.n = __shfl_xor_sync(0xffffffffu, s.n, offset);
    o.mean = __shfl_xor_sync(0xffffffffu, s.mean, offset);
    o.m2 = __shfl_xor_sync(0xffffffffu, s.m2, offset);
    s = kt_welford_merge(s, o);
  }
  return s;
}

/// Merges statistics over each group of kGroup consecutive threads; `scratch` holds at least
/// 3 * blockDim.x / 32 floats. All threads of a group get the result.
template <int kGroup>
__device__ __forceinline__ KtWelford kt_group_welford(KtWelford s, float* scratch) {
  s = kt_warp_welford<(kGroup < 32 ? kGroup : 32)>(s);
  if (kGroup > 32) {
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    const int warps_per_group = kGroup / 32;
    __syncthreads();
    if (lane == 0) {
      scratch[warp] = s.n;
      scratch[warps + warp] = s.mean;
      scratch[2 * warps + warp] = s.m2;
    }
    __syncthreads();
    const int first = warp & ~(warps_per_group - 1);
    KtWelford r = {0.0f, 0.0f, 0.0f};
    if (lane < warps_per_group) {
      r.n = scratch[first + lane];
      r.mean = scratch[warps + first + lane];
      r.m2 = scratch[2 * warps + first + lane];
    }
    s = kt_warp_welford<32>(r);
  }
  return s;
}

/// Mean and M2 (sum of squared deviations) of parts that each hold `count` values, merged over
/// aligned segments of kWidth lanes (power of two <= 32) by a butterfly: every step joins two
/// halves of equal size, where Chan's merge needs no division (mean: the average of the two;
/// M2: the sum plus d^2 * count / 2), no branch and two shuffles. Both lanes of a pair compute
/// the same bits (the sums commute, d^2 is the same for -d), so the whole segment agrees.
/// Returns the merged count.
template <int kWidth>
__device__ __forceinline__ float kt_warp_moments_equal(float& mean, float& m2, float count) {
#pragma unroll
  for (int offset = 1; offset < kWidth; offset <<= 1) {
    const float other_mean = __shfl_xor_sync(0xffffffffu, mean, offset);
    const float other_m2 = __shfl_xor_sync(0xffffffffu, m2, offset);
    const float d = other_mean - mean;
    m2 = (m2 + other_m2) + d * d * (0.5f * count);
    mean = 0.5f * (mean + other_mean);
    count *= 2.0f;
  }
  return count;
}

/// kt_warp_moments_equal over each group of kGroup consecutive threads (power of two), the
/// warps' results joined through `scratch` (at least 2 * blockDim.x / 32 floats). Every thread
/// holds `count` values; all threads of a group get the group's mean and M2. Returns the
/// group's count.
template <int kGroup>
__device__ __forceinline__ float kt_group_moments_equal(float& mean, float& m2, float count,
                                                        float* scratch) {
  count = kt_warp_moments_equal<(kGroup < 32 ? kGroup : 32)>(mean, m2, count);
  if (kGroup > 32) {
    constexpr int kWarpsPerGroup = kGroup / 32;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    __syncthreads();  // the previous use of scratch is finished
    if (lane == 0) {
      scratch[warp] = mean;
      scratch[warps + warp] = m2;
    }
    __syncthreads();
    // Every aligned segment of kWarpsPerGroup lanes reads the group's warps in the same
    // order, so every lane ends with the group's result.
    const int src = (warp & ~(kWarpsPerGroup - 1)) + (lane & (kWarpsPerGroup - 1));
    mean = scratch[src];
    m2 = scratch[warps + src];
    count = kt_warp_moments_equal<kWarpsPerGroup>(mean, m2, count);
  }
  return count;
}

/// Reads the float at `local` (a __shared__ address of this kernel) in the shared memory of
/// cluster CTA `rank` (distributed shared memory, sm_90).
__device__ __forceinline__ float kt_cluster_load(const float* local, unsigned int rank) {
  const unsigned int remote = kt_cluster_map(kt_smem_addr(local), rank);
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

/// Sum over the kCluster CTAs of a cluster of v (a value every thread of a CTA holds, e.g. a
/// block reduction's result), through `slot`: a __shared__ float used by this exchange only
/// (it must stay untouched, and the CTA alive, until every CTA has read it: end the kernel
/// with kt_cluster_sync()). Every CTA adds in rank order, so all get the same bits.
template <int kCluster>
__device__ __forceinline__ float kt_cluster_sum(float v, float* slot) {
  if (threadIdx.x == 0) *slot = v;
  kt_cluster_sync();
  float total = 0.0f;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) total += kt_cluster_load(slot, (unsigned int)r);
  return total;
}

/// Sums (or gathers) over the kCluster CTAs of a cluster, repeatedly, without cluster
/// barriers: each CTA sends its kWidth values to every CTA with st.async (completing bytes on
/// the receiver's mbarrier) and waits on its own mbarrier. A cluster barrier with release
/// semantics compiles to a GPU-scope memory barrier (it waits for the thread's outstanding
/// loads and stores, e.g. a prefetched next row) and invalidates L1; this exchange does
/// neither. Exchanges alternate between two buffers and two mbarriers: a CTA starts exchange
/// j + 2 only after every CTA sent exchange j + 1, which each does after reading exchange j,
/// so no buffer is overwritten early. Declare it __shared__, call init() once (every thread,
/// uniform control flow: it ends with a relaxed cluster barrier, which waits for no memory
/// operation in flight) before the first exchange, then sum() / gather() in the same order on
/// every CTA. A CTA may leave after its last exchange: nothing reads its shared memory remotely
/// and every byte sent to it has arrived.
template <int kCluster, int kWidth = 1>
struct KtClusterExchange {
  float buf[2][kCluster][kWidth];
  unsigned long long bar[2];

  /// Initializes both mbarriers (one arrival per phase) and makes them visible to the cluster
  /// (the init fence releases them; the cluster barrier after it is relaxed: a release one
  /// compiles to a GPU-scope memory barrier that every CTA waited out at its start, 3.6 % of
  /// LayerNorm [4096, 65536]'s warp samples in session 6).
  __device__ __forceinline__ void init() {
    if (threadIdx.x == 0) {
      kt_mbar_init(&bar[0], 1);
      kt_mbar_init(&bar[1], 1);
      kt_mbar_init_fence();
    }
    kt_cluster_sync_relaxed();
  }

  /// Sends this CTA's values v (the same on every thread of a CTA) to every CTA and waits for
  /// everyone's: returns the buffer where row r holds CTA r's values (valid until exchange
  /// j + 2). `j` counts this thread's exchanges.
  __device__ __forceinline__ const float (*gather(const float (&v)[kWidth],
                                                  unsigned int j))[kWidth] {
    const unsigned int p = j & 1u, parity = (j >> 1) & 1u;
    const unsigned int my_bar = kt_smem_addr(&bar[p]);
    if (threadIdx.x == 0) {
      kt_mbar_arrive_expect(my_bar, (unsigned int)(kCluster * kWidth * 4));
      const unsigned int rank = kt_cluster_rank();
      const unsigned int slot = kt_smem_addr(&buf[p][rank][0]);
#pragma unroll
      for (int r = 0; r < kCluster; ++r)
#pragma unroll
        for (int w = 0; w < kWidth; ++w)
          asm volatile(
              "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];"
              ::"r"(kt_cluster_map(slot + 4u * w, (unsigned int)r)), "f"(v[w]),
                "r"(kt_cluster_map(my_bar, (unsigned int)r))
              : "memory");
    }
    kt_mbar_wait<false, true>(my_bar, parity);  // the bytes come from the cluster's CTAs
    return buf[p];
  }

  /// Sum of v over the cluster's CTAs (v: the same on every thread of a CTA), added in rank
  /// order on every CTA (the same bits everywhere). `j` counts this thread's exchanges.
  __device__ __forceinline__ float sum(float v, unsigned int j) {
    static_assert(kWidth == 1, "sum() exchanges one value per CTA");
    const float one[1] = {v};
    const float(*all)[kWidth] = gather(one, j);
    float total = 0.0f;
#pragma unroll
    for (int r = 0; r < kCluster; ++r) total += all[r][0];
    return total;
  }
};

#endif  // KTUNE_COMMON_REDUCE_CUH
