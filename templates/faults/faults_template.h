// The "faults" test template's modes and the status each must be classified as.
#pragma once

#include "ktune/config.h"
#include "ktune/trial.h"

namespace ktune {

/// Values of the faults template's MODE parameter.
namespace fault_mode {
constexpr Value good = 0;              ///< correct kernel
constexpr Value out_of_bounds = 1;     ///< writes just past the end of y
constexpr Value illegal_address = 2;   ///< writes to address 16
constexpr Value infinite_loop = 3;     ///< never finishes
constexpr Value too_much_shared = 4;   ///< asks for 1 MiB of dynamic shared memory
constexpr Value too_many_threads = 5;  ///< 2048 threads per block
constexpr Value wrong_result = 6;      ///< some elements off by 0.25
constexpr Value nan_output = 7;        ///< one NaN in y
constexpr Value compile_error = 8;     ///< #error
constexpr Value trap = 9;              ///< __trap()
constexpr Value extra_argument = 10;   ///< the launch plan passes a 4th argument to 3 parameters
constexpr Value narrow_argument = 11;  ///< the launch plan passes n as i32 to a 64-bit parameter
}  // namespace fault_mode

/// The status a faults candidate of `mode` must get; throws Error for an unknown mode.
Status faults_expected_status(Value mode);

}  // namespace ktune
