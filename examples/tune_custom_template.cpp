// Example: a user's own kernel tuned from C++ without writing a KernelTemplate class. The
// kernel (.cu) and its T1 document (space, launch geometry, arguments, reference kernel) are
// registered as a template; then the usual loop runs: space, searcher, GPU measurer, Tuner.
// Without a GPU it compiles the default config for an H200 with NVRTC instead.
//   example_tune_custom_template [document = examples/custom_template/transpose.T1.json]
//                                [shape = 4096x4096]
#include <cstdio>
#include <string>

#include "ktune/build.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/tuner.h"
#include "ktune/user_template.h"

int main(int argc, char** argv) try {
  if (argc > 1 && argv[1][0] == '-') {  // an option is never taken for the document
    std::printf("usage: example_tune_custom_template [SPEC.T1.json [SHAPE]] (defaults: "
                "examples/custom_template/transpose.T1.json, the document's own dimensions)\n");
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  const std::string document = argc > 1 ? argv[1] : "examples/custom_template/transpose.T1.json";

  // The kernel file is the document's KernelFile; worker processes learn of the template too.
  auto tmpl = ktune::register_user_template({document, ""});
  // Without a shape, the dimensions' defaults of the document (what its recorded data fits).
  const ktune::Problem problem =
      argc > 2 ? ktune::make_problem(*tmpl, argv[2]) : tmpl->example_problem();
  std::printf("template %s, problem %s\n", tmpl->name().c_str(), problem.key().c_str());

  if (auto why = ktune::cuda_unavailable_reason()) {
    const ktune::Device h200 = ktune::Device::h200();
    ktune::Builder builder;
    const auto built = builder.build(*tmpl, problem, tmpl->space(problem, h200).default_config(), h200);
    std::printf("%s; the default config %s for %s (%d registers)\n", why->c_str(),
                built.ok ? "compiles" : "FAILS to compile", h200.arch().c_str(),
                built.resources.registers);
    return built.ok ? 0 : 1;
  }
  const ktune::Device device = ktune::query_device(0);
  ktune::Builder builder;
  ktune::GpuMeasurer measurer(tmpl, problem, device, builder);
  auto searcher = ktune::make_searcher("genetic");
  ktune::TunerOptions options;
  options.max_trials = 40;
  ktune::Tuner tuner(tmpl->space(problem, device), *searcher, measurer, options);
  const ktune::TuneResult result = tuner.run();
  if (!result.best) {
    std::printf("no config succeeded\n");
    return 1;
  }
  const double gbs = tmpl->workload(problem)->bytes() / (result.best->median_ms * 1e-3) / 1e9;
  std::printf("best %s: %.4f ms (%.0f GB/s), %.2fx over the default\n",
              result.best->config.str().c_str(), result.best->median_ms, gbs, result.speedup());
  return 0;
} catch (const ktune::Error& e) {
  std::fprintf(stderr, "example_tune_custom_template: %s\n", e.what());
  return 2;
}
