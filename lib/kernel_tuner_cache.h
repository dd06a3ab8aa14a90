// Reader of Kernel Tuner cache files (.json, or .json.gz through zlib): the device and kernel
// names, problem size, tunable parameters with their values, and one entry per measured
// config with its time in ms or the error Kernel Tuner wrote in the time field
// ("InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig"). Internal API shared by
// the replay measurer and the database import.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/trial.h"

namespace ktune::kt {

/// One cached config.
struct CacheEntry {
  std::vector<Value> values;         ///< one per parameter, in KernelTunerCache::param_names order
  std::optional<double> time_ms;     ///< the objective time (Kernel Tuner's "time"), if measured
  std::string error;                 ///< the error text of the time field when not measured
  std::vector<double> times_ms;      ///< the individual samples ("times"), may be empty
  std::string key;                   ///< the entry's key as the file writes it ("16,1.0,True")
};

/// The content of a cache file.
struct KernelTunerCache {
  std::string device_name;                   ///< "device_name" (may be empty)
  std::string kernel_name;                   ///< "kernel_name"
  std::vector<std::int64_t> problem_size;    ///< "problem_size"
  std::string objective;                     ///< "objective" ("time" when absent); times are always "time"
  std::vector<std::string> param_names;      ///< "tune_params_keys"
  std::vector<std::vector<Value>> param_values;  ///< "tune_params", per name in param_names order
  std::vector<CacheEntry> entries;           ///< "cache", in file order
};

/// Reads a cache file (.json or gzip-compressed); throws Error(not_found / io_error /
/// parse_error) naming the file and the bad field. A cache truncated by an interrupted run
/// (missing closing braces) is accepted.
KernelTunerCache read_kernel_tuner_cache(const std::string& path);
/// Parses cache JSON text; `origin` names the source in error messages. Python's NaN,
/// Infinity and -Infinity (which its json module writes by default) are read: an entry whose
/// time or a sample is one of them has no time, and that word as its error.
KernelTunerCache parse_kernel_tuner_cache(const std::string& text, const std::string& origin);

/// The status of an error Kernel Tuner writes in place of a time: InvalidConfig,
/// CompilationFailedConfig, RuntimeFailedConfig, or a non-finite time (NaN, Infinity,
/// -Infinity: a run that measured nothing); nullopt for any other text.
std::optional<Status> error_status(const std::string& error);
}  // namespace ktune::kt
