// Verification checks that run on the GPU inside the worker, so that a candidate's outputs,
// canaries and inputs are checked where they are instead of being downloaded (a 1 GB output
// took seconds to copy back and compare on the host). Each check writes into a result slot: the
// first offending index and, for comparisons, the sums of squared differences and squared
// reference values. The kernels are compiled once per worker with NVRTC. A slot that reports
// a problem is re-checked on the host, which writes the exact message, so both paths agree.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/template.h"

namespace ktune::detail {
class CudaModule;
}

namespace ktune::worker {

/// What one check found.
struct CheckResult {
  std::optional<std::size_t> first_bad;  ///< first offending element/byte, if any
  double diff2 = 0;                      ///< comparisons: sum of (out - ref)^2 over the elements
  double ref2 = 0;                       ///< comparisons: sum of ref^2
};

/// The CUDA source of the check kernels (exposed for the NVRTC compile test).
const std::string& device_checks_source();

/// Check kernels loaded on the current device, with `slots` result slots in device memory.
class DeviceChecks {
 public:
  /// Compiles the kernels for `arch` (e.g. "sm_90") and loads them; throws Error(cuda_error /
  /// internal) when that fails.
  DeviceChecks(const std::string& arch, int slots);
  ~DeviceChecks();
  DeviceChecks(const DeviceChecks&) = delete;
  DeviceChecks& operator=(const DeviceChecks&) = delete;

  /// Number of result slots.
  int slots() const { return slots_; }
  /// Clears every slot (on `stream`).
  cudaError_t reset(cudaStream_t stream);
  /// Slot `slot` gets the first byte of [data, data + bytes) that differs from `value`.
  cudaError_t bytes_equal_value(const void* data, std::size_t bytes, std::uint8_t value, int slot,
                                cudaStream_t stream);
  /// Slot `slot` gets the first byte where [a, a + bytes) and [b, b + bytes) differ.
  cudaError_t bytes_equal(const void* a, const void* b, std::size_t bytes, int slot,
                          cudaStream_t stream);
  /// Slot `slot` gets the comparison of `elements` values of dtype `t` at `got` with `expected`
  /// under `tol`: the first element that is non-finite where the reference is not, still holds
  /// the poison pattern, or breaks the per-element bound; and the squared-error sums.
  cudaError_t compare(const void* got, const void* expected, DType t, std::size_t elements,
                      const Tolerance& tol, int slot, cudaStream_t stream);
  /// Waits for `stream` and reads the first `count` slots.
  cudaError_t read(int count, cudaStream_t stream, std::vector<CheckResult>& out);

 private:
  cudaError_t launch(const char* entry, std::size_t work, void** args, cudaStream_t stream);
  std::unique_ptr<detail::CudaModule> module_;
  void* slots_mem_ = nullptr;
  int slots_ = 0;
  int blocks_cap_ = 1024;
};

}  // namespace ktune::worker
