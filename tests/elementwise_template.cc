// Tests of the "elementwise" template without a GPU: problem checks, every constraint of its
// space, launch plans, the CPU reference against hand-computed values, the workload's fill and
// bytes, and NVRTC compiles of a sample of the space for sm_90.
#include <catch2/catch.hpp>

#include <cmath>

#include "builtin_templates.h"
#include "ktune/error.h"
#include "memory_bound_test_util.h"

using namespace ktune;
using ktune::test::with;

namespace {

Problem ew_problem(const std::string& shape, const std::string& dtype, const std::string& fn) {
  return make_problem(*make_elementwise_template(), shape, {{"dtype", dtype}, {"fn", fn}});
}

/// Runs the reference on given inputs; returns y.
std::vector<double> ew_reference(const Problem& p, const std::vector<std::vector<double>>& inputs) {
  auto w = make_elementwise_template()->workload(p);
  auto buffers = ktune::test::host_buffers(*w);
  REQUIRE(buffers.size() == inputs.size() + 1);
  for (std::size_t i = 0; i < inputs.size(); ++i) ktune::test::set_values(buffers[i], inputs[i]);
  w->reference(buffers);
  return ktune::test::values_of(buffers.back());
}

}  // namespace

TEST_CASE("elementwise check_problem rejects bad problems", "[elementwise]") {
  auto t = make_elementwise_template();
  CHECK_THROWS_AS(ew_problem("1x16", "f64", "relu"), Error);
  CHECK_THROWS_AS(ew_problem("1x16", "f32", "tanh"), Error);
  CHECK_THROWS_AS(make_problem(*t, "16", {}), Error);  // one dimension
  Problem p = ew_problem("4x16", "f16", "add");
  p.dims[1].first = "n";
  CHECK_THROWS_AS(t->check_problem(p), Error);
  p = ew_problem("4x16", "f16", "add");
  p.attrs.erase("fn");
  CHECK_THROWS_AS(t->check_problem(p), Error);
  CHECK_NOTHROW(t->check_problem(t->example_problem()));
}

TEST_CASE("elementwise constraints reject what they should", "[elementwise]") {
  auto t = make_elementwise_template();
  Device dev = Device::h200();
  dev.max_threads_per_block = 512;
  const Problem p = ew_problem("1x4096", "f16", "mul");
  const SearchSpace s = t->space(p, dev);
  const Config d = s.default_config();
  REQUIRE(s.valid(d));
  CHECK(s.params()[s.find("VEC").value()].values.back() == 8);  // 16 bytes of f16
  CHECK_FALSE(s.valid(with(s, d, {{"ITEMS", 4}, {"UNROLL", 8}})));        // UNROLL divides ITEMS
  CHECK(s.valid(with(s, d, {{"ITEMS", 8}, {"UNROLL", 8}})));
  CHECK_FALSE(s.valid(with(s, d, {{"GRID_MODE", 0}, {"GRID_MULT", 4}})));  // mult only with mode 1
  CHECK(s.valid(with(s, d, {{"GRID_MODE", 1}, {"GRID_MULT", 4}})));
  // Two inputs of 8 halves each: UNROLL 16 holds 512 bytes per thread.
  CHECK_FALSE(s.valid(with(s, d, {{"ITEMS", 16}, {"UNROLL", 16}, {"VEC", 8}})));
  CHECK(s.valid(with(s, d, {{"ITEMS", 16}, {"UNROLL", 8}, {"VEC", 8}})));
  CHECK_FALSE(s.valid(with(s, d, {{"THREADS", 1024}})));  // device limit
  const SearchSpace f32 = t->space(ew_problem("1x4096", "f32", "relu"), Device::h200());
  CHECK(f32.params()[f32.find("VEC").value()].values.back() == 4);  // 16 bytes of f32
  CHECK(f32.count_valid() > 100);
}

TEST_CASE("elementwise launch plans pass the right operands", "[elementwise]") {
  auto t = make_elementwise_template();
  const Device dev = Device::h200();
  const Problem unary = ew_problem("1x1000003", "f32", "silu");
  const SearchSpace s = t->space(unary, dev);
  LaunchPlan plan = t->launch(unary, s.default_config(), dev);
  REQUIRE(plan.steps.size() == 1);
  const LaunchStep& st = plan.steps[0];
  CHECK(st.entry == "elementwise_kernel");
  REQUIRE(st.args.size() == 7);
  CHECK(st.args[1].kind == KernelArg::Kind::i64);  // no z
  CHECK(st.args[3].buffer == 1);                   // y
  CHECK(st.args[4].i == 1000003);
  // 1000003 / 4 vectors over 256-thread tiles of one vector each.
  CHECK(st.grid[0] == (1000003 / 4 + 255) / 256);
  const Config strided = with(s, s.default_config(), {{"GRID_MODE", 1}, {"GRID_MULT", 2}});
  CHECK(t->launch(unary, strided, dev).steps[0].grid[0] == 2u * dev.sm_count);

  const Problem bias = ew_problem("3x5", "bf16", "bias_gelu_erf");
  plan = t->launch(bias, t->space(bias, dev).default_config(), dev);
  CHECK(plan.steps[0].args[1].kind == KernelArg::Kind::i64);
  CHECK(plan.steps[0].args[2].buffer == 1);
  CHECK(plan.steps[0].args[3].buffer == 2);
  CHECK(plan.steps[0].args[5].i == 5);
  const std::vector<std::string> want = {"-DKT_DTYPE=2", "-DKT_KIND=3", "-DKT_ACT=2"};
  CHECK(t->problem_defines(bias) == want);
}

TEST_CASE("elementwise reference matches hand-computed values", "[elementwise]") {
  CHECK(ew_reference(ew_problem("1x3", "f32", "relu"), {{-1.5, 2.25, 0.5}}) ==
        std::vector<double>{0.0, 2.25, 0.5});
  CHECK(ew_reference(ew_problem("1x1", "f32", "gelu_erf"), {{1.0}})[0] ==
        Approx(0.8413447460685429).epsilon(1e-7));
  CHECK(ew_reference(ew_problem("1x1", "f32", "gelu_tanh"), {{1.0}})[0] ==
        Approx(0.8411919906082768).epsilon(1e-7));
  const auto silu = ew_reference(ew_problem("1x2", "f32", "silu"), {{1.0, -2.0}});
  CHECK(silu[0] == Approx(0.7310585786300049).epsilon(1e-7));
  CHECK(silu[1] == Approx(-0.23840584404423515).epsilon(1e-7));
  CHECK(ew_reference(ew_problem("1x2", "f32", "add"), {{1.5, -2.0}, {0.25, 4.0}}) ==
        std::vector<double>{1.75, 2.0});
  CHECK(ew_reference(ew_problem("1x2", "f16", "mul"), {{1.5, -2.0}, {0.25, 4.0}}) ==
        std::vector<double>{0.375, -8.0});
  // relu(0.75 * x + bias[col]) over 2 x 2.
  CHECK(ew_reference(ew_problem("2x2", "f32", "bias_relu"), {{1, -1, 2, -2}, {0.5, -0.25}}) ==
        std::vector<double>{1.25, 0.0, 2.0, 0.0});
  // gelu_erf(1) = 0.84134... rounded to bf16 (8 significant bits): 215 / 256.
  CHECK(ew_reference(ew_problem("1x1", "bf16", "gelu_erf"), {{1.0}})[0] == 0.83984375);
}

TEST_CASE("elementwise workload fills never-zero wide inputs and counts bytes", "[elementwise]") {
  auto t = make_elementwise_template();
  const Problem p = ew_problem("4x1000", "f16", "bias_silu");
  auto w = t->workload(p);
  auto buffers = ktune::test::host_buffers(*w);
  REQUIRE(buffers.size() == 3);
  CHECK(buffers[1].spec.elements == 1000);  // bias per column
  w->fill(buffers, 7);
  double lo = 1e30, hi = 0;
  for (double v : ktune::test::values_of(buffers[0])) {
    REQUIRE(v != 0.0);
    lo = std::min(lo, std::abs(v));
    hi = std::max(hi, std::abs(v));
  }
  CHECK(lo < 0.01);
  CHECK(hi > 30);
  CHECK(w->bytes() == (2.0 * 4000 + 1000) * 2);
  CHECK(t->workload(ew_problem("1x100", "f32", "add"))->bytes() == 3.0 * 100 * 4);
}

TEST_CASE("elementwise spaces compile with NVRTC for sm_90", "[elementwise][nvrtc]") {
  auto t = make_elementwise_template();
  ktune::test::expect_space_compiles(*t, ew_problem("1x268435456", "f32", "gelu_tanh"), 3, 1);
  ktune::test::expect_space_compiles(*t, ew_problem("32768x4096", "f16", "add"), 2, 2);
  ktune::test::expect_space_compiles(*t, ew_problem("7x33", "bf16", "bias_silu"), 2, 3);
  ktune::test::expect_space_compiles(*t, ew_problem("1x1000", "f16", "gelu_erf"), 1, 4);
}

TEST_CASE("elementwise THREADS equal to the device limit stays in the space", "[elementwise]") {
  auto t = make_elementwise_template();
  Device dev = Device::h200();  // 1024 threads per block
  const Problem p = make_problem(*t, "1x4096", {{"dtype", "f32"}, {"fn", "relu"}});
  const SearchSpace s = t->space(p, dev);
  CHECK(s.valid(with(s, s.default_config(), {{"THREADS", 1024}})));
  dev.max_threads_per_block = 512;
  const SearchSpace s512 = t->space(p, dev);
  CHECK(s512.valid(with(s512, s512.default_config(), {{"THREADS", 512}})));
  CHECK_FALSE(s512.valid(with(s512, s512.default_config(), {{"THREADS", 1024}})));
}

TEST_CASE("elementwise can_implement refuses GRID_MODE 0 past 2^31-1 blocks", "[elementwise]") {
  auto t = make_elementwise_template();
  const Device dev = Device::h200();
  const Problem huge = make_problem(*t, "1024x1073741824", {{"dtype", "f32"}, {"fn", "relu"}});
  const SearchSpace s = t->space(huge, dev);
  // 2^40 elements / (1 x 64 x 1) = 2^34 blocks in one grid dimension.
  const Config c = with(s, s.default_config(), {{"VEC", 1}, {"THREADS", 64}, {"ITEMS", 1},
                                                {"UNROLL", 1}, {"GRID_MODE", 0}, {"GRID_MULT", 1}});
  std::string why;
  CHECK_FALSE(t->can_implement(huge, c, &why));
  CHECK_THAT(why, Catch::Contains("2^31-1"));
  CHECK_THROWS_AS(t->launch(huge, c, dev), Error);
  CHECK(t->can_implement(huge, with(s, c, {{"GRID_MODE", 1}})));  // grid-stride covers it
  CHECK(t->can_implement(huge, s.default_config()));              // 2^30 blocks of 4 x 256
}

TEST_CASE("elementwise 16-bit defaults take two 16-byte vectors per thread", "[elementwise]") {
  auto t = make_elementwise_template();
  for (const char* dtype : {"f16", "bf16", "f32"}) {
    const Problem p = make_problem(*t, "1x16777216", {{"dtype", dtype}, {"fn", "relu"}});
    const Config d = t->space(p, Device::h200()).default_config();
    const Value want = std::string(dtype) == "f32" ? 1 : 2;
    INFO(dtype << " " << d.str());
    CHECK(d["ITEMS"] == want);
    CHECK(d["UNROLL"] == want);
  }
}
