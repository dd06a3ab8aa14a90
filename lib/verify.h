// Host-side verification of a candidate's buffers: the poison and canary byte patterns, the
// element conversion of every dtype (f16 / bf16 included) to double, the comparison of an
// output with the reference under a Tolerance, and the checks of canaries and unchanged inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ktune/template.h"

namespace ktune::verify {

/// Byte written after every buffer; a changed canary byte means an out-of-bounds write.
constexpr std::uint8_t kCanaryByte = 0xC3;

/// Byte pattern outputs are poisoned with before a run: 0xFF (a NaN in every float format)
/// for floating types, 0xA5 for integers (an unlikely value: 0xA5A5A5A5).
std::uint8_t poison_byte(DType t);
/// Whether element `i` of dtype `t` at `data` still holds the poison pattern in every byte.
bool is_poison(const std::uint8_t* data, DType t, std::size_t i);

/// Element `i` of raw bytes of dtype `t`, as double (f16 and bf16 decoded exactly, by
/// host_dtype.h's decoders).
double element(const std::uint8_t* data, DType t, std::size_t i);

/// Outcome of comparing one output with its reference.
struct Comparison {
  bool ok = true;        ///< within tolerance and no NaN/unwritten element
  double rel_l2 = 0;     ///< ||out - ref||_2 / ||ref||_2 (absolute when ||ref|| = 0)
  std::string message;   ///< why it failed, naming the buffer and first bad element
};

/// Factor of the per-element bound with_element_bound adds (see there).
constexpr double kElementBoundFactor = 32;

/// `tol` with a per-element bound added where the workload set none (max_abs < 0):
/// |out - ref| <= kElementBoundFactor * rel_l2 * (rms(ref) + |ref|). The relative L2 norm
/// alone hides a few wrong elements among millions (one wrong element of a 4096^2 output moves
/// it by ~2.5e-4); this bound catches any element off by more than 32x the error the norm
/// allows on average, which rounding and accumulation order never reach. Unchanged when the
/// reference's RMS is 0 or not finite (the norm is absolute then).
Tolerance with_element_bound(const Tolerance& tol, const HostBuffer& expected);

/// Compares output `got` with `expected` (same spec) under `tol`.
Comparison compare(const HostBuffer& got, const HostBuffer& expected, const Tolerance& tol);

/// Index of the first byte in [data, data+size) that is not kCanaryByte, or nullopt.
std::optional<std::size_t> first_bad_canary(const std::uint8_t* data, std::size_t size);

/// Index of the first differing byte of two equal-size regions, or nullopt when equal.
std::optional<std::size_t> first_difference(const std::uint8_t* a, const std::uint8_t* b,
                                            std::size_t size);

}  // namespace ktune::verify
