// Shared command-line options that name a template and a problem (--template/--op, --shape,
// --dtype, --layout, --attr, or a user's own kernel: --space SPEC.T1.json [--kernel FILE.cu]),
// and their conversion into a checked Problem.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ktune/template.h"

namespace ktune::cli {

/// Values of the problem options of one subcommand.
struct ProblemOptions {
  std::string template_name;       ///< --template
  std::string op;                  ///< --op (the op's first template that accepts the problem)
  std::string shape;               ///< --shape, e.g. 4096x4096x4096 (default: example shape)
  std::string dtype;               ///< --dtype shortcut for --attr dtype=...
  std::string layout;              ///< --layout shortcut for --attr layout=...
  std::vector<std::string> attrs;  ///< --attr k=v (repeatable)
  std::string space;               ///< --space: T1 JSON of a user template
  std::string kernel;              ///< --kernel: its .cu (default: the document's KernelFile)
  bool from_plan = false;          ///< errors name a plan entry's keys ("op") instead of options (--op)

  /// Adds the options to a subcommand.
  void add_to(CLI::App& cmd);
  /// True when any of the options was given.
  bool given() const;
  /// The user template of --space (registered, so workers find it too), else the template
  /// named by --template, else the first template of --op; throws Error naming the unknown
  /// op/template or the bad field of the user template's document.
  std::shared_ptr<const KernelTemplate> resolve_template() const;
  /// The checked problem (example problem of the template when --shape is absent).
  Problem resolve_problem(const KernelTemplate& tmpl) const;
  /// The template and its checked problem. With --op (and no --template), the first template
  /// of the op (by name) that accepts the problem, so `--op gemm --dtype f32` finds the SIMT
  /// GEMM even though the tensor-core GEMM sorts first; when none does, an Error giving every
  /// template's own reason.
  std::pair<std::shared_ptr<const KernelTemplate>, Problem> resolve() const;

 private:
  /// How errors name a field: `--op`, or `"op"` in a plan entry.
  std::string named(const char* field) const;
};

}  // namespace ktune::cli
