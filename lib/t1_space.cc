// Loading a SearchSpace from the community T1 JSON format: ConfigurationSpace.TuningParameters
// (Name, Values as a JSON array or as a string holding one, optional Default) and
// ConfigurationSpace.Conditions[].Expression (Kernel Tuner restriction syntax). Errors name
// the file and the field.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "expression.h"
#include "ktune/error.h"
#include "ktune/space.h"
#include "input_file.h"
#include "json_input.h"
#include "python_values.h"

namespace ktune {
namespace {

using Json = nlohmann::json;

/// Reads T1 fields and reports errors as "<origin>: <field>: <what>".
struct T1Reader {
  const std::string& origin;

  [[noreturn]] void fail(ErrorCode code, const std::string& field, const std::string& what) const {
    throw Error(code, origin + ": " + field + ": " + what);
  }

  const Json& member(const Json& object, const std::string& field, const char* key) const {
    if (!object.is_object()) fail(ErrorCode::parse_error, field, "expected a JSON object");
    auto it = object.find(key);
    if (it == object.end()) {
      fail(ErrorCode::parse_error, field.empty() ? key : field + "." + key, "missing");
    }
    return *it;
  }

  Value integer(const Json& v, const std::string& field) const {
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<Value>::max()))
      fail(ErrorCode::invalid_argument, field,
           "value " + detail::json_excerpt(v) + " is out of range of a 64-bit signed integer");
    if (v.is_number_integer()) return v.get<Value>();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d)) {
        if (d >= -0x1p63 && d < 0x1p63) return static_cast<Value>(d);
        fail(ErrorCode::invalid_argument, field,
             "value " + detail::json_excerpt(v) + " is out of range of a 64-bit signed integer");
      }
    }
    fail(ErrorCode::invalid_argument, field,
         "value " + detail::json_excerpt(v) + " is not an integer (ktune parameters are integers)");
  }

  std::vector<Value> values(const Json& v, const std::string& field) const {
    Json list = v;
    if (v.is_string()) {
      const std::string& text = v.get<std::string>();
      detail::require_json_depth(text, origin + ": " + field);
      list = Json::parse(text, nullptr, false);
      if (list.is_discarded()) {  // a Python list expression, as the benchmark hub writes them
        try {
          return detail::python_list_values(text);
        } catch (const Error& e) {
          fail(ErrorCode::parse_error, field,
               "\"" + text + "\" is neither a JSON list nor a Python list expression ktune reads "
               "(list literals, range(...), list(range(...)), [expr for i in range(...)], joined "
               "by +): " + e.what());
        }
      }
    }
    if (!list.is_array()) fail(ErrorCode::parse_error, field, "expected a list of values");
    std::vector<Value> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      out.push_back(integer(list[i], field + "[" + std::to_string(i) + "]"));
    }
    return out;
  }

  /// Runs `step`, prefixing any ktune::Error it throws with the field.
  template <class Step>
  void with_field(const std::string& field, Step step) const {
    try {
      step();
    } catch (const Error& e) {
      fail(e.code(), field, e.what());
    }
  }
};

}  // namespace

SearchSpace SearchSpace::from_t1_json(const std::string& json_text, const std::string& origin) {
  T1Reader r{origin};
  const Json doc = detail::parse_json_document(json_text, origin);
  const std::string space_field = "ConfigurationSpace";
  const Json& space = r.member(doc, "", "ConfigurationSpace");
  // A misspelt key (Conditons, Defualt) would drop constraints or defaults without a word:
  // refused by name; a key of no likeness is noted and ignored.
  detail::check_known_keys(space, origin, space_field, {"TuningParameters", "Conditions"},
                           detail::OtherKeys::warn);
  const std::string params_field = space_field + ".TuningParameters";
  const Json& params = r.member(space, space_field, "TuningParameters");
  if (!params.is_array()) r.fail(ErrorCode::parse_error, params_field, "expected a list");

  Builder builder;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string field = params_field + "[" + std::to_string(i) + "]";
    const Json& p = params[i];
    detail::check_known_keys(p, origin, field, {"Name", "Type", "Values", "Default"},
                             detail::OtherKeys::warn);
    const Json& name = r.member(p, field, "Name");
    if (!name.is_string()) r.fail(ErrorCode::parse_error, field + ".Name", "expected a string");
    std::vector<Value> values = r.values(r.member(p, field, "Values"), field + ".Values");
    std::optional<Value> default_value;
    if (auto d = p.find("Default"); d != p.end() && !d->is_null()) {
      // A one-element list is its element (the benchmark hub writes "Default": [0]).
      const Json& given = d->is_array() && d->size() == 1 ? (*d)[0] : *d;
      default_value = r.integer(given, field + ".Default");
      // Kernel Tuner never checks Default against Values: one outside them is noted, and the
      // first value is the default instead of the whole document being refused.
      if (std::find(values.begin(), values.end(), *default_value) == values.end() && !values.empty()) {
        spdlog::warn("{}: {}.Default: {} is not one of the Values; the first value, {}, is the "
                     "default", origin, field, *default_value, values.front());
        default_value = values.front();
      }
    }
    r.with_field(field, [&] {
      builder.param(name.get<std::string>(), std::move(values), default_value);
    });
    names.push_back(name.get<std::string>());
  }

  if (auto conditions = space.find("Conditions"); conditions != space.end()) {
    const std::string conditions_field = space_field + ".Conditions";
    if (!conditions->is_array()) r.fail(ErrorCode::parse_error, conditions_field, "expected a list");
    for (std::size_t i = 0; i < conditions->size(); ++i) {
      const std::string field = conditions_field + "[" + std::to_string(i) + "]";
      const Json& c = (*conditions)[i];
      detail::check_known_keys(c, origin, field, {"Parameters", "Expression"},
                               detail::OtherKeys::warn);
      const Json& expression = r.member(c, field, "Expression");
      if (!expression.is_string()) {
        r.fail(ErrorCode::parse_error, field + ".Expression", "expected a string");
      }
      const std::string text = expression.get<std::string>();
      // Parse here too, so that an error names this field.
      r.with_field(field + ".Expression", [&] { Expression::parse(text, names); });
      if (auto listed = c.find("Parameters"); listed != c.end()) {
        if (!listed->is_array())
          r.fail(ErrorCode::parse_error, field + ".Parameters", "expected a list of parameter names");
        for (const Json& n : *listed) {
          if (!n.is_string() || std::find(names.begin(), names.end(), n.get<std::string>()) ==
                                    names.end()) {
            r.fail(ErrorCode::unknown_name, field + ".Parameters",
                   "names " + detail::json_excerpt(n) + ", which is not a tuning parameter");
          }
        }
      }
      builder.constraint(text);
    }
  }
  return builder.build();
}

SearchSpace SearchSpace::from_t1_file(const std::string& path) {
  return from_t1_json(detail::read_text_file(path, "T1 file"), path);
}

}  // namespace ktune
