// Vendor reference measurements in the tuning log. A vendor library's time for a problem
// (cuBLAS for a GEMM, cuDNN for a convolution) is stored as an ordinary trial whose template
// name is reserved: "vendor:<library>" ("vendor:cublas"), with the tuned problem's key, the
// device, an empty config and status ok. `ktune best` and `ktune report` put it next to the
// tuned kernel of the same problem and device; it is never a task of its own. No schema change
// is needed, exports and imports carry such trials like any other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/log.h"

namespace ktune::cli {

/// The prefix of reserved vendor template names.
inline constexpr const char* kVendorPrefix = "vendor:";

/// "vendor:cublas" for "cublas".
std::string vendor_template_name(const std::string& vendor);
/// True for a reserved vendor template name ("vendor:cublas").
bool is_vendor_template(const std::string& template_name);

/// A Device from its key "name|sm_XY|sm_count"; throws Error(parse_error) naming the key.
Device device_from_key(const std::string& key);

/// One vendor measurement: `vendor` ("cublas") took `median_ms` (samples optional) on
/// `problem_key` and the device `device_key`. Throws Error naming a bad key or time, and a
/// measurement no table could show: `vendor` must be the reference of a template of the
/// problem's op (cuBLAS for gemm, cuDNN for conv2d) and the key a complete, canonical problem
/// of that template (every attribute given).
TrialRecord make_vendor_record(const std::string& vendor, const std::string& problem_key,
                               const std::string& device_key, double median_ms,
                               const std::vector<double>& samples, const std::string& run_id);

/// The vendor times of a GPU benchmark result file, and what was left out.
struct BenchmarkVendorTimes {
  std::vector<TrialRecord> records;  ///< one per row with its op's reference time
  std::size_t rows_without_time = 0; ///< rows without a number for their op's reference
};

/// Reads the vendor times of a GPU benchmark result file (benchmarks/gpu_*.cc output): a
/// top-level "device" key and a "results" list whose rows carry "problem" and the time of
/// the problem's reference library ("cublas_ms" for gemm, "cudnn_ms" for conv2d; other
/// libraries' fields are not read). Throws Error naming the file and row for a row without a
/// problem, a time that is not a number, or a problem no template takes.
BenchmarkVendorTimes vendor_records_from_benchmark(const std::string& path,
                                                   const std::string& run_id);

}  // namespace ktune::cli
