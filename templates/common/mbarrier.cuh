// Shared-memory mbarriers and bulk asynchronous copies (sm_90): the pieces templates use to
// keep loads in flight without registers (cp.async.bulk global -> shared, completing bytes on
// an mbarrier) and to exchange values across a cluster (reduce.cuh).
#ifndef KTUNE_COMMON_MBARRIER_CUH
#define KTUNE_COMMON_MBARRIER_CUH

/// Shared-memory address of p (32 bits, as mbarrier, mapa and bulk copies take it).
__device__ __forceinline__ unsigned int kt_smem_addr(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (unsigned int)a;
}

/// Initializes the mbarrier at shared address `bar` for `count` arrivals per phase (one thread).
__device__ __forceinline__ void kt_mbar_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/// Initializes the mbarrier at `bar` for `count` arrivals per phase (one thread).
__device__ __forceinline__ void kt_mbar_init(unsigned long long* bar, unsigned int count) {
  kt_mbar_init(kt_smem_addr(bar), count);
}

/// One arrival (release, CTA scope) on the mbarrier at shared address `bar`.
__device__ __forceinline__ void kt_mbar_arrive(unsigned int bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar)
               : "memory");
}

/// Makes mbarrier initializations visible to the cluster and the async proxy (after the inits,
/// before a barrier that publishes them).
__device__ __forceinline__ void kt_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Arrives on the mbarrier at shared address `bar`, announcing `bytes` of transactions.
__device__ __forceinline__ void kt_mbar_arrive_expect(unsigned int bar, unsigned int bytes) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state) : "r"(bar), "r"(bytes) : "memory");
  (void)state;
}

/// Waits until the phase of parity `parity` of the mbarrier at shared address `bar` completed,
/// with acquire semantics at CTA scope (kCluster false: the phase completes by this CTA's
/// arrivals and bulk copies) or, kCluster true, for the shared memory written by other CTAs of
/// the cluster with st.async (their completion releases those bytes at cluster scope): a
/// relaxed cluster-scope wait, then an acquire fence restricted to shared::cluster. A plain
/// cluster-scope acquire would also order global memory, which costs an L1 invalidation after
/// every wait (session 7: a ring LayerNorm re-reading gamma / beta through L1 fell from 91 to
/// 78 % of the copy bandwidth); the restricted fence compiles to no instruction. kTrapOnHang: a
/// wait that never ends would hang the device, so after about 2^28 polls (far beyond any
/// legitimate wait) the kernel traps, which the runner reports as a launch error.
template <bool kTrapOnHang = false, bool kCluster = false>
__device__ __forceinline__ void kt_mbar_wait(unsigned int bar, unsigned int parity) {
  unsigned int done = 0;
  for (unsigned int polls = 0; !done; ++polls) {
    if constexpr (kCluster)
      asm volatile(
          "{\n\t.reg .pred P;\n\t"
          "mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 P, [%1], %2;\n\t"
          "selp.u32 %0, 1, 0, P;\n\t}"
          : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    else
      asm volatile(
          "{\n\t.reg .pred P;\n\t"
          "mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n\t"
          "selp.u32 %0, 1, 0, P;\n\t}"
          : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    if (kTrapOnHang && polls > (1u << 28)) __trap();
  }
  if constexpr (kCluster)
    asm volatile("fence.acquire.sync_restrict::shared::cluster.cluster;" ::: "memory");
}

/// Orders this thread's earlier generic-proxy accesses to shared memory before later
/// async-proxy accesses (bulk copies) to it: e.g. reads of a ring stage before the bulk copy
/// that refills it. Every thread that read the stage runs it before the barrier after which
/// one thread issues the copy.
__device__ __forceinline__ void kt_fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// One thread: copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global
/// `src` to shared `dst` with one bulk asynchronous copy whose completion the mbarrier `bar`
/// counts (its arrival with the expected bytes included).
__device__ __forceinline__ void kt_bulk_load(void* dst, const void* src, unsigned int bytes,
                                             unsigned long long* bar) {
  const unsigned int b = kt_smem_addr(bar);
  kt_mbar_arrive_expect(b, bytes);
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      ::"r"(kt_smem_addr(dst)), "l"(src), "r"(bytes), "r"(b)
      : "memory");
}

#endif  // KTUNE_COMMON_MBARRIER_CUH
