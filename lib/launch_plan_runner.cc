// LaunchPlan execution: argument packing and the ordered launches/memsets of one plan.
#include "launch_plan_runner.h"

#include <cstring>
#include <limits>
#include <string>

#include "ktune/error.h"

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

/// Copies a value into the front of an 8-byte slot.
template <class T>
void put(std::uint64_t& slot, T value) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  std::memcpy(&slot, &value, sizeof(T));
}

}  // namespace

PackedArgs::PackedArgs(const std::vector<KernelArg>& args,
                       const std::vector<DeviceBuffer>& buffers)
    : slots_(args.size(), 0) {
  pointers_.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    std::uint64_t& slot = slots_[i];
    switch (a.kind) {
      case KernelArg::Kind::buffer:
        put(slot, buffer_at(buffers, a.buffer, "kernel argument").ptr);
        break;
      case KernelArg::Kind::i32:
        if (a.i < std::numeric_limits<std::int32_t>::min() ||
            a.i > std::numeric_limits<std::int32_t>::max())
          throw Error(ErrorCode::invalid_argument,
                      "kernel argument " + std::to_string(i) + " = " + std::to_string(a.i) +
                          " does not fit a 32-bit integer");
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
    }
    pointers_.push_back(&slot);
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
    PackedArgs args(step.args, buffers);
    CudaStatus status = module.launch(step.entry, dim3(step.grid[0], step.grid[1], step.grid[2]),
                                      dim3(step.block[0], step.block[1], step.block[2]),
                                      step.dynamic_smem, args.data(), stream);
    if (!status.ok()) return status;
  }
  return {};
}

}  // namespace ktune::detail
