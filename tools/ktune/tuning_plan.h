// Tuning plans: the list of (template, problem) tasks one `ktune tune` run works through,
// read from a JSON plan file ([{"op": "gemm", "shape": "4096x4096x4096", "dtype": "f16"}, ...])
// or made from the single-problem options of the command line.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/problem.h"
#include "ktune/template.h"
#include "problem_options.h"

namespace ktune::cli {

/// One task of a plan: a template and a checked problem, with optional per-task budgets.
struct PlanEntry {
  std::shared_ptr<const KernelTemplate> tmpl;  ///< what is tuned
  Problem problem;                             ///< for which problem (checked)
  std::optional<std::size_t> budget;           ///< "budget": trials for this task
  std::optional<double> seconds;               ///< "time": wall-clock seconds for this task (0: no limit)
  std::string origin;                          ///< "plan.json entry 2" or "command line"
  std::string space_path;                      ///< a user template's T1 document ("" otherwise)
};

/// Reads a plan file: a JSON array of objects with "template" or "op" (or "space", with an
/// optional "kernel", for a user template; paths relative to the plan file), optional "shape"
/// (text "AxB" or an array of integers), "dtype", "layout", "budget", "time", and any other
/// key as a problem attribute. Throws Error naming the file, the entry and the bad field.
std::vector<PlanEntry> read_plan_file(const std::string& path);

/// Parses plan text (same rules); `origin` names it in errors.
std::vector<PlanEntry> parse_plan(const std::string& json_text, const std::string& origin);

/// The one-entry plan of --template/--op/--shape/--dtype/--layout/--attr.
PlanEntry plan_entry_from_options(const ProblemOptions& options);

}  // namespace ktune::cli
