// The ktune-worker program of this build, for tests that start workers or compile helpers.
#pragma once

#include <string>

#include "ktune/error.h"
#include "ktune/measure.h"

namespace ktune::test {

/// The ktune-worker of this build: found the way the library finds it (next to or one folder
/// above the test binary), else in the configured build folder.
inline std::string worker_program() {
  try {
    return find_worker_executable();
  } catch (const Error&) {
    return std::string(KTUNE_BINARY_DIR) + "/ktune-worker";
  }
}

}  // namespace ktune::test
