// The --compile-processes option (see compile_options.h).
#include "compile_options.h"

#include "option_checks.h"

namespace ktune::cli {

void add_compile_processes_option(CLI::App& cmd, int& processes) {
  cmd.add_option("--compile-processes", processes,
                 "NVRTC helper processes (ktune-worker --compile; 0 = compile in this process; "
                 "default: one per compile job)")
      ->default_str("one per job")
      ->check(count_in(0, kMaxJobs));
}

}  // namespace ktune::cli
