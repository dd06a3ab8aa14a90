// Keeps one candidate's L2 eviction priorities out of the next one's timing. A kernel may mark
// the lines it touches evict_last (prefetch.global.L2::evict_last, loads under a createpolicy
// evict_last policy, a persisting access-policy window); such lines outlive the kernel, are
// evicted only after every normal line, so neither a flush by memset nor streaming the
// buffers evicts them, and a later kernel reading the same buffers hits them (measured on an
// H200: a norm timed 5 points of the copy bandwidth faster after a candidate that prefetched
// its input evict_last, benchmarks/results/2026-12-01-h200/session12). The worker's timing
// runs this reset before each candidate's timed runs and inside every L2 flush: lines of the
// given buffers go back to normal priority (applypriority.global.L2::evict_normal, one
// request per 128-byte line), and persisting lines context-wide to normal status
// (cudaCtxResetPersistingL2Cache); both leave the data where it is, so they never change a
// buffer's contents.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "worker_kernels.h"

namespace ktune::detail {
class CudaModule;
}

namespace ktune::worker {

/// The CUDA source of the demotion kernel (exposed for the NVRTC compile test).
const std::string& l2_priority_reset_source();

/// The demotion kernel loaded on the current device.
class L2PriorityReset {
 public:
  /// Compiles the kernel for `arch` ("sm_80" or later: applypriority needs sm_80) and loads
  /// it; throws Error(unsupported) for older architectures, Error(internal / cuda_error) when
  /// compiling or loading fails.
  explicit L2PriorityReset(const std::string& arch);
  ~L2PriorityReset();
  L2PriorityReset(const L2PriorityReset&) = delete;
  L2PriorityReset& operator=(const L2PriorityReset&) = delete;

  /// Enqueues on `stream` the demotion of every line of `buffers` to normal priority.
  cudaError_t demote(const std::vector<DeviceBufferRef>& buffers, cudaStream_t stream);
  /// demote(), then (after waiting for `stream`) cudaCtxResetPersistingL2Cache, whose refusal
  /// (unsupported in this context) is ignored.
  cudaError_t reset(const std::vector<DeviceBufferRef>& buffers, cudaStream_t stream);

 private:
  std::unique_ptr<detail::CudaModule> module_;
  unsigned blocks_ = 1024;
};

}  // namespace ktune::worker
