// Declarations of the ktune subcommands; each lives in its own cmd_<name>.cc and registers
// itself on the CLI11 app. main.cc adds them all.
#pragma once

#include <CLI/CLI.hpp>

namespace ktune::cli {

/// `ktune list`: templates with their parameter spaces, and searchers with their options.
void add_list_command(CLI::App& app);
/// `ktune compile`: compile-only check of a template for an offline target.
void add_compile_command(CLI::App& app);
/// `ktune device`: the CUDA devices ktune can measure on, or why there is none.
void add_device_command(CLI::App& app);

}  // namespace ktune::cli

/// `ktune replay`, `ktune export`, ... are declared below by their authors (global namespace
/// or ktune::cli, as written).

namespace ktune::cli {

/// `ktune export`: writes tuning-log records as JSON lines or T4 results.
void add_export_command(CLI::App& app);
/// `ktune import`: adds JSON lines, T4 results or a Kernel Tuner cache to a tuning log.
void add_import_command(CLI::App& app);

}  // namespace ktune::cli

namespace ktune::cli {

/// `ktune replay`: benchmarks searchers on recorded measurements (tools/ktune/cmd_replay.cc).
void add_replay_command(CLI::App& app);

}  // namespace ktune::cli

namespace ktune::cli {

/// `ktune tune`: tunes one problem or a plan file into the tuning log (tools/ktune/cmd_tune.cc).
void add_tune_command(CLI::App& app);
/// `ktune best`: best config per problem with speed-ups (tools/ktune/cmd_best.cc).
void add_best_command(CLI::App& app);
/// `ktune report`: self-contained HTML report of a tuning log (tools/ktune/cmd_report.cc).
void add_report_command(CLI::App& app);
/// `ktune vendor`: records vendor reference times in a tuning log (tools/ktune/cmd_vendor.cc).
void add_vendor_command(CLI::App& app);

}  // namespace ktune::cli
