// The fault suite. CPU: the "faults" template's space, launch plans and expected statuses, and
// NVRTC's verdict on its good and compile-error modes. GPU: tuning the whole space, which mixes
// every deliberately broken candidate with good ones, completes, classifies each candidate as
// its mode requires, loses no trial, and picks a correct winner.
#include <catch2/catch.hpp>

#include <map>

#include "gpu_guard.h"
#include "ktune/build.h"
#include "ktune/measure.h"
#include "ktune/template.h"
#include "ktune/tuner.h"
#include "templates/faults/faults_template.h"
#include "tuner_list_searcher.h"

using namespace ktune;
using namespace ktune::testing;

TEST_CASE("faults template: space, launch plans and expected statuses", "[faults]") {
  auto tmpl = find_template("faults");
  Problem p = make_problem(*tmpl, "1000003");
  auto space = tmpl->space(p, Device::h200());
  CHECK(space.count_valid() == 52);  // 12 modes x 2 x 2, and L2_MARK 1 with MODE 0 only
  CHECK(space.default_config().str() == "MODE=0,BLOCK=256,ITEMS=1,L2_MARK=0");
  CHECK_FALSE(space.valid(space.parse("MODE=6,BLOCK=256,ITEMS=1,L2_MARK=1")));
  auto plan = tmpl->launch(p, space.parse("MODE=0,BLOCK=128,ITEMS=4,L2_MARK=0"), Device::h200());
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].grid[0] == (1000003 + 511) / 512);
  CHECK(tmpl->launch(p, space.parse("MODE=5,BLOCK=128,ITEMS=1,L2_MARK=0"), Device::h200()).steps[0].block[0] == 2048);
  CHECK(tmpl->launch(p, space.parse("MODE=4,BLOCK=128,ITEMS=1,L2_MARK=0"), Device::h200()).steps[0].dynamic_smem ==
        (1u << 20));
  CHECK(faults_expected_status(fault_mode::infinite_loop) == Status::timeout);
  CHECK(faults_expected_status(fault_mode::out_of_bounds) == Status::wrong_result);
  CHECK(faults_expected_status(fault_mode::extra_argument) == Status::launch_error);
  const auto extra = tmpl->launch(p, space.parse("MODE=10,BLOCK=128,ITEMS=1,L2_MARK=0"), Device::h200());
  CHECK(extra.steps[0].args.size() == 4);
  const auto narrow = tmpl->launch(p, space.parse("MODE=11,BLOCK=128,ITEMS=1,L2_MARK=0"), Device::h200());
  CHECK(narrow.steps[0].args[2].kind == KernelArg::Kind::i32);
  CHECK_THROWS(faults_expected_status(42));

  auto w = tmpl->workload(p);
  auto buffers = std::vector<HostBuffer>(2);
  for (std::size_t i = 0; i < 2; ++i) {
    buffers[i].spec = w->buffers()[i];
    buffers[i].bytes.assign(4 * 1000003, 0);
  }
  w->fill(buffers, 5);
  w->reference(buffers);
  CHECK(buffers[0].as<float>()[7] != 0);
  CHECK(buffers[1].as<float>()[7] == 2 * buffers[0].as<float>()[7] + 1);
}

TEST_CASE("faults template: NVRTC builds the good mode and rejects the compile-error mode", "[faults]") {
  auto tmpl = find_template("faults");
  Problem p = make_problem(*tmpl, "4096");
  auto space = tmpl->space(p, Device::h200());
  Builder builder(BuilderOptions{1, "", {}});
  auto good = builder.build(*tmpl, p, space.parse("MODE=0,BLOCK=256,ITEMS=1,L2_MARK=0"), Device::h200());
  CHECK(good.ok);
  auto marking = builder.build(*tmpl, p, space.parse("MODE=0,BLOCK=256,ITEMS=1,L2_MARK=1"), Device::h200());
  INFO(marking.log);
  CHECK(marking.ok);
  auto bad = builder.build(*tmpl, p, space.parse("MODE=8,BLOCK=256,ITEMS=1,L2_MARK=0"), Device::h200());
  CHECK_FALSE(bad.ok);
  CHECK(bad.log.find("deliberate compile error") != std::string::npos);
}

TEST_CASE("fault suite: every broken candidate is classified and a good one wins", "[gpu][faults]") {
  KTUNE_REQUIRE_GPU();
  auto tmpl = find_template("faults");
  Problem p = make_problem(*tmpl, "1000003");  // odd size
  Device dev = query_device(0);
  Builder builder;
  RunnerOptions ro;
  ro.timing.min_time_ms = 10;
  GpuMeasurer measurer(tmpl, p, dev, builder, ro);
  auto space = tmpl->space(p, dev);
  ListSearcher searcher(all_valid(space));
  CollectingSink sink;
  TunerOptions o;
  o.max_trials = 0;
  o.batch = 8;
  o.top_k = 3;
  o.final_rounds = 2;
  o.record_final = false;
  Tuner tuner(space, searcher, measurer, o);
  tuner.set_sink(&sink);
  auto r = tuner.run();

  CHECK(r.stop_reason == "exhausted");
  CHECK(r.trials.size() == 52);  // no trial lost
  CHECK(sink.trials.size() == 52);
  std::map<Value, int> per_mode;
  for (const auto& t : r.trials) {
    Value mode = t.config["MODE"];
    INFO(t.config.str() << " -> " << to_string(t.status) << ": " << t.message);
    CHECK(t.status == faults_expected_status(mode));
    per_mode[mode]++;
    if (mode == fault_mode::out_of_bounds) CHECK(t.message.find("wrote past the end of y") != std::string::npos);
    if (mode == fault_mode::nan_output) CHECK(t.message.find("non-finite") != std::string::npos);
    if (mode == fault_mode::illegal_address) CHECK(t.message.find("cudaErrorIllegalAddress") != std::string::npos);
    if (mode == fault_mode::wrong_result) CHECK(t.error_norm > 1e-6);
    if (mode == fault_mode::extra_argument)
      CHECK(t.message.find("kernel 'ktune_faults' declares 3 parameters (8, 8, 8 bytes) but the "
                           "launch plan passes 4 arguments") != std::string::npos);
    if (mode == fault_mode::narrow_argument)
      CHECK(t.message.find("argument 2 is i32 (4 bytes) but parameter 2 is 8 bytes") != std::string::npos);
    if (t.ok()) {
      CHECK(t.error_norm >= 0);
      CHECK(t.error_norm < 1e-6);
      CHECK(t.median_ms > 0);
      CHECK(t.times_ms.size() >= 10);
    }
  }
  CHECK(per_mode.size() == 12);
  REQUIRE(r.best);
  CHECK(r.best->config["MODE"] == fault_mode::good);
  CHECK(r.best->ok());
  CHECK(measurer.worker_restarts() >= 12);  // illegal address, infinite loop and trap, 4 each
  WARN("fault suite: " << r.elapsed_s << " s, " << measurer.worker_restarts() << " worker restarts");
}
