// The T4 results format of the autotuning community (schema 1.0.0, as written by Kernel Tuner
// and read by autotuning_methodology): {"schema_version": "1.0.0", "results": [ {timestamp,
// configuration, objectives, times {compilation_time, runtimes}, invalidity, correctness,
// measurements [{name, value, unit}]} ]}. ktune adds a "ktune" object to each result holding
// the full record, so ktune -> T4 -> ktune is lossless; foreign T4 files need the template,
// problem and device from ImportOptions.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/log.h"

namespace ktune::t4 {

/// The T4 schema version written and read.
inline constexpr const char* kSchemaVersion = "1.0.0";

/// T4 "invalidity" of a status: correct, compile, runtime, timeout, correctness, constraints.
const char* invalidity_of(Status status);

/// Writes a T4 results document one result at a time (memory stays flat however many
/// records a log holds): the header on construction, add() per record, finish() to close it.
class Writer {
 public:
  explicit Writer(std::ostream& out);
  /// Appends one record as a T4 result.
  void add(const TrialRecord& record);
  /// Closes the results array and the document.
  void finish();

 private:
  std::ostream& out_;
  bool first_ = true;
};

/// Reads a T4 results document (its whole text); `context` supplies what T4 does not carry
/// (template, problem, device, run id) for results without a "ktune" object, whose run is
/// `default_run_id` when `context` names none. A result with a "ktune" object keeps its own;
/// a document whose every result has one refuses a `context` naming any of them
/// (Error(invalid_argument)), which would apply to none. Errors name origin, result, field.
std::vector<TrialRecord> read(std::string_view text, const std::string& origin,
                              const ImportOptions& context, const std::string& default_run_id);

/// "2024-01-02T03:04:05.123456+00:00" for Unix microseconds (UTC).
std::string iso_timestamp(std::int64_t unix_us);
/// Parses ISO 8601 / Kernel Tuner timestamps ("2023-12-22 09:53:48.691683+00:00", 'T' or
/// space, optional fraction, 'Z' or +hh:mm offset) to Unix microseconds; throws parse_error.
std::int64_t parse_timestamp(const std::string& text);

}  // namespace ktune::t4
