// Reading and writing the ktune JSON-lines trial format (see jsonl_format.h).
#include "jsonl_format.h"

#include <fstream>
#include <istream>
#include <ostream>

#include "input_file.h"
#include "ktune/error.h"
#include "ktune/version.h"
#include "log_json_fields.h"
#include "json_input.h"

namespace ktune::jsonl {

namespace jf = json_fields;
using nlohmann::json;

json header() {
  return json{{"format", kFormatName}, {"version", kFormatVersion}, {"ktune_version", KTUNE_VERSION}};
}

json to_json(const TrialRecord& r) {
  const Trial& t = r.trial;
  json params = json::object();
  for (std::size_t i = 0; i < t.config.size(); ++i) params[t.config.names()[i]] = t.config.values()[i];
  const Resources& res = t.resources;
  return json{
      {"template", r.template_name},
      {"source_hash", r.source_hash},
      {"problem", r.problem_key},
      {"device",
       {{"name", r.device.name},
        {"cc_major", r.device.cc_major},
        {"cc_minor", r.device.cc_minor},
        {"sm_count", r.device.sm_count},
        {"driver_version", r.device.driver_version}}},
      {"ktune_version", r.ktune_version},
      {"nvrtc_version", r.nvrtc_version},
      {"run_id", r.run_id},
      {"config", r.config_text.empty() ? t.config.str() : r.config_text},
      {"params", params},
      {"status", to_string(t.status)},
      {"message", t.message},
      {"times_ms", t.times_ms},
      {"median_ms", t.median_ms},
      {"min_ms", t.min_ms},
      {"spread", t.spread},
      {"error_norm", t.error_norm},
      {"resources",
       {{"registers", res.registers},
        {"shared_bytes", res.shared_bytes},
        {"spill_stores", res.spill_stores},
        {"spill_loads", res.spill_loads},
        {"stack_bytes", res.stack_bytes},
        {"const_bytes", res.const_bytes}}},
      {"compile_ms", t.compile_ms},
      {"wall_ms", t.wall_ms},
      {"sm_clock_mhz", t.sm_clock_mhz},
      {"temperature_c", t.temperature_c},
      {"timestamp_us", t.timestamp_us},
      {"launch", to_string(t.launch)},
  };
}

TrialRecord from_json(const json& j, const std::string& where, ConfigText config) {
  TrialRecord r;
  r.template_name = jf::text(j, "template", where);
  r.source_hash = jf::text(j, "source_hash", where);
  r.problem_key = jf::text(j, "problem", where);
  const json& d = jf::member(j, "device", where);
  r.device.name = jf::text(d, "name", where);
  r.device.cc_major = jf::int32(d, "cc_major", where);
  r.device.cc_minor = jf::int32(d, "cc_minor", where);
  r.device.sm_count = jf::int32(d, "sm_count", where);
  r.device.driver_version = jf::int32(d, "driver_version", where);
  r.ktune_version = jf::text(j, "ktune_version", where);
  r.nvrtc_version = jf::text(j, "nvrtc_version", where);
  r.run_id = jf::text(j, "run_id", where);
  r.config_text = jf::text(j, "config", where);
  Trial& t = r.trial;
  bool parsed = true;
  try {
    t.config = parse_config_text(r.config_text);
  } catch (const Error& e) {
    if (config == ConfigText::strict) jf::fail(where, "config", e.what());
    parsed = false;  // kept as text: the reader refuses it by name
  }
  if (parsed && j.contains("params")) {  // informative copy; must agree with the text form
    const json& params = j["params"];
    bool agrees = params.is_object() && params.size() == t.config.size();
    for (std::size_t i = 0; agrees && i < t.config.size(); ++i) {
      auto it = params.find(t.config.names()[i]);
      agrees = it != params.end() && it->is_number_integer() &&
               jf::integer_value(*it, "params", where) == t.config.values()[i];
    }
    if (!agrees) jf::fail(where, "params", "does not match config '" + r.config_text + "'");
  }
  t.status = jf::parsed_text(j, "status", where, status_from_string);
  t.message = jf::text(j, "message", where);
  const json& times = jf::member(j, "times_ms", where);
  if (!times.is_array()) jf::fail(where, "times_ms", "expected an array of numbers");
  for (const auto& v : times) t.times_ms.push_back(jf::number_value(v, "times_ms", where));
  t.median_ms = jf::number(j, "median_ms", where);
  t.min_ms = jf::number(j, "min_ms", where);
  t.spread = jf::number(j, "spread", where);
  t.error_norm = jf::number(j, "error_norm", where);
  const json& res = jf::member(j, "resources", where);
  t.resources.registers = jf::int32(res, "registers", where);
  t.resources.shared_bytes = jf::int32(res, "shared_bytes", where);
  t.resources.spill_stores = jf::int32(res, "spill_stores", where);
  t.resources.spill_loads = jf::int32(res, "spill_loads", where);
  t.resources.stack_bytes = jf::int32(res, "stack_bytes", where);
  t.resources.const_bytes = jf::int32(res, "const_bytes", where);
  t.compile_ms = jf::number(j, "compile_ms", where);
  t.wall_ms = jf::number(j, "wall_ms", where);
  t.sm_clock_mhz = jf::int32(j, "sm_clock_mhz", where);
  t.temperature_c = jf::int32(j, "temperature_c", where);
  t.timestamp_us = jf::integer(j, "timestamp_us", where);
  // Exports written before the launch form was recorded have no such field.
  if (j.contains("launch")) t.launch = jf::parsed_text(j, "launch", where, launch_form_from_string);
  return r;
}

void write_header(std::ostream& out) { out << header().dump() << '\n'; }

void write_record(std::ostream& out, const TrialRecord& record) {
  out << to_json(record).dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
}

void for_each(std::istream& in, const std::string& origin,
              const std::function<void(const TrialRecord&)>& visit, ConfigText config) {
  std::string line;
  std::size_t number = 0;
  bool seen_header = false;
  auto check_header = [](const json& j, const std::string& where) {
    if (jf::text(j, "format", where) != kFormatName) {
      jf::fail(where, "format", std::string("expected \"") + kFormatName + "\"");
    }
    auto version = jf::integer(j, "version", where);
    if (version > kFormatVersion || version < 1) {
      jf::fail(where, "version",
               "version " + std::to_string(version) + " is not supported (this ktune reads " +
                   std::to_string(kFormatVersion) + ")");
    }
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = origin + ":" + std::to_string(number);
    const json j = detail::parse_json_document(line, where, false);
    // The first line is the header; a later one (exports joined with cat, or gzip members
    // joined) is checked like it and starts the next part.
    if (!seen_header || (j.is_object() && j.contains("format") && !j.contains("template"))) {
      check_header(j, where);
      seen_header = true;
      continue;
    }
    TrialRecord record = from_json(j, where, config);
    record.id = static_cast<std::int64_t>(number);  // names the record in messages
    visit(record);
  }
  if (!seen_header) {
    throw Error(ErrorCode::parse_error, origin + ": empty file, expected a ktune-trials header");
  }
}

void for_each_in_file(const std::string& path, const std::function<void(const TrialRecord&)>& visit,
                      ConfigText config) {
  detail::require_read_permission(path, "JSON-lines file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::not_found, "cannot open '" + path + "' for reading");
  char magic[2] = {};
  in.read(magic, 2);
  if (in.gcount() == 2 && magic[0] == '\x1f' && magic[1] == '\x8b') {
    // gzip (`ktune export - | gzip`): decompressed as it is read.
    detail::GzipInput gz(path, "JSON-lines log");
    std::istream text(&gz);
    text.exceptions(std::ios::badbit);  // the guard's and zlib's errors reach the caller
    for_each(text, path, visit, config);
    return;
  }
  in.clear();
  in.seekg(0);
  for_each(in, path, visit, config);
}

std::vector<TrialRecord> read(std::istream& in, const std::string& origin) {
  std::vector<TrialRecord> out;
  for_each(in, origin, [&](const TrialRecord& r) { out.push_back(r); });
  return out;
}

std::vector<TrialRecord> read_file(const std::string& path) {
  std::vector<TrialRecord> out;
  for_each_in_file(path, [&](const TrialRecord& r) { out.push_back(r); });
  return out;
}

}  // namespace ktune::jsonl
