// Classification of CUDA errors met while running a candidate: which are the candidate's
// launch failing (too many resources, bad geometry: the context stays usable), which are
// faults that leave the CUDA context unusable (illegal address, trap, misaligned access: the
// worker must be restarted), as trial statuses with the CUDA error name and text.
#pragma once

#include <string>

#include "ktune/trial.h"

namespace ktune::worker {

/// A classified CUDA error.
struct CudaFault {
  Status status = Status::runtime_error;  ///< launch_error or runtime_error
  bool context_lost = false;              ///< the worker must be restarted
  std::string message;                    ///< "<where>: cudaErrorIllegalAddress (an illegal ...)"
};

/// True for errors that leave the CUDA context unusable (sticky errors).
bool is_sticky_cuda_error(int code);
/// True for errors that mean the launch itself was refused.
bool is_launch_cuda_error(int code);
/// Classifies a cudaError_t value seen at `where` (e.g. "launch of copy_kernel").
CudaFault classify_cuda_error(int code, const std::string& where);

}  // namespace ktune::worker
