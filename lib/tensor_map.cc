// Tensor-map encoding for launch plans (see tensor_map.h).
#include "tensor_map.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <mutex>

#include "ktune/error.h"

namespace ktune::detail {

namespace {

/// The driver's encoder, looked up once; nullptr when the driver does not provide it.
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  return fn;
}

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw Error(ErrorCode::invalid_argument, what + ": tensor map " + why);
}

}  // namespace

void encode_tensor_map(const TensorMap2D& map, void* base, void* out, const std::string& what) {
  CUtensorMapDataType type;
  switch (map.dtype) {
    case DType::f16: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
    case DType::bf16: type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
    case DType::f32: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
    default: bad(what, std::string("dtype ") + to_string(map.dtype) + " is not f16, bf16 or f32");
  }
  const std::uint64_t elt = dtype_size(map.dtype);
  if (map.inner == 0 || map.outer == 0) bad(what, "has an empty matrix");
  if (map.row_bytes % 16 != 0 || map.row_bytes < map.inner * elt)
    bad(what, "row stride " + std::to_string(map.row_bytes) +
                  " bytes is not a multiple of 16 covering a row of " +
                  std::to_string(map.inner * elt) + " bytes");
  if (map.box_inner == 0 || map.box_inner * elt > 128 || (map.box_inner * elt) % 16 != 0)
    bad(what, "box width " + std::to_string(map.box_inner) +
                  " elements must span 16 to 128 bytes in multiples of 16 (128-byte swizzle)");
  if (map.box_outer == 0 || map.box_outer > 256)
    bad(what, "box height " + std::to_string(map.box_outer) + " must be 1 to 256 rows");
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0)
    bad(what, "base address is not 16-byte aligned");
  if (reinterpret_cast<std::uintptr_t>(out) % kTensorMapAlign != 0)
    throw Error(ErrorCode::internal, what + ": tensor map storage is not 64-byte aligned");
  PFN_cuTensorMapEncodeTiled_v12000 fn = encoder();
  if (!fn)
    throw Error(ErrorCode::no_device,
                what + ": the CUDA driver's cuTensorMapEncodeTiled is not available");
  const cuuint64_t dims[2] = {map.inner, map.outer};
  const cuuint64_t strides[1] = {map.row_bytes};
  const cuuint32_t box[2] = {map.box_inner, map.box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = fn(static_cast<CUtensorMap*>(out), type, 2, base, dims, strides, box,
                        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    bad(what, "refused by the driver (CUresult " + std::to_string(static_cast<int>(r)) + ")");
}

}  // namespace ktune::detail
