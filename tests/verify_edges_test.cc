// Edge cases of verify::compare and with_element_bound (lib/verify.cc): non-finite values and
// the poison pattern, the per-element bound, all-zero references, integer outputs, and f64
// outputs whose squares leave double's range. From the mutation audit of session 33.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "verify.h"

using namespace ktune;

namespace {
template <class T>
HostBuffer buffer_of(DType dtype, std::vector<T> v) {
  HostBuffer b;
  b.spec = BufferSpec{"y", dtype, v.size(), Role::output, 0};
  b.bytes.resize(v.size() * sizeof(T));
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}
HostBuffer f32(std::vector<float> v) { return buffer_of(DType::f32, std::move(v)); }
}  // namespace

TEST_CASE("verify: non-finite references: NaN matches NaN, infinities must match in sign",
          "[runner]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  CHECK(verify::compare(f32({1, nan, inf}), f32({1, nan, inf}), Tolerance{1e-5}).ok);
  const auto flipped = verify::compare(f32({1, nan, -inf}), f32({1, nan, inf}), Tolerance{1e-5});
  CHECK_FALSE(flipped.ok);
  CHECK_THAT(flipped.message, Catch::Contains("non-finite value in y at element 2"));
}

TEST_CASE("verify: the per-element bound: max_abs 0 is a bound, relative to the reference, strict",
          "[runner]") {
  const auto ref = f32({1, 2, 3, 4});
  // max_abs = 0: exact elements demanded (the bound is on, not off).
  CHECK(verify::compare(f32({1, 2, 3, 4}), ref, Tolerance{1.0, 0.0, 0.0}).ok);
  CHECK_FALSE(verify::compare(f32({1, 2, 3, 4.0001f}), ref, Tolerance{1.0, 0.0, 0.0}).ok);
  // rel_elem scales |ref|, not |out|: 1 -> 2.5 is 1.5 off, above 0.8 * 1 (below 0.8 * 2.5).
  const auto rel = verify::compare(f32({2.5f}), f32({1}), Tolerance{10.0, 0.0, 0.8});
  CHECK_FALSE(rel.ok);
  CHECK_THAT(rel.message, Catch::Contains("y[0]"));
}

TEST_CASE("verify: an all-zero reference is compared by the absolute L2 norm", "[runner]") {
  const auto c = verify::compare(f32({0, 0, 0, 1e-3f}), f32({0, 0, 0, 0}), Tolerance{1e-5});
  CHECK_FALSE(c.ok);
  CHECK(c.rel_l2 == Approx(1e-3));
  CHECK(verify::compare(f32({0, 0, 0, 1e-6f}), f32({0, 0, 0, 0}), Tolerance{1e-5}).ok);
}

TEST_CASE("verify: a wrong f64 output of huge magnitude fails (its squares overflow double)",
          "[runner]") {
  const auto c = verify::compare(buffer_of<double>(DType::f64, {3e200}),
                                 buffer_of<double>(DType::f64, {1e200}), Tolerance{1e-5});
  CHECK_FALSE(c.ok);
}

TEST_CASE("verify: integer outputs equal to the poison pattern are values, u8's 0xA5 too",
          "[runner]") {
  std::int32_t pattern;
  std::memset(&pattern, verify::poison_byte(DType::i32), 4);
  CHECK(verify::compare(buffer_of<std::int32_t>(DType::i32, {7, pattern}),
                        buffer_of<std::int32_t>(DType::i32, {7, pattern}), Tolerance{1e-5})
            .ok);
  // u8: 0xA5 where the reference holds 0xA4 is a value within a loose tolerance, not unwritten.
  const auto u = verify::compare(buffer_of<std::uint8_t>(DType::u8, {100, 0xA5}),
                                 buffer_of<std::uint8_t>(DType::u8, {100, 0xA4}), Tolerance{0.1});
  CHECK(u.ok);
  CHECK(verify::element(reinterpret_cast<const std::uint8_t*>("\xC8"), DType::u8, 0) == 200.0);
}

TEST_CASE("verify: the element bound ignores non-finite reference elements", "[runner]") {
  const float inf = std::numeric_limits<float>::infinity();
  const Tolerance b = verify::with_element_bound(Tolerance{1e-3}, f32({3, -3, inf, 3, 3}));
  CHECK(b.rel_elem == Approx(verify::kElementBoundFactor * 1e-3));
  CHECK(b.max_abs == Approx(verify::kElementBoundFactor * 1e-3 * 3.0));  // rms of the finite
}

TEST_CASE("verify: an unwritten element does not hide behind a NaN reference", "[runner]") {
  const float ref_values[2] = {1.0f, std::nanf("")};
  HostBuffer ref, got;
  ref.spec = got.spec = BufferSpec{"y", DType::f32, 2, Role::output, 0};
  ref.bytes.resize(8);
  std::memcpy(ref.bytes.data(), ref_values, 8);
  got.bytes = ref.bytes;
  std::memset(got.bytes.data() + 4, verify::poison_byte(DType::f32), 4);  // never written
  const auto c = verify::compare(got, ref, Tolerance{1e-5});
  CHECK_FALSE(c.ok);
  CHECK(c.message == "element 1 of y was never written");
}

TEST_CASE("verify: f64 norms neither underflow nor overflow: a wrong tiny output fails, a right huge one passes",
          "[runner]") {
  auto f64 = [](std::vector<double> v) { return buffer_of<double>(DType::f64, std::move(v)); };
  // 100 % wrong: the squares (1e-340) are below double's range, but not below the sums'.
  const auto tiny = verify::compare(f64({2e-170, 0}), f64({1e-170, 1e-170}), Tolerance{1e-5});
  CHECK_FALSE(tiny.ok);
  CHECK(tiny.rel_l2 == Approx(1.0));
  // 1e-12 relative error: the squares (1e400) are above double's range, but not above the sums'.
  const auto huge = verify::compare(f64({1e200 * (1 + 1e-12)}), f64({1e200}), Tolerance{1e-5});
  CHECK(huge.ok);
  CHECK(huge.rel_l2 < 1e-11);
}
