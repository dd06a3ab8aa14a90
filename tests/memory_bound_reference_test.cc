// Tests of the GPU references of the memory-bound families (Workload::device_reference) without
// a GPU: they appear exactly above the reference-cost threshold, their plans name buffers that
// exist and write every output, and the reference source compiles with NVRTC for sm_90 under
// every option set the families use.
#include <catch2/catch.hpp>

#include <set>

#include "builtin_templates.h"
#include "device_reference.h"
#include "templates/common/memory_bound_support.h"

using namespace ktune;

namespace {

/// A problem of one of the memory-bound families.
Problem mb_problem(const KernelTemplate& t, const std::string& shape,
                   const std::map<std::string, std::string>& attrs) {
  return make_problem(t, shape, attrs);
}

/// Large problems (above the threshold) covering every function, norm and dtype.
std::vector<std::pair<std::shared_ptr<KernelTemplate>, Problem>> large_problems() {
  std::vector<std::pair<std::shared_ptr<KernelTemplate>, Problem>> list;
  auto ew = make_elementwise_template();
  const auto domains = ew->attr_domains();
  for (const auto& fn : domains.at("fn"))
    list.push_back({ew, mb_problem(*ew, "1024x8193", {{"dtype", "f32"}, {"fn", fn}})});
  list.push_back({ew, mb_problem(*ew, "1x268435456", {{"dtype", "f16"}, {"fn", "gelu_tanh"}})});
  list.push_back({ew, mb_problem(*ew, "4096x4097", {{"dtype", "bf16"}, {"fn", "bias_silu"}})});
  auto red = make_reduction_template();
  for (const char* fn : {"sum", "max", "mean"})
    list.push_back({red, mb_problem(*red, "1x268435456", {{"dtype", "f32"}, {"fn", fn}})});
  list.push_back({red, mb_problem(*red, "32768x4096", {{"dtype", "bf16"}, {"fn", "sum"}})});
  list.push_back({red, mb_problem(*red, "3x10000000", {{"dtype", "f16"}, {"fn", "max"}})});
  auto ln = make_layernorm_template();
  for (const char* dtype : {"f32", "f16", "bf16"})
    for (const char* norm : {"layernorm", "rmsnorm"})
      list.push_back({ln, mb_problem(*ln, "4096x65536", {{"dtype", dtype}, {"norm", norm}})});
  return list;
}

}  // namespace

TEST_CASE("memory-bound device references appear above the cost threshold only",
          "[memory_bound][reference]") {
  auto ew = make_elementwise_template();
  auto red = make_reduction_template();
  auto ln = make_layernorm_template();
  // Small shapes keep the double-precision host reference.
  CHECK_FALSE(ew->workload(mb_problem(*ew, "64x1000", {{"fn", "gelu_erf"}}))->device_reference());
  CHECK_FALSE(red->workload(mb_problem(*red, "1x4194304", {{"fn", "sum"}}))->device_reference());
  CHECK_FALSE(ln->workload(mb_problem(*ln, "1024x1024", {{"norm", "rmsnorm"}}))->device_reference());
  // Just above it: the GPU reference.
  CHECK(red->workload(mb_problem(*red, "1x4194305", {{"fn", "sum"}}))->device_reference());
  CHECK(ln->workload(mb_problem(*ln, "1366x1024", {{"norm", "layernorm"}}))->device_reference());
  for (const auto& [t, p] : large_problems()) {
    INFO(p.key());
    const auto w = t->workload(p);
    CHECK(w->reference_cost() > memory_bound::kDeviceReferenceCost);
    CHECK(w->device_reference().has_value());
  }
}

TEST_CASE("memory-bound device reference plans name valid buffers and write every output",
          "[memory_bound][reference]") {
  for (const auto& [t, p] : large_problems()) {
    INFO(p.key());
    const auto w = t->workload(p);
    const auto ref = w->device_reference();
    REQUIRE(ref);
    const auto specs = w->buffers();
    const std::size_t total = specs.size() + ref->plan.scratch.size();
    std::set<std::size_t> passed;
    REQUIRE_FALSE(ref->plan.steps.empty());
    for (const LaunchStep& step : ref->plan.steps) {
      CHECK(step.kind == LaunchStep::Kind::kernel);
      CHECK(step.entry.rfind("ref_", 0) == 0);
      CHECK(step.block[0] == memory_bound::kReferenceThreads);
      CHECK(step.grid[0] >= 1);
      CHECK(step.grid[1] >= 1);
      CHECK(step.grid[1] <= 65535u);
      for (const KernelArg& a : step.args)
        if (a.kind == KernelArg::Kind::buffer) {
          CHECK(a.buffer < total);
          passed.insert(a.buffer);
        }
    }
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (specs[i].role == Role::output) CHECK(passed.count(i) == 1);
    CHECK(ref->source.find("ref_elementwise") != std::string::npos);
  }
  // The 2^28 sum is split into chunks of at least 65536 elements in a double scratch.
  auto red = make_reduction_template();
  const auto ref = red->workload(mb_problem(*red, "1x268435456", {{"fn", "sum"}}))->device_reference();
  REQUIRE(ref);
  REQUIRE(ref->plan.scratch.size() == 1);
  CHECK(ref->plan.scratch[0].dtype == DType::f64);
  CHECK(ref->plan.scratch[0].elements == 4096);
  CHECK(ref->plan.steps[0].grid[1] == 4096u);
}

TEST_CASE("memory-bound device reference source compiles with NVRTC for sm_90",
          "[memory_bound][reference][nvrtc]") {
  std::set<std::vector<std::string>> seen;
  for (const auto& [t, p] : large_problems()) {
    const auto ref = t->workload(p)->device_reference();
    REQUIRE(ref);
    if (!seen.insert(ref->options).second) continue;
    const auto out = detail::compile_device_reference(*ref, "sm_90");
    INFO(p.key() << "\n" << out.log);
    CHECK(out.ok);
    CHECK_FALSE(out.cubin.empty());
  }
  CHECK(seen.size() >= 15);
}
