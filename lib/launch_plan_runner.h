// Internal: executes a template's LaunchPlan on a stream: packs each step's KernelArgs into
// properly typed parameter storage, resolves buffer arguments to device pointers, and issues
// the kernel launches and memsets in order.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_module.h"
#include "ktune/template.h"

namespace ktune::detail {

/// A device buffer as kernels receive it (offsets already applied).
struct DeviceBuffer {
  void* ptr = nullptr;    ///< what the kernel gets
  std::size_t bytes = 0;  ///< bytes usable from ptr (memset size)
};

/// Kernel parameters in typed storage (one 8-byte slot each) plus the pointer array that
/// cudaLaunchKernel reads. Throws Error(invalid_argument) for a buffer index out of range or
/// an i32 value that does not fit.
class PackedArgs {
 public:
  /// Packs `args`, resolving buffer arguments through `buffers`.
  PackedArgs(const std::vector<KernelArg>& args, const std::vector<DeviceBuffer>& buffers);
  PackedArgs(const PackedArgs&) = delete;
  PackedArgs& operator=(const PackedArgs&) = delete;
  /// The void* array for cudaLaunchKernel (nullptr when there are no arguments).
  void** data() { return pointers_.empty() ? nullptr : pointers_.data(); }
  /// Number of parameters.
  std::size_t size() const { return pointers_.size(); }

 private:
  std::vector<std::uint64_t> slots_;  // 8-byte aligned storage, one slot per parameter
  std::vector<void*> pointers_;       // pointers into slots_
};

/// Runs every step of `plan` on `stream` with `buffers` = workload buffers followed by the
/// plan's scratch buffers. Stops at the first failing step and returns its status (launches
/// are asynchronous: faults inside kernels surface at the next synchronization). Throws
/// Error(invalid_argument) when a step names a buffer that does not exist.
CudaStatus run_launch_plan(CudaModule& module, const LaunchPlan& plan,
                           const std::vector<DeviceBuffer>& buffers, cudaStream_t stream);

}  // namespace ktune::detail
