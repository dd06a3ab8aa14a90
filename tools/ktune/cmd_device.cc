// `ktune device`: the GPU ktune would measure on (name, compute capability, SMs, memory,
// driver), or "no CUDA device (...)" with exit status 1 where there is none.
#include <cstdio>

#include "commands.h"
#include "ktune/device.h"

namespace ktune::cli {

void add_device_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("device", "Show the CUDA devices ktune can measure on");
  cmd->callback([] {
    if (auto why = cuda_unavailable_reason()) {
      std::printf("%s\n", why->c_str());
      throw CLI::RuntimeError(1);
    }
    for (int i = 0; i < cuda_device_count(); ++i) {
      Device d = query_device(i);
      std::printf("%d: %s  %s  %d SMs  %.1f GiB  L2 %d MiB  driver %d  key %s\n", i,
                  d.name.c_str(), d.arch().c_str(), d.sm_count,
                  static_cast<double>(d.global_memory) / (1 << 30), d.l2_bytes >> 20,
                  d.driver_version, d.key().c_str());
    }
  });
}

}  // namespace ktune::cli
