// GPU tests of the measurer on the "copy" template: a candidate is verified and timed with
// samples, clocks and a small spread; every L2 policy measures; the time limit is derived from
// the first good candidate; an invalid config never reaches the GPU.
#include <catch2/catch.hpp>

#include "gpu_guard.h"
#include "ktune/build.h"
#include "ktune/measure.h"
#include "ktune/template.h"

using namespace ktune;

namespace {
RunnerOptions test_runner_options() {
  RunnerOptions ro;
  ro.timing.min_time_ms = 20;
  return ro;
}

/// A template, a problem of it, device 0 and a builder.
struct GpuSetup {
  GpuSetup(const std::string& name, const std::string& shape)
      : tmpl(find_template(name)), problem(make_problem(*tmpl, shape)), device(query_device(0)) {}
  std::shared_ptr<const KernelTemplate> tmpl;
  Problem problem;
  Device device;
  Builder builder;
};
}  // namespace

TEST_CASE("gpu measurer: copy candidates are verified and timed under every L2 policy", "[gpu][runner]") {
  KTUNE_REQUIRE_GPU();
  GpuSetup g("copy", "3000017");  // odd size
  auto space = g.tmpl->space(g.problem, g.device);
  for (L2Policy policy : {L2Policy::automatic, L2Policy::flush, L2Policy::rotate, L2Policy::none}) {
    RunnerOptions ro = test_runner_options();
    ro.timing.l2 = policy;
    GpuMeasurer m(g.tmpl, g.problem, g.device, g.builder, ro);
    auto trials = m.measure({space.default_config()});
    REQUIRE(trials.size() == 1);
    const Trial& t = trials[0];
    INFO(t.message);
    CHECK(t.status == Status::ok);
    CHECK(t.times_ms.size() >= 10);
    CHECK(t.median_ms > 0);
    CHECK(t.min_ms <= t.median_ms);
    CHECK(t.error_norm >= 0);
    CHECK(t.error_norm < 1e-6);
    CHECK(t.wall_ms > 0);
    CHECK(m.current_timeout_ms() == Approx(std::max(1000.0, 20 * t.median_ms)));
  }
}

TEST_CASE("gpu measurer: an invalid config is rejected before compiling", "[gpu][runner]") {
  KTUNE_REQUIRE_GPU();
  GpuSetup g("faults", "4096");
  GpuMeasurer m(g.tmpl, g.problem, g.device, g.builder, test_runner_options());
  SearchSpace::Builder other;
  other.param("MODE", {0, 11});
  auto foreign = other.build().parse("MODE=11");
  auto trials = m.measure({foreign});
  REQUIRE(trials.size() == 1);
  CHECK(trials[0].status == Status::invalid);
  CHECK(trials[0].message.find("not in the space") != std::string::npos);
}
