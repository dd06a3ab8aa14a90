// Reads tuning plans (JSON lists of problems) into checked (template, problem) tasks, reusing
// the command line's problem options so that a plan entry means exactly what the same flags
// would mean.
#include "tuning_plan.h"

#include <cmath>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ktune/error.h"
#include "option_checks.h"
#include "input_file.h"
#include "json_input.h"

namespace ktune::cli {

namespace {

/// Text of a scalar JSON value used as an attribute ("f16", 1 -> "1", true -> "1").
std::string attribute_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  // As written (dump): a value past 2^63 - 1 reaches the checks whole, never wrapped.
  if (v.is_number_integer()) return v.dump();
  throw Error(ErrorCode::invalid_argument,
              where + ": expected a string, integer or boolean, got " + detail::json_excerpt(v));
}

/// "4096x4096x64" from a string or an array of positive integers.
std::string shape_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string() && v.get<std::string>().empty())
    throw Error(ErrorCode::invalid_argument,
                where + ": the shape is empty; leave the key out for the template's example shape");
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() && !v.empty()) {
    std::string out;
    for (const auto& d : v) {
      if (!d.is_number_integer())
        throw Error(ErrorCode::invalid_argument,
                    where + ": shape dimensions must be integers, got " + detail::json_excerpt(d));
      out += (out.empty() ? "" : "x") + d.dump();  // as written: 2^63 is refused, not wrapped
    }
    return out;
  }
  throw Error(ErrorCode::invalid_argument,
              where + ": \"shape\" must be text like \"4096x4096x4096\" or a list of integers");
}

/// The template and checked problem of the options (ProblemOptions::resolve).
void resolve(const ProblemOptions& options, PlanEntry& entry) {
  std::tie(entry.tmpl, entry.problem) = options.resolve();
  entry.space_path = options.space;
}

PlanEntry entry_from_json(const nlohmann::json& item, const std::string& where,
                          const std::filesystem::path& base_dir) {
  if (!item.is_object())
    throw Error(ErrorCode::invalid_argument, where + ": expected an object like "
                                                     "{\"op\": \"gemm\", \"shape\": \"1024x1024x1024\"}");
  ProblemOptions options;
  options.from_plan = true;
  PlanEntry entry;
  for (const auto& [key, value] : item.items()) {
    const std::string field = where + " field \"" + key + "\"";
    if (key == "template" || key == "op") {
      if (!value.is_string() || value.get<std::string>().empty())
        throw Error(ErrorCode::invalid_argument, field + (value.is_string() ? " is empty" : "") +
                                                     ": expected a name");
      (key == "template" ? options.template_name : options.op) = value.get<std::string>();
    } else if (key == "space" || key == "kernel") {
      if (!value.is_string() || value.get<std::string>().empty())
        throw Error(ErrorCode::invalid_argument, field + (value.is_string() ? " is empty" : "") +
                                                     ": expected a file path");
      (key == "space" ? options.space : options.kernel) = (base_dir / value.get<std::string>()).string();
    } else if (key == "shape") {
      options.shape = shape_text(value, field);
    } else if (key == "budget") {
      // The range of --budget, which the entry overrides (0: no trial limit).
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
          value.get<std::int64_t>() > kMaxTrials)
        throw Error(ErrorCode::invalid_argument,
                    field + ": expected a trial count from 0 (no limit) to " +
                        std::to_string(kMaxTrials) + ", got " + detail::json_excerpt(value));
      entry.budget = static_cast<std::size_t>(value.get<std::int64_t>());
    } else if (key == "time") {
      // As --time, which the entry overrides (0: no time limit).
      if (!value.is_number() || !(value.get<double>() >= 0) || !std::isfinite(value.get<double>()))
        throw Error(ErrorCode::invalid_argument,
                    field + ": expected seconds >= 0 (0: no limit), got " + detail::json_excerpt(value));
      entry.seconds = value.get<double>();
    } else {
      options.attrs.push_back(key + "=" + attribute_text(value, field));
    }
  }
  if (options.template_name.empty() && options.op.empty() && options.space.empty())
    throw Error(ErrorCode::invalid_argument, where + ": needs \"template\", \"op\" or \"space\"");
  try {
    resolve(options, entry);
  } catch (const Error& e) {
    throw Error(e.code(), where + ": " + e.what());
  }
  entry.origin = where;
  return entry;
}

}  // namespace

std::vector<PlanEntry> parse_plan(const std::string& json_text, const std::string& origin) {
  nlohmann::json doc = detail::parse_json_document(json_text, origin);
  if (doc.is_object() && doc.contains("problems")) {
    // The wrapper holds the list and nothing else: a "budget" or "searcher" beside it would
    // otherwise be dropped without a word (budgets go in the entries or on the command line).
    for (const auto& [key, value] : doc.items())
      if (key != "problems")
        throw Error(ErrorCode::invalid_argument,
                    origin + ": unknown key \"" + key + "\" beside \"problems\" (the object holds only "
                    "the list; give \"budget\" / \"time\" in each entry, other settings as command-line options)");
    doc = doc["problems"];
  }
  if (!doc.is_array() || doc.empty())
    throw Error(ErrorCode::invalid_argument,
                origin + ": expected a non-empty JSON list of problems, e.g. "
                         "[{\"op\": \"gemm\", \"shape\": \"1024x1024x1024\", \"dtype\": \"f16\"}]");
  std::vector<PlanEntry> plan;
  for (std::size_t i = 0; i < doc.size(); ++i)
    plan.push_back(entry_from_json(doc[i], origin + " entry " + std::to_string(i + 1),
                                   std::filesystem::path(origin).parent_path()));
  return plan;
}

std::vector<PlanEntry> read_plan_file(const std::string& path) {
  return parse_plan(detail::read_text_file(path, "plan file"), path);
}

PlanEntry plan_entry_from_options(const ProblemOptions& options) {
  PlanEntry entry;
  resolve(options, entry);
  entry.origin = options.space.empty() ? "command line" : "command line (--space " + options.space + ")";
  return entry;
}

}  // namespace ktune::cli
