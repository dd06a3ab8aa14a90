// Thread-block cluster pieces (sm_90) shared by the templates: the cluster barrier, the CTA's
// rank and another CTA's copy of a shared-memory address (distributed shared memory).
// reduce.cuh sums values over a cluster with them; gemm_wgmma.cuh's cluster_k_reduce (k-split
// clusters of gemm_wgmma and conv2d_wgmma) reads the other CTAs' partial tiles.
#ifndef KTUNE_COMMON_CLUSTER_CUH
#define KTUNE_COMMON_CLUSTER_CUH

/// Barrier over every thread of the thread-block cluster, ordering shared-memory writes before
/// it with reads of them (local or remote) after it. All threads of the cluster must call it.
__device__ __forceinline__ void kt_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// Barrier over every thread of the cluster that orders no memory operation (a relaxed
/// arrive: no GPU-scope memory barrier, unlike kt_cluster_sync's release). Enough after
/// fence.mbarrier_init.release.cluster, which orders the mbarrier initializations itself.
__device__ __forceinline__ void kt_cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\t"
               "barrier.cluster.wait.aligned;" ::: "memory");
}

/// This CTA's rank in its cluster.
__device__ __forceinline__ unsigned int kt_cluster_rank() {
  unsigned int rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

/// The shared::cluster address of the shared-memory byte `local` (a 32-bit shared address of
/// this kernel) in cluster CTA `rank`.
__device__ __forceinline__ unsigned int kt_cluster_map(unsigned int local, unsigned int rank) {
  unsigned int remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

#endif  // KTUNE_COMMON_CLUSTER_CUH
