// Random fills of host buffers: the threaded chunked fill gives exactly what one sequential
// stream would (contents and the stream's end state), for the generators every workload uses;
// element writes outside a dtype's range and integer draws over int64's whole range.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "host_dtype.h"
#include "ktune/error.h"

using namespace ktune;

namespace {

HostBuffer buffer_of(DType dtype, std::size_t elements) {
  return make_host_buffer(BufferSpec{"x", dtype, elements, Role::input, 0});
}

}  // namespace

TEST_CASE("fill_uniform_around matches one sequential stream on large buffers", "[host_fill]") {
  for (DType dtype : {DType::f16, DType::bf16, DType::f32}) {
    const std::size_t n = (std::size_t{5} << 19) + 12345;  // several chunks and a ragged end
    const std::size_t first = 777, count = n - first - 99;
    HostBuffer filled = buffer_of(dtype, n), expected = buffer_of(dtype, n);
    FillRng rng(42), serial(42);
    fill_uniform_around(filled, rng, first, count, 3.0, 0.5);
    for (std::size_t i = first; i < first + count; ++i) {
      const double v = round_to_dtype(dtype, 3.0 + 0.5 * (2.0 * serial.uniform() - 1.0));
      write_element(expected, i, v != 0.0 ? v : 0.5);
    }
    CHECK(std::memcmp(filled.bytes.data(), expected.bytes.data(), filled.bytes.size()) == 0);
    CHECK(rng.next() == serial.next());  // both streams end at the same place
    CHECK(read_element(filled, first - 1) == 0.0);  // outside the range: untouched
    CHECK(read_element(filled, first + count) == 0.0);
  }
}

TEST_CASE("fill_wide_magnitude matches one sequential stream on large buffers", "[host_fill]") {
  for (bool positive_only : {false, true}) {
    const std::size_t n = (std::size_t{3} << 19) + 7;
    HostBuffer filled = buffer_of(DType::f32, n), expected = buffer_of(DType::f32, n);
    fill_wide_magnitude(filled, 9, -6, 3, positive_only);
    FillRng serial(9);
    for (std::size_t i = 0; i < n; ++i)
      write_element(expected, i, random_wide_magnitude(serial, -6, 3, positive_only));
    CHECK(std::memcmp(filled.bytes.data(), expected.bytes.data(), filled.bytes.size()) == 0);
  }
}

TEST_CASE("FillRng::skip lands where that many draws would", "[host_fill]") {
  FillRng a(5), b(5);
  for (int i = 0; i < 1000; ++i) a.next();
  b.skip(1000);
  CHECK(a.next() == b.next());
}

TEST_CASE("a fill outside the buffer is an error naming the buffer", "[host_fill]") {
  HostBuffer b = buffer_of(DType::f16, 100);
  FillRng rng(1);
  CHECK_THROWS_WITH(fill_uniform_around(b, rng, 90, 20, 0.0, 1.0),
                    Catch::Contains("buffer x") && Catch::Contains("[90, 110)"));
}

TEST_CASE("write_element saturates integers and rounds floats beyond range to infinity",
          "[host_fill]") {
  HostBuffer i32 = buffer_of(DType::i32, 1), u8 = buffer_of(DType::u8, 1),
             i64 = buffer_of(DType::i64, 1), f32 = buffer_of(DType::f32, 1);
  write_element(i32, 0, 3e9);
  CHECK(read_element(i32, 0) == 2147483647.0);
  write_element(i32, 0, -3e9);
  CHECK(read_element(i32, 0) == -2147483648.0);
  write_element(u8, 0, -5);
  CHECK(read_element(u8, 0) == 0.0);
  write_element(u8, 0, 300.7);
  CHECK(read_element(u8, 0) == 255.0);
  write_element(u8, 0, std::nan(""));
  CHECK(read_element(u8, 0) == 0.0);
  write_element(i64, 0, 1e30);
  CHECK(read_element(i64, 0) == 9223372036854775807.0);
  write_element(i64, 0, -7.9);
  CHECK(read_element(i64, 0) == -7.0);  // truncated, as the cast does in range
  write_element(f32, 0, 1e300);
  CHECK(std::isinf(read_element(f32, 0)));
  CHECK(read_element(f32, 0) > 0);
}

TEST_CASE("FillRng::integer covers ranges as wide as int64's without overflow", "[host_fill]") {
  FillRng a(7), b(7);
  for (int i = 0; i < 100; ++i) {  // small ranges: the draw it always made
    const std::int64_t v = a.integer(-3, 9);
    CHECK(v == -3 + static_cast<std::int64_t>(b.next() % 13));
  }
  FillRng wide(11);
  bool negative = false, positive = false;
  for (int i = 0; i < 64; ++i) {
    const std::int64_t v = wide.integer(std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max());
    negative = negative || v < 0;
    positive = positive || v > 0;
  }
  CHECK(negative);
  CHECK(positive);
  FillRng top(3);
  for (int i = 0; i < 64; ++i) CHECK(top.integer(0, std::numeric_limits<std::int64_t>::max()) >= 0);
}
