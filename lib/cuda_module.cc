// CudaModule and DeviceMemory over the CUDA runtime (statically linked; the driver is loaded
// by the runtime only when present).
#include "cuda_module.h"

#include <utility>

#include "ktune/error.h"
#include "nvrtc_compile.h"

namespace ktune::detail {

namespace {
/// Dynamic shared memory a kernel may use without opting in.
}  // namespace

std::string cuda_error_message(cudaError_t err, const std::string& what) {
  return what + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
}

void check_cuda(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess) throw Error(ErrorCode::cuda_error, cuda_error_message(err, what));
}

CudaModule::CudaModule(const std::vector<char>& cubin) {
  if (cubin.empty()) throw Error(ErrorCode::invalid_argument, "CudaModule: empty cubin");
  check_cuda(cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr,
                                 nullptr, 0),
             "cudaLibraryLoadData (" + std::to_string(cubin.size()) + "-byte cubin)");
  int device = 0, major = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess)
    cc_major_ = major;
}

CudaModule::~CudaModule() {
  if (library_ != nullptr) cudaLibraryUnload(library_);
}

CudaModule::KernelInfo& CudaModule::info(const std::string& entry) {
  auto it = kernels_.find(entry);
  if (it != kernels_.end()) return it->second;
  KernelInfo k;
  check_cuda(cudaLibraryGetKernel(&k.handle, library_, entry.c_str()),
             "cudaLibraryGetKernel(\"" + entry + "\")");
  return kernels_.emplace(entry, k).first->second;
}

cudaKernel_t CudaModule::kernel(const std::string& entry) {
  std::lock_guard lock(mutex_);
  return info(entry).handle;
}

cudaFuncAttributes CudaModule::attributes(const std::string& entry) {
  cudaFuncAttributes attrs{};
  check_cuda(cudaFuncGetAttributes(&attrs, reinterpret_cast<const void*>(kernel(entry))),
             "cudaFuncGetAttributes(\"" + entry + "\")");
  return attrs;
}

std::optional<std::vector<std::size_t>> CudaModule::parameter_sizes(const std::string& entry) {
  std::lock_guard lock(mutex_);
  KernelInfo& k = info(entry);
  if (!k.params_read) {
    k.params_read = true;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0, size = 0;
      const cudaError_t err =
          cudaFuncGetParamInfo(reinterpret_cast<const void*>(k.handle), i, &offset, &size);
      if (err == cudaSuccess) {
        sizes.push_back(size);
        continue;
      }
      cudaGetLastError();  // not sticky: keep it out of later checks
      // Past the last parameter the runtime answers cudaErrorInvalidValue; anything else
      // (a driver without the query) leaves the signature unknown.
      if (err == cudaErrorInvalidValue) k.params = std::move(sizes);
      break;
    }
  }
  return k.params;
}

CudaStatus CudaModule::launch(const std::string& entry, dim3 grid, dim3 block,
                              unsigned dynamic_smem, void** args, cudaStream_t stream,
                              bool programmatic) {
  const void* function = nullptr;
  {
    std::lock_guard lock(mutex_);
    KernelInfo* k = nullptr;
    try {
      k = &info(entry);
    } catch (const Error& e) {
      return CudaStatus{cudaErrorSymbolNotFound, e.what()};
    }
    function = reinterpret_cast<const void*>(k->handle);
    // Raise the limit whenever the request exceeds what was granted so far: static shared
    // memory counts against the default 48 KiB too, so exactly 48 KiB of dynamic memory may
    // already need the opt-in.
    if (dynamic_smem > k->smem_limit) {
      cudaError_t err = cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(dynamic_smem));
      if (err != cudaSuccess)
        return CudaStatus{err, cuda_error_message(
                                   err, "setting " + std::to_string(dynamic_smem) +
                                            " bytes of dynamic shared memory for " + entry)};
      k->smem_limit = dynamic_smem;
    }
  }
  cudaError_t err = cudaSuccess;
  if (programmatic && programmatic_launch_supported(cc_major_)) {
    // The kernel may start while the previous kernel in the stream drains; its
    // griddepcontrol.wait holds it until that kernel completed and its writes are visible.
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = dynamic_smem;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    err = cudaLaunchKernelExC(&config, function, args);
  } else {
    err = cudaLaunchKernel(function, grid, block, args, dynamic_smem, stream);
  }
  if (err == cudaSuccess) return {};
  return CudaStatus{
      err, cuda_error_message(err, std::string(programmatic ? "programmatic launch" : "launch") +
                                       " of " + entry + " (grid " + std::to_string(grid.x) +
                                       "x" + std::to_string(grid.y) + "x" +
                                       std::to_string(grid.z) + ", block " +
                                       std::to_string(block.x) + "x" + std::to_string(block.y) +
                                       "x" + std::to_string(block.z) + ", dynamic smem " +
                                       std::to_string(dynamic_smem) + ")")};
}

DeviceMemory::DeviceMemory(std::size_t bytes) : bytes_(bytes) {
  check_cuda(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes),
             "cudaMalloc(" + std::to_string(bytes) + " bytes)");
}

DeviceMemory::~DeviceMemory() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

std::unique_ptr<CudaModule> load_utility_kernels(const std::string& source,
                                                 const std::string& program_name,
                                                 const std::string& arch, const std::string& what) {
  auto out = nvrtc_compile(source, program_name, {}, {"--gpu-architecture=" + arch});
  if (!out.ok)
    throw Error(ErrorCode::internal, "cannot compile " + what + " for " + arch + ": " + out.log);
  return std::make_unique<CudaModule>(out.cubin);
}

unsigned utility_grid_blocks(unsigned fallback) {
  int sms = 0, device = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess && sms > 0)
    return 8 * static_cast<unsigned>(sms);
  cudaGetLastError();
  return fallback;
}

}  // namespace ktune::detail
