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
  ro.worker_path = std::string(KTUNE_BINARY_DIR) + "/ktune-worker";
  ro.timing.min_time_ms = 20;
  return ro;
}
}  // namespace

TEST_CASE("gpu measurer: copy candidates are verified and timed under every L2 policy", "[gpu][runner]") {
  KTUNE_REQUIRE_GPU();
  auto tmpl = find_template("copy");
  Problem p = make_problem(*tmpl, "3000017");
  Device dev = query_device(0);
  Builder builder;
  auto space = tmpl->space(p, dev);
  for (L2Policy policy : {L2Policy::automatic, L2Policy::flush, L2Policy::rotate, L2Policy::none}) {
    RunnerOptions ro = test_runner_options();
    ro.timing.l2 = policy;
    GpuMeasurer m(tmpl, p, dev, builder, ro);
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
  auto tmpl = find_template("faults");
  Problem p = make_problem(*tmpl, "4096");
  Device dev = query_device(0);
  Builder builder;
  GpuMeasurer m(tmpl, p, dev, builder, test_runner_options());
  SearchSpace::Builder other;
  other.param("MODE", {0, 11});
  auto foreign = other.build().parse("MODE=11");
  auto trials = m.measure({foreign});
  REQUIRE(trials.size() == 1);
  CHECK(trials[0].status == Status::invalid);
  CHECK(trials[0].message.find("not in the space") != std::string::npos);
}
