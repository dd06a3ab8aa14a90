// Shared command-line options that name a template and a problem (--template/--op, --shape,
// --dtype, --layout, --attr), and their conversion into a checked Problem.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktune/template.h"

namespace ktune::cli {

/// Values of the problem options of one subcommand.
struct ProblemOptions {
  std::string template_name;       ///< --template
  std::string op;                  ///< --op (picks the op's first template)
  std::string shape;               ///< --shape, e.g. 4096x4096x4096 (default: example shape)
  std::string dtype;               ///< --dtype shortcut for --attr dtype=...
  std::string layout;              ///< --layout shortcut for --attr layout=...
  std::vector<std::string> attrs;  ///< --attr k=v (repeatable)

  /// Adds the options to a subcommand.
  void add_to(CLI::App& cmd);
  /// The template named by --template, or the first template of --op; throws Error naming
  /// the unknown op/template.
  std::shared_ptr<const KernelTemplate> resolve_template() const;
  /// The checked problem (example problem of the template when --shape is absent).
  Problem resolve_problem(const KernelTemplate& tmpl) const;
};

}  // namespace ktune::cli
