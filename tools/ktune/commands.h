// Declarations of the ktune subcommands; each lives in its own cmd_<name>.cc and registers
// itself on the CLI11 app. main.cc adds them all.
#pragma once

#include <CLI/CLI.hpp>

namespace ktune::cli {

/// `ktune list`: templates with their parameter spaces, and searchers with their options.
void add_list_command(CLI::App& app);
/// `ktune compile`: compile-only check of a template for an offline target.
void add_compile_command(CLI::App& app);

}  // namespace ktune::cli

/// `ktune replay`, `ktune export`, ... are declared below by their authors (global namespace
/// or ktune::cli, as written).
