// Device copies of a gemm workload's host buffers for the [gpu] gemm tests: the workload's
// buffers uploaded in order, the launch plan's scratch buffers after them (poisoned with 0xff,
// a NaN in fp32), and a buffer read back into a host buffer of the same spec.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda_module.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"

namespace ktune::gemm_test {

/// Device buffers in launch-plan order: workload buffers, then plan scratch.
struct DeviceCopies {
  std::vector<detail::DeviceMemory> memory;   ///< the allocations (owned)
  std::vector<detail::DeviceBuffer> buffers;  ///< what run_launch_plan indexes
};

/// Uploads `host` and allocates (and poisons) `scratch` after it; throws Error on CUDA errors.
inline DeviceCopies upload(const std::vector<HostBuffer>& host,
                           const std::vector<BufferSpec>& scratch = {}) {
  DeviceCopies d;
  d.memory.reserve(host.size() + scratch.size());
  for (const auto& b : host) {
    d.memory.emplace_back(b.bytes.size());
    d.buffers.push_back({d.memory.back().get(), b.bytes.size()});
    detail::check_cuda(cudaMemcpy(d.memory.back().get(), b.bytes.data(), b.bytes.size(),
                                  cudaMemcpyHostToDevice),
                       "upload " + b.spec.name);
  }
  for (const auto& s : scratch) {
    const std::size_t bytes = s.elements * dtype_size(s.dtype);
    d.memory.emplace_back(bytes);
    d.buffers.push_back({d.memory.back().get(), bytes});
    detail::check_cuda(cudaMemset(d.memory.back().get(), 0xff, bytes), "poison " + s.name);
  }
  return d;
}

/// Buffer `index` read back into a host buffer shaped like `like`.
inline HostBuffer download(const DeviceCopies& d, std::size_t index, const HostBuffer& like) {
  HostBuffer got{like.spec, std::vector<std::uint8_t>(like.bytes.size())};
  detail::check_cuda(cudaMemcpy(got.bytes.data(), d.buffers.at(index).ptr, got.bytes.size(),
                                cudaMemcpyDeviceToHost),
                     "download " + like.spec.name);
  return got;
}

}  // namespace ktune::gemm_test
