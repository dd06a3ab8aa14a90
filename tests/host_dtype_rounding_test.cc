// Host-side f16 / bf16 rounding, element access and fills (lib/host_dtype.cc), checked against
// properties of IEEE round-to-nearest-even rather than against the same code: every half and
// bf16 value, midpoints and their neighbours, NaN and signed zeros, doubles rounded once, and
// indices far outside a buffer. From the mutation audit of session 33.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "host_dtype.h"
#include "ktune/error.h"

using namespace ktune;

namespace {
HostBuffer one_of(DType dtype, std::size_t n = 1) {
  return make_host_buffer(BufferSpec{"x", dtype, n, Role::input, 0});
}
}  // namespace

TEST_CASE("f16 conversion: every half round-trips, midpoints round to even, neighbours to nearest",
          "[host_fill][dtype]") {
  std::size_t failures = 0;
  for (std::uint32_t b = 0; b < 0x7C00; ++b) {  // every finite non-negative half
    const float v = half_bits_to_float(static_cast<std::uint16_t>(b));
    if (float_to_half_bits(v) != b || float_to_half_bits(-v) != (b | 0x8000u)) ++failures;
    // the next half up (0x7C00 stands for 65536: the rounding boundary of infinity)
    const double next = b + 1 == 0x7C00 ? 65536.0 : half_bits_to_float(static_cast<std::uint16_t>(b + 1));
    const float mid = static_cast<float>((static_cast<double>(v) + next) / 2);  // exact in float
    const std::uint16_t even = static_cast<std::uint16_t>(b % 2 == 0 ? b : b + 1);
    if (float_to_half_bits(mid) != even) ++failures;
    if (float_to_half_bits(std::nextafter(mid, 0.0f)) != b) ++failures;
    if (float_to_half_bits(std::nextafter(mid, INFINITY)) != b + 1) ++failures;
  }
  CHECK(failures == 0);
  // Spot values named for a reader: ties to even at 1, the overflow boundary, subnormals.
  CHECK(float_to_half_bits(1.0f + 0x1p-11f) == 0x3C00);        // tie, even below
  CHECK(float_to_half_bits(1.0f + 3 * 0x1p-11f) == 0x3C02);    // tie, even above
  CHECK(float_to_half_bits(65519.0f) == 0x7BFF);
  CHECK(float_to_half_bits(65520.0f) == 0x7C00);               // tie with 2^16: infinity
  CHECK(float_to_half_bits(0x1p-15f) == 0x0200);               // subnormal [2^-15, 2^-14)
  CHECK(float_to_half_bits(1.5f * 0x1p-24f) == 0x0002);        // subnormal tie, even above
  CHECK(float_to_half_bits(0x1p-25f) == 0x0000);               // subnormal tie, even below
  CHECK(float_to_half_bits(-0.0f) == 0x8000);
  CHECK(float_to_half_bits(-INFINITY) == 0xFC00);
  const std::uint16_t nan = float_to_half_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7C00u) == 0x7C00u);
  CHECK((nan & 0x03FFu) != 0);                                 // NaN, not infinity
  CHECK(std::signbit(half_bits_to_float(0x8000)));             // -0 keeps its sign
  CHECK(half_bits_to_float(0x8001) == -0x1p-24f);              // negative subnormal
}

TEST_CASE("bf16 conversion: every bf16 round-trips, midpoints round to even, NaN stays NaN",
          "[host_fill][dtype]") {
  std::size_t failures = 0;
  for (std::uint32_t b = 0; b < 0x7F80; ++b) {  // every finite non-negative bf16
    const float v = bf16_bits_to_float(static_cast<std::uint16_t>(b));
    if (float_to_bf16_bits(v) != b || float_to_bf16_bits(-v) != (b | 0x8000u)) ++failures;
    const float mid = std::bit_cast<float>((b << 16) | 0x8000u);  // halfway to the next bf16
    const std::uint16_t even = static_cast<std::uint16_t>(b % 2 == 0 ? b : b + 1);
    if (float_to_bf16_bits(mid) != even) ++failures;
    if (float_to_bf16_bits(std::bit_cast<float>((b << 16) | 0x7FFFu)) != b) ++failures;
    if (float_to_bf16_bits(std::bit_cast<float>((b << 16) | 0x8001u)) != b + 1) ++failures;
  }
  CHECK(failures == 0);
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);  // rounds to infinity
  for (std::uint32_t bits : {0x7F800001u, 0x7FC00000u, 0xFF800001u, 0xFFFFFFFFu}) {
    const std::uint16_t h = float_to_bf16_bits(std::bit_cast<float>(bits));
    INFO(std::hex << bits << " -> " << h);
    CHECK(std::isnan(bf16_bits_to_float(h)));
    CHECK((h & 0x8000u) == ((bits >> 16) & 0x8000u));  // sign kept
  }
}

TEST_CASE("write_element: NaN stores 0 in every integer dtype, float's largest value stays finite",
          "[host_fill][dtype]") {
  for (DType d : {DType::i32, DType::i64, DType::u8}) {
    HostBuffer b = one_of(d);
    write_element(b, 0, 5.0);
    write_element(b, 0, std::nan(""));
    CHECK(read_element(b, 0) == 0.0);
  }
  HostBuffer f = one_of(DType::f32);
  write_element(f, 0, std::numeric_limits<float>::max());
  CHECK(read_element(f, 0) == std::numeric_limits<float>::max());
  write_element(f, 0, -static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(read_element(f, 0) == -std::numeric_limits<float>::max());
  CHECK(round_to_dtype(DType::i32, -7.9) == -7.0);  // integers truncate toward zero
  CHECK(round_to_dtype(DType::i32, 2.5) == 2.0);
}

TEST_CASE("fill_uniform_around replaces what rounds to zero by the spread", "[host_fill][dtype]") {
  HostBuffer b = one_of(DType::i32, 64);  // every draw in (-1, 1) truncates to 0
  FillRng rng(3);
  fill_uniform_around(b, rng, 0, 64, 0.0, 1.0);
  for (std::size_t i = 0; i < 64; ++i) CHECK(read_element(b, i) == 1.0);
}

TEST_CASE("round_to_dtype / write_element round a double once, not twice through float",
          "[host_fill][dtype]") {
  // 1 + 2^-11 + 2^-40 is just above the f16 tie between 1 and 1 + 2^-10: nearest is the latter.
  // Rounding to float first would land exactly on the tie, which then rounds to even (1).
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(round_to_dtype(DType::f16, x) == 1.0 + std::ldexp(1.0, -10));
  HostBuffer h = make_host_buffer(BufferSpec{"h", DType::f16, 1, Role::output, 0});
  write_element(h, 0, x);
  CHECK(read_element(h, 0) == 1.0 + std::ldexp(1.0, -10));
  const double y = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);  // bf16 likewise
  CHECK(round_to_dtype(DType::bf16, y) == 1.0 + std::ldexp(1.0, -7));
}

TEST_CASE("read_element refuses an index whose byte offset would wrap", "[host_fill][dtype]") {
  HostBuffer f = make_host_buffer(BufferSpec{"f", DType::f32, 1, Role::input, 0});
  // (i + 1) * 4 wraps to 4 for i = 2^62: a check written that way accepts it and reads element 0.
  CHECK_THROWS_AS(read_element(f, std::size_t{1} << 62), Error);
}
