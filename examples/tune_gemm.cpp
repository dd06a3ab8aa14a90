// Example: tune one GEMM from C++ (what `ktune tune` does for one problem). Builds the
// template's space for the GPU, runs the genetic searcher for 60 trials with the GPU measurer
// (NVRTC compiles in parallel; every candidate verified against a reference, then timed in a
// worker process), records every trial into a tuning log, resumes from trials already there,
// and prints the best config with its speed-up over the template's default.
//   example_tune_gemm [database = tune_gemm.db] [shape = 2048x2048x2048]
#include <cstdio>
#include <string>

#include "ktune/build.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/log_recorder.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/template.h"
#include "ktune/tuner.h"

int main(int argc, char** argv) try {
  if (argc > 1 && argv[1][0] == '-') {  // an option is never taken for the database path
    std::printf("usage: example_tune_gemm [DB [MxNxK]] (defaults: tune_gemm.db, 2048x2048x2048)\n");
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  const std::string db_path = argc > 1 ? argv[1] : "tune_gemm.db";
  const std::string shape = argc > 2 ? argv[2] : "2048x2048x2048";

  // The problem: C = A * B^T in f16 (tensor-core template gemm_mma).
  auto tmpl = ktune::find_template("gemm_mma");
  const ktune::Problem problem =
      ktune::make_problem(*tmpl, shape, {{"dtype", "f16"}, {"layout", "NT"}});
  std::printf("problem %s\n", problem.key().c_str());

  if (auto why = ktune::cuda_unavailable_reason()) {
    std::printf("%s: this example measures on a GPU (`ktune tune --replay FILE` tunes from "
                "recorded measurements without one)\n", why->c_str());
    return 0;
  }
  const ktune::Device device = ktune::query_device(0);
  const ktune::SearchSpace space = tmpl->space(problem, device);
  std::printf("device %s, space of %llu points\n", device.key().c_str(),
              static_cast<unsigned long long>(space.size()));

  ktune::Builder builder;  // NVRTC on every core
  ktune::GpuMeasurer measurer(tmpl, problem, device, builder);
  auto searcher = ktune::make_searcher("genetic");

  ktune::TunerOptions options;
  options.max_trials = 60;
  options.seed = 1;
  options.progress = [](const ktune::TuneProgress& p) {
    std::printf("  %zu/%zu trials, %zu failed, best %.4f ms\n", p.done, p.budget, p.failures,
                p.best_ms);
  };

  ktune::TuningLog log(db_path);
  ktune::LogRecorder recorder(log, tmpl, problem, device);  // every trial, as measured
  ktune::Tuner tuner(space, *searcher, measurer, options);
  tuner.set_sink(&recorder);

  // Resume: trials of this task (same kernel source) already in the log are not measured
  // again; a config measured several times counts as its typical trial, as `ktune best` ranks.
  tuner.resume_from(ktune::trials_to_resume(log, *tmpl, problem, device, space));

  const ktune::TuneResult result = tuner.run();
  if (!result.best) {
    std::printf("no config succeeded (%zu trials)\n", result.trials.size());
    return 1;
  }
  const double tflops = 2.0 * problem.dim("M") * problem.dim("N") * problem.dim("K") /
                        (result.best->median_ms * 1e-3) / 1e12;
  std::printf("best %s: %.4f ms (%.1f TFLOP/s), %.2fx over the default; stop: %s\n",
              result.best->config.str().c_str(), result.best->median_ms, tflops,
              result.speedup(), result.stop_reason.c_str());
  std::printf("every trial is in %s (`ktune best --db %s`)\n", db_path.c_str(), db_path.c_str());
  return 0;
} catch (const ktune::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
