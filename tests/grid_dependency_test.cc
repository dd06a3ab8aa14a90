// Programmatic dependent launch without a GPU: the PTX path check itself, every built-in kernel
// step marked grid_dependency_wait really waits first (read from NVRTC's PTX for compute_90,
// over samples of each space: no path reaches a global memory access before
// griddepcontrol.wait), the memory-bound templates mark their kernels, and the worker protocol
// carries the step's mark and TimingOptions::programmatic_launch.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <set>

#include "builtin_templates.h"
#include "ktune/measure.h"
#include "ktune/template.h"
#include "memory_bound_test_util.h"
#include "nvrtc_compile.h"
#include "ptx_scan.h"
#include "worker_protocol.h"

using namespace ktune;

namespace {

/// Compiles `config` of `tmpl` for `problem` to compute_90 PTX and checks every kernel step
/// marked grid_dependency_wait: no path through its entry reaches a global memory access
/// before griddepcontrol.wait (grid_dependency_wait_problem). Returns how many steps were
/// checked.
int check_marked_steps(const KernelTemplate& tmpl, const Problem& problem, const Config& config) {
  const Device device = Device::h200();
  const LaunchPlan plan = tmpl.launch(problem, config, device);
  std::vector<std::string> marked;
  for (const auto& step : plan.steps)
    if (step.kind == LaunchStep::Kind::kernel && step.grid_dependency_wait) marked.push_back(step.entry);
  if (marked.empty()) return 0;
  std::vector<std::string> options =
      detail::template_compile_options(tmpl, problem, config, "compute_90");
  if (const std::string& include = detail::cuda_include_dir(); !include.empty())
    options.push_back("-I" + include);
  const auto out =
      detail::nvrtc_compile_ptx(tmpl.source(), tmpl.source_name(), detail::template_headers(), options);
  INFO(tmpl.name() << " " << problem.key() << " " << config.str() << "\n" << out.log);
  REQUIRE(out.ok);
  for (const auto& entry : marked)
    CHECK(detail::grid_dependency_wait_problem(out.ptx, entry) == "");
  return static_cast<int>(marked.size());
}

}  // namespace

TEST_CASE("the PTX scan finds memory accesses and passes parameter, shared, local and constant ones",
          "[pdl][nvrtc]") {
  using detail::first_global_memory_access;
  CHECK(first_global_memory_access("\tld.param.u64 %rd1, [p];\n\tst.shared.u32 [%r1], %r2;\n") == "");
  CHECK(first_global_memory_access("\tmov.u32 %r1, %tid.x;\n\tld.global.nc.v4.u32 {%r1}, [%rd2];\n") != "");
  CHECK(first_global_memory_access("\tst.global.v4.u32 [%rd1], {%r1};\n") != "");
  CHECK(first_global_memory_access("\tld.u32 %r1, [%rd2];\n") != "");  // generic address
  CHECK(first_global_memory_access("\tatom.global.add.u32 %r1, [%rd1], 1;\n") != "");
  CHECK(first_global_memory_access("\tred.global.add.f32 [%rd1], %f1;\n") != "");
  CHECK(first_global_memory_access("\tcp.async.bulk.shared::cluster.global [%r1], [%rd1], 64, [%r2];\n") != "");
  CHECK(first_global_memory_access("\t// ld.global in a comment\n") == "");
  CHECK(first_global_memory_access("\t@%p1 st.global.f32 [%rd1], %f1;\n") != "");
  CHECK(first_global_memory_access("\tst.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r3];\n") == "");
  CHECK(first_global_memory_access("\tmbarrier.init.shared.b64 [%r1], 1;\n\tbar.sync 0;\n") == "");
  // Spaces no other grid writes: the thread's local memory (spills, stack arrays) and constant
  // memory.
  CHECK(first_global_memory_access("\tst.local.u32 [%rd1], %r1;\n\tld.local.v2.u32 {%r1, %r2}, [%rd1];\n") == "");
  CHECK(first_global_memory_access("\tld.const.f32 %f1, [table+4];\n") == "");
  CHECK(first_global_memory_access("\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];\n") == "");
  // Reads and writes of global memory under other opcodes than ld / st.
  CHECK(first_global_memory_access("\tldu.global.u32 %r1, [%rd1];\n") != "");
  CHECK(first_global_memory_access("\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\n") != "");
  CHECK(first_global_memory_access("\ttld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\n") != "");
  CHECK(first_global_memory_access("\tsuld.b.2d.b32.trap {%r1}, [%rd1, {%r2, %r3}];\n") != "");
  CHECK(first_global_memory_access("\tsust.b.2d.b32.trap [%rd1, {%r2, %r3}], {%r1};\n") != "");
  CHECK(first_global_memory_access("\twmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1}, [%rd1];\n") != "");
  CHECK(first_global_memory_access("\twmma.store.d.sync.aligned.row.m16n16k16.f32 [%rd1], {%f1};\n") != "");  // generic
  CHECK(first_global_memory_access("\twmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r1}, [%r2];\n") == "");
  CHECK(first_global_memory_access("\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1}, {%r1}, {%r2}, {%f2};\n") == "");
  CHECK(first_global_memory_access("\tdiscard.global.L2 [%rd1], 128;\n") != "");
  CHECK(first_global_memory_access("\tprefetchu.L1 [%rd1];\n") != "");
  CHECK(first_global_memory_access("\ttensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;\n") != "");
}

namespace {

/// A PTX entry `k` with `body` as its instructions.
std::string ptx_of(const std::string& body) {
  return ".version 9.0\n.target sm_90\n.address_size 64\n\n.visible .entry k(\n"
         "\t.param .u64 k_param_0\n)\n{\n\t.reg .b64 \t%rd<5>;\n\tld.param.u64 \t%rd1, "
         "[k_param_0];\n" +
         body + "}\n";
}

}  // namespace

TEST_CASE("the wait check follows every path through the kernel", "[pdl]") {
  using detail::grid_dependency_wait_problem;
  const std::string wait = "\t// begin inline asm\n\tgriddepcontrol.wait;\n\t// end inline asm\n";
  const std::string load = "\tld.global.nc.u32 \t%r1, [%rd1];\n";
  // Straight line: the wait, then the access.
  CHECK(grid_dependency_wait_problem(ptx_of(wait + load + "\tret;\n"), "k") == "");
  // A branch around the wait to an access: the first wait in the text is not enough.
  const std::string around = "\t@%p1 bra \t$L__BB0_2;\n" + wait + load + "$L__BB0_2:\n" +
                             "\tst.global.u32 \t[%rd1], %r1;\n\tret;\n";
  CHECK_THAT(grid_dependency_wait_problem(ptx_of(around), "k"),
             Catch::Contains("st.global.u32") && Catch::Contains("on some path"));
  // Each side of the branch waits (as the compiler lays out the built-in kernels).
  CHECK(grid_dependency_wait_problem(ptx_of("\t@%p1 bra \t$L__BB0_2;\n" + wait +
                                            "\tbra.uni \t$L__BB0_3;\n$L__BB0_2:\n" + wait +
                                            "$L__BB0_3:\n" + load + "\tret;\n"),
                                     "k") == "");
  // An early exit needs no wait; a loop before the wait is followed once.
  CHECK(grid_dependency_wait_problem(ptx_of("\t@%p1 bra \t$L__BB0_9;\n" + wait + load +
                                            "$L__BB0_9:\n\tret;\n"),
                                     "k") == "");
  CHECK(grid_dependency_wait_problem(ptx_of("$L__BB0_1:\n\tadd.s32 \t%r1, %r1, 1;\n"
                                            "\t@%p1 bra \t$L__BB0_1;\n" +
                                            wait + load + "\tret;\n"),
                                     "k") == "");
  // A guarded wait, a call, or a bulk copy first: some thread may not have waited.
  CHECK_THAT(grid_dependency_wait_problem(ptx_of("\t@%p1 griddepcontrol.wait;\n" + load), "k"),
             Catch::Contains("ld.global"));
  CHECK_THAT(grid_dependency_wait_problem(ptx_of("\tcall.uni \tf, (%rd1);\n" + wait + load), "k"),
             Catch::Contains("call.uni"));
  CHECK_THAT(grid_dependency_wait_problem(
                 ptx_of("\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                        "[%r1], [%rd1], 64, [%r2];\n" + wait),
                 "k"),
             Catch::Contains("cp.async.bulk"));
  // Shared memory before the wait is the CTA's own.
  CHECK(grid_dependency_wait_problem(ptx_of("\tst.shared.u32 \t[%r1], %r2;\n" + wait + load),
                                     "k") == "");
  CHECK_THAT(grid_dependency_wait_problem(ptx_of(load), "k"),
             Catch::Contains("no griddepcontrol.wait"));
  // Braced inline asm on one line: the braces open and close a scope; the instructions in it
  // count in their order.
  CHECK_THAT(grid_dependency_wait_problem(
                 ptx_of("\t{ ld.global.f32 %f1, [%rd1]; griddepcontrol.wait; }\n" + load), "k"),
             Catch::Contains("ld.global.f32 %f1, [%rd1]"));
  CHECK_THAT(grid_dependency_wait_problem(
                 ptx_of("\t{ st.global.f32 [%rd1], %f1; griddepcontrol.wait; }\n"), "k"),
             Catch::Contains("st.global.f32"));
  CHECK_THAT(grid_dependency_wait_problem(
                 ptx_of("\t{ ld.global.f32 %f1, [%rd1]; } griddepcontrol.wait;\n"), "k"),
             Catch::Contains("touches global memory") && Catch::Contains("ld.global.f32"));
  CHECK(grid_dependency_wait_problem(ptx_of("\t{ griddepcontrol.wait; }\n" + load), "k") == "");
  CHECK(grid_dependency_wait_problem(
            ptx_of("\t{\n\t.reg .pred p;\n\tgriddepcontrol.wait;\n\t}\n" + load), "k") == "");
  CHECK_THAT(grid_dependency_wait_problem(ptx_of(wait), "other"),
             Catch::Contains("not in the compiled PTX"));
}

TEST_CASE("the memory-bound templates' kernels wait for the previous grid before touching memory",
          "[pdl][nvrtc]") {
  const Device device = Device::h200();
  std::mt19937_64 rng(20261207);
  struct Case {
    std::shared_ptr<KernelTemplate> tmpl;
    std::string shape;
    std::map<std::string, std::string> attrs;
  };
  const std::vector<Case> cases = {
      {make_copy_template(), "1000003", {{"dtype", "f16"}}},
      {make_elementwise_template(), "1000x1003", {{"dtype", "bf16"}, {"fn", "bias_gelu_tanh"}}},
      {make_elementwise_template(), "1x4096", {{"dtype", "f32"}, {"fn", "add"}}},
      {make_reduction_template(), "64x100003", {{"dtype", "f16"}, {"fn", "sum"}}},
      {make_reduction_template(), "1x10000000", {{"dtype", "f32"}, {"fn", "max"}}},
      {make_layernorm_template(), "32768x1024", {{"dtype", "f16"}, {"norm", "layernorm"}}},
      {make_layernorm_template(), "4096x65536", {{"dtype", "f16"}, {"norm", "rmsnorm"}}},
  };
  std::set<std::string> entries_seen;
  for (const auto& c : cases) {
    const Problem problem = make_problem(*c.tmpl, c.shape, c.attrs);
    const SearchSpace space = c.tmpl->space(problem, device);
    std::vector<Config> configs = {space.default_config()};
    for (int i = 0; i < 3; ++i) configs.push_back(space.random(rng));
    // Every way of splitting a row for the reduction (two passes, atomics, last block).
    if (c.tmpl->name() == "reduction")
      for (std::int64_t multi : {0, 1, 2})
        for (int tries = 0; tries < 200; ++tries) {
          const Config r = space.random(rng);
          if (r["MULTI"] == multi && r["SPLIT"] > 1) {
            configs.push_back(r);
            break;
          }
        }
    for (const Config& config : configs) {
      INFO(c.tmpl->name() << " " << config.str());
      // Each of these plans launches at least one kernel, and every kernel step is marked.
      const LaunchPlan plan = c.tmpl->launch(problem, config, device);
      for (const auto& step : plan.steps)
        if (step.kind == LaunchStep::Kind::kernel) {
          CHECK(step.grid_dependency_wait);
          entries_seen.insert(step.entry);
        }
      CHECK(check_marked_steps(*c.tmpl, problem, config) >= 1);
    }
  }
  // Both reduction passes were among them.
  CHECK(entries_seen.count("reduce_rows") == 1);
  CHECK(entries_seen.count("reduce_partials") == 1);
}

TEST_CASE("templates whose kernels do not wait leave their steps unmarked", "[pdl]") {
  const Device device = Device::h200();
  for (const auto& tmpl : {make_gemm_simt_template(), make_gemm_mma_template(),
                           make_conv2d_simt_template(), make_faults_template()}) {
    const Problem problem = tmpl->example_problem();
    const LaunchPlan plan =
        tmpl->launch(problem, tmpl->space(problem, device).default_config(), device);
    for (const auto& step : plan.steps) {
      INFO(tmpl->name() << " " << step.entry);
      CHECK_FALSE(step.grid_dependency_wait);
    }
  }
}

TEST_CASE("the worker protocol carries grid_dependency_wait and programmatic_launch", "[pdl]") {
  LaunchPlan plan;
  LaunchStep marked;
  marked.entry = "k1";
  marked.grid_dependency_wait = true;
  LaunchStep plain;
  plain.entry = "k2";
  plan.steps = {marked, plain};
  const LaunchPlan back = worker::plan_from_json(worker::plan_to_json(plan));
  REQUIRE(back.steps.size() == 2);
  CHECK(back.steps[0].grid_dependency_wait);
  CHECK_FALSE(back.steps[1].grid_dependency_wait);
  // A plan written before the field existed reads as unmarked.
  auto old = worker::plan_to_json(plan);
  old["steps"][0].erase("grid_dependency_wait");
  CHECK_FALSE(worker::plan_from_json(old).steps[0].grid_dependency_wait);

  TimingOptions t;
  CHECK_FALSE(t.programmatic_launch);
  t.programmatic_launch = true;
  CHECK(worker::timing_from_json(worker::timing_to_json(t)).programmatic_launch);
  CHECK_FALSE(worker::timing_from_json(nlohmann::json::object()).programmatic_launch);
}
