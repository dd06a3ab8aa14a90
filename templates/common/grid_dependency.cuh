// Programmatic dependent launch for the kernel templates: a kernel that calls
// kt_grid_dependency_wait() before its first global memory access may be launched with
// programmatic stream serialization (its LaunchStep says so with grid_dependency_wait), which
// lets its blocks be scheduled while the previous kernel in the stream drains.
#ifndef KTUNE_COMMON_GRID_DEPENDENCY_CUH
#define KTUNE_COMMON_GRID_DEPENDENCY_CUH

/// Waits until the grids this one depends on have completed and their memory operations are
/// visible (griddepcontrol.wait, sm_90 and later). For a kernel launched without programmatic
/// stream serialization there is nothing to wait for and it returns at once.
__device__ __forceinline__ void kt_grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#endif  // KTUNE_COMMON_GRID_DEPENDENCY_CUH
