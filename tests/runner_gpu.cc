// GPU tests of the measurer on the "copy" template: a candidate is verified and timed with
// samples, clocks and a small spread; every L2 policy measures; the time limit is derived from
// the first good candidate; an invalid config never reaches the GPU; chained runs timed as
// CUDA graphs and with programmatic launch verify, time and say so.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

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
    // The timed runs add up to min_time_ms unless max_reps runs come first; the split counts
    // every run, also those a sample averages (with 10 runs per sample, the samples alone
    // would be a tenth of it).
    const double planned = std::min(ro.timing.min_time_ms, ro.timing.max_reps * t.median_ms);
    CHECK(m.time_split().kernel_ms > 0.5 * planned);
    CHECK(m.time_split().kernel_ms < 2.0 * planned);
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

TEST_CASE("gpu measurer: L2 lines a candidate leaves evict_last do not speed up the next one",
          "[gpu][runner]") {
  KTUNE_REQUIRE_GPU();
  // x and y of 16 MiB, timed under the flush policy (a 2 x L2 memset before every run, which
  // evicts normal lines but not evict_last ones). L2_MARK 1, a correct kernel that also
  // prefetches x with evict_last priority, leaves up to the persisting limit of x in L2 (11 MiB
  // on the H200 of session 12), which would be hits for the next candidate.
  GpuSetup g("faults", std::to_string(std::int64_t{1} << 22));
  auto space = g.tmpl->space(g.problem, g.device);
  const Config plain = space.parse("MODE=0,BLOCK=256,ITEMS=1,L2_MARK=0");
  const Config marking = space.parse("MODE=0,BLOCK=256,ITEMS=1,L2_MARK=1");
  // The plain candidate's median after the marking one over its median before it, in one worker.
  auto after_over_before = [&](bool reset) {
    RunnerOptions ro = test_runner_options();
    ro.timing.l2 = L2Policy::flush;
    ro.timing.reset_l2_priorities = reset;
    GpuMeasurer m(g.tmpl, g.problem, g.device, g.builder, ro);
    std::vector<Trial> trials;  // one call each: a batch is measured in compile order
    for (const Config& c : {plain, plain, marking, plain}) trials.push_back(m.measure({c}).at(0));
    for (const Trial& t : trials) {
      INFO(t.config.str() << ": " << t.message);
      REQUIRE(t.status == Status::ok);
    }
    return trials[3].median_ms / trials[1].median_ms;
  };
  const double without = after_over_before(false);
  const double with = after_over_before(true);
  WARN("plain candidate after an evict_last one / before it: " << without << " without the reset, "
       << with << " with it");
  // Committed logs to session 42 (benchmarks/results, 28 H100 and 29 H200 runs): 0.844-0.879
  // without, 0.970-0.983 with, the gap never below 0.094; the bounds leave room for the noise
  // of a ~10 us kernel timed after a flush.
  CHECK(without < 0.92);                     // the residue is real on this GPU
  CHECK(with == Approx(1.0).epsilon(0.05));  // and the reset removes it
  CHECK(with - without > 0.06);
}

namespace {

/// A config (the default with `changes`) of a built-in template on a problem.
struct LaunchCase {
  std::string name, shape, changes;
  std::map<std::string, std::string> attrs;
};

/// Measures each case's config in one process twice: with the test's timing options, and with
/// them changed by `variant`. Both must verify; the variant's trial message must contain
/// every text of `says` (and the plain one none of them), its launch form must be `launched`
/// (the plain one's LaunchForm::stream), and its median must be within
/// 0.25-1.25x of the plain one: the same runs without some launch overhead are not slower
/// beyond noise, nor implausibly faster (runs that ran nothing would time near zero; these
/// take 5-40 us).
void compare_launch_forms(const std::vector<LaunchCase>& cases,
                          const std::function<void(TimingOptions&)>& variant,
                          const std::vector<std::string>& says, LaunchForm launched) {
  for (const LaunchCase& c : cases) {
    auto tmpl = find_template(c.name);
    const Problem problem = make_problem(*tmpl, c.shape, c.attrs);
    const Device device = query_device(0);
    Builder builder;
    const SearchSpace space = tmpl->space(problem, device);
    const Config config = c.changes.empty() ? space.default_config() : space.with_changes(c.changes);
    INFO(c.name << " " << problem.key() << " " << config.str());
    REQUIRE(space.valid(config));
    RunnerOptions plain_options = test_runner_options();
    RunnerOptions variant_options = plain_options;
    variant(variant_options.timing);
    GpuMeasurer plain(tmpl, problem, device, builder, plain_options);
    GpuMeasurer changed(tmpl, problem, device, builder, variant_options);
    const Trial s = plain.measure({config}).at(0);
    const Trial v = changed.measure({config}).at(0);
    INFO(s.message << " | " << v.message);
    REQUIRE(s.status == Status::ok);
    REQUIRE(v.status == Status::ok);
    for (const std::string& text : says) {
      CHECK(v.message.find(text) != std::string::npos);
      CHECK(s.message.find(text) == std::string::npos);
    }
    CHECK(s.launch == LaunchForm::stream);
    CHECK(v.launch == launched);
    CHECK(v.times_ms.size() >= 10);
    CHECK(v.error_norm < 1e-2);
    CHECK(v.median_ms < 1.25 * s.median_ms);
    CHECK(v.median_ms > 0.25 * s.median_ms);
  }
}

}  // namespace

TEST_CASE("gpu measurer: chained runs timed as CUDA graphs are verified, timed and say so",
          "[gpu][runner]") {
  KTUNE_REQUIRE_GPU();
  // copy: one kernel per run, buffers rotated (12 MB under automatic); reduction with SPLIT 4:
  // a memset and one kernel (MULTI 1, 2) or two kernels (MULTI 0) per run, all captured. The
  // gaps removed: one per kernel or memset, ~1.7 us each on an H100.
  compare_launch_forms(
      {{"copy", "3000017", "", {}},
       {"reduction", "64x100003", "SPLIT=4,MULTI=0", {{"dtype", "f32"}, {"fn", "sum"}}},
       {"reduction", "64x100003", "SPLIT=4,MULTI=1", {{"dtype", "f32"}, {"fn", "max"}}},
       {"reduction", "64x100003", "SPLIT=4,MULTI=2", {{"dtype", "f16"}, {"fn", "mean"}}}},
      [](TimingOptions& t) { t.graph = true; }, {"as CUDA graphs"}, LaunchForm::graph);
  // Work between runs (an L2 flush before each) leaves nothing to chain: no graphs, said so.
  GpuSetup f("copy", "3000017");
  RunnerOptions flushed = test_runner_options();
  flushed.timing.l2 = L2Policy::flush;
  flushed.timing.graph = true;
  GpuMeasurer m(f.tmpl, f.problem, f.device, f.builder, flushed);
  const Trial t = m.measure({f.tmpl->space(f.problem, f.device).default_config()}).at(0);
  INFO(t.message);
  CHECK(t.status == Status::ok);
  CHECK(t.message.find("no graphs: work between runs") != std::string::npos);
  CHECK(t.launch == LaunchForm::stream);
}

TEST_CASE("gpu measurer: kernels that wait for their predecessor are timed with programmatic launch",
          "[gpu][runner]") {
  KTUNE_REQUIRE_GPU();
  // Every memory-bound family, the reduction's three ways of splitting a row (a memset before
  // the kernel, or a second kernel that reads the first one's partial sums), a LayerNorm row in
  // registers (1024) and one spread over a cluster (65536). Each candidate is verified after a
  // programmatic launch and timed as a chain of them.
  compare_launch_forms(
      {{"copy", "3000017", "", {}},
       {"elementwise", "4096x4099", "", {{"dtype", "bf16"}, {"fn", "bias_gelu_erf"}}},
       {"reduction", "64x100003", "SPLIT=4,MULTI=0", {{"dtype", "f32"}, {"fn", "sum"}}},
       {"reduction", "64x100003", "SPLIT=4,MULTI=1", {{"dtype", "f32"}, {"fn", "max"}}},
       {"reduction", "64x100003", "SPLIT=4,MULTI=2", {{"dtype", "f16"}, {"fn", "mean"}}},
       {"layernorm", "32768x1024", "", {{"dtype", "f16"}, {"norm", "layernorm"}}},
       {"layernorm", "4096x65536", "", {{"dtype", "bf16"}, {"norm", "rmsnorm"}}}},
      [](TimingOptions& t) { t.programmatic_launch = true; }, {", programmatic launch"},
      LaunchForm::programmatic);
  // With graphs too: the graph holds programmatic edges between the runs.
  compare_launch_forms({{"copy", "3000017", "", {}}},
                       [](TimingOptions& t) {
                         t.programmatic_launch = true;
                         t.graph = true;
                       },
                       {"as CUDA graphs, programmatic launch"}, LaunchForm::programmatic_graph);
  // A kernel that does not wait (the faults template's) is launched as usual, and said so.
  GpuSetup f("faults", "4096");
  RunnerOptions ro = test_runner_options();
  ro.timing.programmatic_launch = true;
  GpuMeasurer m(f.tmpl, f.problem, f.device, f.builder, ro);
  const Trial t =
      m.measure({f.tmpl->space(f.problem, f.device).parse("MODE=0,BLOCK=256,ITEMS=1,L2_MARK=0")}).at(0);
  INFO(t.message);
  CHECK(t.status == Status::ok);
  CHECK(t.message.find("no programmatic launch: no kernel waits for it") != std::string::npos);
  CHECK(t.launch == LaunchForm::stream);
}
