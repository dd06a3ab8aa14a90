// Example: compile the built-in "copy" template's default configuration for an H200 (sm_90)
// without a GPU, and print the kernel's resources. Shows templates, spaces and the Builder.
#include <cstdio>

#include "ktune/build.h"
#include "ktune/template.h"

int main(int argc, char**) {
  if (argc > 1) {
    std::printf("usage: example_compile_for_h200 (no arguments: compiles the copy template's "
                "default config for the H200)\n");
    return 2;
  }
  auto tmpl = ktune::find_template("copy");
  ktune::Device h200 = ktune::Device::h200();
  ktune::Problem problem = tmpl->example_problem();
  ktune::SearchSpace space = tmpl->space(problem, h200);
  ktune::Config config = space.default_config();

  // NVRTC runs in a helper process (ktune-worker --compile, found beside the installed
  // package); a helper that cannot be found or started leaves the compile in this process.
  ktune::BuilderOptions options;
  options.compile_processes = 1;
  ktune::Builder builder(options);
  ktune::BuildResult result = builder.build(*tmpl, problem, config, h200);
  if (!result.ok) {
    std::fprintf(stderr, "compile failed:\n%s\n", result.log.c_str());
    return 1;
  }
  std::printf("%s %s for %s: %zu-byte cubin, %d registers, %d bytes shared, %.0f ms, compiled "
              "in %s\n",
              tmpl->name().c_str(), config.str().c_str(), result.arch.c_str(),
              result.cubin->size(), result.resources.registers, result.resources.shared_bytes,
              result.compile_ms,
              builder.stats().helper_compiles ? "a helper process" : "this process");
  return 0;
}
