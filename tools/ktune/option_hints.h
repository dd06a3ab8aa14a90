// Hints after CLI11's "The following arguments were not expected": the option a misspelt one
// resembles, and that a global option goes before the subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ktune::cli {

/// One line per `--name` in argv[1..argc) that the parsed subcommand of `app` does not know:
/// "did you mean --template?" for a near miss of one of its options, or where to put a global
/// option ("--log-level is a global option: give it before the subcommand"). Empty when
/// nothing resembles anything.
std::string unexpected_option_hints(const CLI::App& app, int argc, char** argv);

}  // namespace ktune::cli
