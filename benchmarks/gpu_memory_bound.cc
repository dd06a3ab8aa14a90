// GPU benchmark of the memory-bound templates (issue 6): measures the device-to-device copy
// bandwidth (cudaMemcpyAsync of 2 GiB, read + write bytes, median of CUDA-event timings) and,
// in the same process, tunes elementwise (gelu tanh form) and reduction (sum) over 2^28
// elements and [32768, 4096], and LayerNorm / RMSNorm at [32768, 1024], [32768, 4096],
// [8192, 16384], [4096, 65536], each in f32 and f16, with a searcher at a stated trial budget
// through the isolated GPU measurer. Reports the effective bandwidth (workload bytes: each
// input read once, each output written once, over the median time) of the tuned winner and of
// the untuned default config as % of the copy bandwidth, both re-timed after the tuning side
// by side with the 2 GiB copy in three alternating rounds (medians over the rounds; the row's
// "copy_gbps" is that side-by-side reference, the tuner's own times stay as search_*_ms); exits
// 1 when a task has no valid time for its winner (no config passed, or the re-timing failed);
// and writes OUT_DIR/memory_bound.json
// (memory_bound_<families>[_<norms>][_<dtypes>].json when a selection is given), rewritten after
// every task. Large shapes are verified by the workloads' GPU references
// (Workload::device_reference), so the trial budget, not the host reference, bounds each task.
// Each task also times a device copy of its own byte count ("copy of the same bytes"): the
// ceiling of any kernel that size, launch and ramp included; with --copy-kernel-trials=N also
// ktune's copy template tuned with N trials on those bytes and measured like the task ("copy
// kernel of the same bytes": whether that ceiling is cudaMemcpyAsync's or the size's), and
// with --copy-variants overrides of the copy kernel's default measured on those bytes too.
// --copy-sweep measures only that ceiling against size: ktune's copy kernel (tuned with
// --copy-kernel-trials trials, 16 by default, at each size) and cudaMemcpyAsync from 32 MB to
// 2 GiB moved (128 MiB: the bytes of LayerNorm f16 [32768, 1024]), each with the fixed cost its
// time implies over streaming the bytes at the 2 GiB copy's rate (time - bytes / copy rate):
// the per-launch cost (launch, ramp-up, drain) that caps the % of the 2 GiB copy any kernel of
// a given size can show; and the time of a launch that moves 8 KiB, the floor of that cost in
// the measurer's chained loop. Writes OUT_DIR/copy_sweep.json.
// --runs-per-sample=N times up to N back-to-back runs of a candidate per pair of CUDA events
// (TimingOptions::runs_per_sample, 10 by default; 1 = an event between every two runs), and the
// 2 GiB copy (the reference) as many calls per event pair.
// --graph times every candidate's chained runs as CUDA graphs (TimingOptions::graph: each
// sample's back-to-back runs launched as one graph, without the stream's per-launch gap), the
// tuning included; cudaMemcpyAsync's figures stay stream launches.
// --programmatic launches the kernels with programmatic stream serialization (TimingOptions::
// programmatic_launch, as a Dispatcher with DispatcherOptions::programmatic_launch launches
// them: each run may start while the previous one drains), the tuning included.
// --canary-bytes=N sets the guard bytes the measurer puts after every buffer (4096), which also
// moves where the buffers lie relative to each other.
// --memcpy-placement first times cudaMemcpyAsync of LayerNorm f16 [32768,1024]'s x (64 MiB +
// 128 KiB) from the start of one allocation to destinations at several distances, and with
// fresh allocations three times: whether where the buffers lie moves a copy of that size.
//
// Usage: gpu_memory_bound OUT_DIR [--families=elementwise,reduction,layernorm]
//                                 [--norms=layernorm,rmsnorm] [--dtypes=f32,f16]
//                                 [--shapes=32768x1024,4096x65536] (a subset of the suite's;
//                                 other ROWSxHIDDEN shapes are added as layernorm tasks)
//                                 [--variants="K=V,K=V;K=V"] (overrides of each task's default
//                                 config, measured after its tuning where valid: "variants")
//                                 [--trials=40] (0: no tuning, only the variants)
//                                 [--seconds=14] [--searcher=genetic] [--seed=1]
//                                 [--copy-kernel-trials=0] [--copy-variants="K=V;K=V"]
//                                 [--copy-sweep]
//                                 [--runs-per-sample=10] [--memcpy-placement]
//                                 [--canary-bytes=4096] [--graph] [--programmatic]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "json_output.h"
#include "cuda_module.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/template.h"
#include "ktune/tuner.h"
#include "gpu_bench_support.h"

using namespace ktune;
using detail::check_cuda;
using nlohmann::json;

namespace {

/// Rounds of the side-by-side timing of each task's winner, default and reference copy.
constexpr int kSideBySideRounds = 3;

/// Command-line settings.
struct Settings {
  std::string out_dir;
  std::vector<std::string> families = {"elementwise", "reduction", "layernorm"};
  std::vector<std::string> norms = {"layernorm", "rmsnorm"};
  std::vector<std::string> dtypes = {"f32", "f16"};
  std::vector<std::string> shapes;  ///< empty: every shape of the suite
  std::vector<std::string> variants;  ///< "K=V,K=V" overrides of the default config
  std::string selection;  ///< file-name suffix naming what was selected ("" = everything)
  std::size_t trials = 40;
  double seconds = 14;
  std::string searcher = "genetic";
  std::uint64_t seed = 1;
  std::size_t copy_kernel_trials = 0;  ///< > 0: also tune ktune's copy kernel on each task's bytes
  std::vector<std::string> copy_variants;  ///< "K=V,K=V" overrides of the copy kernel's default
  bool copy_sweep = false;             ///< measure the copy ceiling against size, then stop
  int runs_per_sample = TimingOptions{}.runs_per_sample;  ///< of every measurement
  bool memcpy_placement = false;       ///< time a copy at several buffer distances first
  std::size_t canary_bytes = 4096;     ///< RunnerOptions::canary_bytes
  bool graph = false;                  ///< TimingOptions::graph for every measurement
  bool programmatic = false;           ///< TimingOptions::programmatic_launch for every measurement
};

/// One tuning task: template, shape text and attributes.
struct Task {
  std::string family;
  std::string shape;
  std::map<std::string, std::string> attrs;
};

/// "a_b_c" of a list (file-name suffixes).
std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : "_") + item;
  return text;
}

Settings parse_args(int argc, char** argv) {
  Settings s;
  s.out_dir = bench::output_argument(
      argc, argv,
      "usage: gpu_memory_bound OUT_DIR [--families=a,b] [--norms=a,b] [--dtypes=a,b] "
      "[--shapes=RxC,...] [--variants=\"K=V,K=V;K=V\"] [--trials=N] [--seconds=S] [--searcher=NAME] "
      "[--seed=S] [--copy-kernel-trials=N] [--copy-variants=\"K=V;K=V\"] [--copy-sweep] [--runs-per-sample=N] "
      "[--memcpy-placement] [--canary-bytes=N] [--graph] [--programmatic]");
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto [key, value] = bench::option_parts(arg);
    if (key == "--families") { s.families = bench::split_list(value); s.selection += "_" + join(s.families); }
    else if (key == "--norms") { s.norms = bench::split_list(value); s.selection += "_" + join(s.norms); }
    else if (key == "--dtypes") { s.dtypes = bench::split_list(value); s.selection += "_" + join(s.dtypes); }
    else if (key == "--shapes") { s.shapes = bench::split_list(value); s.selection += "_" + join(s.shapes); }
    else if (key == "--variants") s.variants = bench::split_list(value, ';');
    else if (key == "--trials") s.trials = bench::parse_number<std::size_t>(key, value);
    else if (key == "--seconds") s.seconds = bench::parse_number<double>(key, value);
    else if (key == "--searcher") s.searcher = value;
    else if (key == "--seed") s.seed = bench::parse_number<std::uint64_t>(key, value);
    else if (key == "--copy-kernel-trials") s.copy_kernel_trials = bench::parse_number<std::size_t>(key, value);
    else if (key == "--copy-variants") s.copy_variants = bench::split_list(value, ';');
    else if (arg == "--copy-sweep") s.copy_sweep = true;
    else if (key == "--runs-per-sample") s.runs_per_sample = bench::parse_number<int>(key, value, 1);
    else if (arg == "--memcpy-placement") s.memcpy_placement = true;
    else if (key == "--canary-bytes") s.canary_bytes = bench::parse_number<std::size_t>(key, value);
    else if (arg == "--graph") { s.graph = true; s.selection += "_graph"; }
    else if (arg == "--programmatic") { s.programmatic = true; s.selection += "_pdl"; }
    else throw Error(ErrorCode::invalid_argument, "unknown argument " + arg);
  }
  bench::check_choices("--families", s.families, {"elementwise", "reduction", "layernorm"});
  bench::check_choices("--norms", s.norms, {"layernorm", "rmsnorm"});
  bench::check_choices("--dtypes", s.dtypes, {"f32", "f16", "bf16"});
  bench::check_searcher("--searcher", s.searcher);
  return s;
}

/// The benchmark suite of the issue, for the selected families, norms and dtypes.
std::vector<Task> suite(const Settings& s) {
  std::vector<Task> tasks;
  auto in = [](const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
  };
  for (const std::string& dtype : s.dtypes) {
    for (const char* shape : {"1x268435456", "32768x4096"}) {
      if (in(s.families, "elementwise")) tasks.push_back({"elementwise", shape, {{"dtype", dtype}, {"fn", "gelu_tanh"}}});
      if (in(s.families, "reduction")) tasks.push_back({"reduction", shape, {{"dtype", dtype}, {"fn", "sum"}}});
    }
    if (in(s.families, "layernorm")) {
      // The suite's shapes, then any other ROWSxHIDDEN named by --shapes (e.g. the same
      // hidden at several row counts: a launch's fixed cost against its streaming rate).
      std::vector<std::string> norm_shapes = {"32768x1024", "32768x4096", "8192x16384", "4096x65536"};
      for (const std::string& shape : s.shapes)
        if (!in(norm_shapes, shape) && shape != "1x268435456") norm_shapes.push_back(shape);
      for (const std::string& norm : s.norms)
        for (const std::string& shape : norm_shapes)
          tasks.push_back({"layernorm", shape, {{"dtype", dtype}, {"norm", norm}}});
    }
  }
  std::vector<std::string> available;
  for (const Task& t : tasks)
    if (!in(available, t.shape)) available.push_back(t.shape);
  bench::check_subset("--shapes", s.shapes, available);  // a typo is named, never dropped
  if (!s.shapes.empty())
    tasks.erase(std::remove_if(tasks.begin(), tasks.end(),
                               [&](const Task& t) { return !in(s.shapes, t.shape); }),
                tasks.end());
  if (tasks.empty())
    throw Error(ErrorCode::invalid_argument, "the selection names no task");
  return tasks;
}

/// The run's tasks (suite(), which names a --shapes entry outside the suite), with every
/// --variants item checked to name a parameter of a task's template (spaces built for an
/// offline H200) before any GPU work.
std::vector<Task> checked_suite(const Settings& s) {
  std::vector<Task> tasks = suite(s);
  std::vector<SearchSpace> spaces;
  for (const Task& t : tasks) {
    const auto tmpl = find_template(t.family);
    const Problem problem = make_problem(*tmpl, t.shape, t.attrs);  // names a malformed shape
    if (!s.variants.empty()) spaces.push_back(tmpl->space(problem, Device::h200()));
  }
  bench::check_variant_names("--variants", s.variants, spaces);
  return tasks;
}

/// Throws Error naming a --copy-variants item that names no parameter of the copy template.
void check_copy_variants(const Settings& s) {
  if (s.copy_variants.empty()) return;
  const auto copy = find_template("copy");
  bench::check_variant_names(
      "--copy-variants", s.copy_variants,
      {copy->space(make_problem(*copy, "1048576", {{"dtype", "f32"}}), Device::h200())});
}

/// --memcpy-placement: memcpy_gbps of `bytes` (10 calls per sample) from
/// the start of one allocation to a destination `gap` bytes past the source's end, for several
/// gaps, then between fresh allocations three times; prints and returns the rates.
json memcpy_placement(std::size_t bytes, double copy_gbps) {
  const std::size_t mib = std::size_t{1} << 20;
  const std::vector<std::size_t> gaps = {0, 2 * mib, 4 * mib, 8 * mib, 14 * mib, 64 * mib - bytes % (64 * mib),
                                         128 * mib - bytes % (64 * mib), 256 * mib};
  const std::size_t largest = *std::max_element(gaps.begin(), gaps.end());
  detail::DeviceMemory block(2 * bytes + largest);
  check_cuda(cudaMemset(block.get(), 0x3c, 2 * bytes + largest), "cudaMemset");
  json rows = json::array();
  for (const std::size_t gap : gaps) {
    char* base = static_cast<char*>(block.get());
    const double gbps = bench::memcpy_gbps(base + bytes + gap, base, bytes, 10, 15);
    rows.push_back({{"gap_bytes", gap}, {"distance_bytes", bytes + gap}, {"gbps", gbps},
                    {"pct_of_copy", 100.0 * gbps / copy_gbps}});
    std::printf("memcpy %zu bytes to %zu bytes further on: %7.0f GB/s (%5.1f%%)\n", bytes,
                bytes + gap, gbps, 100.0 * gbps / copy_gbps);
  }
  for (int i = 0; i < 3; ++i) {
    const double gbps = bench::copy_bandwidth_gbps(bytes, 10, 15);
    rows.push_back({{"fresh_allocations", i}, {"gbps", gbps}, {"pct_of_copy", 100.0 * gbps / copy_gbps}});
    std::printf("memcpy %zu bytes between fresh allocations: %7.0f GB/s (%5.1f%%)\n", bytes, gbps,
                100.0 * gbps / copy_gbps);
  }
  std::fflush(stdout);
  return rows;
}

/// Tunes `tmpl` on `problem` through `measurer` (the isolated GPU measurer of that problem)
/// with the settings' searcher, at most `trials` trials.
TuneResult tune(GpuMeasurer& measurer, const KernelTemplate& tmpl, const Problem& problem,
                const Device& device, const Settings& settings, std::size_t trials) {
  return bench::tune(tmpl.space(problem, device), settings.searcher, measurer, trials,
                     settings.seconds, settings.seed, 3);
}

/// `bytes` over a trial's median time in GB/s; 0 for a failed or untimed trial.
double trial_gbps(double bytes, const Trial& t) {
  return t.ok() && t.median_ms > 0 ? bytes / (t.median_ms * 1e-3) / 1e9 : 0.0;
}

/// trial_gbps of a trial that may be missing (0 then).
double trial_gbps(double bytes, const std::optional<Trial>& t) {
  return t ? trial_gbps(bytes, *t) : 0.0;
}

/// The tuned winner, the default config and the 2 GiB device copy (the reference) timed
/// side by side after the tuning, in `rounds` alternating rounds (the winner and the default by
/// the task's measurer as during the tuning, the copy as at start): medians over the rounds,
/// so that the task's % of copy compares two figures measured together with one median
/// definition rather than a tuner's pick against an earlier reference.
struct SideBySide {
  double tuned_ms = 0;    ///< median of the winner's rounds (0 without a winner)
  double default_ms = 0;  ///< median of the default's rounds (0 when it did not run)
  double copy_gbps = 0;   ///< median of the reference copy's rounds
  json rounds = json::array();
};

SideBySide time_side_by_side(Measurer& measurer, const std::optional<Config>& best,
                             const std::optional<Config>& fallback, int runs_per_sample,
                             int rounds) {
  SideBySide out;
  if (!best && !fallback) return out;  // nothing to time beside the copy (--trials=0)
  std::vector<double> tuned, defaults, copies;
  auto time = [&](const std::optional<Config>& c, std::vector<double>& into) -> double {
    if (!c) return 0.0;
    const Trial t = measurer.measure({*c}).at(0);
    if (!t.ok()) return 0.0;
    into.push_back(t.median_ms);
    return t.median_ms;
  };
  for (int r = 0; r < rounds; ++r) {
    json round;
    auto copy = [&] {
      copies.push_back(bench::copy_bandwidth_gbps(std::size_t{2} << 30, runs_per_sample, 20));
      round["copy_gbps"] = copies.back();
    };
    if (r % 2 == 1) copy();  // the order alternates: neither side always follows the other
    round["tuned_ms"] = time(best, tuned);
    round["default_ms"] = time(fallback, defaults);
    if (r % 2 == 0) copy();
    out.rounds.push_back(round);
  }
  out.tuned_ms = bench::median(tuned);
  out.default_ms = bench::median(defaults);
  out.copy_gbps = bench::median(copies);
  return out;
}

/// Each "K=V,K=V" override of `space`'s default that gives a valid config (bench::variant_of),
/// measured by `measurer`: {"overrides", "config", "status", "ms", "gbps", "pct_of_copy"}
/// (`bytes` over the median time, against `copy_gbps`).
json measure_variants(const std::vector<std::string>& list, const SearchSpace& space,
                      const KernelTemplate& tmpl, const Problem& problem, Measurer& measurer,
                      double bytes, double copy_gbps) {
  json rows = json::array();
  for (const std::string& overrides : list) {
    const auto config = bench::variant_of(space, tmpl, problem, overrides);
    if (!config) continue;
    const Trial t = measurer.measure({*config}).at(0);
    const double gbps = trial_gbps(bytes, t);
    rows.push_back({{"overrides", overrides}, {"config", config->str()},
                    {"status", to_string(t.status)}, {"ms", t.ok() ? t.median_ms : 0.0},
                    {"gbps", gbps}, {"pct_of_copy", 100.0 * gbps / copy_gbps}});
  }
  return rows;
}

/// Prints measure_variants rows under a task's line, each headed `label`.
void print_variants(const json& rows, const char* label) {
  for (const auto& v : rows)
    std::printf("    %s %-44s %7.0f GB/s (%5.1f%%)  %s\n", label,
                v["overrides"].get<std::string>().c_str(), v["gbps"].get<double>(),
                v["pct_of_copy"].get<double>(), v["status"].get<std::string>().c_str());
}

/// ktune's copy template tuned on a byte count: best bandwidth, its config, trials run.
struct CopyKernelResult {
  double gbps = 0;     ///< bytes moved over the winner's median time; 0 without a valid trial
  std::string config;  ///< the winner ("" without a valid trial)
  std::size_t trials = 0;
  json variants = json::array();  ///< --copy-variants (measure_variants rows)
};

/// ktune's copy template tuned with at most `trials` trials on `bytes` (N f32 elements read, N
/// written: bytes a multiple of 8; f32 so that its widest vector is 16 bytes, as the other
/// templates' are: with f16 elements it moves at most 8 bytes per access), measured like a task,
/// then the `variants` overrides of its default (measure_variants rows, against `copy_gbps`).
CopyKernelResult copy_kernel_gbps(double bytes, const Device& device, Builder& builder,
                                  const RunnerOptions& runner, const Settings& settings,
                                  std::size_t trials, double copy_gbps,
                                  const std::vector<std::string>& variants) {
  const auto copy = find_template("copy");
  const std::int64_t floats = static_cast<std::int64_t>(bytes) / 8;  // read, then written
  const Problem cp = make_problem(*copy, std::to_string(floats), {{"dtype", "f32"}});
  GpuMeasurer measurer(copy, cp, device, builder, runner);
  const TuneResult r = tune(measurer, *copy, cp, device, settings, trials);
  CopyKernelResult out;
  out.trials = r.trials.size();
  out.gbps = trial_gbps(bytes, r.best);
  if (out.gbps > 0) out.config = r.best->config.str();
  // --copy-variants: overrides of the copy template's default on the same bytes.
  out.variants = measure_variants(variants, copy->space(cp, device), *copy, cp,
                                  measurer, bytes, copy_gbps);
  return out;
}

/// --copy-sweep: the copy ceiling against size (see the file comment); returns the JSON.
json copy_sweep(const Device& device, double copy_gbps, const Settings& settings, Builder& builder,
               const RunnerOptions& runner) {
  const std::size_t trials = settings.copy_kernel_trials > 0 ? settings.copy_kernel_trials : 16;
  std::vector<double> sizes;
  // 32 MiB .. 2 GiB moved; 2^27 is also LayerNorm f16 [32768, 1024]'s x read plus y written
  for (int p = 25; p <= 31; ++p) sizes.push_back(static_cast<double>(std::size_t{1} << p));
  json rows = json::array();
  // The time beyond streaming `bytes` at the 2 GiB copy's rate, in us (0 without a figure).
  auto fixed_us = [&](double bytes, double gbps) {
    return gbps > 0 ? (bytes / (gbps * 1e9) - bytes / (copy_gbps * 1e9)) * 1e6 : 0.0;
  };
  // The floor of one launch in the measurer's chained loop: the default copy of 8 KiB moved (one
  // block of work), whose time is almost all launch gap, ramp-up and drain.
  const CopyKernelResult tiny = copy_kernel_gbps(8192.0, device, builder, runner, settings, 1,
                                                 copy_gbps, {});
  const double tiny_us = tiny.gbps > 0 ? 8192.0 / (tiny.gbps * 1e9) * 1e6 : 0.0;
  std::printf("one launch moving 8 KiB (the default copy config): %.2f us\n", tiny_us);
  std::printf("%14s %12s %8s %9s %12s %8s %9s  %s\n", "bytes moved", "kernel GB/s", "% copy",
              "fixed us", "memcpy GB/s", "% copy", "fixed us", "kernel config");
  for (const double bytes : sizes) {
    const CopyKernelResult k = copy_kernel_gbps(bytes, device, builder, runner, settings, trials,
                                                copy_gbps, settings.copy_variants);
    // cudaMemcpyAsync chained as in "copy of the same bytes"; it rotates no buffers, so only
    // sizes beyond twice the L2 say anything about DRAM.
    const bool beyond_l2 = bytes >= 2.0 * device.l2_bytes;
    const double memcpy = beyond_l2 ? bench::copy_bandwidth_gbps(static_cast<std::size_t>(bytes / 2), 10, 15) : 0.0;
    rows.push_back({{"bytes", bytes}, {"kernel_gbps", k.gbps},
                    {"kernel_pct_of_copy", 100.0 * k.gbps / copy_gbps},
                    {"kernel_fixed_us", fixed_us(bytes, k.gbps)}, {"kernel_config", k.config},
                    {"kernel_trials", k.trials}, {"memcpy_gbps", memcpy},
                    {"memcpy_pct_of_copy", 100.0 * memcpy / copy_gbps},
                    {"memcpy_fixed_us", fixed_us(bytes, memcpy)}, {"kernel_variants", k.variants}});
    std::printf("%14.0f %12.0f %7.1f%% %9.2f %12.0f %7.1f%% %9.2f  %s\n", bytes, k.gbps,
                100.0 * k.gbps / copy_gbps, fixed_us(bytes, k.gbps), memcpy,
                100.0 * memcpy / copy_gbps, fixed_us(bytes, memcpy), k.config.c_str());
    std::fflush(stdout);
  }
  return {{"rows", rows}, {"copy_gbps", copy_gbps}, {"one_launch_8kib_us", tiny_us}};
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", std::localtime(&now));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings settings = parse_args(argc, argv);
    // A copy sweep runs no task; otherwise the selection is checked before the device.
    const std::vector<Task> tasks = settings.copy_sweep ? std::vector<Task>{} : checked_suite(settings);
    check_copy_variants(settings);
    if (auto why = cuda_unavailable_reason()) {
      std::fprintf(stderr, "gpu_memory_bound: %s\n", why->c_str());
      return 77;
    }
    const Device device = query_device(0);
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    // The reference: timed as the candidates are (runs_per_sample copies per event pair).
    const double copy_gbps = bench::copy_bandwidth_gbps(std::size_t{2} << 30, settings.runs_per_sample, 20);
    std::printf("%s: device-to-device copy %.0f GB/s (2 GiB, read + write)\n", device.name.c_str(),
                copy_gbps);

    // One builder and one measurement setting for the tasks and the copy checks alike.
    Builder builder(bench::tuning_builder_options());
    RunnerOptions runner;
    runner.seed_pool = 1;
    runner.timing.min_time_ms = 20;
    runner.timing.runs_per_sample = settings.runs_per_sample;
    runner.canary_bytes = settings.canary_bytes;
    runner.timing.graph = settings.graph;
    runner.timing.programmatic_launch = settings.programmatic;
    json placement;
    if (settings.memcpy_placement)  // about half the bytes of LayerNorm f16 [32768, 1024]
      placement = memcpy_placement(std::size_t{32768} * 1024 * 2 + 131072, copy_gbps);
    if (settings.copy_sweep) {
      json doc = copy_sweep(device, copy_gbps, settings, builder, runner);
      doc["benchmark"] = "gpu_memory_bound --copy-sweep";
      doc["runs_per_sample"] = settings.runs_per_sample;
      doc["graph"] = settings.graph;
      doc["programmatic_launch"] = settings.programmatic;
      if (settings.memcpy_placement) doc["memcpy_placement"] = placement;
      doc["date"] = today();
      doc["device"] = device.name;
      const std::string path = settings.out_dir + "/copy_sweep.json";
      bench::write_json(path, doc);
      std::printf("wrote %s\n", path.c_str());
      return 0;
    }
    const std::string out_path = settings.out_dir + "/memory_bound" + settings.selection + ".json";
    json doc = {{"benchmark", "gpu_memory_bound"}, {"date", today()}, {"device", device.name},
                {"sm_count", device.sm_count}, {"copy_gbps", copy_gbps},
                {"searcher", settings.searcher}, {"trial_budget", settings.trials},
                {"seconds_budget", settings.seconds}, {"runs_per_sample", settings.runs_per_sample},
                {"graph", settings.graph}, {"programmatic_launch", settings.programmatic},
                {"results", json::array()}};
    if (settings.memcpy_placement) doc["memcpy_placement"] = placement;

    std::size_t rows = 0, failed_rows = 0;  // tasks, and tasks without a valid winner
    for (const Task& task : tasks) {
      const auto tmpl = find_template(task.family);
      const Problem problem = make_problem(*tmpl, task.shape, task.attrs);
      const auto workload = tmpl->workload(problem);
      const double bytes = workload->bytes();
      const char* verified_by = workload->device_reference() ? "gpu reference" : "host reference";
      GpuMeasurer measurer(tmpl, problem, device, builder, runner);
      // --trials=0: no tuning, only the variants (e.g. one config under a profiler).
      const TuneResult result = settings.trials > 0
                                    ? tune(measurer, *tmpl, problem, device, settings, settings.trials)
                                    : TuneResult{};

      // The winner and the default re-timed beside the reference copy (SideBySide); the
      // tuner's own figures stay in the row as search_*.
      const std::optional<Config> best_config =
          result.best ? std::optional<Config>(result.best->config) : std::nullopt;
      const std::optional<Config> default_config =
          result.default_trial ? std::optional<Config>(result.default_trial->config) : std::nullopt;
      const SideBySide side = time_side_by_side(measurer, best_config, default_config,
                                                settings.runs_per_sample, kSideBySideRounds);
      const double row_copy = side.copy_gbps > 0 ? side.copy_gbps : copy_gbps;
      const double tuned = side.tuned_ms > 0 ? bytes / (side.tuned_ms * 1e-3) / 1e9 : 0.0;
      const double fallback = side.default_ms > 0 ? bytes / (side.default_ms * 1e-3) / 1e9 : 0.0;
      json row = {{"family", task.family}, {"shape", task.shape}, {"attrs", task.attrs},
                  {"problem", problem.key()}, {"bytes", bytes},
                  {"copy_gbps", row_copy},
                  {"side_by_side_rounds", side.rounds},
                  {"tuned_ms", side.tuned_ms},
                  {"tuned_gbps", tuned}, {"tuned_pct_of_copy", 100.0 * tuned / row_copy},
                  {"tuned_config", result.best ? result.best->config.str() : ""},
                  {"search_tuned_ms", result.best ? result.best->median_ms : 0.0},
                  {"default_ms", side.default_ms},
                  {"default_gbps", fallback},
                  {"default_pct_of_copy", 100.0 * fallback / row_copy},
                  {"search_default_ms", result.default_trial ? result.default_trial->median_ms : 0.0},
                  {"default_status", result.default_trial ? to_string(result.default_trial->status) : "none"},
                  {"trials", result.trials.size()}, {"stop_reason", result.stop_reason},
                  {"verified_by", verified_by},
                  {"elapsed_s", result.elapsed_s}};
      std::printf("%-12s %-12s %-26s tuned %7.0f GB/s (%5.1f%%)  default %7.0f GB/s (%5.1f%%)  "
                  "%zu trials %.0f s  %s\n",
                  task.family.c_str(), task.shape.c_str(), problem.key().c_str(), tuned,
                  100.0 * tuned / row_copy, fallback, 100.0 * fallback / row_copy,
                  result.trials.size(), result.elapsed_s,
                  result.best ? result.best->config.str().c_str() : "(no valid trial)");
      // The ceiling of a kernel moving these bytes: a device copy of the same size (half read,
      // half written), chained 10 per event pair as the measurer chains a candidate's runs.
      const std::size_t half = (static_cast<std::size_t>(bytes / 2) + 15) / 16 * 16;
      const double same_copy = bench::copy_bandwidth_gbps(half, 10, 15);
      row["same_bytes_copy_gbps"] = same_copy;
      row["same_bytes_copy_pct_of_copy"] = 100.0 * same_copy / row_copy;
      std::printf("    copy of the same bytes                           %7.0f GB/s (%5.1f%%)\n",
                  same_copy, 100.0 * same_copy / row_copy);
      // ... and ktune's own copy kernel tuned on those bytes (N f32 elements read, N written),
      // measured like the task: is the same-size ceiling cudaMemcpyAsync's or the size's?
      if (settings.copy_kernel_trials > 0 && static_cast<std::int64_t>(bytes) % 8 == 0) {
        const CopyKernelResult k = copy_kernel_gbps(bytes, device, builder, runner, settings,
                                                    settings.copy_kernel_trials, row_copy,
                                                    settings.copy_variants);
        row["same_bytes_copy_kernel_gbps"] = k.gbps;
        row["same_bytes_copy_kernel_pct_of_copy"] = 100.0 * k.gbps / row_copy;
        row["same_bytes_copy_kernel_config"] = k.config;
        std::printf("    copy kernel of the same bytes (%2zu trials) %13.0f GB/s (%5.1f%%)  %s\n",
                    k.trials, k.gbps, 100.0 * k.gbps / row_copy,
                    k.config.empty() ? "(no valid trial)" : k.config.c_str());
        print_variants(k.variants, "copy kernel variant");
        if (!k.variants.empty()) row["same_bytes_copy_kernel_variants"] = k.variants;
      }
      // Variants of the default config, timed by the same measurer after the tuning.
      row["variants"] = measure_variants(settings.variants, tmpl->space(problem, device), *tmpl,
                                         problem, measurer, bytes, row_copy);
      print_variants(row["variants"], "variant");
      std::fflush(stdout);
      doc["results"].push_back(row);
      bench::write_json(out_path, doc);
      ++rows;
      if (settings.trials > 0 && tuned <= 0) ++failed_rows;
    }
    std::printf("wrote %s\n", out_path.c_str());
    return bench::exit_status(
        "gpu_memory_bound", failed_rows, rows,
        "no valid time for the winner (no config passed, or its side-by-side re-timing "
        "failed): tuned_ms is 0 in the JSON and on the task's line above");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_memory_bound: %s\n", e.what());
    return 1;
  }
}
