// Host-side helpers shared by the memory-bound template families (elementwise, reduction,
// layernorm): the dtype attribute and its KT_DTYPE define, the vector widths that fit a
// 16-byte access, small integer helpers, the shared "dtype" attribute domain, and the pieces
// of their GPU references (templates/common/memory_bound_reference.cu).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/problem.h"
#include "ktune/template.h"

namespace ktune::memory_bound {

/// The I/O dtypes every memory-bound family accepts, default first.
inline const std::vector<std::string>& io_dtypes() {
  static const std::vector<std::string> names = {"f32", "f16", "bf16"};
  return names;
}
/// The problem's "dtype" attribute as a DType.
DType io_dtype(const Problem& problem);
/// "-DKT_DTYPE=0|1|2" for f32 / f16 / bf16.
std::string dtype_define(const Problem& problem);
/// Vector widths 1, 2, 4, ... whose access is at most 16 bytes for `dtype`.
std::vector<Value> vector_widths(DType dtype);
/// Ceiling of a / b for positive b.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
/// Largest power of two <= v (v >= 1).
std::int64_t floor_pow2(std::int64_t v);
/// Largest grid.x of a launch.
constexpr std::int64_t kMaxGridX = 2147483647;

/// Most elements a memory-bound problem may have (2^40: 4 TiB of f32, beyond any GPU's
/// memory), so that element counts, byte counts and index arithmetic never overflow.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
/// Throws Error(invalid_argument) naming the problem when the product of its dimensions
/// exceeds kMaxElements (checked without overflowing).
void check_element_count(const Problem& problem);
/// Throws Error(unsupported) naming the problem when its "rows" exceed 2^31 - 1: the row
/// templates' references launch one block per row in grid.x, so such a problem has no
/// workload to tune with (deployment, which needs none, is not limited by it).
void check_reference_rows(const Problem& problem);

/// True when rows / (THREADS / TPR) blocks fit in grid.x; else sets `why` (may be null).
bool row_grid_fits(std::int64_t rows, const Config& config, std::string* why);
/// Throws Error(invalid_argument) naming `what` unless `host` matches `workload.buffers()`
/// (count, and bytes of each).
void check_host_buffers(const Workload& workload, const std::vector<HostBuffer>& host,
                        const std::string& what);

/// Host-reference cost (Workload::reference_cost, elements visited) above which the families
/// verify with their GPU reference instead of the double-precision host loop.
constexpr double kDeviceReferenceCost = 4194304.0;  // 2^22
/// Threads per block of every reference kernel (REF_THREADS in the reference source).
constexpr unsigned kReferenceThreads = 256;
/// A device reference over the shared reference source, compiled with "-DREF_DTYPE=<dtype>"
/// plus `options`; its plan is empty (the caller adds steps and scratch).
DeviceReference reference_program(DType dtype, std::vector<std::string> options);
/// A kernel step of the reference source with kReferenceThreads threads per block.
LaunchStep reference_step(const std::string& entry, std::int64_t grid_x, std::int64_t grid_y,
                          std::vector<KernelArg> args);

}  // namespace ktune::memory_bound
