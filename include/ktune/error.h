// ktune::Error: the single exception type of the library, used only for misuse (bad input,
// unknown names, malformed files) and broken environments (no driver, unreadable database).
// Failed trials are never exceptions; they are Trial statuses (see trial.h).
#pragma once

#include <stdexcept>
#include <string>

namespace ktune {

/// What kind of misuse or environment failure an Error reports.
enum class ErrorCode {
  invalid_argument,  ///< a value outside what the API accepts (bad shape, bad option)
  parse_error,       ///< malformed text: expression, config string, JSON, log line
  unknown_name,      ///< a parameter, template, searcher or column that does not exist
  unsatisfiable,     ///< constraints admit no configuration
  not_found,         ///< a file, record or device that is not there
  io_error,          ///< reading or writing a file failed
  database_error,    ///< SQLite refused, the file is not a ktune database, schema too new
  no_device,         ///< no CUDA driver or no CUDA device
  cuda_error,        ///< a CUDA runtime call failed outside a trial
  compile_error,     ///< NVRTC failed where a compile was required (dispatch, not tuning)
  unsupported,       ///< a template cannot implement the problem
  internal,          ///< a bug in ktune
};

/// Stable lower-case name of an error code ("parse_error").
const char* to_string(ErrorCode code);

/// The exception thrown by ktune. The message names the offending input.
class Error : public std::runtime_error {
 public:
  /// Builds an error with a code and a message naming the offending input.
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  /// The kind of failure.
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace ktune
