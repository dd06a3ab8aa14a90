// Internal: encodes a TensorMap2D (include/ktune/template.h) into the 128-byte CUtensorMap a
// kernel takes by value, through the driver's cuTensorMapEncodeTiled reached with
// cudaGetDriverEntryPointByVersion (the driver library is not linked).
#pragma once

#include <cstdint>
#include <string>

#include "ktune/template.h"

namespace ktune::detail {

/// Bytes of an encoded tensor map (CUtensorMap), and the alignment kernels need it at.
constexpr std::size_t kTensorMapBytes = 128;
constexpr std::size_t kTensorMapAlign = 64;

/// Encodes `map` over the device address `base` into `out` (kTensorMapBytes, aligned to
/// kTensorMapAlign). Throws Error(invalid_argument) naming the argument `what` when the map is
/// malformed (dtype, box, stride or address alignment) or the driver refuses it, and
/// Error(no_device) when the driver's encoder cannot be reached.
void encode_tensor_map(const TensorMap2D& map, void* base, void* out, const std::string& what);

}  // namespace ktune::detail
