// Host-side verification of candidate buffers (see verify.h).
#include "verify.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "host_dtype.h"

namespace ktune::verify {

std::uint8_t poison_byte(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::f64:
      return 0xFF;
    default:
      return 0xA5;
  }
}

double element(const std::uint8_t* data, DType t, std::size_t i) {
  switch (t) {
    case DType::f32: { float v; std::memcpy(&v, data + 4 * i, 4); return v; }
    case DType::f64: { double v; std::memcpy(&v, data + 8 * i, 8); return v; }
    case DType::f16: { std::uint16_t v; std::memcpy(&v, data + 2 * i, 2); return half_bits_to_float(v); }
    case DType::bf16: { std::uint16_t v; std::memcpy(&v, data + 2 * i, 2); return bf16_bits_to_float(v); }
    case DType::i32: { std::int32_t v; std::memcpy(&v, data + 4 * i, 4); return v; }
    case DType::i64: { std::int64_t v; std::memcpy(&v, data + 8 * i, 8); return static_cast<double>(v); }
    case DType::u8: return data[i];
  }
  return 0;
}

bool is_poison(const std::uint8_t* data, DType t, std::size_t i) {
  std::size_t size = dtype_size(t);
  std::uint8_t p = poison_byte(t);
  for (std::size_t b = 0; b < size; ++b)
    if (data[i * size + b] != p) return false;
  return true;
}

namespace {

/// The comparison loop for one dtype; `load(data, i)` decodes element i. The squared norms
/// add up in `Sum`: double for every dtype but f64, whose squares can leave double's range
/// (1e200^2 overflows, 1e-170^2 underflows to 0), so they add up in long double there.
template <class Sum, class Load>
Comparison compare_with(const HostBuffer& got, const HostBuffer& expected, const Tolerance& tol,
                        Load load) {
  Comparison c;
  const auto& spec = expected.spec;
  DType t = spec.dtype;
  const std::uint8_t* g_bytes = got.bytes.data();
  const std::uint8_t* e_bytes = expected.bytes.data();
  auto unwritten = [&](std::size_t i) {
    c.ok = false;
    c.rel_l2 = std::numeric_limits<double>::infinity();
    c.message = "element " + std::to_string(i) + " of " + spec.name + " was never written";
    return c;
  };
  Sum diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < spec.elements; ++i) {
    double g = load(g_bytes, i);
    double e = load(e_bytes, i);
    if (!std::isfinite(g) || !std::isfinite(e)) {
      // The poison is a NaN too: checked first, an unwritten element never passes as an
      // expected NaN.
      if (is_poison(g_bytes, t, i)) return unwritten(i);
      if (std::isnan(e) && std::isnan(g)) continue;
      if (g == e) continue;  // matching infinities
      c.ok = false;
      c.rel_l2 = std::numeric_limits<double>::infinity();
      c.message = "non-finite value in " + spec.name + " at element " + std::to_string(i);
      return c;
    }
    if (g != e && t != DType::u8 && is_poison(g_bytes, t, i)) return unwritten(i);
    double d = g - e;
    if (tol.max_abs >= 0 && c.ok && std::abs(d) > tol.max_abs + tol.rel_elem * std::abs(e)) {
      c.ok = false;
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s[%zu] = %.6g, expected %.6g (|diff| above %.3g + %.3g*|ref|)",
                    spec.name.c_str(), i, g, e, tol.max_abs, tol.rel_elem);
      c.message = buf;
    }
    diff2 += static_cast<Sum>(d) * d;
    ref2 += static_cast<Sum>(e) * e;
  }
  c.rel_l2 = static_cast<double>(ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2));
  if (c.ok && !(c.rel_l2 <= tol.rel_l2)) {
    c.ok = false;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: relative L2 error %.3g above tolerance %.3g",
                  spec.name.c_str(), c.rel_l2, tol.rel_l2);
    c.message = buf;
  }
  return c;
}

}  // namespace

Tolerance with_element_bound(const Tolerance& tol, const HostBuffer& expected) {
  if (tol.max_abs >= 0 || expected.spec.elements == 0) return tol;
  long double sum2 = 0;  // f64 squares can leave double's range (see compare_with)
  std::size_t finite = 0;
  for (std::size_t i = 0; i < expected.spec.elements; ++i) {
    const double e = element(expected.bytes.data(), expected.spec.dtype, i);
    if (!std::isfinite(e)) continue;
    sum2 += static_cast<long double>(e) * e;
    ++finite;
  }
  const double rms =
      finite > 0 ? static_cast<double>(std::sqrt(sum2 / static_cast<long double>(finite))) : 0.0;
  if (!(rms > 0) || !std::isfinite(rms)) return tol;
  Tolerance bounded = tol;
  bounded.rel_elem = kElementBoundFactor * tol.rel_l2;
  bounded.max_abs = bounded.rel_elem * rms;
  return bounded;
}

Comparison compare(const HostBuffer& got, const HostBuffer& expected, const Tolerance& tol) {
  switch (expected.spec.dtype) {
    case DType::f32:
      return compare_with<double>(got, expected, tol, [](const std::uint8_t* d, std::size_t i) {
        float v;
        std::memcpy(&v, d + 4 * i, 4);
        return static_cast<double>(v);
      });
    case DType::f64:
      return compare_with<long double>(got, expected, tol, [](const std::uint8_t* d, std::size_t i) {
        return element(d, DType::f64, i);
      });
    default: {
      DType t = expected.spec.dtype;
      return compare_with<double>(got, expected, tol,
                                  [t](const std::uint8_t* d, std::size_t i) { return element(d, t, i); });
    }
  }
}

std::optional<std::size_t> first_bad_canary(const std::uint8_t* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i)
    if (data[i] != kCanaryByte) return i;
  return std::nullopt;
}

std::optional<std::size_t> first_difference(const std::uint8_t* a, const std::uint8_t* b,
                                            std::size_t size) {
  if (std::memcmp(a, b, size) == 0) return std::nullopt;
  for (std::size_t i = 0; i < size; ++i)
    if (a[i] != b[i]) return i;
  return std::nullopt;
}

}  // namespace ktune::verify
