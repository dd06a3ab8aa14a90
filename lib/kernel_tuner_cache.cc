// Kernel Tuner cache reader: input_file for .gz, nlohmann-json for the content, integer parameter
// values only (ktune tunables are integers; booleans become 0/1).
#include "kernel_tuner_cache.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <string_view>
#include <vector>
#include <nlohmann/json.hpp>

#include "ktune/error.h"
#include "log_json_fields.h"
#include "json_input.h"
#include "input_file.h"

namespace ktune::kt {

namespace {

using json = nlohmann::ordered_json;  // keeps the file order of the cache entries

Value to_value(const json& v, const std::string& origin, const std::string& what) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_integer()) return json_fields::integer_value(v, what, origin);  // int64 range
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) == d && std::abs(d) < 9e18) return static_cast<Value>(d);
  }
  throw Error(ErrorCode::parse_error, origin + ": " + what + " = " + detail::json_excerpt(v) +
                                          " is not an integer (ktune parameters are integers)");
}

/// True when a cache key (Kernel Tuner joins the parameter values with ',' as Python prints
/// them: 1, 1.0, True) names exactly `values`.
bool key_names_values(const std::string& key, const std::vector<Value>& values) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t comma = i + 1 < values.size() ? key.find(',', pos) : key.size();
    if (comma == std::string::npos) return false;
    const std::string part = key.substr(pos, comma - pos);
    double v = 0;
    if (part == "True") {
      v = 1;
    } else if (part == "False") {
      v = 0;
    } else {
      char* end = nullptr;
      v = std::strtod(part.c_str(), &end);
      if (part.empty() || end != part.c_str() + part.size()) return false;
    }
    if (v != static_cast<double>(values[i])) return false;
    pos = comma + 1;
  }
  return pos >= key.size();
}

/// "a=1,b=2" for an entry's values.
std::string entry_values_text(const std::vector<std::string>& names, const std::vector<Value>& values) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? "," : "") + names[i] + "=" + std::to_string(values[i]);
  return out;
}

/// Words Python's json module writes for non-finite numbers, which JSON lacks.
constexpr const char* kNonFiniteWords[] = {"NaN", "-Infinity", "Infinity"};

/// True when `text` is one of kNonFiniteWords.
bool is_non_finite_word(std::string_view text) {
  return std::any_of(std::begin(kNonFiniteWords), std::end(kNonFiniteWords),
                     [&](const char* w) { return text == w; });
}

/// `text` with each of Python's bare NaN / Infinity / -Infinity (outside strings) quoted, so
/// that a parser reads them as the strings "NaN" / "Infinity" / "-Infinity". `quoted_at` gets
/// where each quoted word starts in the result (each adds two characters).
std::string quote_python_non_finite(const std::string& text, std::vector<std::size_t>& quoted_at) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool quoted = false;
    for (const char* word : kNonFiniteWords) {
      const std::size_t n = std::char_traits<char>::length(word);
      if (text.compare(i, n, word) == 0) {
        quoted_at.push_back(out.size());
        out += '"';
        out += word;
        out += '"';
        i += n - 1;
        quoted = true;
        break;
      }
    }
    if (!quoted) out += c;
  }
  return out;
}

/// A parser's message about the quoted text (byte `byte`, 1-based) with its "line L, column C"
/// those of the same place in `input`, the text before quote_python_non_finite.
std::string position_in_input(std::string message, std::size_t byte, const std::string& input,
                              const std::vector<std::size_t>& quoted_at) {
  if (quoted_at.empty()) return message;
  std::size_t added = 0;
  for (std::size_t at : quoted_at) added += at < byte ? 2 : 0;
  const std::size_t offset = std::min(input.size(), byte > added ? byte - added : 1) - 1;  // 0-based
  const std::size_t line_start = offset == 0 ? 0 : input.rfind('\n', offset - 1);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(input.begin(), input.begin() + offset, '\n'));
  const std::size_t column = line_start == std::string::npos || offset == 0 ? offset + 1 : offset - line_start;
  static const std::regex where(R"(line \d+, column \d+)");
  return std::regex_replace(message, where, "line " + std::to_string(line) + ", column " +
                                                std::to_string(column),
                            std::regex_constants::format_first_only);
}

json parse_tolerant(const std::string& input, const std::string& origin) {
  detail::require_json_depth(input, origin);
  json doc = json::parse(input, nullptr, false);
  if (!doc.is_discarded()) return doc;
  // Python's non-finite numbers; then the text as given again below, if quoting changed nothing.
  std::vector<std::size_t> quoted_at;
  const std::string quoted = quote_python_non_finite(input, quoted_at);
  const std::string& text = quoted;
  if (quoted != input) {
    doc = json::parse(text, nullptr, false);
    if (!doc.is_discarded()) return doc;
  }
  // Kernel Tuner appends entries as it goes; an interrupted run leaves the braces open.
  std::string fixed = text;
  while (!fixed.empty() && (std::isspace(static_cast<unsigned char>(fixed.back())) || fixed.back() == ','))
    fixed.pop_back();
  for (const char* tail : {"}", "}}", "\n}\n}"}) {
    doc = json::parse(fixed + tail, nullptr, false);
    if (!doc.is_discarded()) return doc;
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(ErrorCode::parse_error,
                origin + ": not valid JSON: " + position_in_input(detail::json_parse_message(e), e.byte,
                                                                  input, quoted_at));
  } catch (const json::exception& e) {
    throw Error(ErrorCode::parse_error, origin + ": not valid JSON: " + detail::json_parse_message(e));
  }
}

/// The string member `key` of `doc`, or `fallback` when absent; an error when not a string.
std::string text_or(const json& doc, const char* key, const std::string& fallback,
                    const std::string& origin) {
  if (!doc.contains(key)) return fallback;
  if (!doc[key].is_string()) {
    throw Error(ErrorCode::parse_error,
                origin + ": \"" + key + "\" must be a string, got " + detail::json_excerpt(doc[key]));
  }
  return doc[key].get<std::string>();
}

KernelTunerCache parse_cache_document(const json& doc, const std::string& origin) {
  if (!doc.is_object()) throw Error(ErrorCode::parse_error, origin + ": expected a JSON object");
  for (const char* key : {"tune_params_keys", "tune_params", "cache"}) {
    if (!doc.contains(key)) {
      throw Error(ErrorCode::parse_error,
                  origin + ": missing \"" + key + "\" (not a Kernel Tuner cache file?)");
    }
  }
  KernelTunerCache out;
  out.device_name = text_or(doc, "device_name", "", origin);
  out.kernel_name = text_or(doc, "kernel_name", "", origin);
  out.objective = text_or(doc, "objective", "time", origin);
  if (doc.contains("problem_size")) {
    const json& ps = doc["problem_size"];
    if (ps.is_array()) {
      for (const auto& v : ps) out.problem_size.push_back(to_value(v, origin, "problem_size"));
    } else {
      out.problem_size.push_back(to_value(ps, origin, "problem_size"));
    }
  }
  const json& keys = doc["tune_params_keys"];
  if (!keys.is_array()) {
    throw Error(ErrorCode::parse_error,
                origin + ": \"tune_params_keys\" must be an array of names, got " + detail::json_excerpt(keys));
  }
  for (const auto& name : keys) {
    if (!name.is_string()) {
      throw Error(ErrorCode::parse_error,
                  origin + ": \"tune_params_keys\" holds " + detail::json_excerpt(name) + ", not a name");
    }
    out.param_names.push_back(name.get<std::string>());
  }
  if (out.param_names.empty())
    throw Error(ErrorCode::parse_error, origin + ": \"tune_params_keys\" is empty: no parameter to make configs of");
  if (!doc["tune_params"].is_object()) {
    throw Error(ErrorCode::parse_error, origin + ": \"tune_params\" is not an object");
  }
  for (const auto& name : out.param_names) {
    if (!doc["tune_params"].contains(name)) {
      throw Error(ErrorCode::parse_error, origin + ": tune_params lacks '" + name + "'");
    }
    if (!doc["tune_params"][name].is_array()) {
      throw Error(ErrorCode::parse_error,
                  origin + ": tune_params." + name + " is not an array of values");
    }
    std::vector<Value> values;
    for (const auto& v : doc["tune_params"][name]) values.push_back(to_value(v, origin, "tune_params." + name));
    out.param_values.push_back(std::move(values));
  }
  const json& cache = doc["cache"];
  if (!cache.is_object()) throw Error(ErrorCode::parse_error, origin + ": \"cache\" is not an object");
  out.entries.reserve(cache.size());
  for (const auto& [key, item] : cache.items()) {
    CacheEntry e;
    e.key = key;
    for (const auto& name : out.param_names) {
      if (!item.contains(name)) {
        throw Error(ErrorCode::parse_error, origin + ": cache entry '" + key + "' lacks '" + name + "'");
      }
      e.values.push_back(to_value(item[name], origin, "cache entry '" + key + "' " + name));
    }
    if (!key_names_values(key, e.values))
      throw Error(ErrorCode::parse_error, origin + ": cache entry '" + key + "' holds other values (" +
                                              entry_values_text(out.param_names, e.values) +
                                              ") than its key names");
    const json time = item.contains("time") ? item["time"] : json();
    if (time.is_number()) {
      e.time_ms = time.get<double>();
    } else if (time.is_string()) {
      e.error = time.get<std::string>();
    } else {
      e.error = time.is_null() ? "missing time" : detail::json_excerpt(time);
    }
    if (item.contains("times")) {
      const json& times = item["times"];
      if (!times.is_array()) {
        throw Error(ErrorCode::parse_error,
                    origin + ": cache entry '" + key + "' times is not an array of numbers");
      }
      for (const auto& t : times) {
        if (t.is_string() && is_non_finite_word(t.get<std::string>())) {  // measured nothing
          e.time_ms.reset();
          e.error = t.get<std::string>();
          e.times_ms.clear();
          break;
        }
        if (!t.is_number()) {
          throw Error(ErrorCode::parse_error, origin + ": cache entry '" + key + "' times holds " +
                                                  detail::json_excerpt(t) + ", not a number");
        }
        e.times_ms.push_back(t.get<double>());
      }
    }
    out.entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace

KernelTunerCache parse_kernel_tuner_cache(const std::string& text, const std::string& origin) {
  const json doc = parse_tolerant(text, origin);
  try {
    return parse_cache_document(doc, origin);
  } catch (const json::exception& e) {  // a shape the checks below did not foresee
    throw Error(ErrorCode::parse_error, origin + ": not a Kernel Tuner cache: " + e.what());
  }
}

KernelTunerCache read_kernel_tuner_cache(const std::string& path) {
  return parse_kernel_tuner_cache(detail::read_maybe_gzip(path, "Kernel Tuner cache file"), path);
}

std::optional<Status> error_status(const std::string& error) {
  if (error == "InvalidConfig") return Status::invalid;
  if (error == "CompilationFailedConfig") return Status::compile_error;
  if (error == "RuntimeFailedConfig") return Status::runtime_error;
  if (is_non_finite_word(error)) return Status::runtime_error;
  return std::nullopt;
}

}  // namespace ktune::kt
