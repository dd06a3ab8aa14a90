// Vendor reference trials: the reserved "vendor:<library>" template names, device keys, and
// reading vendor times out of GPU benchmark result files (see vendor_records.h).
#include "vendor_records.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/problem.h"
#include "ktune/template.h"
#include "input_file.h"
#include "json_input.h"

namespace ktune::cli {

namespace {

/// The vendor reference of memory-bound templates: computed from the log's copy trials.
constexpr const char* kCopyReference = "copy";

bool is_vendor_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

}  // namespace

std::string vendor_template_name(const std::string& vendor) {
  if (!is_vendor_name(vendor))
    throw Error(ErrorCode::invalid_argument,
                "vendor name \"" + vendor + "\": expected lower-case letters, digits and _ (e.g. cublas)");
  return kVendorPrefix + vendor;
}

bool is_vendor_template(const std::string& template_name) {
  // Older logs recorded vendor times under the library's plain name.
  return template_name.rfind(kVendorPrefix, 0) == 0 || template_name == "cublas" ||
         template_name == "cudnn";
}

Device device_from_key(const std::string& key) {
  const Device d = Device::from_key(key);
  if (d.sm_count < 1 || d.cc_major < 1)  // a vendor time names the GPU it was measured on
    throw Error(ErrorCode::parse_error, "device key \"" + key + "\": a known arch and an SM count of 1 "
                                        "or more are needed (\"name|sm_XY|sm_count\", e.g. \"NVIDIA H200|sm_90|132\")");
  return d;
}

/// The templates of `problem_key`'s op whose vendor reference is `vendor`; throws Error naming
/// what does not fit (an unknown op, another library, an incomplete or non-canonical key).
void check_vendor_problem(const std::string& vendor, const std::string& problem_key) {
  if (vendor == kCopyReference)
    throw Error(ErrorCode::invalid_argument,
                "vendor \"copy\" is not a library: memory-bound templates are compared with the "
                "bandwidth of the copy template's own trials in the log (tune --op copy)");
  const Problem problem = Problem::from_key(problem_key);
  std::string references, why;
  bool op_known = false;
  for (const auto& t : all_templates()) {
    if (t->op() != problem.op) continue;
    op_known = true;
    if (references.find(t->vendor_reference()) == std::string::npos)
      references += (references.empty() ? "" : ", ") + t->vendor_reference();
    if (t->vendor_reference() != vendor) continue;
    try {
      t->check_problem(problem);
      return;
    } catch (const Error& e) {
      why = e.what();
    }
  }
  if (!op_known)
    throw Error(ErrorCode::unknown_name, "problem \"" + problem_key + "\": no template has op \"" +
                                             problem.op + "\"");
  if (why.empty())
    throw Error(ErrorCode::invalid_argument,
                "vendor \"" + vendor + "\" is not what " + problem.op + " templates are compared "
                "with (" + references + "): no table would show it");
  throw Error(ErrorCode::invalid_argument,
              "problem \"" + problem_key + "\" is not a complete problem of a template compared "
              "with " + vendor + " (give every attribute, as `ktune best` lists the key): " + why);
}

TrialRecord make_vendor_record(const std::string& vendor, const std::string& problem_key,
                               const std::string& device_key, double median_ms,
                               const std::vector<double>& samples, const std::string& run_id) {
  if (!(median_ms > 0) || !std::isfinite(median_ms))
    throw Error(ErrorCode::invalid_argument,
                vendor + " time for " + problem_key + ": expected milliseconds > 0");
  const std::string template_name = vendor_template_name(vendor);  // checks the name
  const Device device = device_from_key(device_key);
  check_vendor_problem(vendor, problem_key);
  Trial t;
  t.status = Status::ok;
  t.times_ms = samples;
  if (!samples.empty()) summarize_times(t);
  t.median_ms = median_ms;
  if (samples.empty()) t.min_ms = median_ms;
  t.message = "vendor reference";
  t.timestamp_us = unix_time_us();
  // TrialRecord::make stamps the ktune and NVRTC versions; the template-specific fields are
  // then replaced by the vendor's.
  TrialRecord r = TrialRecord::make(*find_template("copy"), Problem::from_key(problem_key), device,
                                    t, run_id);
  r.template_name = template_name;
  r.source_hash = "";
  r.problem_key = problem_key;
  r.config_text = "";
  r.trial.config = Config();
  return r;
}

BenchmarkVendorTimes vendor_records_from_benchmark(const std::string& path,
                                                   const std::string& run_id) {
  const std::string text = detail::read_text_file(path, "benchmark result file");
  nlohmann::json doc;
  detail::require_json_depth(text, path);
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::parse_error, path + ": not valid JSON (" + detail::json_parse_message(e) + ")");
  }
  if (!doc.is_object() || !doc.contains("device") || !doc["device"].is_string() ||
      !doc.contains("results") || !doc["results"].is_array())
    throw Error(ErrorCode::parse_error,
                path + ": expected {\"device\": \"name|sm_XY|sm_count\", \"results\": [...]} "
                       "(the output of a benchmarks/gpu_* program)");
  const std::string device_key = doc["device"].get<std::string>();
  BenchmarkVendorTimes out;
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const auto& row = doc["results"][i];
    const std::string where = path + ": results[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("problem") || !row["problem"].is_string())
      throw Error(ErrorCode::parse_error, where + ": expected an object with a \"problem\" key");
    try {
      const std::string key = row["problem"].get<std::string>();
      const Problem problem = Problem::from_key(key);
      std::string vendor;  // the reference of the problem's op
      for (const auto& t : all_templates())
        if (t->op() == problem.op) vendor = t->vendor_reference();
      // Memory-bound ops compare with the log's copy trials, not with a recorded time.
      const bool recorded = !vendor.empty() && vendor != kCopyReference;
      const auto it = recorded ? row.find(vendor + "_ms") : row.end();
      if (it == row.end() || it->is_null()) {
        ++out.rows_without_time;
        continue;
      }
      if (!it->is_number())
        throw Error(ErrorCode::parse_error, vendor + "_ms is " + detail::json_excerpt(*it) + ", not a number");
      out.records.push_back(make_vendor_record(vendor, key, device_key, it->get<double>(), {}, run_id));
    } catch (const Error& e) {
      throw Error(e.code(), where + ": " + e.what());
    }
  }
  return out;
}

}  // namespace ktune::cli
