// LaunchPlan execution: argument packing and the ordered launches/memsets of one plan.
#include "launch_plan_runner.h"

#include <cstring>
#include <limits>
#include <string>

#include "ktune/error.h"
#include "tensor_map.h"

namespace ktune::detail {

namespace {

/// The buffer at `index`, or Error(invalid_argument) naming the index and the count.
const DeviceBuffer& buffer_at(const std::vector<DeviceBuffer>& buffers, std::size_t index,
                              const char* what) {
  if (index >= buffers.size())
    throw Error(ErrorCode::invalid_argument,
                std::string(what) + " names buffer " + std::to_string(index) + " but only " +
                    std::to_string(buffers.size()) + " buffers exist");
  return buffers[index];
}

/// Copies a value into the front of a slot.
template <class T>
void put(ParamSlot& slot, T value) {
  static_assert(sizeof(T) <= sizeof(slot.bytes));
  std::memcpy(slot.bytes, &value, sizeof(T));
}

}  // namespace

void pack_kernel_arg(const KernelArg& a, void* buffer, std::size_t index,
                     const std::string& entry, ParamSlot& slot) {
  std::memset(slot.bytes, 0, sizeof slot.bytes);
  switch (a.kind) {
    case KernelArg::Kind::buffer:
      put(slot, buffer);
      break;
    case KernelArg::Kind::i32:
      if (a.i < std::numeric_limits<std::int32_t>::min() ||
          a.i > std::numeric_limits<std::int32_t>::max())
        throw Error(ErrorCode::invalid_argument,
                    "argument " + std::to_string(index) + " of " + entry + " = " +
                        std::to_string(a.i) + " does not fit a 32-bit integer");
      put(slot, static_cast<std::int32_t>(a.i));
      break;
    case KernelArg::Kind::i64:
      put(slot, static_cast<std::int64_t>(a.i));
      break;
    case KernelArg::Kind::f32:
      put(slot, static_cast<float>(a.f));
      break;
    case KernelArg::Kind::f64:
      put(slot, a.f);
      break;
    case KernelArg::Kind::tensor_map:
      encode_tensor_map(a.map, buffer, slot.bytes,
                        "argument " + std::to_string(index) + " of " + entry + " (buffer " +
                            std::to_string(a.buffer) + ")");
      break;
  }
}

PackedArgs::PackedArgs(const std::vector<KernelArg>& args,
                       const std::vector<DeviceBuffer>& buffers, const std::string& entry)
    : slots_(args.size()) {
  pointers_.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const bool needs_buffer =
        a.kind == KernelArg::Kind::buffer || a.kind == KernelArg::Kind::tensor_map;
    void* ptr = needs_buffer ? buffer_at(buffers, a.buffer, "kernel argument").ptr : nullptr;
    pack_kernel_arg(a, ptr, i, entry, slots_[i]);
    pointers_.push_back(slots_[i].bytes);
  }
}

CudaStatus run_launch_plan(CudaModule& module, const LaunchPlan& plan,
                           const std::vector<DeviceBuffer>& buffers, cudaStream_t stream) {
  for (const LaunchStep& step : plan.steps) {
    if (step.kind == LaunchStep::Kind::memset) {
      const DeviceBuffer& b = buffer_at(buffers, step.memset_buffer, "memset step");
      cudaError_t err = cudaMemsetAsync(b.ptr, step.memset_byte, b.bytes, stream);
      if (err != cudaSuccess)
        return CudaStatus{err, cuda_error_message(err, "memset of buffer " +
                                                           std::to_string(step.memset_buffer))};
      continue;
    }
    PackedArgs args(step.args, buffers, step.entry);
    CudaStatus status = module.launch(step.entry, dim3(step.grid[0], step.grid[1], step.grid[2]),
                                      dim3(step.block[0], step.block[1], step.block[2]),
                                      step.dynamic_smem, args.data(), stream);
    if (!status.ok()) return status;
  }
  return {};
}

}  // namespace ktune::detail
