// Launch-plan argument packing (no GPU needed): typed slots, buffer resolution and misuse.
#include <catch2/catch.hpp>

#include <cstring>

#include "ktune/error.h"
#include "launch_plan_runner.h"

using namespace ktune;
using detail::DeviceBuffer;
using detail::PackedArgs;

TEST_CASE("PackedArgs stores each argument with its C type", "[builder][launch]") {
  int a = 0, b = 0;
  std::vector<DeviceBuffer> buffers{{&a, 4}, {&b, 4}};
  PackedArgs args({KernelArg::buf(1), KernelArg::i32(-7), KernelArg::i64(std::int64_t{1} << 40),
                   KernelArg::f32(1.5), KernelArg::f64(-2.25), KernelArg::buf(0)},
                  buffers);
  REQUIRE(args.size() == 6);
  void** p = args.data();
  CHECK(*static_cast<void**>(p[0]) == &b);
  CHECK(*static_cast<std::int32_t*>(p[1]) == -7);
  CHECK(*static_cast<std::int64_t*>(p[2]) == (std::int64_t{1} << 40));
  CHECK(*static_cast<float*>(p[3]) == 1.5f);
  CHECK(*static_cast<double*>(p[4]) == -2.25);
  CHECK(*static_cast<void**>(p[5]) == &a);
  for (std::size_t i = 0; i < args.size(); ++i)
    CHECK(reinterpret_cast<std::uintptr_t>(p[i]) % 8 == 0);
}

TEST_CASE("PackedArgs rejects missing buffers and oversized i32 values", "[builder][launch]") {
  std::vector<DeviceBuffer> one{{nullptr, 0}};
  CHECK_THROWS_AS(PackedArgs({KernelArg::buf(1)}, one), Error);
  CHECK_THROWS_WITH(PackedArgs({KernelArg::i32(std::int64_t{1} << 31)}, one),
                    Catch::Contains("32-bit"));
  PackedArgs empty({}, one);
  CHECK(empty.size() == 0);
  CHECK(empty.data() == nullptr);
}
