// GPU benchmark of the measuring runner, written as JSON to argv[1]:
//  - repeatability: the same copy candidate (a kernel of >= 50 us) measured in 10 separate
//    runs, each with a fresh worker process; the spread of the 10 medians (target < 2%);
//  - overhead: a 100-config tuning run of the copy template at the default settings; wall time
//    per measurement minus the GPU time of its timed runs (target < 20 ms per measurement).
// Usage: gpu_runner <out.json> [repeat N] [tune N]   (shapes default to 2^25 and 2^20 floats)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "gpu_bench_support.h"
#include "json_output.h"
#include "ktune/build.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/template.h"
#include "ktune/tuner.h"
#include "stats.h"
#include "tests/tuner_list_searcher.h"

using namespace ktune;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

nlohmann::json repeatability(const std::shared_ptr<const KernelTemplate>& tmpl, const Device& dev,
                             Builder& builder, const std::string& shape) {
  Problem p = make_problem(*tmpl, shape);
  auto space = tmpl->space(p, dev);
  Config c = space.default_config();
  std::vector<double> medians;
  nlohmann::json runs = nlohmann::json::array();
  for (int run = 0; run < 10; ++run) {
    GpuMeasurer m(tmpl, p, dev, builder);  // a fresh worker process per run
    Trial t = m.measure({c}).at(0);
    if (!t.ok()) throw Error(ErrorCode::internal, "repeatability candidate failed: " + t.message);
    medians.push_back(t.median_ms);
    runs.push_back({{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"spread", t.spread},
                    {"samples", t.times_ms.size()}, {"sm_clock_mhz", t.sm_clock_mhz},
                    {"temperature_c", t.temperature_c}, {"wall_ms", t.wall_ms}});
    std::printf("repeatability run %d: median %.4f ms (%zu samples, spread %.3f, %d MHz)\n", run,
                t.median_ms, t.times_ms.size(), t.spread, t.sm_clock_mhz);
  }
  double range = stats::relative_range(medians);
  std::printf("repeatability: 10 medians of %s at %s, (max-min)/min = %.2f%%\n", c.str().c_str(),
              p.key().c_str(), 100 * range);
  return {{"problem", p.key()}, {"config", c.str()}, {"runs", runs},
          {"median_of_medians_ms", stats::median(medians)},
          {"relative_range_of_medians", range},
          {"relative_spread_p90_p10_of_medians", stats::relative_spread(medians)},
          {"target", "relative range < 0.02 for a kernel >= 0.05 ms"}};
}

nlohmann::json overhead(const std::shared_ptr<const KernelTemplate>& tmpl, const Device& dev,
                        Builder& builder, const std::string& shape) {
  Problem p = make_problem(*tmpl, shape);
  auto space = tmpl->space(p, dev);
  auto configs = testing::all_valid(space);
  std::mt19937_64 rng(7);
  std::shuffle(configs.begin(), configs.end(), rng);
  GpuMeasurer gpu(tmpl, p, dev, builder);
  testing::ListSearcher searcher(configs);
  TunerOptions o;  // defaults, except the budget
  o.max_trials = 100;
  auto start = Clock::now();
  auto r = Tuner(space, searcher, gpu, o).run();
  double wall_s = seconds_since(start);
  double compile = 0;
  for (const auto& t : r.trials) compile += t.compile_ms;
  // Kernel time from the measurer's split: every timed run of every measurement (trials and
  // the final re-measurements), each sample counted as the runs it averages.
  auto split = gpu.time_split();
  const auto measurements = static_cast<double>(std::max<std::size_t>(split.candidates, 1));
  double per_measurement = (wall_s * 1000 - split.kernel_ms) / measurements;
  auto per = [&](double ms) { return ms / measurements; };
  std::printf("overhead split per candidate (%zu): compile wait %.2f ms, round trip %.2f ms = worker "
              "prepare %.2f + verify %.2f + timing %.2f (kernel %.2f) + transport %.2f; outside the "
              "measurer (searcher, tuner, log) %.2f ms\n",
              split.candidates, per(split.compile_wait_ms), per(split.round_trip_ms),
              per(split.worker_prepare_ms), per(split.worker_verify_ms), per(split.worker_timing_ms),
              per(split.kernel_ms),
              per(split.round_trip_ms - split.worker_prepare_ms - split.worker_verify_ms - split.worker_timing_ms),
              per(wall_s * 1000 - split.round_trip_ms - split.compile_wait_ms));
  std::printf("overhead: %zu trials + %zu final measurements in %.2f s; kernel time %.1f ms; "
              "(wall - kernel) per measurement %.2f ms; worker round trip - kernel %.2f ms per measurement\n",
              r.trials.size(), split.candidates - r.trials.size(), wall_s, split.kernel_ms,
              per_measurement, per(split.round_trip_ms - split.kernel_ms));
  nlohmann::json statuses;
  for (const auto& [s, count] : r.status_counts) statuses[to_string(s)] = count;
  return {{"problem", p.key()},
          {"trials", r.trials.size()},
          {"measurements_including_final", split.candidates},
          {"wall_s", wall_s},
          {"kernel_ms_total", split.kernel_ms},
          {"overhead_ms_per_measurement", per_measurement},
          {"worker_overhead_ms_per_measurement", per(split.round_trip_ms - split.kernel_ms)},
          {"kernel_ms_per_measurement", per(split.kernel_ms)},
          {"compile_ms_total", compile},
          {"statuses", statuses},
          {"best", r.best ? r.best->config.str() : ""},
          {"best_ms", r.best ? r.best->median_ms : 0},
          {"default_ms", r.default_trial ? r.default_trial->median_ms : 0},
          {"top_two_within_noise", r.top_two_within_noise},
          {"worker_restarts", gpu.worker_restarts()},
          {"split_ms_per_candidate",
           {{"candidates", split.candidates},
            {"compile_wait", per(split.compile_wait_ms)},
            {"round_trip", per(split.round_trip_ms)},
            {"worker_prepare", per(split.worker_prepare_ms)},
            {"worker_verify", per(split.worker_verify_ms)},
            {"worker_timing", per(split.worker_timing_ms)},
            {"kernel", per(split.kernel_ms)},
            {"outside_measurer", per(wall_s * 1000 - split.round_trip_ms - split.compile_wait_ms)}}},
          {"target", "overhead_ms_per_measurement < 20"}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "gpu_runner.json";
  if (argc > 1) {
    try {
      out = bench::output_argument(argc, argv,
                                   "usage: gpu_runner [OUT.json [REPEAT_N [TUNE_N]]] (defaults: "
                                   "gpu_runner.json, 33554432, 1048576 floats)");
    } catch (const Error& e) {
      std::fprintf(stderr, "gpu_runner: %s\n", e.what());
      return 2;
    }
  }
  std::string repeat_shape = argc > 2 ? argv[2] : "33554432";
  std::string tune_shape = argc > 3 ? argv[3] : "1048576";
  if (auto why = cuda_unavailable_reason()) {
    std::printf("SKIPPED: gpu_runner needs a CUDA device: %s\n", why->c_str());
    return 77;
  }
  try {
    Device dev = query_device(0);
    const BuilderOptions bo = bench::tuning_builder_options();
    Builder builder(bo);
    auto tmpl = find_template("copy");
    nlohmann::json result = {
        {"benchmark", "gpu_runner"},
        {"device", dev.name},
        {"arch", dev.arch()},
        {"driver_version", dev.driver_version},
        {"runtime_version", dev.runtime_version},
        {"nvrtc", Builder::nvrtc_version()},
        {"compile_processes", compile_helper_count(bo)},
        {"defaults", {{"min_time_ms", TimingOptions{}.min_time_ms},
                      {"min_reps", TimingOptions{}.min_reps},
                      {"max_reps", TimingOptions{}.max_reps},
                      {"l2", "automatic"}}},
        {"repeatability", repeatability(tmpl, dev, builder, repeat_shape)},
        {"overhead", overhead(tmpl, dev, builder, tune_shape)},
    };
    bench::write_json(out, result);
    std::printf("wrote %s\n", out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_runner: %s\n", e.what());
    return 1;
  }
  return 0;
}
