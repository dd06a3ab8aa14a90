// The --compile-processes option shared by the subcommands that compile (`ktune compile`,
// `ktune tune`): how many NVRTC helper processes their Builder uses.
#pragma once

#include <CLI/CLI.hpp>

namespace ktune::cli {

/// Adds --compile-processes to `cmd`, stored in `processes`, whose value before parsing is
/// the default (ktune::kHelperPerCompileThread: one helper per compile job).
void add_compile_processes_option(CLI::App& cmd, int& processes);

}  // namespace ktune::cli
