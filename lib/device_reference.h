// Compiling and checking a workload's GPU reference (Workload::device_reference): the one
// place that turns a DeviceReference into a cubin, used by the worker (which runs it once per
// seed) and by the tests that prove every template's reference compiles.
#pragma once

#include <string>

#include "ktune/template.h"
#include "nvrtc_compile.h"

namespace ktune::detail {

/// Compiles `ref.source` with its options for `arch` (e.g. "sm_90"), C++20, the CUDA headers and
/// the embedded template headers ("common/dtype.cuh", ...) available. Compiler failures come
/// back as ok = false with the log.
NvrtcOutput compile_device_reference(const DeviceReference& ref, const std::string& arch);

/// Throws Error(invalid_argument) naming the step when the reference's plan refers to a buffer
/// index beyond the workload's `workload_buffers` plus its own scratch, has no kernel step, or
/// leaves one of `outputs` (indices of output/inout buffers) unwritten by any kernel argument.
void check_device_reference_plan(const DeviceReference& ref, std::size_t workload_buffers,
                                 const std::vector<std::size_t>& outputs);

}  // namespace ktune::detail
