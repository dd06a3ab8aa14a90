// The ktune command line: global options (log level) and the subcommands. Errors from the
// library (ktune::Error) are printed as one clear line and give a non-zero exit status.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include "commands.h"
#include "ktune/error.h"
#include "ktune/version.h"
#include "option_hints.h"

int main(int argc, char** argv) {
  // Warnings and logs go to stderr: standard output carries the commands' results (tables,
  // `best --json`, `replay --json -`, `export -`), which a warning must not break.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ktune"));
  CLI::App app{"ktune: autotuner for parameterized CUDA kernel templates"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ktune ") + KTUNE_VERSION);
  app.option_defaults()->always_capture_default();
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.parse_complete_callback([&] { spdlog::set_level(spdlog::level::from_str(log_level)); });

  ktune::cli::add_list_command(app);
  ktune::cli::add_compile_command(app);
  ktune::cli::add_device_command(app);
  ktune::cli::add_export_command(app);
  ktune::cli::add_import_command(app);
  ktune::cli::add_replay_command(app);
  ktune::cli::add_tune_command(app);
  ktune::cli::add_best_command(app);
  ktune::cli::add_report_command(app);
  ktune::cli::add_vendor_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 says only "A subcommand is required" for a misspelt one: name it and the valid ones.
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      std::string known;
      for (const auto* sub : app.get_subcommands({})) known += (known.empty() ? "" : ", ") + sub->get_name();
      std::fprintf(stderr, "ktune: error (%s): unknown subcommand '%s' (known: %s)\n",
                   ktune::to_string(ktune::ErrorCode::unknown_name), argv[1], known.c_str());
      return 2;
    }
    const int status = app.exit(e);
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      std::fputs(ktune::cli::unexpected_option_hints(app, argc, argv).c_str(), stderr);
    return status;
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune: error (%s): %s\n", ktune::to_string(e.code()), e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {  // a path that cannot be followed or named
    std::fprintf(stderr, "ktune: error (io_error): %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {  // an input too large for this machine's memory
    std::fprintf(stderr, "ktune: error (io_error): out of memory (an input larger than this "
                         "machine can hold?)\n");
    return 2;
  } catch (const std::exception& e) {  // a bug: ktune's own refusals are ktune::Error
    std::fprintf(stderr, "ktune: error (internal): %s\n", e.what());
    return 3;
  }
  // What a command printed must have arrived: a full disk or a closed pipe behind `> file`
  // would otherwise leave a truncated table or JSON and a success status.
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "ktune: error (io_error): writing to standard output failed\n");
    return 2;
  }
  return 0;
}
