// LaunchPlan execution: argument packing and the ordered launches/memsets of one plan.
#include "launch_plan_runner.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
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
std::uint64_t slot_of(T value) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  std::uint64_t slot = 0;
  std::memcpy(&slot, &value, sizeof(T));
  return slot;
}

/// Bytes a parameter of this kind occupies, and its name for messages.
std::size_t argument_bytes(KernelArg::Kind kind) {
  switch (kind) {
    case KernelArg::Kind::i32:
    case KernelArg::Kind::f32:
      return 4;
    default:
      return 8;
  }
}
const char* argument_kind_name(KernelArg::Kind kind) {
  switch (kind) {
    case KernelArg::Kind::buffer: return "pointer";
    case KernelArg::Kind::i32: return "i32";
    case KernelArg::Kind::i64: return "i64";
    case KernelArg::Kind::f32: return "f32";
    case KernelArg::Kind::f64: return "f64";
  }
  return "?";
}

}  // namespace

std::uint64_t argument_slot(const KernelArg& a, void* buffer_ptr, std::size_t index) {
  switch (a.kind) {
    case KernelArg::Kind::buffer:
      return slot_of(buffer_ptr);
    case KernelArg::Kind::i32:
      if (a.i < std::numeric_limits<std::int32_t>::min() ||
          a.i > std::numeric_limits<std::int32_t>::max())
        throw Error(ErrorCode::invalid_argument,
                    "kernel argument " + std::to_string(index) + " = " + std::to_string(a.i) +
                        " does not fit a 32-bit integer");
      return slot_of(static_cast<std::int32_t>(a.i));
    case KernelArg::Kind::i64:
      return slot_of(static_cast<std::int64_t>(a.i));
    case KernelArg::Kind::f32:
      return slot_of(static_cast<float>(a.f));
    case KernelArg::Kind::f64:
      return slot_of(a.f);
  }
  return 0;
}

void check_caller_buffers(const std::function<std::string()>& what,
                          const std::vector<BufferSpec>& specs, const std::vector<void*>& pointers,
                          std::size_t alignment) {
  if (pointers.size() != specs.size()) {
    throw Error(ErrorCode::invalid_argument,
                what() + " takes " + std::to_string(specs.size()) + " buffers, got " +
                    std::to_string(pointers.size()));
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const BufferSpec& spec = specs[i];
    if (spec.elements == 0) continue;  // never dereferenced
    auto which = [&] {
      return what() + ": buffer " + std::to_string(i) + " (" + spec.name + ", " +
             to_string(spec.dtype) + ")";
    };
    if (pointers[i] == nullptr) {
      throw Error(ErrorCode::invalid_argument,
                  which() + " is a null pointer; expected device memory of " +
                      std::to_string(spec.elements * dtype_size(spec.dtype)) + " bytes");
    }
    std::size_t need = std::max(alignment, dtype_size(spec.dtype));
    if (spec.offset_bytes != 0) need = std::min(need, spec.offset_bytes & (~spec.offset_bytes + 1));
    const auto address = reinterpret_cast<std::uintptr_t>(pointers[i]);
    if (need > 1 && address % need != 0) {
      std::ostringstream text;
      text << which() << " at " << pointers[i] << " is not " << need << "-byte aligned ("
           << address % need << " bytes past a multiple of " << need
           << "; cudaMalloc results are aligned)";
      throw Error(ErrorCode::invalid_argument, text.str());
    }
  }
}

void check_plan_signatures(CudaModule& module, const LaunchPlan& plan) {
  for (const LaunchStep& step : plan.steps) {
    if (step.kind != LaunchStep::Kind::kernel) continue;
    const auto declared = module.parameter_sizes(step.entry);
    if (!declared) continue;
    std::size_t wrong = declared->size() == step.args.size() ? declared->size() : 0;
    for (std::size_t i = 0; i < declared->size() && wrong == declared->size(); ++i)
      if ((*declared)[i] != argument_bytes(step.args[i].kind)) wrong = i;
    if (declared->size() == step.args.size() && wrong == declared->size()) continue;
    std::string passed, sizes;
    for (std::size_t i = 0; i < step.args.size(); ++i)
      passed += (i ? ", " : "") + std::string(argument_kind_name(step.args[i].kind));
    for (std::size_t i = 0; i < declared->size(); ++i)
      sizes += (i ? ", " : "") + std::to_string((*declared)[i]);
    const std::string declares = std::to_string(declared->size()) + " parameters (" + sizes + " bytes)";
    if (declared->size() != step.args.size())
      throw Error(ErrorCode::invalid_argument,
                  "kernel '" + step.entry + "' declares " + declares + " but the launch plan passes " +
                      std::to_string(step.args.size()) + " arguments (" + passed + ")");
    throw Error(ErrorCode::invalid_argument,
                "kernel '" + step.entry + "': argument " + std::to_string(wrong) + " is " +
                    argument_kind_name(step.args[wrong].kind) + " (" +
                    std::to_string(argument_bytes(step.args[wrong].kind)) + " bytes) but parameter " +
                    std::to_string(wrong) + " is " + std::to_string((*declared)[wrong]) +
                    " bytes; the kernel declares " + declares + ", the launch plan passes (" + passed + ")");
  }
}

PackedArgs::PackedArgs(const std::vector<KernelArg>& args,
                       const std::vector<DeviceBuffer>& buffers)
    : slots_(args.size(), 0) {
  pointers_.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    void* ptr = a.kind == KernelArg::Kind::buffer
                    ? buffer_at(buffers, a.buffer, "kernel argument").ptr
                    : nullptr;
    slots_[i] = argument_slot(a, ptr, i);
    pointers_.push_back(&slots_[i]);
  }
}

CudaStatus run_launch_plan(CudaModule& module, const LaunchPlan& plan,
                           const std::vector<DeviceBuffer>& buffers, cudaStream_t stream,
                           bool programmatic) {
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
                                      step.dynamic_smem, args.data(), stream,
                                      launched_programmatically(step, programmatic, module.cc_major()));
    if (!status.ok()) return status;
  }
  return {};
}

bool config_launched_programmatically(const KernelTemplate& tmpl, const Problem& problem,
                                      const Config& config, const Device& device, bool allowed) {
  if (!allowed) return false;
  try {
    return plan_launched_programmatically(tmpl.launch(problem, config, device), true,
                                          device.cc_major);
  } catch (const Error&) {
    return programmatic_launch_supported(device.cc_major);  // no plan to read
  }
}

}  // namespace ktune::detail
