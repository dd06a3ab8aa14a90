// Internal: a compiled cubin loaded into the current CUDA context through the runtime's
// library-management API (cudaLibraryLoadData / cudaLibraryGetKernel / cudaLaunchKernel), so
// nothing links libcuda. Used by the runner, the dispatcher and the GPU tests; also how the
// library compiles and loads its own utility kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ktune::detail {

/// Outcome of an asynchronous CUDA operation: cudaSuccess, or the error with a message that
/// names the step and carries the runtime's error string.
struct CudaStatus {
  cudaError_t error = cudaSuccess;  ///< the runtime's code
  std::string message;              ///< "" on success
  /// True on success.
  bool ok() const { return error == cudaSuccess; }
};

/// Throws Error(cuda_error) "<what> failed: <error name>: <error string>" unless `err` is
/// cudaSuccess.
void check_cuda(cudaError_t err, const std::string& what);
/// "<what> failed: <error name>: <error string>".
std::string cuda_error_message(cudaError_t err, const std::string& what);

/// Whether a device of compute capability `cc_major`.x can launch programmatically: 9.0 and
/// later, where kt_grid_dependency_wait() is griddepcontrol.wait (below, the kernels are compiled
/// without the wait and must be launched as usual).
inline bool programmatic_launch_supported(int cc_major) { return cc_major >= 9; }

/// A loaded cubin and its kernels (by extern "C" name). Thread-safe; unloads on destruction.
class CudaModule {
 public:
  /// Loads the cubin on the current device; throws Error(cuda_error) with the reason (e.g. no
  /// kernel image for this device when the arch does not match).
  explicit CudaModule(const std::vector<char>& cubin);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  /// The kernel handle of an entry; throws Error(cuda_error) naming a missing entry.
  cudaKernel_t kernel(const std::string& entry);
  /// Attributes (registers, static smem, max threads) of an entry on the current device.
  cudaFuncAttributes attributes(const std::string& entry);
  /// The byte size of each parameter the entry declares (cudaFuncGetParamInfo), or nullopt
  /// when the driver cannot tell; throws Error(cuda_error) naming a missing entry.
  std::optional<std::vector<std::size_t>> parameter_sizes(const std::string& entry);
  /// Compute capability major of the device the module was loaded on (0 when unknown).
  int cc_major() const { return cc_major_; }
  /// Launches an entry; raises the dynamic shared memory limit first when it exceeds the
  /// default 48 KiB. `programmatic`: launched with programmatic stream serialization (PDL),
  /// only for a kernel that begins with griddepcontrol.wait (LaunchStep::grid_dependency_wait)
  /// and only where programmatic_launch_supported(cc_major()); elsewhere it is launched as
  /// usual.
  /// Never throws for launch failures: they come back as a status.
  CudaStatus launch(const std::string& entry, dim3 grid, dim3 block, unsigned dynamic_smem,
                    void** args, cudaStream_t stream, bool programmatic = false);

 private:
  struct KernelInfo {
    cudaKernel_t handle = nullptr;
    unsigned smem_limit = 0;  // dynamic shared memory granted so far by the opt-in attribute
    bool params_read = false;                            // parameter sizes looked up
    std::optional<std::vector<std::size_t>> params;      // what the lookup found
  };
  KernelInfo& info(const std::string& entry);  // caller holds mutex_

  cudaLibrary_t library_ = nullptr;
  int cc_major_ = 0;
  std::mutex mutex_;
  std::map<std::string, KernelInfo> kernels_;
};

/// Device memory owned by a scope (cudaMalloc / cudaFree).
class DeviceMemory {
 public:
  /// Allocates `bytes` (at least 1) on the current device; throws Error(cuda_error).
  explicit DeviceMemory(std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  /// The allocation (256-byte aligned).
  void* get() const { return ptr_; }
  /// Its size in bytes.
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// The library's own utility kernels (the worker's verification checks and L2 priority reset):
/// `source` compiled with NVRTC for `arch` and loaded; throws Error(internal) "cannot compile
/// <what> for <arch>: <log>" when it does not compile, Error(cuda_error) when it does not load.
std::unique_ptr<CudaModule> load_utility_kernels(const std::string& source,
                                                 const std::string& program_name,
                                                 const std::string& arch, const std::string& what);

/// Blocks of a grid-stride utility kernel on the current device: 8 per SM (`fallback` when the
/// SM count cannot be read).
unsigned utility_grid_blocks(unsigned fallback);

}  // namespace ktune::detail
