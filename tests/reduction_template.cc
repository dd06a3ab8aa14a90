// Tests of the "reduction" template without a GPU: problem checks, every constraint of its
// space, valid defaults for odd shapes, launch plans (second pass, atomics), the CPU reference
// against hand-computed values, and NVRTC compiles of a sample of the space for sm_90.
#include <catch2/catch.hpp>

#include <random>

#include "builtin_templates.h"
#include "ktune/error.h"
#include "memory_bound_test_util.h"

using namespace ktune;
using ktune::test::with;

namespace {

Problem red_problem(const std::string& shape, const std::string& dtype, const std::string& fn) {
  return make_problem(*make_reduction_template(), shape, {{"dtype", dtype}, {"fn", fn}});
}

std::vector<double> red_reference(const Problem& p, const std::vector<double>& x) {
  auto w = make_reduction_template()->workload(p);
  auto buffers = ktune::test::host_buffers(*w);
  ktune::test::set_values(buffers[0], x);
  w->reference(buffers);
  return ktune::test::values_of(buffers[1]);
}

}  // namespace

TEST_CASE("reduction check_problem rejects bad problems", "[reduction]") {
  auto t = make_reduction_template();
  CHECK_THROWS_AS(red_problem("4x16", "i32", "sum"), Error);
  CHECK_THROWS_AS(red_problem("4x16", "f32", "min"), Error);
  CHECK_THROWS_AS(red_problem("4x0", "f32", "sum"), Error);
  CHECK_THROWS_AS(make_problem(*t, "4x4x4", {}), Error);
  CHECK_NOTHROW(t->check_problem(t->example_problem()));
  // Past 2^31 - 1 rows the kernels still launch (a block holds several rows), so a deployed
  // program gets a space and a config; only tuning, whose reference launches a block per row,
  // is refused, naming the limit.
  const Problem tall = red_problem("2147483648x2", "f32", "sum");
  const SearchSpace space = t->space(tall, Device::h200());
  std::mt19937_64 rng(5);
  bool launchable = false;
  for (int i = 0; i < 64 && !launchable; ++i) launchable = t->can_implement(tall, space.random(rng));
  CHECK(launchable);
  CHECK_THROWS_WITH(t->workload(tall), Catch::Contains("rows=2147483648") && Catch::Contains("2^31 - 1"));
  auto ln = make_layernorm_template();
  CHECK_THROWS_WITH(ln->workload(make_problem(*ln, "4294967296x64", {})), Catch::Contains("2^31 - 1"));
}

TEST_CASE("reduction constraints reject what they should", "[reduction]") {
  auto t = make_reduction_template();
  const Device dev = Device::h200();
  const Problem p = red_problem("64x4096", "f32", "sum");
  const SearchSpace s = t->space(p, dev);
  const Config d = s.default_config();
  REQUIRE(s.valid(d));
  const Config block = with(s, d, {{"THREADS", 256}, {"TPR", 256}, {"VEC", 4}, {"SPLIT", 1}, {"MULTI", 0}});
  REQUIRE(s.valid(block));
  CHECK_FALSE(s.valid(with(s, block, {{"TPR", 512}})));                  // TPR <= THREADS
  CHECK_FALSE(s.valid(with(s, block, {{"TPR", 32}, {"SPLIT", 2}})));     // split needs a block per row
  CHECK(s.valid(with(s, block, {{"SPLIT", 2}})));
  CHECK_FALSE(s.valid(with(s, block, {{"MULTI", 1}})));                  // atomics need SPLIT > 1
  CHECK(s.valid(with(s, block, {{"SPLIT", 4}, {"MULTI", 1}})));
  CHECK_FALSE(s.valid(with(s, block, {{"SPLIT", 8}})));                  // 8 * 256 * 4 > 4096
  CHECK(s.valid(with(s, block, {{"THREADS", 1024}, {"TPR", 1024}})));  // 1024 * 4 == 4096 columns
  const Problem narrow = red_problem("64x100", "f16", "max");
  const SearchSpace sn = t->space(narrow, dev);
  const Config dn = sn.default_config();
  REQUIRE(sn.valid(dn));
  CHECK_FALSE(sn.valid(with(sn, dn, {{"TPR", 64}, {"THREADS", 256}, {"VEC", 2}})));  // 128 > 100 lanes
  CHECK(sn.valid(with(sn, dn, {{"TPR", 32}, {"THREADS", 256}, {"VEC", 2}})));
  CHECK_FALSE(sn.valid(with(sn, dn, {{"TPR", 8}, {"VEC", 8}})));  // 8 does not divide 100
  CHECK(sn.valid(with(sn, dn, {{"TPR", 8}, {"VEC", 4}})));
  std::string why;
  CHECK_FALSE(t->can_implement(narrow, with(sn, dn, {{"TPR", 8}, {"VEC", 8}}), &why));
  CHECK(why.find("VEC=8") != std::string::npos);
  // launch() refuses it too, with the same reason, rather than plan misaligned row reads.
  try {
    t->launch(narrow, with(sn, dn, {{"TPR", 8}, {"VEC", 8}}), dev);
    FAIL("launch planned a config can_implement refuses");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("VEC=8 does not divide cols=100"));
  }
  // A single row may use any width: the tail is done element by element.
  const Problem one = red_problem("1x100", "f16", "max");
  const SearchSpace so = t->space(one, dev);
  CHECK(so.valid(with(so, so.default_config(), {{"TPR", 8}, {"VEC", 8}})));
}

TEST_CASE("reduction defaults are valid for odd shapes", "[reduction]") {
  auto t = make_reduction_template();
  const Device dev = Device::h200();
  for (const char* shape : {"1x268435456", "32768x4096", "1x1", "7x3", "3x10000000", "1000x17",
                            "1x1000003", "65536x1"}) {
    const Problem p = red_problem(shape, "bf16", "mean");
    const SearchSpace s = t->space(p, dev);
    INFO(shape << " " << s.default_config().str());
    CHECK(s.valid(s.default_config()));
    CHECK(t->can_implement(p, s.default_config()));
  }
  // A whole-tensor reduction spreads over the GPU by default.
  const Problem whole = red_problem("1x268435456", "f32", "sum");
  CHECK(t->space(whole, dev).default_config()["SPLIT"] >= 128);
}

TEST_CASE("reduction launch plans: second pass and atomics", "[reduction]") {
  auto t = make_reduction_template();
  const Device dev = Device::h200();
  const Problem p = red_problem("3x1000000", "f32", "max");
  const SearchSpace s = t->space(p, dev);
  const Config base = with(s, s.default_config(), {{"THREADS", 256}, {"TPR", 256}, {"SPLIT", 16}});
  LaunchPlan two = t->launch(p, with(s, base, {{"MULTI", 0}}), dev);
  REQUIRE(two.steps.size() == 2);
  REQUIRE(two.scratch.size() == 1);
  CHECK(two.scratch[0].elements == 3u * 16u);
  CHECK(two.steps[0].grid[1] == 16u);
  CHECK(two.steps[0].args[2].buffer == 2);
  CHECK(two.steps[1].entry == "reduce_partials");
  LaunchPlan atomic = t->launch(p, with(s, base, {{"MULTI", 1}}), dev);
  REQUIRE(atomic.steps.size() == 2);
  CHECK(atomic.steps[0].kind == LaunchStep::Kind::memset);
  CHECK(atomic.steps[0].memset_byte == 0xff);  // max starts below every value
  CHECK(atomic.scratch.empty());
  const Problem mean = red_problem("3x1000000", "f32", "mean");
  LaunchPlan m = t->launch(mean, with(s, base, {{"MULTI", 1}}), dev);
  CHECK(m.steps[0].memset_byte == 0);
  CHECK(m.steps[1].args[5].f == Approx(1e-6));
  LaunchPlan single = t->launch(mean, with(s, base, {{"SPLIT", 1}}), dev);
  CHECK(single.steps.size() == 1);
  CHECK(single.steps[0].grid[0] == 3u);
  // Last block combines: partials plus per-row arrival counters, the counters zeroed first.
  LaunchPlan last = t->launch(p, with(s, base, {{"MULTI", 2}}), dev);
  REQUIRE(last.steps.size() == 2);
  REQUIRE(last.scratch.size() == 2);
  CHECK(last.scratch[0].elements == 3u * 16u);
  CHECK(last.scratch[1].elements == 3u);
  CHECK(last.steps[0].kind == LaunchStep::Kind::memset);
  CHECK(last.steps[0].memset_buffer == 3);
  CHECK(last.steps[0].memset_byte == 0);
  CHECK(last.steps[1].args[2].buffer == 2);
  CHECK(last.steps[1].args[6].buffer == 3);
  CHECK(two.steps[0].args[6].kind == KernelArg::Kind::i64);  // no counters without MULTI 2
}

TEST_CASE("reduction default fills every SM for a whole-tensor sum", "[reduction]") {
  auto t = make_reduction_template();
  const Device dev = Device::h200();
  const Config d = t->space(red_problem("1x268435456", "f32", "sum"), dev).default_config();
  // 132 SMs x 8 resident blocks of 256 threads -> 1024 blocks, 4 loads in flight each, and
  // the last block combining the partials (no second launch).
  CHECK(d["SPLIT"] == 1024);
  CHECK(d["ITEMS"] == 4);
  CHECK(d["MULTI"] == 2);
  CHECK(t->space(red_problem("32768x4096", "f32", "sum"), dev).default_config()["MULTI"] == 0);
}

TEST_CASE("reduction reference matches hand-computed values", "[reduction]") {
  const std::vector<double> x = {1, 2, 3, -4, 5, -6};
  CHECK(red_reference(red_problem("2x3", "f32", "sum"), x) == std::vector<double>{6, -5});
  CHECK(red_reference(red_problem("2x3", "bf16", "max"), x) == std::vector<double>{3, 5});
  const auto mean = red_reference(red_problem("2x3", "f16", "mean"), x);
  CHECK(mean[0] == 2.0);
  CHECK(mean[1] == Approx(-5.0 / 3.0).epsilon(1e-7));
  CHECK(red_reference(red_problem("1x6", "f32", "sum"), x) == std::vector<double>{1});
  auto w = make_reduction_template()->workload(red_problem("2x3", "f16", "sum"));
  CHECK(w->bytes() == 2 * 3 * 2 + 2 * 4);
}

TEST_CASE("reduction spaces compile with NVRTC for sm_90", "[reduction][nvrtc]") {
  auto t = make_reduction_template();
  ktune::test::expect_space_compiles(*t, red_problem("1x268435456", "f32", "sum"), 3, 1);
  ktune::test::expect_space_compiles(*t, red_problem("32768x4096", "f16", "max"), 2, 2);
  ktune::test::expect_space_compiles(*t, red_problem("5x1001", "bf16", "mean"), 2, 3);
}

TEST_CASE("reduction second pass covers every row (8 per block)", "[reduction]") {
  auto t = make_reduction_template();
  const Device dev = Device::h200();
  for (std::int64_t rows : {3, 8, 12, 17}) {
    const Problem p = make_problem(*t, std::to_string(rows) + "x1000000",
                                   {{"dtype", "f32"}, {"fn", "sum"}});
    const SearchSpace s = t->space(p, dev);
    const Config c = with(s, s.default_config(),
                          {{"THREADS", 256}, {"TPR", 256}, {"SPLIT", 16}, {"MULTI", 0}});
    REQUIRE(s.valid(c));
    const LaunchPlan plan = t->launch(p, c, dev);
    REQUIRE(plan.steps.size() == 2);
    INFO(rows);
    CHECK(plan.steps[1].entry == "reduce_partials");
    CHECK(plan.steps[1].block[0] == 256u);  // a warp per row: 8 rows per block
    CHECK(plan.steps[1].grid[0] == static_cast<unsigned>((rows + 7) / 8));
  }
}

TEST_CASE("reduction short-row defaults leave no lane of 8 idle", "[reduction]") {
  auto t = make_reduction_template();
  for (std::int64_t cols : {16, 24, 32, 40, 48, 56}) {
    const Problem p = make_problem(*t, "1000x" + std::to_string(cols),
                                   {{"dtype", "f16"}, {"fn", "sum"}});
    const Config d = t->space(p, Device::h200()).default_config();
    INFO(cols << " " << d.str());
    REQUIRE(d["TPR"] == 8);
    CHECK((d["VEC"] == 1 || 8 * d["VEC"] <= cols));
  }
}
