// CUDA error classification for candidates (see worker_faults.h).
#include "worker_faults.h"

#include <cuda_runtime_api.h>

namespace ktune::worker {

bool is_sticky_cuda_error(int code) {
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

bool is_launch_cuda_error(int code) {
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorInvalidValue:
    case cudaErrorMemoryAllocation:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorInvalidKernelImage:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidPtx:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorSymbolNotFound:
    case cudaErrorLaunchOutOfResources:
    case cudaErrorCooperativeLaunchTooLarge:
      return true;
    default:
      return false;
  }
}

CudaFault classify_cuda_error(int code, const std::string& where) {
  auto err = static_cast<cudaError_t>(code);
  const char* name = cudaGetErrorName(err);
  const char* text = cudaGetErrorString(err);
  CudaFault f;
  f.message = where + ": " + (name ? name : ("CUDA error " + std::to_string(code)).c_str()) +
              " (" + (text ? text : "no description") + ")";
  if (is_launch_cuda_error(code)) {
    f.status = Status::launch_error;
    f.context_lost = false;
  } else {
    // Sticky faults corrupt the context; anything unrecognized is treated the same way,
    // because a fresh worker is cheaper than trusting a context in an unknown state.
    f.status = Status::runtime_error;
    f.context_lost = true;
  }
  return f;
}

}  // namespace ktune::worker
