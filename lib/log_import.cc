// Import of trial files into a tuning log: ktune JSON lines, T4 results and Kernel Tuner cache
// files (.json / .json.gz). Every file is parsed completely before anything is written, and
// the records go in with one transaction, so a malformed file leaves the log untouched. A
// JSON-lines file is read twice instead of held (it can be larger than memory).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "content_hash.h"
#include "jsonl_format.h"
#include "input_file.h"
#include "kernel_tuner_cache.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/problem.h"
#include "log_json_fields.h"
#include "sqlite_db.h"
#include "t4_format.h"

namespace ktune {

namespace jf = json_fields;

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

// 1-based line of the first occurrence of `needle` in `text` (0 when absent).
std::size_t line_of(const std::string& text, const std::string& needle) {
  auto pos = text.find(needle);
  if (pos == std::string::npos) return 0;
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + pos, '\n'));
}

// Kernel Tuner writes each cache entry on its own line, keyed by its values joined by commas.
std::string entry_where(const std::string& path, const std::string& text, const std::string& key) {
  return path + ":" + std::to_string(line_of(text, "\"" + key + "\"")) + " (cache entry \"" +
         key + "\")";
}

// The 1-based line of each object key of a JSON `text` (a quoted string followed by ':'), at
// its first occurrence: one pass, so that every cache entry of a large cache can be named by
// its line.
std::unordered_map<std::string, std::size_t> object_key_lines(const std::string& text) {
  std::unordered_map<std::string, std::size_t> out;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
    if (text[i] != '"') continue;
    std::size_t end = i + 1;
    while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
    if (end >= text.size()) break;
    std::size_t after = end + 1;
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
    if (after < text.size() && text[after] == ':') out.emplace(text.substr(i + 1, end - i - 1), line);
    i = end;
  }
  return out;
}

// A Kernel Tuner cache (the file's decompressed `text`) through the shared reader
// (lib/kernel_tuner_cache.h); its errors gain the line of the offending cache entry, and
// `places` gets each record's ("file:line (cache entry \"key\")").
std::vector<TrialRecord> read_kernel_tuner(const std::string& path, const std::string& text,
                                           const ImportOptions& options,
                                           std::vector<std::string>& places) {
  kt::KernelTunerCache cache;
  try {
    cache = kt::parse_kernel_tuner_cache(text, path);
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string marker = "cache entry '";
    auto at = message.find(marker);
    if (at == std::string::npos) throw;
    auto key_end = message.find('\'', at + marker.size());
    std::string key = message.substr(at + marker.size(), key_end - at - marker.size());
    throw Error(e.code(), entry_where(path, text, key) + ": " +
                              message.substr(std::min(message.size(), path.size() + 2)));
  }

  TrialRecord base;
  base.template_name = options.template_name.empty() ? cache.kernel_name : options.template_name;
  if (base.template_name.empty()) {
    jf::fail(path, "kernel_name", "missing; pass the template name in the import options");
  }
  if (!options.problem_key.empty()) {
    base.problem_key = options.problem_key;
  } else {
    Problem p;
    p.op = base.template_name;
    for (std::size_t i = 0; i < cache.problem_size.size(); ++i)
      p.dims.emplace_back("d" + std::to_string(i), cache.problem_size[i]);
    base.problem_key = p.key();
  }
  if (options.device) {
    base.device = *options.device;
    if (base.device.name.empty())
      base.device.name = cache.device_name.empty() ? Device::offline_name(base.device.arch()) : cache.device_name;
  } else {
    base.device.name = cache.device_name;
    // A device key "|sm_00|0" would match no GPU and read as nothing in `best`.
    if (base.device.name.empty())
      jf::fail(path, "device_name",
               "empty: the cache names no device; give it (--device-name, with --arch for its "
               "compute capability; ImportOptions::device), or --arch alone for an offline name");
  }
  base.run_id = options.run_id.empty() ? new_run_id() : options.run_id;
  base.ktune_version = "kernel_tuner";

  std::vector<TrialRecord> out;
  out.reserve(cache.entries.size());
  const auto key_lines = object_key_lines(text);
  for (const auto& entry : cache.entries) {
    TrialRecord r = base;
    std::string config;
    for (std::size_t i = 0; i < cache.param_names.size(); ++i)
      config += (i ? "," : "") + cache.param_names[i] + "=" + std::to_string(entry.values[i]);
    r.config_text = config;
    // Named by the key as the file writes it ("1.0,True"), found among the file's keys.
    const auto line = key_lines.find(entry.key);
    places.push_back(path + ":" + (line == key_lines.end() ? std::string("?")
                                                           : std::to_string(line->second)) +
                     " (cache entry \"" + entry.key + "\")");
    Trial& t = r.trial;
    try {
      t.config = parse_config_text(config);
    } catch (const Error& e) {
      jf::fail(places.back(), "tune_params_keys", e.what());
    }
    if (entry.time_ms && !is_possible_time(*entry.time_ms)) {
      // Replay counts such an entry as failed (ReplayMeasurer); a log would hold it as a
      // measurement, so the import refuses it.
      char value[32];
      std::snprintf(value, sizeof value, "%g", *entry.time_ms);
      jf::fail(places.back(), "time",
               std::string(value) + " is not a time (expected a positive, finite number of ms)");
    }
    if (entry.time_ms) {
      t.status = Status::ok;
      t.times_ms = entry.times_ms;
      summarize_times(t);
      if (t.times_ms.empty()) t.median_ms = t.min_ms = *entry.time_ms;
    } else if (auto status = kt::error_status(entry.error)) {
      t.status = *status;
      t.message = entry.error;
    } else {
      jf::fail(places.back(), "time", "unknown Kernel Tuner result '" + entry.error + "'");
    }
    out.push_back(std::move(r));
  }
  return out;
}

/// The prefix of the run ids content_run_id gives a format's files ("t4-import-").
std::string content_run_family(LogFormat format) {
  return std::string(format == LogFormat::t4 ? "t4" : "kt") + "-import-";
}

/// The run id of a file whose format carries none: derived from its content, so that the same
/// file imported again names the same run and adds nothing.
std::string content_run_id(LogFormat format, const std::string& content) {
  return content_run_family(format) + detail::hex64(detail::fnv1a64(content));
}

std::vector<TrialRecord> read_records(const std::string& path, LogFormat format,
                                      const ImportOptions& options,
                                      std::vector<std::string>& places) {
  switch (format) {
    case LogFormat::jsonl: break;  // streamed by import_regular_file, never held
    case LogFormat::t4:
    case LogFormat::kernel_tuner: {
      const std::string content =  // read once: run id and records
          detail::read_maybe_gzip(path, format == LogFormat::t4 ? "T4 results file" : "Kernel Tuner cache file");
      if (format == LogFormat::t4) {
        // The options as given: a T4 result written by ktune refuses any it would override.
        auto records = t4::read(content, path, options, content_run_id(format, content));
        for (std::size_t i = 0; i < records.size(); ++i)
          places.push_back(path + ": results[" + std::to_string(i) + "]");  // as t4::read names it
        return records;
      }
      ImportOptions with_run = options;
      if (with_run.run_id.empty()) with_run.run_id = content_run_id(format, content);
      return read_kernel_tuner(path, content, with_run, places);
    }
  }
  return {};
}

/// The format the first 4 KiB of a file show, whatever its name; nullopt when they show none.
std::optional<LogFormat> format_by_content(const std::string& path) {
  // A ktune export or a T4 file may be gzipped as .json.gz too.
  const std::string head = detail::read_maybe_gzip(path, "log file", 4096);  // not the whole file
  if (head.find("\"ktune-trials\"") != std::string::npos) return LogFormat::jsonl;
  // T4: "results" with "schema_version", or (a writer that sorts keys puts the version after a
  // long results array) with the fields of a result.
  if (head.find("\"results\"") != std::string::npos &&
      (head.find("\"schema_version\"") != std::string::npos ||
       (head.find("\"configuration\"") != std::string::npos &&
        head.find("\"invalidity\"") != std::string::npos)))
    return LogFormat::t4;
  if (head.find("\"tune_params_keys\"") != std::string::npos ||
      head.find("\"cache\"") != std::string::npos)
    return LogFormat::kernel_tuner;
  return std::nullopt;
}

}  // namespace

LogFormat detect_log_format(const std::string& path) {
  if (ends_with(path, ".jsonl") || ends_with(path, ".jsonl.gz")) return LogFormat::jsonl;
  if (const auto format = format_by_content(path)) return *format;
  if (ends_with(path, ".json.gz")) return LogFormat::kernel_tuner;  // Kernel Tuner's own name
  throw Error(ErrorCode::parse_error,
              "cannot tell the format of '" + path +
                  "' (not ktune JSON lines, T4 results or a Kernel Tuner cache); name it with "
                  "--format jsonl, t4 or kernel_tuner (ImportOptions::format)");
}

namespace {

/// Throws Error(invalid_argument) for import options that cannot apply: any of them for JSON
/// lines (whose records carry their own), a problem key that does not parse, a template name
/// with spaces, control characters or '|', a device name that does not fit a device key.
void check_import_options(const ImportOptions& options, LogFormat format, const std::string& path) {
  if (format == LogFormat::jsonl &&
      (!options.template_name.empty() || !options.problem_key.empty() || options.device ||
       !options.run_id.empty()))
    throw Error(ErrorCode::invalid_argument,
                "'" + path + "' is ktune JSON lines, whose records name their own template, "
                "problem, device and run: the template, problem, device and run options apply "
                "to T4 and Kernel Tuner files only");
  if (!options.problem_key.empty()) {
    try {
      (void)Problem::from_key(options.problem_key);
    } catch (const Error& e) {
      throw Error(ErrorCode::invalid_argument,
                  "problem key '" + options.problem_key + "' given for '" + path +
                      "' is not one: " + e.what() + " (e.g. gemm|M=64,N=64,K=64|dtype=f16)");
    }
  }
  if (!fits_template_name(options.template_name))
    throw Error(ErrorCode::invalid_argument,
                "template name '" + options.template_name + "' given for '" + path +
                    "' holds a space, a control character or '|'");
  if (options.device && !fits_device_key(options.device->name))
    throw Error(ErrorCode::invalid_argument,
                "device name '" + options.device->name + "' given for '" + path +
                    "' holds a control character or '|' (a device key is name|sm_XY|SMs)");
}

ImportSummary import_regular_file(TuningLog& log, const std::string& path,
                                  const ImportOptions& options) {
  ImportSummary summary;
  if (sqlite::is_sqlite_file(path))  // a tuning log itself: it is merged through an export
    throw Error(ErrorCode::invalid_argument,
                "'" + path + "' is an SQLite database (a ktune tuning log?), not a file of "
                "records to import; to add one log's trials to another: ktune export --db '" +
                    path + "' - | ktune import --db TARGET -");
  summary.format = options.format ? *options.format : detect_log_format(path);
  check_import_options(options, summary.format, path);
  // Each record is checked under the name of its place in the file, not the log's: its line
  // (JSON lines, a Kernel Tuner cache entry's) or its index among T4 results.
  auto checked = [&](const TrialRecord& r, const std::string& where) {
    try {
      check_record_names(r, where);
    } catch (const Error& e) {
      // Names a T4 or Kernel Tuner file did not give were made from its header (kernel_name,
      // problem_size): the options replace them.
      const bool made = summary.format != LogFormat::jsonl &&
                        (options.template_name.empty() || options.problem_key.empty());
      if (!made) throw Error(ErrorCode::parse_error, e.what());
      throw Error(ErrorCode::parse_error, std::string(e.what()) +
                                " (made from the file's kernel_name and problem_size; name them with "
                                "--template and --problem, ImportOptions in the library)");
    }
    try {
      check_record(r, where);
    } catch (const Error& e) {  // in a file being imported, an impossible time is malformed input
      throw Error(ErrorCode::parse_error, e.what());
    }
    if (!options.check) return;
    try {
      options.check(r);
    } catch (const std::exception& e) {  // any refusal by the caller's check is the file's fault
      throw Error(ErrorCode::parse_error, where + ": " + e.what());
    }
  };
  std::set<std::string> runs;
  std::size_t visited = 0;
  auto appended = [&](std::size_t, const TrialRecord& r) {
    ++summary.records;
    runs.insert(r.run_id);
  };
  if (summary.format == LogFormat::jsonl) {
    // A JSON-lines file can be far larger than memory: it is read twice, record by record
    // (checked first, then inserted inside the transaction), and never held.
    visited = log.append_absent_streamed(
        [&](const std::function<void(const TrialRecord&)>& visit) {
          jsonl::for_each_in_file(path, [&](const TrialRecord& r) {
            if (options.poll) options.poll();
            checked(r, path + ":" + std::to_string(r.id));
            visit(r);
          });
        },
        "", appended);
  } else {  // a whole document (T4, Kernel Tuner)
    std::vector<std::string> places;
    std::vector<TrialRecord> records = read_records(path, summary.format, options, places);
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (options.poll) options.poll();
      checked(records[i], places.at(i));
    }
    // Runs named after their file's content form one family: a file that grew (Kernel Tuner
    // extends its cache while tuning) adds only its new records. Inserted as a stream, so that
    // `poll` is asked between inserts too.
    visited = log.append_absent_streamed(
        [&](const std::function<void(const TrialRecord&)>& visit) {
          for (const auto& r : records) {
            if (options.poll) options.poll();
            visit(r);
          }
        },
        options.run_id.empty() ? content_run_family(summary.format) : "", appended);
  }
  // A file of no records at all (a header alone, an empty results list) imports nothing, as
  // an empty file does: refused rather than reported as a success.
  if (visited == 0)
    throw Error(ErrorCode::parse_error, "'" + path + "' holds no trial record (" +
                                            to_string(summary.format) + "): nothing to import");
  summary.already_present = visited - summary.records;
  summary.run_ids.assign(runs.begin(), runs.end());
  return summary;
}

}  // namespace

void refuse_foreign_log(const std::string& path, const std::string& what) {
  std::optional<LogFormat> format;
  try {
    format = detect_log_format(path);
  } catch (const Error&) {
    return;
  }
  if (format && *format != LogFormat::jsonl)
    throw Error(ErrorCode::parse_error,
                what + " '" + path + "' is a " +
                    (*format == LogFormat::t4 ? "T4 results file" : "Kernel Tuner cache") +
                    ", not a ktune database or JSON-lines export: import it first (ktune import "
                    "--db recorded.db " + path + ") and use recorded.db");
}

namespace {

/// import_regular_file; when a format the options force fails to read a file whose content
/// shows another format, the error says so first.
ImportSummary import_in_format(TuningLog& log, const std::string& path,
                               const ImportOptions& options) {
  try {
    return import_regular_file(log, path, options);
  } catch (const Error& e) {
    if (!options.format || e.code() != ErrorCode::parse_error) throw;
    // Only what the content shows: a name says nothing a forced --format does not override.
    std::optional<LogFormat> content;
    try {
      content = format_by_content(path);
    } catch (const Error&) {
    }
    if (!content || *content == *options.format) throw;
    throw Error(e.code(), "'" + path + "' looks like " + to_string(*content) + ", not " +
                              to_string(*options.format) + " as --format (ImportOptions::format) " +
                              "says: leave it out or name " + to_string(*content) +
                              "; read as " + to_string(*options.format) + ": " + e.what());
  }
}

}  // namespace

ImportSummary import_file(TuningLog& log, const std::string& path, const ImportOptions& options) {
  const detail::RereadableInput input(path, "file to import");
  if (!input.copied()) return import_in_format(log, path, options);
  try {
    return import_in_format(log, input.path(), options);
  } catch (const Error& e) {  // messages name the input, not its temporary copy
    throw input.naming_input(e);
  }
}

}  // namespace ktune
