// The GPU reference of the gemm workloads (templates/gemm/gemm_reference.cu/.cc): when the
// workload offers it (above kDeviceReferenceMinCost multiply-adds), that its source compiles
// with NVRTC for sm_90 with no include path for every dtype, output type, layout and bias,
// and that its plan launches the compiled entry over valid workload buffers with a grid that
// covers C; on a GPU ([gpu]), that it agrees with the double-precision host reference.
#include <catch2/catch.hpp>

#include "builtin_templates.h"
#include "cuda_module.h"
#include "gemm_device_buffers.h"
#include "gpu_guard.h"
#include "host_dtype.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"
#include "device_reference.h"
#include "nvrtc_compile.h"
#include "templates/gemm/gemm_problem.h"
#include "verify.h"

using namespace ktune;
using detail::check_cuda;

namespace {

/// A gemm problem of the template serving `dtype` (gemm_simt for f32, gemm_mma otherwise).
Problem gemm_problem(const std::string& shape, const std::string& dtype,
                     const std::string& layout, const std::string& out, const std::string& bias) {
  static auto simt = make_gemm_simt_template();
  static auto mma = make_gemm_mma_template();
  const KernelTemplate& tmpl = dtype == "f32" ? *simt : *mma;
  return make_problem(tmpl, shape,
                      {{"dtype", dtype}, {"layout", layout}, {"out", out}, {"bias", bias}});
}

/// NVRTC options of a device reference for `arch`.
std::vector<std::string> reference_options(const DeviceReference& ref, const std::string& arch) {
  std::vector<std::string> options = ref.options;
  options.push_back("--gpu-architecture=" + arch);
  options.push_back("-std=c++20");
  options.push_back("--ptxas-options=-v");
  return options;
}

/// Problems covering every dtype, output type, layout and bias (one variant each at least).
std::vector<Problem> reference_variants(const std::string& shape) {
  return {gemm_problem(shape, "f16", "NN", "same", "0"),
          gemm_problem(shape, "f16", "NT", "f32", "1"),
          gemm_problem(shape, "f16", "TN", "same", "1"),
          gemm_problem(shape, "bf16", "TT", "same", "0"),
          gemm_problem(shape, "bf16", "NT", "f32", "1"),
          gemm_problem(shape, "f32", "TN", "same", "1"),
          gemm_problem(shape, "tf32", "NT", "same", "0")};
}

}  // namespace

TEST_CASE("gemm device reference: offered above the cost threshold, plan over valid buffers",
          "[gemm]") {
  const Problem small = gemm_problem("1000x1000x1000", "f16", "NT", "same", "0");
  auto simt = make_gemm_simt_template();
  auto mma = make_gemm_mma_template();
  CHECK_FALSE(mma->workload(small)->device_reference().has_value());

  for (const Problem& p : reference_variants("4097x1025x4093")) {
    INFO(p.key());
    const KernelTemplate& tmpl = p.attr("dtype") == "f32" ? *simt : *mma;
    auto workload = tmpl.workload(p);
    REQUIRE(workload->reference_cost() > gemm::kDeviceReferenceMinCost);
    const std::optional<DeviceReference> ref = workload->device_reference();
    REQUIRE(ref.has_value());
    CHECK(ref->source.find("gemm_reference") != std::string::npos);
    CHECK(ref->plan.scratch.empty());
    REQUIRE(ref->plan.steps.size() == 1);
    const LaunchStep& step = ref->plan.steps[0];
    CHECK(step.kind == LaunchStep::Kind::kernel);
    CHECK(step.entry == "gemm_reference");
    CHECK(step.grid[0] == 65u * 17u);  // ceil(4097 / 64) x ceil(1025 / 64) tiles of 64 x 64
    CHECK(step.block[0] == 256u);
    CHECK(step.dynamic_smem == 0u);
    const std::vector<BufferSpec> buffers = workload->buffers();
    REQUIRE(step.args.size() == 9);
    for (int i = 0; i < 4; ++i) {
      REQUIRE(step.args[i].kind == KernelArg::Kind::buffer);
      REQUIRE(step.args[i].buffer < buffers.size());
    }
    CHECK(buffers[step.args[0].buffer].name == "A");
    CHECK(buffers[step.args[1].buffer].name == "B");
    CHECK(buffers[step.args[2].buffer].name == "C");
    CHECK(buffers[step.args[2].buffer].role == Role::inout);
    CHECK(buffers[step.args[3].buffer].name == (p.attr("bias") == "1" ? "bias" : "C"));
    CHECK(step.args[4].i == 4097);
    CHECK(step.args[5].i == 1025);
    CHECK(step.args[6].i == 4093);
    CHECK(step.args[7].kind == KernelArg::Kind::f64);
    CHECK(step.args[7].f == gemm::kAlpha);
    CHECK(step.args[8].f == gemm::kBeta);
  }
}

TEST_CASE("gemm device reference compiles for sm_90 without include paths, every variant",
          "[gemm][nvrtc]") {
  for (const Problem& p : reference_variants("4096x4096x4096")) {
    INFO(p.key());
    const gemm::GemmShape s = gemm::gemm_shape(p);
    const DeviceReference ref = gemm::make_device_reference(s);
    detail::NvrtcOutput out =
        detail::nvrtc_compile(ref.source, "gemm_reference.cu", {}, reference_options(ref, "sm_90"));
    INFO(out.log);
    REQUIRE(out.ok);
    CHECK_FALSE(out.cubin.empty());
    CHECK(out.log.find("gemm_reference") != std::string::npos);  // ptxas names the entry
    CHECK(out.log.find("spill") != std::string::npos);
    CHECK(out.log.find(" 0 bytes spill stores") != std::string::npos);
  }
}

TEST_CASE("gemm device reference agrees with the fp64 host reference", "[gpu][gemm]") {
  KTUNE_REQUIRE_GPU();
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  const Device device = query_device(0);
  std::vector<Problem> problems = reference_variants("300x257x1000");
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    problems.push_back(gemm_problem("65x63x17", "f16", layout, "same", "1"));
    problems.push_back(gemm_problem("1x1x1", "f32", layout, "same", "0"));
  }
  std::uint64_t seed = 5;
  for (const Problem& p : problems) {
    INFO(p.key());
    const gemm::GemmShape s = gemm::gemm_shape(p);
    std::unique_ptr<Workload> workload = gemm::make_gemm_workload(s);
    std::vector<HostBuffer> host;
    for (const auto& spec : workload->buffers()) host.push_back(make_host_buffer(spec));
    workload->fill(host, ++seed);
    std::vector<HostBuffer> expected = host;
    workload->reference(expected);

    const DeviceReference ref = gemm::make_device_reference(s);
    detail::NvrtcOutput built = detail::compile_device_reference(ref, device.arch());
    INFO(built.log);
    REQUIRE(built.ok);
    detail::CudaModule module(built.cubin);
    const gemm_test::DeviceCopies copies = gemm_test::upload(host);
    const detail::CudaStatus status =
        detail::run_launch_plan(module, ref.plan, copies.buffers, nullptr);
    REQUIRE(status.ok());
    check_cuda(cudaDeviceSynchronize(), "gemm_reference");
    CHECK(gemm_test::damaged_guards(copies).empty());
    {  // the guard check itself: one byte written past C's end is named
      char* past_c = static_cast<char*>(copies.buffers[2].ptr) + copies.buffers[2].bytes;
      check_cuda(cudaMemset(past_c + 7, 0, 1), "damage C's guard");
      CHECK_THAT(gemm_test::damaged_guards(copies),
                 Catch::Contains(host[2].spec.name + " (guard byte 7)"));
      check_cuda(cudaMemset(past_c + 7, verify::kCanaryByte, 1), "restore C's guard");
    }
    const HostBuffer got = gemm_test::download(copies, 2, host[2]);
    // Both accumulate in fp64; they differ only where rounding to the output type flips.
    Tolerance tight;
    tight.rel_l2 = s.output_dtype() == DType::f32 ? 1e-6 : 2e-3;
    const verify::Comparison cmp = verify::compare(got, expected[2], tight);
    INFO(cmp.message);
    CHECK(cmp.ok);
    CHECK(cmp.rel_l2 < (s.output_dtype() == DType::f32 ? 1e-7 : 1e-4));
  }
}
