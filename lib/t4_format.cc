// Export to and import from the T4 results format (see t4_format.h).
#include "t4_format.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <ostream>

#include <nlohmann/json.hpp>

#include "jsonl_format.h"
#include "ktune/error.h"
#include "log_json_fields.h"
#include "json_input.h"

namespace ktune::t4 {

namespace jf = json_fields;
using nlohmann::ordered_json;

const char* invalidity_of(Status status) {
  switch (status) {
    case Status::ok: return "correct";
    case Status::invalid: return "constraints";
    case Status::compile_error: return "compile";
    case Status::launch_error:
    case Status::runtime_error: return "runtime";
    case Status::timeout: return "timeout";
    case Status::wrong_result: return "correctness";
  }
  return "runtime";
}

std::string iso_timestamp(std::int64_t unix_us) {
  std::time_t seconds = static_cast<std::time_t>(unix_us / 1000000);
  long micros = static_cast<long>(unix_us % 1000000);
  if (micros < 0) {
    micros += 1000000;
    --seconds;
  }
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld+00:00", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, micros);
  return buf;
}

std::int64_t parse_timestamp(const std::string& text) {
  int year, mon, day, hour, min, sec, used = 0;
  char sep;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &year, &mon, &day, &sep, &hour, &min,
                  &sec, &used) != 7 ||
      (sep != 'T' && sep != ' ')) {
    throw Error(ErrorCode::parse_error, "timestamp '" + text + "' is not ISO 8601");
  }
  std::size_t pos = static_cast<std::size_t>(used);
  std::int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    int digits = 0;
    for (++pos; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos) {
      if (digits++ < 6) micros = micros * 10 + (text[pos] - '0');
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  std::int64_t offset_s = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(text.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2 || oh < 0 || oh > 23 ||
        om < 0 || om > 59) {
      throw Error(ErrorCode::parse_error,
                  "timestamp '" + text + "': bad UTC offset (expected +hh:mm, hh 00-23, mm 00-59)");
    }
    offset_s = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  } else if (pos < text.size() && text[pos] != 'Z') {
    throw Error(ErrorCode::parse_error, "timestamp '" + text + "': unexpected '" +
                                            text.substr(pos) + "'");
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60 ||
      hour < 0 || min < 0 || sec < 0) {
    throw Error(ErrorCode::parse_error, "timestamp '" + text + "': a field is out of range");
  }
  std::tm utc{};
  utc.tm_year = year - 1900;
  utc.tm_mon = mon - 1;
  utc.tm_mday = day;
  utc.tm_hour = hour;
  utc.tm_min = min;
  utc.tm_sec = sec;
  std::int64_t seconds = static_cast<std::int64_t>(timegm(&utc)) - offset_s;
  return seconds * 1000000 + micros;
}

Writer::Writer(std::ostream& out) : out_(out) {
  out_ << "{\n \"schema_version\": " << ordered_json(kSchemaVersion).dump() << ",\n \"results\": [";
}

void Writer::add(const TrialRecord& r) {
  const Trial& t = r.trial;
  ordered_json configuration = ordered_json::object();
  for (std::size_t i = 0; i < t.config.size(); ++i)
    configuration[t.config.names()[i]] = t.config.values()[i];
  ordered_json measurements = ordered_json::array();
  auto measure = [&](const char* name, const ordered_json& value, const char* unit) {
    measurements.push_back({{"name", name}, {"value", value}, {"unit", unit}});
  };
  if (t.ok()) measure("time", t.median_ms, "ms");
  if (t.error_norm >= 0) measure("error_norm", t.error_norm, "");
  if (t.resources.registers >= 0) measure("registers", t.resources.registers, "");
  ordered_json result;
  result["timestamp"] = iso_timestamp(t.timestamp_us);
  result["configuration"] = configuration;
  result["objectives"] = {"time"};
  result["times"] = {{"compilation_time", t.compile_ms}, {"runtimes", t.times_ms}};
  result["invalidity"] = invalidity_of(t.status);
  result["correctness"] = t.status == Status::wrong_result ? 0 : 1;
  result["measurements"] = measurements;
  result["ktune"] = ordered_json::parse(
      jsonl::to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  out_ << (first_ ? "\n  " : ",\n  ")
       << result.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  first_ = false;
}

void Writer::finish() { out_ << (first_ ? "]\n}\n" : "\n ]\n}\n"); }

namespace {

Status status_of(const std::string& invalidity, double correctness, const std::string& where) {
  if (invalidity == "correct") return correctness == 0 ? Status::wrong_result : Status::ok;
  if (invalidity == "compile") return Status::compile_error;
  if (invalidity == "runtime") return Status::runtime_error;
  if (invalidity == "timeout") return Status::timeout;
  if (invalidity == "correctness") return Status::wrong_result;
  if (invalidity == "constraints") return Status::invalid;
  jf::fail(where, "invalidity", "unknown value '" + invalidity + "'");
}

/// The "configuration" object of a T4 result as ktune's config text (integers only).
std::string configuration_text(const ordered_json& j, const std::string& where) {
  const auto& configuration = jf::member(j, "configuration", where);
  if (!configuration.is_object()) jf::fail(where, "configuration", "expected an object");
  std::string text;
  for (auto it = configuration.begin(); it != configuration.end(); ++it) {
    const Value value = jf::integer_value(*it, "configuration." + it.key(), where);
    if (!text.empty()) text += ",";
    text += it.key() + "=" + std::to_string(value);
  }
  return text;
}

/// A result that carries ktune's own record must not contradict its T4 fields (a file edited
/// by hand or by another tool): its configuration and its status are compared.
void check_ktune_agrees(const ordered_json& j, const TrialRecord& r, const std::string& where) {
  if (j.contains("configuration")) {
    const std::string text = configuration_text(j, where);
    Config config;
    try {
      config = parse_config_text(text);
    } catch (const Error& e) {
      jf::fail(where, "configuration", e.what());
    }
    // Compared by name: a tool that rewrites the file may sort the keys (jq -S, Python's
    // sort_keys), which changes no config.
    if (config.values_by_name() != r.trial.config.values_by_name()) {
      jf::fail(where, "configuration",
               "'" + text + "' disagrees with the ktune record's config '" + r.config_text + "'");
    }
  }
  if (j.contains("invalidity")) {
    const double correctness = j.contains("correctness") ? jf::number(j, "correctness", where) : 1;
    const Status status = status_of(jf::text(j, "invalidity", where), correctness, where);
    // T4's classes are coarser than ktune's (launch and runtime errors are both "runtime"):
    // the two agree when they name the same class.
    if (std::string(invalidity_of(status)) != invalidity_of(r.trial.status)) {
      jf::fail(where, "invalidity",
               std::string("says ") + to_string(status) + " but the ktune record says " +
                   to_string(r.trial.status));
    }
  }
}

TrialRecord from_result(const ordered_json& j, const std::string& where,
                        const ImportOptions& context, const std::string& run_id) {
  if (j.contains("ktune")) {
    TrialRecord r = jsonl::from_json(nlohmann::json::parse(j["ktune"].dump()), where + " (ktune)");
    check_ktune_agrees(j, r, where);
    return r;
  }
  TrialRecord r;
  r.template_name = context.template_name;
  r.problem_key = context.problem_key;
  if (r.template_name.empty() || r.problem_key.empty()) {
    throw Error(ErrorCode::invalid_argument,
                where + ": a T4 result without a \"ktune\" object needs the template and the "
                        "problem from the import options");
  }
  if (!context.device)  // else every such result lands on the nameless device "|sm_00|0"
    throw Error(ErrorCode::invalid_argument,
                where + ": a T4 result without a \"ktune\" object names no device; give its "
                        "architecture (and name) in the import options (ktune import --arch "
                        "sm_90 --device-name ...)");
  r.device = *context.device;
  if (r.device.name.empty()) r.device.name = Device::offline_name(r.device.arch());  // any arch
  r.run_id = run_id;
  r.ktune_version = "t4";
  Trial& t = r.trial;
  const std::string text = configuration_text(j, where);
  r.config_text = text;
  try {
    t.config = parse_config_text(text);
  } catch (const Error& e) {
    jf::fail(where, "configuration", e.what());
  }
  double correctness = jf::number(j, "correctness", where);
  t.status = status_of(jf::text(j, "invalidity", where), correctness, where);
  const auto& times = jf::member(j, "times", where);
  if (!times.is_object()) jf::fail(where, "times", "expected an object, got " + detail::json_excerpt(times));
  if (times.contains("runtimes")) {
    const auto& runtimes = times["runtimes"];
    if (!runtimes.is_array()) jf::fail(where, "times.runtimes", "expected an array");
    for (const auto& v : runtimes) t.times_ms.push_back(jf::number_value(v, "times.runtimes", where));
  }
  if (times.contains("compilation_time")) {
    t.compile_ms = jf::number(times, "compilation_time", where);
  }
  summarize_times(t);
  if (j.contains("measurements")) {
    const auto& ms = j["measurements"];
    if (!ms.is_array()) jf::fail(where, "measurements", "expected an array");
    for (const auto& m : ms) {
      std::string name = jf::text(m, "name", where);
      const auto& value = jf::member(m, "value", where);
      // A time that is there must be a number (null: none); an error norm written as null
      // (an infinite one, as JSON has no infinity) stays unknown.
      if (name == "time" && !value.is_number() && !value.is_null())
        jf::fail(where, "measurements", "the time measurement's value is not a number");
      if (name == "time" && t.times_ms.empty() && value.is_number()) t.median_ms = value.get<double>();
      if (name == "error_norm" && value.is_number()) t.error_norm = value.get<double>();
    }
  }
  if (j.contains("timestamp")) {
    try {
      t.timestamp_us = parse_timestamp(jf::text(j, "timestamp", where));
    } catch (const Error& e) {
      jf::fail(where, "timestamp", e.what());
    }
  }
  return r;
}

}  // namespace

std::vector<TrialRecord> read(std::string_view text, const std::string& origin,
                              const ImportOptions& context, const std::string& default_run_id) {
  const ordered_json doc = detail::parse_json_document<ordered_json>(text, origin);
  std::string version = jf::text(doc, "schema_version", origin);
  if (version.substr(0, 2) != "1.") {
    jf::fail(origin, "schema_version", "T4 version " + version + " is not supported (reads 1.x)");
  }
  const auto& results = jf::member(doc, "results", origin);
  if (!results.is_array()) jf::fail(origin, "results", "expected an array");
  // Options that no result would use (every one names its own identity in a "ktune" record)
  // are refused rather than silently dropped; in a mixed file they go to the others.
  const bool options_given = !context.template_name.empty() || !context.problem_key.empty() ||
                             context.device || !context.run_id.empty();
  if (options_given && !results.empty() &&
      std::all_of(results.begin(), results.end(), [](const ordered_json& r) {
        return r.is_object() && r.contains("ktune");
      }))
    throw Error(ErrorCode::invalid_argument,
                "'" + origin + "' was written by ktune: each of its results names its own "
                "template, problem, device and run (its \"ktune\" record), so the template, "
                "problem, device and run options would apply to none; they are for T4 results "
                "without a \"ktune\" record");
  const std::string& run_id = context.run_id.empty() ? default_run_id : context.run_id;
  std::vector<TrialRecord> out;
  out.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    out.push_back(from_result(results[i], origin + ": results[" + std::to_string(i) + "]",
                              context, run_id));
  }
  return out;
}

}  // namespace ktune::t4
