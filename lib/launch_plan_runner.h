// Internal: executes a template's LaunchPlan on a stream: checks each step's KernelArgs against
// the parameters its kernel declares, packs them into properly typed parameter storage,
// resolves buffer arguments to device pointers, and issues the kernel launches and memsets in
// order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda_module.h"
#include "ktune/template.h"

namespace ktune::detail {

/// A device buffer as kernels receive it (offsets already applied).
struct DeviceBuffer {
  void* ptr = nullptr;    ///< what the kernel gets
  std::size_t bytes = 0;  ///< bytes usable from ptr (memset size)
};

/// The 8-byte parameter slot of argument `index` (a buffer argument takes `buffer_ptr`).
/// Throws Error(invalid_argument) for an i32 value that does not fit 32 bits.
std::uint64_t argument_slot(const KernelArg& arg, void* buffer_ptr, std::size_t index);

/// Throws Error(invalid_argument) naming the kernel when a kernel step passes a different
/// number of arguments than its kernel declares parameters, or an argument whose size (pointer
/// 8, i32 / f32 4, i64 / f64 8 bytes) differs from its parameter's. Such a launch would hand
/// the kernel garbage (or fault and lose the context); a driver that cannot report the
/// parameters skips the check.
void check_plan_signatures(CudaModule& module, const LaunchPlan& plan);

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

/// Checks the device pointers a caller hands for a template's workload buffers (`specs`, in
/// order): their number and, for each buffer of at least one element, no null pointer and an
/// address that is a multiple of max(`alignment`, the element size), or of the largest power
/// of two dividing the buffer's offset_bytes where that is smaller (the workload was tuned at
/// that offset). Throws Error(invalid_argument) naming `what()` (template and problem; called
/// only on failure), the buffer and what was expected: a wrong pointer would otherwise fault
/// inside the kernel and leave the CUDA context unusable.
void check_caller_buffers(const std::function<std::string()>& what,
                          const std::vector<BufferSpec>& specs, const std::vector<void*>& pointers,
                          std::size_t alignment);

/// Whether `step` is launched with programmatic stream serialization when a launcher allows it
/// (`allowed`) on a device of compute capability `cc_major`.x: only a kernel step marked
/// grid_dependency_wait, and only where the device can (programmatic_launch_supported).
inline bool launched_programmatically(const LaunchStep& step, bool allowed, int cc_major) {
  return allowed && programmatic_launch_supported(cc_major) &&
         step.kind == LaunchStep::Kind::kernel && step.grid_dependency_wait;
}

/// Whether some step of `plan` is launched programmatically (launched_programmatically) when
/// a launcher allows it on a device of compute capability `cc_major`.x: how a trial of the
/// plan is timed, and so which way its configs are ranked (programmatic_form).
inline bool plan_launched_programmatically(const LaunchPlan& plan, bool allowed, int cc_major) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [&](const LaunchStep& step) {
    return launched_programmatically(step, allowed, cc_major);
  });
}

/// Whether a launcher that allows programmatic launch (`allowed`) launches `config` of `tmpl`
/// for `problem` on `device` programmatically (plan_launched_programmatically of the config's
/// plan). A config the template refuses to plan counts as the launcher's setting where the
/// device can (its trials fail, and failures rank either way).
bool config_launched_programmatically(const KernelTemplate& tmpl, const Problem& problem,
                                      const Config& config, const Device& device, bool allowed);

/// Runs every step of `plan` on `stream` with `buffers` = workload buffers followed by the
/// plan's scratch buffers. Stops at the first failing step and returns its status (launches
/// are asynchronous: faults inside kernels surface at the next synchronization). Throws
/// Error(invalid_argument) when a step names a buffer that does not exist. `programmatic`:
/// kernel steps marked grid_dependency_wait are launched with programmatic stream
/// serialization (the others as usual).
CudaStatus run_launch_plan(CudaModule& module, const LaunchPlan& plan,
                           const std::vector<DeviceBuffer>& buffers, cudaStream_t stream,
                           bool programmatic = false);

}  // namespace ktune::detail
