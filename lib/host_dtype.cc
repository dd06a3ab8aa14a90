// Host-side f16 / bf16 conversions, typed element access and random fills for workloads.
#include "host_dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "ktune/error.h"

namespace ktune {

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
    case DType::f32: return static_cast<double>(static_cast<float>(value));
    case DType::f16: return half_bits_to_float(float_to_half_bits(static_cast<float>(value)));
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(value)));
    case DType::f64: return value;
    case DType::i32: return static_cast<double>(static_cast<std::int32_t>(value));
    case DType::i64: return static_cast<double>(static_cast<std::int64_t>(value));
    case DType::u8: return static_cast<double>(static_cast<std::uint8_t>(value));
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
  if ((i + 1) * dtype_size(buffer.spec.dtype) > buffer.bytes.size())
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
    case DType::f32: store_as(buffer, i, static_cast<float>(value)); return;
    case DType::f16: store_as(buffer, i, float_to_half_bits(static_cast<float>(value))); return;
    case DType::bf16: store_as(buffer, i, float_to_bf16_bits(static_cast<float>(value))); return;
    case DType::f64: store_as(buffer, i, value); return;
    case DType::i32: store_as(buffer, i, static_cast<std::int32_t>(value)); return;
    case DType::i64: store_as(buffer, i, static_cast<std::int64_t>(value)); return;
    case DType::u8: store_as(buffer, i, static_cast<std::uint8_t>(value)); return;
  }
}

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
  for (std::size_t i = 0; i < buffer.spec.elements; ++i)
    write_element(buffer, i, random_wide_magnitude(rng, min_exp, max_exp, positive_only));
}

void fill_uniform_around(HostBuffer& buffer, FillRng& rng, std::size_t first, std::size_t count,
                         double center, double spread) {
  for (std::size_t i = first; i < first + count; ++i) {
    double v = round_to_dtype(buffer.spec.dtype, center + spread * (2.0 * rng.uniform() - 1.0));
    write_element(buffer, i, v != 0.0 ? v : spread);
  }
}

}  // namespace ktune
