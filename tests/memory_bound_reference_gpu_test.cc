// [gpu] The GPU references of the memory-bound families against their double-precision host
// references on mid-sized shapes just above the reference-cost threshold: filled inputs, outputs
// poisoned, reference plan run, every output within the workload's tolerance (and inputs
// unchanged).
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include "cuda_module.h"
#include "gpu_guard.h"
#include "host_dtype.h"
#include "ktune/device.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"
#include "device_reference.h"
#include "verify.h"

using namespace ktune;
using detail::check_cuda;

namespace {

/// Runs `ref` on GPU 0 over `host` (inputs uploaded, outputs poisoned) and returns the buffers
/// as the device left them.
std::vector<HostBuffer> run_device_reference(const DeviceReference& ref,
                                             const std::vector<HostBuffer>& host) {
  const auto built = detail::compile_device_reference(ref, query_device(0).arch());
  INFO(built.log);
  REQUIRE(built.ok);
  detail::CudaModule module(built.cubin);
  std::vector<detail::DeviceMemory> memory;
  std::vector<detail::DeviceBuffer> buffers;
  memory.reserve(host.size() + ref.plan.scratch.size());
  for (const HostBuffer& b : host) {
    memory.emplace_back(b.bytes.size());
    buffers.push_back({memory.back().get(), b.bytes.size()});
    if (b.spec.role == Role::output)
      check_cuda(cudaMemset(memory.back().get(), 0xff, b.bytes.size()), "poison " + b.spec.name);
    else
      check_cuda(cudaMemcpy(memory.back().get(), b.bytes.data(), b.bytes.size(),
                            cudaMemcpyHostToDevice), "upload " + b.spec.name);
  }
  for (const BufferSpec& s : ref.plan.scratch) {
    memory.emplace_back(s.elements * dtype_size(s.dtype));
    buffers.push_back({memory.back().get(), memory.back().bytes()});
  }
  const detail::CudaStatus status = detail::run_launch_plan(module, ref.plan, buffers, nullptr);
  INFO(status.message);
  REQUIRE(status.ok());
  check_cuda(cudaDeviceSynchronize(), "reference kernels");
  std::vector<HostBuffer> got = host;
  for (std::size_t i = 0; i < host.size(); ++i)
    check_cuda(cudaMemcpy(got[i].bytes.data(), buffers[i].ptr, got[i].bytes.size(),
                          cudaMemcpyDeviceToHost), "download " + host[i].spec.name);
  return got;
}

}  // namespace

TEST_CASE("memory-bound device references agree with the host references",
          "[gpu][memory_bound][reference]") {
  KTUNE_REQUIRE_GPU();
  struct Case { const char* tmpl; const char* shape; std::map<std::string, std::string> attrs; };
  const Case cases[] = {
      {"elementwise", "1024x8193", {{"dtype", "f32"}, {"fn", "gelu_tanh"}}},
      {"elementwise", "1000x4999", {{"dtype", "f16"}, {"fn", "bias_gelu_erf"}}},
      {"elementwise", "1x4194309", {{"dtype", "bf16"}, {"fn", "mul"}}},
      {"elementwise", "1x4194309", {{"dtype", "f16"}, {"fn", "silu"}}},
      {"reduction", "1x16777219", {{"dtype", "f32"}, {"fn", "sum"}}},
      {"reduction", "3x5000011", {{"dtype", "f16"}, {"fn", "max"}}},
      {"reduction", "1000x10007", {{"dtype", "bf16"}, {"fn", "mean"}}},
      {"layernorm", "1024x8192", {{"dtype", "f32"}, {"norm", "layernorm"}}},
      {"layernorm", "77x65536", {{"dtype", "f16"}, {"norm", "layernorm"}}},
      {"layernorm", "2000x2500", {{"dtype", "bf16"}, {"norm", "rmsnorm"}}},
  };
  std::uint64_t seed = 700;
  for (const Case& c : cases) {
    const auto t = find_template(c.tmpl);
    const Problem p = make_problem(*t, c.shape, c.attrs);
    INFO(p.key());
    const auto w = t->workload(p);
    const auto ref = w->device_reference();
    REQUIRE(ref);
    std::vector<HostBuffer> host;
    for (const BufferSpec& spec : w->buffers()) host.push_back(make_host_buffer(spec));
    w->fill(host, seed++);
    std::vector<HostBuffer> expected = host;
    w->reference(expected);
    const std::vector<HostBuffer> got = run_device_reference(*ref, host);
    for (std::size_t i = 0; i < host.size(); ++i) {
      INFO(host[i].spec.name);
      if (host[i].spec.role == Role::input) {
        CHECK(got[i].bytes == host[i].bytes);
        continue;
      }
      const verify::Comparison cmp = verify::compare(
          got[i], expected[i], verify::with_element_bound(w->tolerance(host[i].spec), expected[i]));
      INFO(cmp.message << " rel_l2 " << cmp.rel_l2);
      CHECK(cmp.ok);
      // The references differ only in summation order and the last rounding: far inside the
      // tolerance given to candidates.
      CHECK(cmp.rel_l2 <= 0.1 * w->tolerance(host[i].spec).rel_l2 + 1e-12);
    }
  }
}
