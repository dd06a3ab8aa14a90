// Returning L2 lines to normal eviction priority between candidates (see l2_priority_reset.h).
#include "l2_priority_reset.h"

#include <cstdlib>

#include "cuda_module.h"
#include "ktune/error.h"

namespace ktune::worker {

namespace {
constexpr unsigned kThreads = 256;
constexpr unsigned long long kLine = 128;  // applypriority acts on one 128-byte line
}  // namespace

const std::string& l2_priority_reset_source() {
  static const std::string source = R"CUDA(
extern "C" __global__ void kt_l2_demote(const char* p, unsigned long long bytes) {
  // From the line holding p to the one holding p + bytes - 1.
  const unsigned long long first = (unsigned long long)p & ~127ull;
  const unsigned long long lines = ((unsigned long long)p + bytes - first + 127) / 128;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < lines;
       i += stride)
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(first + i * 128));
}
)CUDA";
  return source;
}

L2PriorityReset::L2PriorityReset(const std::string& arch) {
  const int version = arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
  if (version < 80)
    throw Error(ErrorCode::unsupported,
                "L2 eviction priorities cannot be reset on " + arch + " (applypriority needs sm_80)");
  module_ = detail::load_utility_kernels(l2_priority_reset_source(), "ktune_l2_priority_reset.cu",
                                         arch, "the worker's L2 priority reset");
  blocks_ = detail::utility_grid_blocks(blocks_);
}

L2PriorityReset::~L2PriorityReset() = default;

cudaError_t L2PriorityReset::demote(const std::vector<DeviceBufferRef>& buffers,
                                    cudaStream_t stream) {
  for (const auto& b : buffers) {
    if (b.data == nullptr || b.bytes == 0) continue;
    const void* p = b.data;
    unsigned long long bytes = b.bytes;
    const unsigned long long lines = (bytes + 2 * kLine - 1) / kLine;  // at most one more
    const unsigned long long wanted = (lines + kThreads - 1) / kThreads;
    const dim3 grid(static_cast<unsigned>(wanted < blocks_ ? wanted : blocks_)), block(kThreads);
    void* args[] = {&p, &bytes};
    auto st = module_->launch("kt_l2_demote", grid, block, 0, args, stream);
    if (!st.ok()) return st.error;
  }
  return cudaSuccess;
}

cudaError_t L2PriorityReset::reset(const std::vector<DeviceBufferRef>& buffers,
                                   cudaStream_t stream) {
  if (cudaError_t e = demote(buffers, stream); e != cudaSuccess) return e;
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
  // Not every context supports it (the demotion above already covers the given buffers); a
  // refusal here is not a broken context, which the synchronization above would have shown.
  if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();
  return cudaSuccess;
}

}  // namespace ktune::worker
