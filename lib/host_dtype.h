// Host-side element handling for workloads: fp32 <-> f16 / bf16 bit conversions (round to
// nearest even, no CUDA headers), typed element read/write of a HostBuffer as double, and
// random fills that never produce zero and are exactly representable in the buffer's dtype
// (so a reference computed from the filled buffer sees what the kernel sees).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ktune/template.h"

namespace ktune {

/// IEEE binary16 bits of `value`, rounded to nearest even (overflow to infinity).
std::uint16_t float_to_half_bits(float value);
/// The float value of IEEE binary16 bits (exact).
float half_bits_to_float(std::uint16_t bits);
/// bfloat16 bits of `value`, rounded to nearest even (NaN stays NaN).
std::uint16_t float_to_bf16_bits(float value);
/// The float value of bfloat16 bits (exact).
float bf16_bits_to_float(std::uint16_t bits);

/// `value` rounded to what `dtype` stores (f32/f16/bf16 round to nearest even, once, from the
/// double; integers truncate toward zero, saturating at their range, NaN as 0; f64 unchanged).
double round_to_dtype(DType dtype, double value);

/// A host buffer for `spec` with elements * dtype_size zero bytes.
HostBuffer make_host_buffer(const BufferSpec& spec);
/// Element `i` of a host buffer as double; throws Error(invalid_argument) out of range.
double read_element(const HostBuffer& buffer, std::size_t i);
/// Stores `value`, rounded to the buffer's dtype, at element `i`; throws when `i` is out of
/// range. Integer dtypes truncate and saturate at their limits (NaN stores 0); finite values
/// beyond a floating dtype's range store +-infinity.
void write_element(HostBuffer& buffer, std::size_t i, double value);

/// Small fast deterministic generator (splitmix64) for filling large buffers.
class FillRng {
 public:
  /// Seeds the stream; equal seeds give equal streams on every machine.
  explicit FillRng(std::uint64_t seed) : state_(seed) {}
  /// Next 64 random bits.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Advances the stream as `calls` calls of next() would (each call adds one constant to
  /// the state), so a chunk of a fill can start where a sequential fill would be.
  void skip(std::uint64_t calls) { state_ += calls * 0x9e3779b97f4a7c15ull; }
  /// Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [lo, hi] (lo <= hi; the whole int64 range included).
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    // In unsigned arithmetic: hi - lo + 1 overflows int64 for wide ranges, and is 0 for all
    // 2^64 values.
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    const std::uint64_t offset = span == 0 ? next() : next() % span;
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
  }

 private:
  std::uint64_t state_;
};

/// A random non-zero value of random sign (unless positive_only) whose magnitude is
/// (1 + u) * 2^k, u uniform in [0, 1), k uniform in [min_exp, max_exp]: small and large
/// magnitudes in one stream.
double random_wide_magnitude(FillRng& rng, int min_exp, int max_exp, bool positive_only = false);

/// Fills every element with random_wide_magnitude(min_exp, max_exp), rounded to the dtype
/// (never zero: the exponent range must stay inside the dtype's normal range).
void fill_wide_magnitude(HostBuffer& buffer, std::uint64_t seed, int min_exp, int max_exp,
                         bool positive_only = false);
/// Fills elements [first, first + count) with center + spread * u, u uniform in [-1, 1),
/// rounded to the dtype; an element that rounds to zero is replaced by `spread` (never zero).
/// `rng` ends advanced by one call per element.
///
/// Both fills split large buffers (2^20 elements or more) into chunks filled on several
/// threads, each chunk's stream skipped to where a sequential fill would be: the contents are
/// the same as one thread's, only sooner (a 2^28-element workload filled per seed).
void fill_uniform_around(HostBuffer& buffer, FillRng& rng, std::size_t first, std::size_t count,
                         double center, double spread);

}  // namespace ktune
