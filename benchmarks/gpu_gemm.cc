// GPU benchmark of the gemm templates against cuBLAS in the same process (issue 8): for each
// shape of the suite (square, LLM, skinny M, K-heavy, odd) and dtype (f32 -> gemm_simt,
// f16 / bf16 -> gemm_mma), tunes the template with a searcher at a stated trial budget
// through the isolated GPU measurer, re-times the winner, the template's default config and
// cuBLAS with one identical CUDA-event loop, checks both configs' outputs against cuBLAS's,
// and prints TFLOP/s, the ratio to cuBLAS, the fraction of HBM bandwidth and geometric means
// per dtype and group.
//
// Usage: gpu_gemm OUT.json [--budget=N] [--seconds=S] [--searcher=NAME]
//                          [--dtypes=f32,f16,bf16] [--groups=square,llm,skinny,kheavy,odd]
//                          [--shapes=MxNxK,...] [--layout=NT] [--seed=S]
//                          [--template=NAME] [--variants="K=V,K=V;K=V"] [--rounds=N]
//                          [--loop-ms=T] [--calls-per-sample=N]
//                          [--cublaslt="[DTYPE/]A:T:S:W:C[:CL];..."]
// --budget is the trial budget per shape (1: the default config alone; 0: none, only with a
// --seconds cap), --seconds a tuning wall-time cap per shape (0 =
// none), --shapes keeps only the listed shapes of the chosen groups, so a long suite can be
// split into device calls of a few minutes. The issue's targets (SIMT fp32 >= 0.85x cuBLAS on
// 4096^3 / 8192^3, mma f16/bf16 >= 0.70x at 4096^3, judged only on rows gemm_mma ran, since
// it is the mma.sync target; skinny M <= 64 geomean >= 1.0x) are printed next to the ratios
// they judge and stored in the JSON ("targets"). --template names
// the f16/bf16 templates (default gemm_mma; e.g. gemm_wgmma or gemm_mma,gemm_wgmma): each one
// that can run the shape is tuned with the budget and the fastest is "ktune" (every
// template's result is kept under "candidates"); --variants are overrides of each
// shape's default config, timed in the same event loop after cuBLAS and checked against it
// (skipped where a name or value is outside the space or the config cannot run the shape).
// Each row records the median SM clock and board power (NVML) sampled while ktune's and
// cuBLAS's loops ran (ktune_sm_mhz, cublas_power_w, ...; -1 without NVML; "power_reading":
// instantaneous, or the one-second average; only readings taken one refresh window, 200 ms /
// 1 s, after a loop started count, since earlier ones show what ran before it: -1 for shorter
// loops; the row's medians skip rounds without a reading). --rounds=N (default
// 1) times the ktune / cuBLAS pair N times in alternating order and reports the round whose
// ratio is the median (the lower middle one for even N; every round is kept under "rounds").
// HBM % is against the copy bandwidth measured at start ("copy_gbps"); the per-dtype
// geometric mean counts a shape once (4096^3 is in two groups). The program exits 1 when a
// row failed (its "error" is in the JSON) or the selection named no shape. Each loop samples
// at least 100 ms or 300 samples, whichever comes first (a faster kernel runs a shorter loop);
// --loop-ms=T makes every loop sample for T ms, so that both sides run equally long (the GPU's
// clock under its power limit moves with how long a loop has run); the row records it.
// --calls-per-sample=N (default 1) times N back-to-back calls between each sample's two events,
// so that the host's launch cost of one call hides behind the previous call's kernel (a
// library whose launch path is slower is otherwise charged for it).
// --cublaslt names cuBLASLt algorithm configs (algo:tile:stages:swizzle:custom[:cluster], the
// numeric ids gpu_cublaslt_kernels reports, e.g. NVIDIA's own mma.sync kernels; "f16/..." or
// "bf16/..." keeps one to that dtype's rows) run on the same buffers as peers of f16 / bf16
// rows: each is checked against cuBLAS, then each of the --rounds rounds times cuBLAS, ktune's
// winner and the peer back to back, the order rotating by one each round, every loop's SM
// clock sampled (row "cublaslt_peers": the medians of the peer's and ktune's ratios to cuBLAS,
// of ktune's speed over the peer's, and of each side's clock).
// C is row-major; layout letters as in templates/gemm/gemm_problem.h; alpha = 1.5,
// beta = 0.5, no bias, C in the input dtype (out=same) for every library. cuBLAS is loaded
// at run time (dlopen libcublas.so.13/.12), so the program links nothing beyond ktune.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "json_output.h"
#include "builtin_templates.h"
#include "cuda_module.h"
#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/template.h"
#include "ktune/tuner.h"
#include "gpu_bench_support.h"
#include "launch_plan_runner.h"
#include "templates/gemm/gemm_problem.h"
#include "cublas_api.h"
#include "cublaslt_problem.h"

using namespace ktune;
using detail::check_cuda;
using nlohmann::json;

namespace {

/// Command-line settings.
struct Settings {
  std::string out_path;
  std::size_t budget = 48;
  double seconds = 0;
  std::string searcher = "genetic";
  std::vector<std::string> dtypes = {"f32", "f16", "bf16"};
  std::vector<std::string> groups = {"square", "llm", "skinny", "kheavy", "odd"};
  std::vector<std::string> shapes;  // "MxNxK"; empty = every shape of the groups
  std::string layout = "NT";
  std::uint64_t seed = 1;
  std::vector<std::string> mma_templates = {"gemm_mma"};  // the f16 / bf16 templates
  std::vector<std::string> variants;      // "K=V,K=V" overrides of the default config
  int rounds = 1;                         // timed (ktune, cuBLAS) pairs per shape
  bench::EventLoop loop;                  // how each side's loop samples (--loop-ms)
  std::vector<std::string> cublaslt;      // cuBLASLt configs timed as peers (--cublaslt)
};

/// One shape of the suite.
struct Shape {
  std::string group;
  std::int64_t M, N, K;
};

/// A --cublaslt item: the dtype it is kept to ("" = every f16 / bf16 row) and its config.
/// Throws Error(invalid_argument) naming the item when either part is malformed.
std::pair<std::string, bench::LtConfig> peer_config(const std::string& item) {
  const auto slash = item.find('/');
  const std::string dtype = slash == std::string::npos ? "" : item.substr(0, slash);
  if (slash != std::string::npos && dtype != "f16" && dtype != "bf16")
    throw Error(ErrorCode::invalid_argument,
                "--cublaslt '" + item + "': the dtype before '/' must be f16 or bf16");
  return {dtype, bench::LtConfig::parse("--cublaslt", slash == std::string::npos ? item : item.substr(slash + 1))};
}

Settings parse_args(int argc, char** argv) {
  Settings s;
  s.out_path = bench::output_argument(
      argc, argv,
      "usage: gpu_gemm OUT.json [--budget=N] [--seconds=S] [--searcher=NAME] [--seed=S] "
      "[--dtypes=f32,f16,bf16] [--groups=square,llm,skinny,kheavy,odd] [--shapes=MxNxK,...] "
      "[--layout=NN|NT|TN|TT] [--template=NAME,...] [--variants=\"K=V,K=V;K=V\"] "
      "[--loop-ms=T] [--calls-per-sample=N] [--rounds=N] "
      "[--cublaslt=\"[DTYPE/]A:T:S:W:C[:CL];...\"]");
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto [key, value] = bench::option_parts(arg);
    if (key == "--budget") s.budget = bench::parse_number<std::size_t>(key, value);
    else if (key == "--seconds") s.seconds = bench::parse_number<double>(key, value);
    else if (key == "--shapes") s.shapes = bench::split_list(value);
    else if (key == "--searcher") s.searcher = value;
    else if (key == "--dtypes") s.dtypes = bench::split_list(value);
    else if (key == "--groups") s.groups = bench::split_list(value);
    else if (key == "--layout") s.layout = value;
    else if (key == "--seed") s.seed = bench::parse_number<std::uint64_t>(key, value);
    else if (key == "--template") s.mma_templates = bench::split_list(value);
    else if (key == "--variants") s.variants = bench::split_list(value, ';');
    else if (key == "--cublaslt") {
      s.cublaslt = bench::split_list(value, ';');
      if (s.cublaslt.empty())  // e.g. a script that found no peer to pass
        throw Error(ErrorCode::invalid_argument, "--cublaslt: expected at least one config");
      for (const auto& text : s.cublaslt) peer_config(text);  // throws naming a bad one
    } else if (key == "--calls-per-sample")
      s.loop.calls_per_sample = bench::parse_number<int>(key, value, 1);
    else if (key == "--loop-ms") {
      // every loop samples for this long whatever its kernel's time (both sides equally long)
      s.loop.min_total_ms = bench::parse_number<double>(key, value, 1.0);
      s.loop.max_samples = 1000000;
    } else if (key == "--rounds") {
      s.rounds = bench::parse_number<int>(key, value, 1);
      if (s.rounds > 99)
        throw Error(ErrorCode::invalid_argument, "--rounds=" + value + ": expected 1 to 99");
    }
    else throw Error(ErrorCode::invalid_argument, "unknown option " + arg);
  }
  bench::check_choices("--dtypes", s.dtypes, {"f32", "f16", "bf16"});
  bench::check_choices("--groups", s.groups, {"square", "llm", "skinny", "kheavy", "odd"});
  bench::check_choices("--layout", {s.layout}, {"NN", "NT", "TN", "TT"});
  bench::check_choices("--template", s.mma_templates, {"gemm_mma", "gemm_wgmma"});
  bench::check_searcher("--searcher", s.searcher);
  bench::check_budget_ends(s.budget, s.seconds, "--seconds");
  return s;
}

/// "MxNxK" of a shape.
std::string shape_text(std::int64_t M, std::int64_t N, std::int64_t K) {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

/// The issue-8 shape suite, restricted to `groups` (and to `shapes` when not empty).
std::vector<Shape> suite(const std::vector<std::string>& groups,
                         const std::vector<std::string>& shapes) {
  std::vector<Shape> all;
  for (std::int64_t n : {1024, 2048, 4096, 8192}) all.push_back({"square", n, n, n});
  for (std::int64_t m : {4096, 8192})
    for (std::int64_t n : {4096, 11008, 14336})
      for (std::int64_t k : {4096, 11008, 14336}) all.push_back({"llm", m, n, k});
  for (std::int64_t m : {1, 8, 16, 32, 64, 127}) all.push_back({"skinny", m, 8192, 8192});
  all.push_back({"kheavy", 512, 512, 65536});
  all.push_back({"odd", 1000, 1000, 1000});
  all.push_back({"odd", 4097, 4095, 4093});
  std::vector<Shape> chosen;
  for (const auto& s : all)
    if (std::find(groups.begin(), groups.end(), s.group) != groups.end() &&
        (shapes.empty() ||
         std::find(shapes.begin(), shapes.end(), shape_text(s.M, s.N, s.K)) != shapes.end()))
      chosen.push_back(s);
  return chosen;
}

/// Throws Error naming every --shapes entry that is not a shape of the chosen groups.
void check_shapes(const Settings& settings) {
  if (settings.shapes.empty()) return;
  std::vector<std::string> available;
  for (const auto& s : suite(settings.groups, {})) {
    const std::string text = shape_text(s.M, s.N, s.K);
    if (std::find(available.begin(), available.end(), text) == available.end())
      available.push_back(text);  // 4096^3 is in two groups
  }
  bench::check_subset("--shapes", settings.shapes, available);
}

/// A target of issue 8: the geometric mean of the ratio to cuBLAS over the rows it judges.
struct Target {
  std::string name;    ///< what it judges
  double min_ratio;    ///< geomean ratio needed
  /// Rows it covers: dtype, shape and the template that won the row.
  std::function<bool(const std::string& dtype, const Shape& shape, const std::string& tmpl)> judges;
};

/// The issue's targets on the H200.
const std::vector<Target>& issue_targets() {
  static const std::vector<Target> targets = {
      {"SIMT f32 square 4096^3, 8192^3 >= 0.85x cuBLAS", 0.85,
       [](const std::string& d, const Shape& s, const std::string&) {
         return d == "f32" && s.group == "square" && s.M >= 4096;
       }},
      {"mma.sync (gemm_mma) f16 4096^3 >= 0.70x cuBLAS", 0.70,
       [](const std::string& d, const Shape& s, const std::string& t) {
         return d == "f16" && s.group == "square" && s.M == 4096 && t == "gemm_mma";
       }},
      {"mma.sync (gemm_mma) bf16 4096^3 >= 0.70x cuBLAS", 0.70,
       [](const std::string& d, const Shape& s, const std::string& t) {
         return d == "bf16" && s.group == "square" && s.M == 4096 && t == "gemm_mma";
       }},
      {"skinny f16 M <= 64 geomean >= 1.0x cuBLAS", 1.0,
       [](const std::string& d, const Shape& s, const std::string&) {
         return d == "f16" && s.group == "skinny" && s.M <= 64;
       }},
      {"skinny bf16 M <= 64 geomean >= 1.0x cuBLAS", 1.0,
       [](const std::string& d, const Shape& s, const std::string&) {
         return d == "bf16" && s.group == "skinny" && s.M <= 64;
       }},
      {"skinny f32 M <= 64 geomean >= 1.0x cuBLAS", 1.0,
       [](const std::string& d, const Shape& s, const std::string&) {
         return d == "f32" && s.group == "skinny" && s.M <= 64;
       }},
  };
  return targets;
}

/// "0.85" style text of the target a row is judged by, or "" when none.
std::string row_target(const std::string& dtype, const Shape& shape, const std::string& tmpl) {
  for (const auto& t : issue_targets())
    if (t.judges(dtype, shape, tmpl)) {
      char text[16];
      std::snprintf(text, sizeof text, ">=%.2f", t.min_ratio);
      return text;
    }
  return "";
}

/// The templates tuned for a dtype: gemm_simt for f32, the `mma_templates` otherwise.
std::vector<std::shared_ptr<const KernelTemplate>> gemm_templates_for(
    const std::string& dtype, const std::vector<std::string>& mma_templates) {
  if (dtype == "f32") return {find_template("gemm_simt")};
  std::vector<std::shared_ptr<const KernelTemplate>> list;
  for (const auto& name : mma_templates) list.push_back(find_template(name));
  return list;
}

/// Throws Error naming a --variants item that names no parameter of the templates the run tunes
/// (checked on a 1024^3 problem of each dtype, before the device).
void check_variants(const Settings& settings) {
  if (settings.variants.empty()) return;
  std::vector<SearchSpace> spaces;
  for (const std::string& dtype : settings.dtypes)
    for (const auto& tmpl : gemm_templates_for(dtype, settings.mma_templates)) {
      try {
        spaces.push_back(tmpl->space(
            make_problem(*tmpl, "1024x1024x1024", {{"dtype", dtype}, {"layout", settings.layout}}),
            Device::h200()));
      } catch (const Error&) {  // a template that cannot take this dtype or layout: the run says so
      }
    }
  bench::check_variant_names("--variants", settings.variants, spaces);
}

/// One config compiled, loaded and bound to the shared workload buffers plus its own scratch
/// (split-K workspace), ready to be launched repeatedly.
class LoadedConfig {
 public:
  /// Builds and loads `config`; throws Error when it does not compile.
  LoadedConfig(const KernelTemplate& tmpl, const Problem& problem, const Config& config,
               const Device& device, Builder& builder,
               const std::vector<detail::DeviceBuffer>& workload_buffers)
      : plan_(tmpl.launch(problem, config, device)), buffers_(workload_buffers) {
    BuildResult built = builder.build(tmpl, problem, config, device);
    if (!built.ok)
      throw Error(ErrorCode::compile_error, config.str() + " does not compile: " + built.log);
    module_ = std::make_unique<detail::CudaModule>(*built.cubin);
    scratch_.reserve(plan_.scratch.size());
    for (const auto& sc : plan_.scratch) {
      const std::size_t bytes = sc.elements * dtype_size(sc.dtype);
      scratch_.emplace_back(bytes);
      buffers_.push_back({scratch_.back().get(), bytes});
    }
  }
  /// Enqueues every step of the plan on the default stream; throws Error on launch failures.
  void run() {
    detail::CudaStatus status = detail::run_launch_plan(*module_, plan_, buffers_, nullptr);
    if (!status.ok()) throw Error(ErrorCode::cuda_error, status.message);
  }

 private:
  LaunchPlan plan_;
  std::unique_ptr<detail::CudaModule> module_;
  std::vector<detail::DeviceMemory> scratch_;
  std::vector<detail::DeviceBuffer> buffers_;  // workload buffers, then scratch
};

/// The --cublaslt peers of one row on its buffers: each config checked (`check_c`: rel_l2 of
/// C after one run from the starting C, which `reset_c` restores), then per round cuBLAS, ktune
/// and the peer timed back to back; the medians of the rounds' ratios, and the peer's TFLOP/s
/// (`flops` over its median time).
json cublaslt_peers(const Settings& settings, const std::string& dtype, const gemm::GemmShape& s,
                    const std::vector<detail::DeviceBuffer>& buffers,
                    const std::function<void()>& run_cublas, const std::function<void()>& run_ktune,
                    const std::function<void()>& reset_c, const std::function<double()>& check_c,
                    double flops) {
  json peers = json::array();
  if (s.precision != gemm::Precision::f16 && s.precision != gemm::Precision::bf16) return peers;
  bench::LtProblem lt(s);
  for (const auto& item : settings.cublaslt) {
    const auto [only_dtype, config] = peer_config(item);
    if (!only_dtype.empty() && only_dtype != dtype) continue;
    json peer = config.to_json();
    cublasLtMatmulAlgo_t algo;
    if (!lt.configure(config, &algo)) {
      peer["skipped"] = "cuBLASLt refuses this config for the problem";
      peers.push_back(peer);
      continue;
    }
    const std::function<void()> run_peer = [&] { lt.run(algo, buffers[0].ptr, buffers[1].ptr, buffers[2].ptr); };
    try {
      reset_c();
      run_peer();
      check_cuda(cudaDeviceSynchronize(), "cuBLASLt peer run");
      peer["rel_l2_vs_cublas"] = check_c();
      std::vector<double> peer_ratio, ktune_ratio, ktune_over_peer;
      std::vector<int> peer_mhz, ktune_mhz, cublas_mhz;
      json rounds = json::array();
      for (int round = 0; round < settings.rounds; ++round) {
        // cuBLAS, ktune, peer; then ktune, peer, cuBLAS; then peer, cuBLAS, ktune; ...
        const std::function<void()>* runs[3] = {&run_cublas, &run_ktune, &run_peer};
        double ms[3] = {0, 0, 0};
        bench::SensorReading sensed[3];
        json order = json::array();
        for (int i = 0; i < 3; ++i) {
          const int side = (i + round) % 3;
          order.push_back(side == 0 ? "cublas" : side == 1 ? "ktune" : "peer");
          sensed[side] = bench::sample_sensors(bench::device0_sensor(), [&] {
            ms[side] = bench::event_median_ms(*runs[side], settings.loop);
          });
        }
        const double c = ms[0], k = ms[1], p = ms[2];
        peer_ratio.push_back(c / p);
        ktune_ratio.push_back(c / k);
        ktune_over_peer.push_back(p / k);
        cublas_mhz.push_back(sensed[0].sm_mhz);
        ktune_mhz.push_back(sensed[1].sm_mhz);
        peer_mhz.push_back(sensed[2].sm_mhz);
        rounds.push_back({{"order", order}, {"cublas_ms", c}, {"ktune_ms", k}, {"peer_ms", p},
                          {"cublas_sm_mhz", sensed[0].sm_mhz}, {"ktune_sm_mhz", sensed[1].sm_mhz},
                          {"peer_sm_mhz", sensed[2].sm_mhz}});
      }
      peer["rounds"] = rounds;
      peer["ratio"] = bench::median(peer_ratio);
      peer["ktune_ratio"] = bench::median(ktune_ratio);
      peer["ktune_over_peer"] = bench::median(ktune_over_peer);
      peer["cublas_sm_mhz"] = bench::known_median(cublas_mhz);
      peer["ktune_sm_mhz"] = bench::known_median(ktune_mhz);
      peer["peer_sm_mhz"] = bench::known_median(peer_mhz);
      std::vector<double> peer_ms;
      for (const auto& r : rounds) peer_ms.push_back(r["peer_ms"].get<double>());
      peer["tflops"] = flops / bench::median(peer_ms) / 1e9;
    } catch (const Error& e) {
      peer["error"] = e.what();
      cudaGetLastError();
    }
    peers.push_back(peer);
  }
  return peers;
}

/// Tunes one shape and times the winner and the default config next to cuBLAS.
json run_shape(const Settings& settings, const std::string& dtype, const Shape& shape,
               const Device& device, Builder& builder, cublasHandle_t handle, double copy_gbps) {
  const std::string dims = shape_text(shape.M, shape.N, shape.K);
  json row = {{"dtype", dtype}, {"group", shape.group}, {"shape", dims}, {"M", shape.M},
              {"N", shape.N}, {"K", shape.K}};

  // 1. Tune each template that can run the shape through the isolated measurer
  //    (verification, timing, L2 policy of the runner); the fastest tuned result wins.
  std::shared_ptr<const KernelTemplate> tmpl;
  std::optional<Problem> chosen_problem;
  std::optional<SearchSpace> chosen_space;
  TuneResult result;
  json candidates = json::array();
  for (const auto& candidate : gemm_templates_for(dtype, settings.mma_templates)) {
    Problem p = make_problem(*candidate, dims, {{"dtype", dtype}, {"layout", settings.layout}});
    SearchSpace sp = candidate->space(p, device);
    std::string why;
    if (!candidate->can_implement(p, sp.default_config(), &why)) {
      candidates.push_back({{"template", candidate->name()}, {"skipped", why}});
      continue;
    }
    GpuMeasurer measurer(candidate, p, device, builder);
    TuneResult r = bench::tune(sp, settings.searcher, measurer, settings.budget, settings.seconds,
                               settings.seed, TunerOptions{}.top_k);
    json c = {{"template", candidate->name()}, {"trials", r.trials.size()},
              {"tuning_s", r.elapsed_s}};
    if (r.best) c["best_config"] = r.best->config.str(), c["tuned_ms"] = r.best->median_ms;
    candidates.push_back(c);
    if (r.best && (!tmpl || !result.best || r.best->median_ms < result.best->median_ms)) {
      tmpl = candidate;
      chosen_problem = p;
      chosen_space = sp;
      result = std::move(r);
    }
  }
  row["candidates"] = candidates;
  if (!tmpl) {
    row["error"] = "no template can run this shape";
    return row;
  }
  const Problem& problem = *chosen_problem;
  const SearchSpace& space = *chosen_space;
  const gemm::GemmShape s = gemm::gemm_shape(problem);
  row["template"] = tmpl->name();
  row["problem"] = problem.key();
  row["trials"] = result.trials.size();
  row["stop_reason"] = result.stop_reason;
  json statuses = json::object();
  for (const auto& [status, count] : result.status_counts) statuses[to_string(status)] = count;
  row["statuses"] = statuses;
  if (result.default_trial && result.default_trial->ok()) {
    row["default_ms"] = result.default_trial->median_ms;
    row["default_config"] = result.default_trial->config.str();
  }
  row["tuning_s"] = result.elapsed_s;
  if (!result.best) {
    row["error"] = "no candidate succeeded";
    return row;
  }
  const Config best = result.best->config;
  row["best_config"] = best.str();
  row["tuned_ms"] = result.best->median_ms;

  // 2. Same process, same event loop: the winner, the default config and cuBLAS on the same
  //    buffers (each config with its own split-K workspace).
  auto workload = tmpl->workload(problem);
  std::vector<HostBuffer> host;
  for (const auto& spec : workload->buffers()) host.push_back(make_host_buffer(spec));
  workload->fill(host, 42);
  std::vector<detail::DeviceMemory> memory;
  std::vector<detail::DeviceBuffer> buffers;
  memory.reserve(host.size());
  for (const auto& b : host) {
    memory.emplace_back(b.bytes.size());
    buffers.push_back({memory.back().get(), b.bytes.size()});
    check_cuda(cudaMemcpy(memory.back().get(), b.bytes.data(), b.bytes.size(),
                          cudaMemcpyHostToDevice), "upload");
  }
  LoadedConfig tuned(*tmpl, problem, best, device, builder, buffers);
  LoadedConfig fallback(*tmpl, problem, space.default_config(), device, builder, buffers);
  HostBuffer& c_host = host[2];
  auto reset_c = [&] {
    check_cuda(cudaMemcpy(buffers[2].ptr, c_host.bytes.data(), c_host.bytes.size(),
                          cudaMemcpyHostToDevice), "reset C");
  };
  auto download_c = [&] {
    HostBuffer c{c_host.spec, std::vector<std::uint8_t>(c_host.bytes.size())};
    check_cuda(cudaMemcpy(c.bytes.data(), buffers[2].ptr, c.bytes.size(), cudaMemcpyDeviceToHost),
               "download C");
    return c;
  };
  auto run_ktune = [&] { tuned.run(); };
  auto run_default = [&] { fallback.run(); };
  auto run_cublas = [&] { bench::cublas_gemm(handle, s, buffers[0].ptr, buffers[1].ptr, buffers[2].ptr); };

  reset_c();
  run_ktune();
  check_cuda(cudaDeviceSynchronize(), "ktune run");
  HostBuffer ours = download_c();
  reset_c();
  run_default();
  check_cuda(cudaDeviceSynchronize(), "default config run");
  HostBuffer defaults = download_c();
  reset_c();
  run_cublas();
  check_cuda(cudaDeviceSynchronize(), "cublas run");
  HostBuffer theirs = download_c();
  row["rel_l2_vs_cublas"] = bench::rel_l2(ours, theirs);
  row["default_rel_l2_vs_cublas"] = bench::rel_l2(defaults, theirs);
  row["tolerance"] = workload->tolerance(c_host.spec).rel_l2;

  // Each loop with the SM clock and board power sampled: a ratio between loops that ran at
  // different clocks (the power limit) says so in the JSON. --rounds=N times the pair N
  // times, the order alternating (ktune first in even rounds); the row is the round whose
  // ratio is the median (the lower of the middle two for an even count, never the better
  // one), so its times, TFLOP/s and ratio come from one side-by-side pair (cuBLAS's own
  // clock moved by +-5 % between device calls in session 6, which one pair of loops cannot
  // separate from ktune). The row's sensor readings are the medians over the rounds.
  std::vector<double> ktune_rounds, cublas_rounds, ratio_rounds, ktune_w, cublas_w;
  std::vector<int> ktune_mhz, cublas_mhz;
  const auto& sensor = bench::device0_sensor();
  json rounds = json::array();
  for (int round = 0; round < settings.rounds; ++round) {
    double k = 0, c = 0;
    bench::SensorReading ks, cs;
    auto time_ktune = [&] {
      ks = bench::sample_sensors(sensor, [&] { k = bench::event_median_ms(run_ktune, settings.loop); });
    };
    auto time_cublas = [&] {
      cs = bench::sample_sensors(sensor, [&] { c = bench::event_median_ms(run_cublas, settings.loop); });
    };
    if (round % 2 == 0) time_ktune(), time_cublas();
    else time_cublas(), time_ktune();
    ktune_rounds.push_back(k);
    cublas_rounds.push_back(c);
    ratio_rounds.push_back(c / k);
    ktune_mhz.push_back(ks.sm_mhz);
    cublas_mhz.push_back(cs.sm_mhz);
    ktune_w.push_back(ks.power_w);
    cublas_w.push_back(cs.power_w);
    rounds.push_back({{"ktune_ms", k}, {"cublas_ms", c}, {"ratio", c / k},
                      {"ktune_sm_mhz", ks.sm_mhz}, {"cublas_sm_mhz", cs.sm_mhz},
                      {"ktune_power_w", ks.power_w}, {"cublas_power_w", cs.power_w}});
  }
  std::vector<std::size_t> by_ratio(ratio_rounds.size());
  for (std::size_t i = 0; i < by_ratio.size(); ++i) by_ratio[i] = i;
  std::sort(by_ratio.begin(), by_ratio.end(),
            [&](std::size_t a, std::size_t b) { return ratio_rounds[a] < ratio_rounds[b]; });
  const std::size_t median_round = by_ratio[(by_ratio.size() - 1) / 2];
  const double ktune_ms = ktune_rounds[median_round], cublas_ms = cublas_rounds[median_round];
  const double default_ms = bench::event_median_ms(run_default, settings.loop);
  if (settings.rounds > 1) row["rounds"] = rounds, row["median_round"] = median_round;
  row["loop_min_ms"] = settings.loop.min_total_ms;
  row["loop_max_samples"] = settings.loop.max_samples;
  row["loop_calls_per_sample"] = settings.loop.calls_per_sample;
  row["ktune_sm_mhz"] = bench::known_median(ktune_mhz);
  row["ktune_power_w"] = bench::known_median(ktune_w);
  row["cublas_sm_mhz"] = bench::known_median(cublas_mhz);
  row["cublas_power_w"] = bench::known_median(cublas_w);
  const double flops = workload->flops(), bytes = workload->bytes();
  row["ktune_ms"] = ktune_ms;
  row["default_same_loop_ms"] = default_ms;
  row["cublas_ms"] = cublas_ms;
  row["ktune_tflops"] = flops / ktune_ms / 1e9;
  row["default_tflops"] = flops / default_ms / 1e9;
  row["cublas_tflops"] = flops / cublas_ms / 1e9;
  row["ratio"] = ratio_rounds[median_round];
  row["default_ratio"] = cublas_ms / default_ms;
  row["ktune_hbm_fraction"] = bytes / ktune_ms / 1e6 / copy_gbps;
  row["cublas_hbm_fraction"] = bytes / cublas_ms / 1e6 / copy_gbps;

  // 3. Variants of the default config: checked against cuBLAS, timed in the same loop.
  const json variants = bench::variant_rows(
      settings.variants, space, *tmpl, problem, flops, cublas_ms, [&](const Config& config) {
        LoadedConfig loaded(*tmpl, problem, config, device, builder, buffers);
        reset_c();
        loaded.run();
        check_cuda(cudaDeviceSynchronize(), "variant run");
        return json{{"rel_l2_vs_cublas", bench::rel_l2(download_c(), theirs)},
                    {"ms", bench::event_median_ms([&] { loaded.run(); }, settings.loop)}};
      });
  row["variants"] = variants;
  if (!settings.cublaslt.empty())
    row["cublaslt_peers"] = cublaslt_peers(settings, dtype, s, buffers, run_cublas, run_ktune, reset_c,
                                           [&] { return bench::rel_l2(download_c(), theirs); }, flops);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings settings = parse_args(argc, argv);
    check_shapes(settings);
    check_variants(settings);
    if (auto why = cuda_unavailable_reason()) {
      std::fprintf(stderr, "gpu_gemm: %s\n", why->c_str());
      return 77;
    }
    check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
    const Device device = query_device(0);
    Builder builder(bench::tuning_builder_options());
    const bench::CublasHandle cublas;

    json out;
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", std::gmtime(&now));
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    out["date_utc"] = date;
    out["device"] = device.key();
    out["power_reading"] = bench::power_reading_kind(bench::device0_sensor());
    // HBM % of each row: bytes over time against this device's copy rate, measured here
    // (cudaMemcpyAsync of 2 GiB, read + written bytes, 20 samples).
    const double copy_gbps = bench::copy_bandwidth_gbps(std::size_t{2} << 30, 1, 20);
    out["copy_gbps"] = copy_gbps;
    std::printf("device copy bandwidth (cudaMemcpyAsync, 2 GiB): %.0f GB/s\n", copy_gbps);
    out["command"] = command;
    out["budget_trials"] = settings.budget;
    out["budget_seconds_per_shape"] = settings.seconds;
    out["searcher"] = settings.searcher;
    out["layout"] = settings.layout;
    out["alpha"] = gemm::kAlpha;
    out["beta"] = gemm::kBeta;
    out["results"] = json::array();
    std::map<std::string, std::vector<double>> ratios;  // "dtype" and "dtype/group"
    std::set<std::string> in_dtype_mean;  // "dtype shape": 4096^3 is in two groups, one vote
    std::vector<std::vector<double>> target_ratios(issue_targets().size());
    std::size_t failed_rows = 0, rows = 0;
    std::printf("%-5s %-7s %-18s %10s %10s %10s %8s %7s %8s %10s  %s\n", "dtype", "group",
                "shape", "ktune TF/s", "default", "cuBLAS TF/s", "ratio", "target", "HBM %",
                "rel_l2", "best config");
    for (const auto& dtype : settings.dtypes)
      for (const auto& shape : suite(settings.groups, settings.shapes)) {
        json row;
        try {
          row = run_shape(settings, dtype, shape, device, builder, cublas.handle, copy_gbps);
        } catch (const std::exception& e) {
          row = {{"dtype", dtype}, {"group", shape.group}, {"M", shape.M}, {"N", shape.N},
                 {"K", shape.K}, {"error", e.what()}};
        }
        out["results"].push_back(row);
        ++rows;
        if (row.contains("ratio")) {
          if (in_dtype_mean.insert(dtype + " " + shape_text(shape.M, shape.N, shape.K)).second)
            ratios[dtype].push_back(row["ratio"].get<double>());
          ratios[dtype + "/" + shape.group].push_back(row["ratio"].get<double>());
          for (std::size_t t = 0; t < issue_targets().size(); ++t)
            if (issue_targets()[t].judges(dtype, shape, row["template"].get<std::string>()))
              target_ratios[t].push_back(row["ratio"].get<double>());
          std::printf("%-5s %-7s %-18s %10.1f %10.1f %10.1f %8.3f %7s %8.1f %10.2e  %s\n",
                      dtype.c_str(), shape.group.c_str(), row["shape"].get<std::string>().c_str(),
                      row["ktune_tflops"].get<double>(), row["default_tflops"].get<double>(),
                      row["cublas_tflops"].get<double>(),
                      row["ratio"].get<double>(),
                      row_target(dtype, shape, row["template"].get<std::string>()).c_str(),
                      100 * row["ktune_hbm_fraction"].get<double>(),
                      row["rel_l2_vs_cublas"].get<double>(),
                      (row["template"].get<std::string>() + " " +
                       row["best_config"].get<std::string>()).c_str());
          if (row["ktune_sm_mhz"].get<int>() >= 0) {
            auto watts = [](double w) { return w >= 0 ? std::to_string(std::lround(w)) + " W" : std::string("- W"); };
            std::printf("    sampled while timed: ktune %d MHz %s, cuBLAS %d MHz %s (power: %s%s)\n",
                        row["ktune_sm_mhz"].get<int>(), watts(row["ktune_power_w"].get<double>()).c_str(),
                        row["cublas_sm_mhz"].get<int>(), watts(row["cublas_power_w"].get<double>()).c_str(),
                        out["power_reading"].get<std::string>().c_str(),
                        row["ktune_power_w"].get<double>() < 0 ? ", not shown for loops shorter than its refresh" : "");
          }
          if (row.contains("rounds")) {
            std::printf("    ratio per round:");
            for (const auto& r : row["rounds"]) std::printf(" %.3f", r["ratio"].get<double>());
            std::printf("\n");
          }
          bench::print_variant_rows(row["variants"], "rel_l2_vs_cublas");
          for (const auto& peer : row.value("cublaslt_peers", json::array())) {
            if (peer.contains("ratio"))
              std::printf("    cuBLASLt %-16s %.3fx cuBLAS (ktune %.3fx in the same rounds: %.3fx the "
                          "peer's speed), rel_l2 %.2e; SM MHz cuBLAS %d, ktune %d, peer %d\n",
                          peer["config"].get<std::string>().c_str(), peer["ratio"].get<double>(),
                          peer["ktune_ratio"].get<double>(), peer["ktune_over_peer"].get<double>(),
                          peer["rel_l2_vs_cublas"].get<double>(), peer["cublas_sm_mhz"].get<int>(),
                          peer["ktune_sm_mhz"].get<int>(), peer["peer_sm_mhz"].get<int>());
            else
              std::printf("    cuBLASLt %-16s %s\n", peer["config"].get<std::string>().c_str(),
                          peer.value("skipped", peer.value("error", std::string("?"))).c_str());
          }
        } else {
          ++failed_rows;
          std::printf("%-5s %-7s %lldx%lldx%lld failed: %s\n", dtype.c_str(), shape.group.c_str(),
                      static_cast<long long>(shape.M), static_cast<long long>(shape.N),
                      static_cast<long long>(shape.K), row.value("error", std::string("?")).c_str());
        }
        std::fflush(stdout);
        bench::write_json(settings.out_path, out);  // keep partial results
      }
    json means = json::object();
    for (const auto& [key, values] : ratios) {
      means[key] = {{"geomean_ratio", bench::geomean(values)}, {"shapes", values.size()}};
      std::printf("geomean ratio to cuBLAS %-14s %.3f over %zu shapes\n", key.c_str(),
                  bench::geomean(values), values.size());
    }
    out["geomeans"] = means;
    json targets = json::array();
    for (std::size_t t = 0; t < issue_targets().size(); ++t) {
      if (target_ratios[t].empty()) continue;  // not measured in this run
      const double g = bench::geomean(target_ratios[t]);
      const bool met = g >= issue_targets()[t].min_ratio;
      targets.push_back({{"target", issue_targets()[t].name},
                         {"min_ratio", issue_targets()[t].min_ratio},
                         {"geomean_ratio", g},
                         {"shapes", target_ratios[t].size()},
                         {"met", met}});
      std::printf("target %-44s geomean %.3f over %zu shapes: %s\n",
                  issue_targets()[t].name.c_str(), g, target_ratios[t].size(),
                  met ? "met" : "MISSED");
    }
    out["targets"] = targets;
    bench::write_json(settings.out_path, out);
    return bench::exit_status("gpu_gemm", failed_rows, rows,
                              "their \"error\" is in the JSON and printed above");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_gemm: %s\n", e.what());
    return 1;
  }
}
