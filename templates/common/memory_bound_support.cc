// Host-side helpers shared by the memory-bound template families.
#include "memory_bound_support.h"

#include "ktune/error.h"

namespace ktune::memory_bound {

DType io_dtype(const Problem& problem) {
  const std::string text = problem.attr("dtype", "f32");
  const DType t = dtype_from_string(text);
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16)
    throw Error(ErrorCode::unsupported,
                "problem " + problem.key() + ": dtype " + text + " is not one of f32, f16, bf16");
  return t;
}

std::string dtype_define(const Problem& problem) {
  switch (io_dtype(problem)) {
    case DType::f16: return "-DKT_DTYPE=1";
    case DType::bf16: return "-DKT_DTYPE=2";
    default: return "-DKT_DTYPE=0";
  }
}

std::vector<Value> vector_widths(DType dtype) {
  std::vector<Value> widths;
  for (Value v = 1; v * static_cast<Value>(dtype_size(dtype)) <= 16; v *= 2) widths.push_back(v);
  return widths;
}

std::int64_t floor_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

void check_element_count(const Problem& problem) {
  std::int64_t elements = 1;
  for (const auto& [name, extent] : problem.dims) {
    if (extent > kMaxElements / elements) {  // extents are >= 1 (KernelTemplate::check_problem)
      std::string product;  // "rows x cols": the message names the product, not one extent
      for (const auto& [dim, unused] : problem.dims) product += (product.empty() ? "" : " x ") + dim;
      throw Error(ErrorCode::invalid_argument,
                  "problem " + problem.key() + ": " + product + " is more than 2^40 elements; "
                  "the memory-bound templates take at most " + std::to_string(kMaxElements));
    }
    elements *= extent;
  }
}

void check_reference_rows(const Problem& problem) {
  const std::int64_t rows = problem.dim("rows");
  if (rows > kMaxGridX)
    throw Error(ErrorCode::unsupported,
                "problem " + problem.key() + ": rows=" + std::to_string(rows) +
                    " is more than 2^31 - 1 (" + std::to_string(kMaxGridX) +
                    "), the most rows this template can be tuned at (its reference launches a "
                    "block per row); the kernels themselves take more where a config's blocks "
                    "fit the grid");
}

bool row_grid_fits(std::int64_t rows, const Config& config, std::string* why) {
  if (ceil_div(rows, config["THREADS"] / config["TPR"]) <= kMaxGridX) return true;
  if (why) *why = "rows=" + std::to_string(rows) + " needs more than 2^31-1 blocks";
  return false;
}

void check_host_buffers(const Workload& workload, const std::vector<HostBuffer>& host,
                        const std::string& what) {
  const auto specs = workload.buffers();
  bool ok = host.size() == specs.size();
  for (std::size_t i = 0; ok && i < specs.size(); ++i)
    ok = host[i].bytes.size() == specs[i].elements * dtype_size(specs[i].dtype);
  if (!ok)
    throw Error(ErrorCode::invalid_argument,
                what + " workload: host buffers do not match the " + std::to_string(specs.size()) +
                    " buffers of the problem");
}

DeviceReference reference_program(DType dtype, std::vector<std::string> options) {
  DeviceReference ref;
  ref.source = embedded_source("common/memory_bound_reference.cu");
  const int code = dtype == DType::f16 ? 1 : (dtype == DType::bf16 ? 2 : 0);
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    throw Error(ErrorCode::unsupported,
                std::string("memory-bound reference: dtype ") + to_string(dtype) +
                    " is not one of f32, f16, bf16");
  ref.options = {"-DREF_DTYPE=" + std::to_string(code)};
  for (auto& o : options) ref.options.push_back(std::move(o));
  return ref;
}

LaunchStep reference_step(const std::string& entry, std::int64_t grid_x, std::int64_t grid_y,
                          std::vector<KernelArg> args) {
  if (grid_x < 1 || grid_x > kMaxGridX || grid_y < 1 || grid_y > 65535)
    throw Error(ErrorCode::unsupported, "memory-bound reference " + entry + ": grid " +
                                            std::to_string(grid_x) + " x " +
                                            std::to_string(grid_y) + " is out of range");
  LaunchStep step;
  step.entry = entry;
  step.grid[0] = static_cast<unsigned>(grid_x);
  step.grid[1] = static_cast<unsigned>(grid_y);
  step.block[0] = kReferenceThreads;
  step.args = std::move(args);
  return step;
}

}  // namespace ktune::memory_bound
