// [gpu] The copy template end to end on the real device: NVRTC for the device's arch, load
// with cudaLibraryLoadData, run the launch plan on random input with the output poisoned
// (NaN), and check every element against the CPU reference, for several configs, f32 and
// f16, odd sizes, and a size that makes the grid-stride loop iterate.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "builtin_templates.h"
#include "cuda_module.h"
#include "gpu_guard.h"
#include "ktune/build.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"

using namespace ktune;
using detail::check_cuda;

namespace {

struct CopyCase {
  std::int64_t n;
  const char* dtype;
  std::map<std::string, Value> config;
};

/// Number of elements whose device result is outside tolerance (NaN counts as outside);
/// the first few are described in `first_bad`.
std::size_t count_mismatches(const HostBuffer& got, const HostBuffer& want, const Tolerance& t,
                             std::string& first_bad) {
  std::size_t bad = 0;
  const std::size_t n = want.spec.elements;
  auto report = [&](std::size_t i, double g, double w) {
    if (bad++ < 5)
      first_bad += "[" + std::to_string(i) + "] got " + std::to_string(g) + " want " +
                   std::to_string(w) + "; ";
  };
  if (want.spec.dtype == DType::f16) {
    // Compare binary16 encodings: same sign, at most one unit in the last place apart, no NaN.
    for (std::size_t i = 0; i < n; ++i) {
      const int g = got.as<std::uint16_t>()[i], w = want.as<std::uint16_t>()[i];
      const bool nan = (g & 0x7c00) == 0x7c00 && (g & 0x3ff) != 0;
      if (nan || (g & 0x8000) != (w & 0x8000) || std::abs((g & 0x7fff) - (w & 0x7fff)) > 1)
        report(i, g, w);
    }
    return bad;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got.as<float>()[i], w = want.as<float>()[i];
    if (!(std::fabs(g - w) <= t.max_abs + t.rel_elem * std::fabs(w))) report(i, g, w);
  }
  return bad;
}

/// Device 0 made current, its description, the copy template and a builder.
struct GpuCopy {
  Device device;
  std::shared_ptr<KernelTemplate> copy = make_copy_template();
  Builder builder;
  GpuCopy() {
    check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
    device = query_device(0);
  }
};

}  // namespace

TEST_CASE("copy runs correctly on the GPU for several configs and odd sizes", "[gpu][copy]") {
  KTUNE_REQUIRE_GPU();
  GpuCopy gpu;
  auto& [device, copy, builder] = gpu;
  const std::vector<CopyCase> cases = {
      {1000003, "f32", {{"VEC", 4}, {"THREADS", 256}, {"ITEMS", 1}, {"GRID_STRIDE", 0}}},
      {1000003, "f32", {{"VEC", 4}, {"THREADS", 1024}, {"ITEMS", 8}, {"GRID_STRIDE", 1}}},
      {4097, "f32", {{"VEC", 1}, {"THREADS", 64}, {"ITEMS", 2}, {"GRID_STRIDE", 0}}},
      {3, "f32", {{"VEC", 2}, {"THREADS", 128}, {"ITEMS", 4}, {"GRID_STRIDE", 1}}},
      {std::int64_t{1} << 24, "f32", {{"VEC", 4}, {"THREADS", 256}, {"ITEMS", 1}, {"GRID_STRIDE", 1}}},
      {1000003, "f16", {{"VEC", 4}, {"THREADS", 256}, {"ITEMS", 2}, {"GRID_STRIDE", 0}}},
      {777, "f16", {{"VEC", 2}, {"THREADS", 512}, {"ITEMS", 1}, {"GRID_STRIDE", 1}}},
  };
  for (const auto& c : cases) {
    Problem problem = make_problem(*copy, std::to_string(c.n), {{"dtype", c.dtype}});
    SearchSpace space = copy->space(problem, device);
    Config config = space.make(c.config);
    INFO(problem.key() << " " << config.str());
    REQUIRE(space.valid(config));
    REQUIRE(copy->can_implement(problem, config));

    BuildResult built = builder.build(*copy, problem, config, device);
    INFO(built.log);
    REQUIRE(built.ok);
    CHECK(built.arch == device.arch());
    detail::CudaModule module(*built.cubin);
    CHECK(module.attributes("ktune_copy").numRegs == built.resources.registers);

    auto workload = copy->workload(problem);
    std::vector<HostBuffer> host;
    for (const auto& spec : workload->buffers())
      host.push_back(HostBuffer{spec, std::vector<std::uint8_t>(spec.elements * dtype_size(spec.dtype))});
    std::random_device fresh;  // fresh inputs every run, printed on a failure
    const std::uint64_t seed = (std::uint64_t{fresh()} << 32) | fresh();
    INFO("input seed " << seed);
    workload->fill(host, seed);
    std::vector<HostBuffer> expected = host;
    workload->reference(expected);

    std::vector<detail::DeviceMemory> memory;
    std::vector<detail::DeviceBuffer> buffers;
    for (const auto& b : host) {
      memory.emplace_back(b.bytes.size());
      buffers.push_back({memory.back().get(), b.bytes.size()});
      if (b.spec.role == Role::output)  // poison: all-ones bytes are NaN in f32 and f16
        check_cuda(cudaMemset(memory.back().get(), 0xff, b.bytes.size()), "poison");
      else
        check_cuda(cudaMemcpy(memory.back().get(), b.bytes.data(), b.bytes.size(),
                              cudaMemcpyHostToDevice), "upload");
    }
    LaunchPlan plan = copy->launch(problem, config, device);
    REQUIRE(plan.scratch.empty());
    detail::CudaStatus status = detail::run_launch_plan(module, plan, buffers, nullptr);
    INFO(status.message);
    REQUIRE(status.ok());
    check_cuda(cudaDeviceSynchronize(), "copy kernel");

    for (std::size_t i = 0; i < host.size(); ++i) {
      HostBuffer got{host[i].spec, std::vector<std::uint8_t>(host[i].bytes.size())};
      check_cuda(cudaMemcpy(got.bytes.data(), buffers[i].ptr, got.bytes.size(),
                            cudaMemcpyDeviceToHost), "download");
      if (host[i].spec.role == Role::input) {
        CHECK(got.bytes == host[i].bytes);  // inputs untouched
        continue;
      }
      std::string first_bad;
      std::size_t bad =
          count_mismatches(got, expected[i], workload->tolerance(host[i].spec), first_bad);
      INFO(first_bad);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("CudaModule reports a missing kernel entry with the CUDA error", "[gpu][copy]") {
  KTUNE_REQUIRE_GPU();
  GpuCopy gpu;
  auto& [device, copy, builder] = gpu;
  Problem problem = copy->example_problem();
  BuildResult built =
      builder.build(*copy, problem, copy->space(problem, device).default_config(), device);
  REQUIRE(built.ok);
  detail::CudaModule module(*built.cubin);
  CHECK_THROWS_WITH(module.kernel("no_such_kernel"), Catch::Contains("no_such_kernel"));
  detail::CudaStatus status =
      module.launch("no_such_kernel", dim3(1), dim3(1), 0, nullptr, nullptr);
  CHECK_FALSE(status.ok());
  CHECK(status.message.find("no_such_kernel") != std::string::npos);
}
