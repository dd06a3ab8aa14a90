// Test runner entry point. When asked to run [gpu] tests on a machine without a usable GPU it
// says so and exits 77, which ctest reports as "Skipped" (never as a silent pass).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "ktune/device.h"

int main(int argc, char* argv[]) {
  bool gpu_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.find("[gpu]") != std::string::npos && a.find("~[gpu]") == std::string::npos) gpu_only = true;
  }
  if (gpu_only) {
    if (auto why = ktune::cuda_unavailable_reason()) {
      std::printf("SKIPPED: [gpu] tests need a CUDA device: %s\n", why->c_str());
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
