// Host-side f16 / bf16 conversions, typed element access and random fills for workloads.
#include "host_dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "ktune/error.h"

namespace ktune {

namespace {

/// `value` as an integer of [lo, hi]: truncated, saturated at the ends, NaN as 0 (a cast of a
/// value outside the type is undefined behaviour).
template <class Int>
Int saturated(double value) {
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<Int>::max());
  if (std::isnan(value)) return 0;
  if (value <= lo) return std::numeric_limits<Int>::min();
  if (value >= hi) return std::numeric_limits<Int>::max();  // int64: hi rounds up to 2^63
  return static_cast<Int>(value);
}

/// `value` rounded to float; finite values beyond float's range become +-infinity, as IEEE
/// rounding gives them (the plain cast of such a value is undefined behaviour).
float to_float(double value) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (value > kMax && std::isfinite(value)) return std::numeric_limits<float>::infinity();
  if (value < -kMax && std::isfinite(value)) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(value);
}

/// `value` rounded to float toward zero with the last bit set when inexact ("round to odd"),
/// so that a second rounding to f16 or bf16 (11 and 8 significant bits against float's 24)
/// gives the nearest-even result of `value` itself: rounding through float to nearest would
/// round twice (1 + 2^-11 + 2^-40 would land on the f16 tie at 1 + 2^-11 and go to 1).
float to_float_odd(double value) {
  float f = to_float(value);
  if (!std::isfinite(value) || static_cast<double>(f) == value) return f;
  if (std::abs(static_cast<double>(f)) > std::abs(value)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

}  // namespace

std::uint16_t float_to_half_bits(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // infinity or NaN (NaN keeps a quiet payload bit)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half: 2^-24 steps, nearest even
    const double scaled = static_cast<double>(std::bit_cast<float>(abs)) * 16777216.0;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  const std::uint32_t rounding = 0xfffu + ((abs >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((abs - 0x38000000u + rounding) >> 13));
}

float half_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t fraction = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(fraction) * 0x1.0p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (fraction << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (fraction << 13));
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>((f + rounding) >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

double round_to_dtype(DType dtype, double value) {
  switch (dtype) {
    case DType::f32: return static_cast<double>(to_float(value));
    case DType::f16: return half_bits_to_float(float_to_half_bits(to_float_odd(value)));
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(to_float_odd(value)));
    case DType::f64: return value;
    case DType::i32: return static_cast<double>(saturated<std::int32_t>(value));
    case DType::i64: return static_cast<double>(saturated<std::int64_t>(value));
    case DType::u8: return static_cast<double>(saturated<std::uint8_t>(value));
  }
  return value;
}

HostBuffer make_host_buffer(const BufferSpec& spec) {
  HostBuffer b;
  b.spec = spec;
  b.bytes.assign(spec.elements * dtype_size(spec.dtype), 0);
  return b;
}

namespace {

/// Throws unless element i exists in the buffer.
void check_index(const HostBuffer& buffer, std::size_t i) {
  if (i >= buffer.bytes.size() / dtype_size(buffer.spec.dtype))  // (i + 1) * size could wrap
    throw Error(ErrorCode::invalid_argument,
                "element " + std::to_string(i) + " is outside host buffer \"" + buffer.spec.name +
                    "\" of " + std::to_string(buffer.bytes.size()) + " bytes");
}

/// Reads a T stored at byte offset (no alignment assumption).
template <class T>
T load_as(const HostBuffer& buffer, std::size_t i) {
  T v;
  std::memcpy(&v, buffer.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

/// Writes a T at element i (no alignment assumption).
template <class T>
void store_as(HostBuffer& buffer, std::size_t i, T v) {
  std::memcpy(buffer.bytes.data() + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

double read_element(const HostBuffer& buffer, std::size_t i) {
  check_index(buffer, i);
  switch (buffer.spec.dtype) {
    case DType::f32: return load_as<float>(buffer, i);
    case DType::f16: return half_bits_to_float(load_as<std::uint16_t>(buffer, i));
    case DType::bf16: return bf16_bits_to_float(load_as<std::uint16_t>(buffer, i));
    case DType::f64: return load_as<double>(buffer, i);
    case DType::i32: return load_as<std::int32_t>(buffer, i);
    case DType::i64: return static_cast<double>(load_as<std::int64_t>(buffer, i));
    case DType::u8: return load_as<std::uint8_t>(buffer, i);
  }
  return 0;
}


void write_element(HostBuffer& buffer, std::size_t i, double value) {
  check_index(buffer, i);
  switch (buffer.spec.dtype) {
    case DType::f32: store_as(buffer, i, to_float(value)); return;
    case DType::f16: store_as(buffer, i, float_to_half_bits(to_float_odd(value))); return;
    case DType::bf16: store_as(buffer, i, float_to_bf16_bits(to_float_odd(value))); return;
    case DType::f64: store_as(buffer, i, value); return;
    case DType::i32: store_as(buffer, i, saturated<std::int32_t>(value)); return;
    case DType::i64: store_as(buffer, i, saturated<std::int64_t>(value)); return;
    case DType::u8: store_as(buffer, i, saturated<std::uint8_t>(value)); return;
  }
}

namespace {

/// Fills [first, first + count) with `element(rng)`, which draws exactly `calls_per_element`
/// values from its stream per element. Large ranges are split across threads; each chunk's
/// stream is `rng` skipped to the chunk's first element, so the result does not depend on the
/// split. `rng` ends advanced past the whole range.
template <class Element>
void fill_range(HostBuffer& buffer, FillRng& rng, std::size_t first, std::size_t count,
                unsigned calls_per_element, const Element& element) {
  if (first > buffer.spec.elements || count > buffer.spec.elements - first)
    throw Error(ErrorCode::invalid_argument,
                "fill of buffer " + buffer.spec.name + ": elements [" + std::to_string(first) +
                    ", " + std::to_string(first + count) + ") outside its " +
                    std::to_string(buffer.spec.elements) + " elements");
  constexpr std::size_t kMinChunk = std::size_t{1} << 19;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads =
      std::min<std::size_t>({cores, 32, (count + kMinChunk - 1) / kMinChunk});
  auto run = [&](FillRng chunk_rng, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) write_element(buffer, i, element(chunk_rng));
  };
  if (threads <= 1 || count < 2 * kMinChunk) {
    run(rng, first, first + count);
  } else {
    std::vector<std::thread> pool;
    const std::size_t per = (count + threads - 1) / threads;
    for (std::size_t t = 0; t < threads; ++t) {
      const std::size_t begin = first + t * per, end = std::min(first + count, begin + per);
      if (begin >= end) break;
      FillRng chunk_rng = rng;
      chunk_rng.skip(static_cast<std::uint64_t>(begin - first) * calls_per_element);
      pool.emplace_back(run, chunk_rng, begin, end);
    }
    for (auto& th : pool) th.join();
  }
  rng.skip(static_cast<std::uint64_t>(count) * calls_per_element);
}

}  // namespace

double random_wide_magnitude(FillRng& rng, int min_exp, int max_exp, bool positive_only) {
  const double magnitude = std::ldexp(1.0 + rng.uniform(), static_cast<int>(rng.integer(min_exp, max_exp)));
  return (positive_only || (rng.next() & 1u)) ? magnitude : -magnitude;
}

void fill_wide_magnitude(HostBuffer& buffer, std::uint64_t seed, int min_exp, int max_exp,
                         bool positive_only) {
  if (min_exp > max_exp)
    throw Error(ErrorCode::invalid_argument,
                "fill_wide_magnitude: min_exp " + std::to_string(min_exp) + " > max_exp " +
                    std::to_string(max_exp));
  FillRng rng(seed);
  // Three draws per element (mantissa, exponent, sign), two without the sign.
  fill_range(buffer, rng, 0, buffer.spec.elements, positive_only ? 2 : 3, [&](FillRng& r) {
    return random_wide_magnitude(r, min_exp, max_exp, positive_only);
  });
}

void fill_uniform_around(HostBuffer& buffer, FillRng& rng, std::size_t first, std::size_t count,
                         double center, double spread) {
  const DType dtype = buffer.spec.dtype;
  fill_range(buffer, rng, first, count, 1, [&](FillRng& r) {
    const double v = round_to_dtype(dtype, center + spread * (2.0 * r.uniform() - 1.0));
    return v != 0.0 ? v : spread;
  });
}

}  // namespace ktune
