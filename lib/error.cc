// Names of ktune::ErrorCode values, used in messages and by the CLI's exit reporting.
#include "ktune/error.h"

namespace ktune {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::parse_error: return "parse_error";
    case ErrorCode::unknown_name: return "unknown_name";
    case ErrorCode::unsatisfiable: return "unsatisfiable";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::io_error: return "io_error";
    case ErrorCode::database_error: return "database_error";
    case ErrorCode::no_device: return "no_device";
    case ErrorCode::cuda_error: return "cuda_error";
    case ErrorCode::compile_error: return "compile_error";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::internal: return "internal";
  }
  return "unknown";
}

}  // namespace ktune
