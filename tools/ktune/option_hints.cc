// Hints for options a subcommand did not expect (see option_hints.h).
#include "option_hints.h"

#include <algorithm>

#include "json_input.h"  // detail::resembles_key: the one near-miss rule of ktune's inputs

namespace ktune::cli {

namespace {

/// The long names ("--template") of `cmd`'s options.
std::vector<std::string> long_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* option : cmd.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

bool has_name(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string unexpected_option_hints(const CLI::App& app, int argc, char** argv) {
  const auto parsed = app.get_subcommands();
  if (parsed.empty()) return "";
  const CLI::App& sub = *parsed.front();
  const std::vector<std::string> own = long_names(sub), global = long_names(app);
  std::string hints;
  bool after_subcommand = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!after_subcommand) {
      after_subcommand = arg == sub.get_name();
      continue;
    }
    if (arg == "--") break;  // what follows is not an option
    if (arg.rfind("--", 0) != 0 || arg.size() <= 2) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (has_name(own, name)) continue;
    if (has_name(global, name) && name != "--help" && name != "--version") {
      hints += name + " is a global option: give it before the subcommand (ktune " + name +
               " ... " + sub.get_name() + " ...)\n";
      continue;
    }
    std::string close;
    for (const std::string& known : own)
      if (detail::resembles_key(name.substr(2), known.substr(2))) close += (close.empty() ? "" : " or ") + known;
    if (!close.empty()) hints += name + ": did you mean " + close + "?\n";
  }
  return hints;
}

}  // namespace ktune::cli
