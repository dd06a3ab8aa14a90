// Import of trial files into a tuning log: ktune JSON lines, T4 results and Kernel Tuner cache
// files (.json / .json.gz). Every file is parsed completely before anything is written, and
// the records go in with one transaction, so a malformed file leaves the log untouched.
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "jsonl_format.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/problem.h"
#include "log_json_fields.h"
#include "t4_format.h"

namespace ktune {

namespace jf = json_fields;
using nlohmann::ordered_json;

const char* to_string(LogFormat format) {
  switch (format) {
    case LogFormat::jsonl: return "jsonl";
    case LogFormat::t4: return "t4";
    case LogFormat::kernel_tuner: return "kernel_tuner";
  }
  return "jsonl";
}

LogFormat log_format_from_string(const std::string& text) {
  if (text == "jsonl") return LogFormat::jsonl;
  if (text == "t4") return LogFormat::t4;
  if (text == "kernel_tuner" || text == "kt") return LogFormat::kernel_tuner;
  throw Error(ErrorCode::parse_error,
              "log format '" + text + "' is unknown (expected jsonl, t4 or kernel_tuner)");
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Whole file as text; gzip-compressed files (.gz or gzip magic) are inflated.
std::string read_text(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files transparently too
  if (!f) throw Error(ErrorCode::not_found, "cannot open '" + path + "' for reading");
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  std::string detail = msg ? msg : "";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    throw Error(ErrorCode::io_error, "reading '" + path + "' failed: " + detail);
  }
  return text;
}

// 1-based line of the first occurrence of `needle` in `text` (0 when absent).
std::size_t line_of(const std::string& text, const std::string& needle) {
  auto pos = text.find(needle);
  if (pos == std::string::npos) return 0;
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + pos, '\n'));
}

// Kernel Tuner error strings stored in place of a time.
Status kernel_tuner_status(const std::string& text, const std::string& where) {
  if (text == "CompilationFailedConfig") return Status::compile_error;
  if (text == "RuntimeFailedConfig") return Status::runtime_error;
  if (text == "InvalidConfig") return Status::invalid;
  jf::fail(where, "time", "unknown Kernel Tuner error '" + text + "'");
}

// Minimal reader of a Kernel Tuner cache: device_name, kernel_name, problem_size,
// tune_params_keys and the cache entries (one per line in files Kernel Tuner writes).
std::vector<TrialRecord> read_kernel_tuner(const std::string& path, const ImportOptions& options) {
  std::string text = read_text(path);
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    throw Error(ErrorCode::parse_error, path + ": not valid JSON: " + e.what());
  }
  std::string kernel = jf::text(doc, "kernel_name", path + ":" + std::to_string(line_of(text, "\"kernel_name\"")));
  std::string device_name = jf::text(doc, "device_name", path);
  const auto& keys = jf::member(doc, "tune_params_keys", path);
  if (!keys.is_array()) jf::fail(path, "tune_params_keys", "expected an array of names");

  TrialRecord base;
  base.template_name = options.template_name.empty() ? kernel : options.template_name;
  if (!options.problem_key.empty()) {
    base.problem_key = options.problem_key;
  } else {
    Problem p;
    p.op = kernel;
    const auto& size = jf::member(doc, "problem_size", path);
    std::vector<ordered_json> dims = size.is_array() ? std::vector<ordered_json>(size.begin(), size.end())
                                                     : std::vector<ordered_json>{size};
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (!dims[i].is_number_integer()) jf::fail(path, "problem_size", "expected integers");
      p.dims.emplace_back("d" + std::to_string(i), dims[i].get<std::int64_t>());
    }
    base.problem_key = p.key();
  }
  if (options.device) {
    base.device = *options.device;
  } else {
    base.device.name = device_name;
  }
  base.run_id = options.run_id.empty() ? new_run_id() : options.run_id;
  base.ktune_version = "kernel_tuner";

  const auto& cache = jf::member(doc, "cache", path);
  if (!cache.is_object()) jf::fail(path, "cache", "expected an object");
  std::vector<TrialRecord> out;
  out.reserve(cache.size());
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    std::string where = path + ":" + std::to_string(line_of(text, "\"" + it.key() + "\":")) +
                        " (cache entry \"" + it.key() + "\")";
    const auto& entry = it.value();
    TrialRecord r = base;
    std::string config;
    for (const auto& key : keys) {
      if (!key.is_string()) jf::fail(path, "tune_params_keys", "expected strings");
      std::string name = key.get<std::string>();
      auto value = jf::integer(entry, name, where);
      if (!config.empty()) config += ",";
      config += name + "=" + std::to_string(value);
    }
    r.config_text = config;
    Trial& t = r.trial;
    try {
      t.config = parse_config_text(config);
    } catch (const Error& e) {
      jf::fail(where, "tune_params_keys", e.what());
    }
    const auto& time = jf::member(entry, "time", where);
    if (time.is_string()) {
      t.status = kernel_tuner_status(time.get<std::string>(), where);
      t.message = time.get<std::string>();
    } else {
      t.status = Status::ok;
      if (entry.contains("times")) {
        const auto& times = entry["times"];
        if (!times.is_array()) jf::fail(where, "times", "expected an array of numbers");
        for (const auto& v : times) t.times_ms.push_back(jf::number_value(v, "times", where));
      }
      summarize_times(t);
      if (t.times_ms.empty()) t.median_ms = t.min_ms = jf::number(entry, "time", where);
    }
    if (entry.contains("compile_time")) t.compile_ms = jf::number(entry, "compile_time", where);
    if (entry.contains("timestamp")) {
      try {
        t.timestamp_us = t4::parse_timestamp(jf::text(entry, "timestamp", where));
      } catch (const Error& e) {
        jf::fail(where, "timestamp", e.what());
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<TrialRecord> read_records(const std::string& path, LogFormat format,
                                      const ImportOptions& options) {
  switch (format) {
    case LogFormat::jsonl: return jsonl::read_file(path);
    case LogFormat::t4: {
      std::istringstream in(read_text(path));
      return t4::read(in, path, options);
    }
    case LogFormat::kernel_tuner: return read_kernel_tuner(path, options);
  }
  return {};
}

}  // namespace

LogFormat detect_log_format(const std::string& path) {
  if (ends_with(path, ".jsonl")) return LogFormat::jsonl;
  if (ends_with(path, ".json.gz")) return LogFormat::kernel_tuner;
  std::string head = read_text(path).substr(0, 4096);
  if (head.find("\"ktune-trials\"") != std::string::npos) return LogFormat::jsonl;
  if (head.find("\"schema_version\"") != std::string::npos &&
      head.find("\"results\"") != std::string::npos)
    return LogFormat::t4;
  if (head.find("\"tune_params_keys\"") != std::string::npos ||
      head.find("\"cache\"") != std::string::npos)
    return LogFormat::kernel_tuner;
  throw Error(ErrorCode::parse_error,
              "cannot tell the format of '" + path +
                  "' (not ktune JSON lines, T4 results or a Kernel Tuner cache); name it");
}

ImportSummary import_file(TuningLog& log, const std::string& path, const ImportOptions& options) {
  ImportSummary summary;
  summary.format = options.format ? *options.format : detect_log_format(path);
  std::vector<TrialRecord> records = read_records(path, summary.format, options);
  log.append_batch(records);  // one transaction: all or nothing
  summary.records = records.size();
  std::set<std::string> runs;
  for (const auto& r : records) runs.insert(r.run_id);
  summary.run_ids.assign(runs.begin(), runs.end());
  return summary;
}

}  // namespace ktune
