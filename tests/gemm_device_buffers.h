// Device copies of a gemm workload's host buffers for the [gpu] gemm tests: the workload's
// buffers uploaded in order, the launch plan's scratch buffers after them (poisoned with 0xff,
// a NaN in fp32), each followed by guard bytes that a write past its end would change, a buffer
// read back into a host buffer of the same spec, and one built config run through its launch
// plan and compared with the expected outputs.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cuda_module.h"
#include "ktune/build.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"
#include "verify.h"

namespace ktune::gemm_test {

/// Guard bytes (verify::kCanaryByte) after every buffer.
constexpr std::size_t kGuardBytes = 4096;

/// Device buffers in launch-plan order: workload buffers, then plan scratch.
struct DeviceCopies {
  std::vector<detail::DeviceMemory> memory;   ///< the allocations, guards included (owned)
  std::vector<detail::DeviceBuffer> buffers;  ///< what run_launch_plan indexes (no guards)
  std::vector<std::string> names;             ///< each buffer's name, for messages
};

/// Allocates `bytes` plus the guard after them, and writes the guard.
inline void allocate_guarded(DeviceCopies& d, std::size_t bytes, const std::string& name) {
  d.memory.emplace_back(bytes + kGuardBytes);
  d.buffers.push_back({d.memory.back().get(), bytes});
  d.names.push_back(name);
  char* guard = static_cast<char*>(d.memory.back().get()) + bytes;
  detail::check_cuda(cudaMemset(guard, verify::kCanaryByte, kGuardBytes), "guard after " + name);
}

/// Uploads `host` and allocates (and poisons) `scratch` after it; throws Error on CUDA errors.
inline DeviceCopies upload(const std::vector<HostBuffer>& host,
                           const std::vector<BufferSpec>& scratch = {}) {
  DeviceCopies d;
  d.memory.reserve(host.size() + scratch.size());
  for (const auto& b : host) {
    allocate_guarded(d, b.bytes.size(), b.spec.name);
    detail::check_cuda(cudaMemcpy(d.buffers.back().ptr, b.bytes.data(), b.bytes.size(),
                                  cudaMemcpyHostToDevice),
                       "upload " + b.spec.name);
  }
  for (const auto& s : scratch) {
    const std::size_t bytes = s.elements * dtype_size(s.dtype);
    allocate_guarded(d, bytes, s.name);
    detail::check_cuda(cudaMemset(d.buffers.back().ptr, 0xff, bytes), "poison " + s.name);
  }
  return d;
}

/// "" when every buffer's guard is intact, else which buffers were written past their end.
inline std::string damaged_guards(const DeviceCopies& d) {
  std::string out;
  std::vector<std::uint8_t> guard(kGuardBytes);
  for (std::size_t i = 0; i < d.buffers.size(); ++i) {
    const char* after = static_cast<const char*>(d.buffers[i].ptr) + d.buffers[i].bytes;
    detail::check_cuda(cudaMemcpy(guard.data(), after, kGuardBytes, cudaMemcpyDeviceToHost),
                       "download the guard after " + d.names[i]);
    if (auto bad = verify::first_bad_canary(guard.data(), guard.size()))
      out += "wrote past the end of " + d.names[i] + " (guard byte " + std::to_string(*bad) + "); ";
  }
  return out;
}

/// Buffer `index` read back into a host buffer shaped like `like`.
inline HostBuffer download(const DeviceCopies& d, std::size_t index, const HostBuffer& like) {
  HostBuffer got{like.spec, std::vector<std::uint8_t>(like.bytes.size())};
  detail::check_cuda(cudaMemcpy(got.bytes.data(), d.buffers.at(index).ptr, got.bytes.size(),
                                cudaMemcpyDeviceToHost),
                     "download " + like.spec.name);
  return got;
}

/// Runs one built config through its launch plan on fresh device copies of `host` and returns
/// a failure description ("" when every output is within the workload's tolerance of
/// `expected` and every input came back unchanged).
inline std::string run_and_compare(const KernelTemplate& tmpl, const Problem& problem,
                                   const Config& config, const Device& device,
                                   const BuildResult& built, const std::vector<HostBuffer>& host,
                                   const std::vector<HostBuffer>& expected,
                                   const Workload& workload) {
  if (!built.ok) return "compile failed:\n" + built.log;
  detail::CudaModule module(*built.cubin);
  LaunchPlan plan = tmpl.launch(problem, config, device);
  const DeviceCopies copies = upload(host, plan.scratch);
  detail::CudaStatus status = detail::run_launch_plan(module, plan, copies.buffers, nullptr);
  if (!status.ok()) return "launch: " + status.message;
  if (cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess)
    return detail::cuda_error_message(err, "kernel");
  std::string failure = damaged_guards(copies);
  for (std::size_t i = 0; i < host.size(); ++i) {
    const HostBuffer got = download(copies, i, host[i]);
    if (host[i].spec.role == Role::input) {
      if (got.bytes != host[i].bytes) failure += "input " + host[i].spec.name + " changed; ";
      continue;
    }
    verify::Comparison cmp = verify::compare(
        got, expected[i], verify::with_element_bound(workload.tolerance(host[i].spec), expected[i]));
    if (!cmp.ok) failure += cmp.message + " (rel_l2 " + std::to_string(cmp.rel_l2) + "); ";
  }
  return failure;
}

}  // namespace ktune::gemm_test
