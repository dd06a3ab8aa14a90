// The built-in copy template on the CPU: space, launch geometry for odd sizes and grid-stride
// caps, and the workload (non-zero random inputs, double-precision reference, f16 encoding).
#include <catch2/catch.hpp>

#include <cmath>

#include "builtin_templates.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "memory_bound_test_util.h"

using namespace ktune;

namespace {

/// Host buffers sized for a workload's specs.
std::vector<HostBuffer> allocate(const Workload& w) {
  std::vector<HostBuffer> out;
  for (const auto& spec : w.buffers())
    out.push_back(HostBuffer{spec, std::vector<std::uint8_t>(spec.elements * dtype_size(spec.dtype))});
  return out;
}

}  // namespace

TEST_CASE("copy: space, defaults and device-derived constraint", "[copy]") {
  auto copy = make_copy_template();
  Problem p = copy->example_problem();
  REQUIRE_NOTHROW(copy->check_problem(p));
  SearchSpace space = copy->space(p, Device::h200());
  CHECK(space.size() == 3 * 5 * 4 * 2);
  Config def = space.default_config();
  CHECK(space.valid(def));
  CHECK(def.str() == "VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0");
  CHECK(space.count_valid() == space.size());
  Device small = Device::h200();
  small.max_threads_per_block = 512;
  SearchSpace limited = copy->space(p, small);
  CHECK(limited.count_valid() == 3 * 4 * 4 * 2);
  CHECK_FALSE(limited.valid(limited.make({{"VEC", 4}, {"THREADS", 1024}, {"ITEMS", 1},
                                          {"GRID_STRIDE", 0}})));
  CHECK(copy->problem_defines(p) == std::vector<std::string>{"-DKT_DTYPE=0"});
  CHECK(copy->problem_defines(make_problem(*copy, "7", {{"dtype", "f16"}})) ==
        std::vector<std::string>{"-DKT_DTYPE=1"});
  CHECK_THROWS_AS(make_problem(*copy, "7", {{"dtype", "bf16"}}), Error);
  CHECK(copy->vendor_reference() == "copy");
  CHECK(copy->source().find("extern \"C\" __global__") != std::string::npos);
}

TEST_CASE("copy: launch covers odd sizes, grid-stride caps the grid at resident blocks",
          "[copy]") {
  auto copy = make_copy_template();
  Device h200 = Device::h200();
  Problem odd = make_problem(*copy, "1000003");
  SearchSpace space = copy->space(odd, h200);
  Config one_pass = space.make({{"VEC", 4}, {"THREADS", 256}, {"ITEMS", 2}, {"GRID_STRIDE", 0}});
  LaunchPlan plan = copy->launch(odd, one_pass, h200);
  REQUIRE(plan.steps.size() == 1);
  const LaunchStep& s = plan.steps[0];
  CHECK(s.entry == "ktune_copy");
  CHECK(s.block[0] == 256);
  // 250000 full vectors in tiles of 512 vectors: 489 blocks; 3 tail elements.
  CHECK(s.grid[0] == 489);
  CHECK(s.grid[0] * 256ull * 2 * 4 >= 1000000);
  REQUIRE(s.args.size() == 4);
  CHECK(s.args[0].kind == KernelArg::Kind::buffer);
  CHECK(s.args[0].buffer == 1);  // y
  CHECK(s.args[1].buffer == 0);  // x
  CHECK(s.args[2].kind == KernelArg::Kind::f32);
  CHECK(s.args[3].kind == KernelArg::Kind::i64);
  CHECK(s.args[3].i == 1000003);
  CHECK(plan.scratch.empty());

  Problem big = make_problem(*copy, std::to_string(std::int64_t{1} << 28));
  Config strided = space.make({{"VEC", 4}, {"THREADS", 256}, {"ITEMS", 1}, {"GRID_STRIDE", 1}});
  CHECK(copy->launch(big, strided, h200).steps[0].grid[0] == 132u * (2048 / 256));
  Problem tiny = make_problem(*copy, "3");
  CHECK(copy->launch(tiny, strided, h200).steps[0].grid[0] == 1);  // tail only
  CHECK(copy->can_implement(big, one_pass));
}

TEST_CASE("copy workload: non-zero random inputs and alpha*x reference", "[copy]") {
  auto copy = make_copy_template();
  for (const char* dtype : {"f32", "f16"}) {
    INFO(dtype);
    Problem p = make_problem(*copy, "1001", {{"dtype", dtype}});
    auto w = copy->workload(p);
    REQUIRE(w->buffers().size() == 2);
    CHECK(w->buffers()[0].role == Role::input);
    CHECK(w->buffers()[1].role == Role::output);
    const bool half = std::string(dtype) == "f16";
    CHECK(w->bytes() == 2.0 * 1001 * (half ? 2 : 4));
    auto buffers = allocate(*w);
    w->fill(buffers, 42);
    auto again = allocate(*w);
    w->fill(again, 42);
    CHECK(again[0].bytes == buffers[0].bytes);  // deterministic per seed
    w->fill(again, 43);
    CHECK(again[0].bytes != buffers[0].bytes);
    w->reference(buffers);
    int negatives = 0;
    for (int i = 0; i < 1001; ++i) {
      if (half) {
        std::uint16_t x = buffers[0].as<std::uint16_t>()[i];
        std::uint16_t y = buffers[1].as<std::uint16_t>()[i];
        CHECK((x & 0x7fff) != 0);
        CHECK((x & 0x8000) != (y & 0x8000));  // alpha < 0 flips the sign
        negatives += (x & 0x8000) ? 1 : 0;
      } else {
        float x = buffers[0].as<float>()[i];
        float y = buffers[1].as<float>()[i];
        CHECK(std::fabs(x) >= 0.5f);
        CHECK(std::fabs(x) < 2.0f);
        CHECK(y == static_cast<float>(-1.75 * x));
        negatives += x < 0 ? 1 : 0;
      }
    }
    CHECK(negatives > 300);
    CHECK(negatives < 700);
    Tolerance t = w->tolerance(w->buffers()[1]);
    CHECK(t.rel_l2 > 0);
    CHECK(t.rel_l2 <= (half ? 2e-3 : 1e-6));
  }
}

TEST_CASE("copy workload: f16 values are correctly rounded binary16", "[copy]") {
  auto copy = make_copy_template();
  auto w = copy->workload(make_problem(*copy, "64", {{"dtype", "f16"}}));
  auto buffers = allocate(*w);
  w->fill(buffers, 5);
  // Put known halves in x and check the reference encodes -1.75*x exactly.
  const std::uint16_t one = 0x3c00, one_and_quarter = 0x3d00, max_ish = 0x5800;  // 1, 1.25, 128
  buffers[0].as<std::uint16_t>()[0] = one;
  buffers[0].as<std::uint16_t>()[1] = one_and_quarter;
  buffers[0].as<std::uint16_t>()[2] = max_ish;
  w->reference(buffers);
  CHECK(buffers[1].as<std::uint16_t>()[0] == 0xbf00);  // -1.75
  CHECK(buffers[1].as<std::uint16_t>()[1] == 0xc060);  // -2.1875
  CHECK(buffers[1].as<std::uint16_t>()[2] == 0xdb00);  // -224
}

TEST_CASE("copy: grid-stride configs cover any N, one-pass ones only 2^31-1 blocks", "[copy]") {
  auto copy = make_copy_template();
  const Device dev = Device::h200();
  const Problem huge = make_problem(*copy, std::to_string(std::int64_t{1} << 40));
  const SearchSpace s = copy->space(huge, dev);
  const Config one_pass = s.make({{"VEC", 1}, {"THREADS", 64}, {"ITEMS", 1}, {"GRID_STRIDE", 0}});
  CHECK_FALSE(copy->can_implement(huge, one_pass));  // 2^34 blocks
  CHECK_THROWS_WITH(copy->launch(huge, one_pass, dev), Catch::Contains("more than 2^31-1 blocks"));
  const Config strided = test::with(s, one_pass, {{"GRID_STRIDE", 1}});
  CHECK(copy->can_implement(huge, strided));
  CHECK(copy->launch(huge, strided, dev).steps[0].grid[0] == 132u * 32u);
}
