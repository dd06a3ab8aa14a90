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

TEST_CASE("check_caller_buffers refuses a wrong count, null and misaligned pointers",
          "[builder][launch]") {
  std::vector<BufferSpec> specs{{"x", DType::f16, 1000, Role::input, 0},
                                {"y", DType::f32, 1000, Role::output, 0},
                                {"none", DType::f32, 0, Role::output, 0}};
  alignas(64) static unsigned char arena[256];
  void* aligned = arena;
  void* plus2 = arena + 2;
  void* plus4 = arena + 4;
  auto check = [&](const std::vector<void*>& pointers, std::size_t alignment) {
    detail::check_caller_buffers([] { return std::string("dispatch: copy 8"); }, specs, pointers,
                                 alignment);
  };
  // 16-byte template: aligned pointers pass; an empty buffer is never read: null or not.
  CHECK_NOTHROW(check({aligned, arena + 16, nullptr}, 16));
  CHECK_NOTHROW(check({aligned, arena + 16, plus4}, 16));
  CHECK_THROWS_WITH(check({aligned, aligned}, 16),
                    Catch::Contains("dispatch: copy 8 takes 3 buffers, got 2"));
  CHECK_THROWS_WITH(check({aligned, nullptr, nullptr}, 16),
                    Catch::Contains("dispatch: copy 8: buffer 1 (y, f32) is a null pointer") &&
                        Catch::Contains("4000 bytes"));
  CHECK_THROWS_WITH(check({plus4, aligned, nullptr}, 16),
                    Catch::Contains("buffer 0 (x, f16)") && Catch::Contains("not 16-byte aligned") &&
                        Catch::Contains("4 bytes past"));
  // Alignment 1 (a user template): each element's own alignment still holds.
  CHECK_NOTHROW(check({plus2, plus4, nullptr}, 1));
  CHECK_THROWS_WITH(check({plus2, plus2, nullptr}, 1),
                    Catch::Contains("buffer 1 (y, f32)") && Catch::Contains("not 4-byte aligned"));
  CHECK_THROWS_WITH(check({arena + 1, plus4, nullptr}, 1), Catch::Contains("not 2-byte aligned"));
  // A buffer the workload tunes at an offset of 4 bytes needs only 4-byte alignment.
  specs[1].offset_bytes = 4;
  CHECK_NOTHROW(check({aligned, plus4, nullptr}, 16));
  CHECK_THROWS_WITH(check({aligned, plus2, nullptr}, 16), Catch::Contains("not 4-byte aligned"));
}
