// Tests of the "layernorm" template without a GPU: problem checks (hidden range, dtypes),
// every constraint of its space, valid defaults, launch plans, the CPU reference against
// hand-computed rows, the large-mean rows of the fill, and NVRTC compiles for sm_90.
#include <catch2/catch.hpp>

#include <cmath>

#include "builtin_templates.h"
#include "ktune/error.h"
#include "memory_bound_test_util.h"

using namespace ktune;
using ktune::test::with;

namespace {

Problem ln_problem(const std::string& shape, const std::string& dtype, const std::string& norm) {
  return make_problem(*make_layernorm_template(), shape, {{"dtype", dtype}, {"norm", norm}});
}

}  // namespace

TEST_CASE("layernorm check_problem rejects bad problems", "[layernorm]") {
  auto t = make_layernorm_template();
  CHECK_THROWS_AS(ln_problem("4x32", "f32", "layernorm"), Error);      // hidden < 64
  CHECK_THROWS_AS(ln_problem("4x65537", "f32", "layernorm"), Error);   // hidden > 65536
  CHECK_THROWS_AS(ln_problem("4x128", "f64", "layernorm"), Error);
  CHECK_THROWS_AS(ln_problem("4x128", "f32", "batchnorm"), Error);
  CHECK_NOTHROW(ln_problem("1x64", "bf16", "rmsnorm"));
  CHECK_NOTHROW(ln_problem("1x65536", "f32", "layernorm"));
  CHECK_NOTHROW(t->check_problem(t->example_problem()));
}

TEST_CASE("layernorm constraints reject what they should", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  const Problem p = ln_problem("1024x4096", "f16", "layernorm");
  const SearchSpace s = t->space(p, dev);
  const Config d = s.default_config();
  REQUIRE(s.valid(d));
  CHECK(d["ROW_MODE"] == 0);  // 4096 halves fit in registers
  const Config reg = with(s, d, {{"THREADS", 512}, {"TPR", 512}, {"VEC", 8}, {"ROW_MODE", 0}});
  REQUIRE(s.valid(reg));
  CHECK_FALSE(s.valid(with(s, reg, {{"TPR", 1024}})));           // TPR <= THREADS
  CHECK_FALSE(s.valid(with(s, reg, {{"THREADS", 1024}, {"TPR", 1024}})));  // 1024 * 8 > 4096
  CHECK(s.valid(with(s, reg, {{"THREADS", 1024}, {"TPR", 1024}, {"VEC", 4}})));
  // 4096 / 8 lanes = 512 values per thread: far beyond the register budget.
  CHECK_FALSE(s.valid(with(s, reg, {{"TPR", 8}})));
  CHECK(s.valid(with(s, reg, {{"TPR", 8}, {"ROW_MODE", 2}})));
  // Shared memory: 64 rows x 4096 halves = 512 KiB per block does not fit.
  CHECK_FALSE(s.valid(with(s, reg, {{"TPR", 8}, {"ROW_MODE", 1}})));
  CHECK(s.valid(with(s, reg, {{"TPR", 128}, {"ROW_MODE", 1}})));  // 4 rows: 32 KiB
  // VEC must divide hidden.
  const Problem odd = ln_problem("3x100", "f16", "rmsnorm");
  const SearchSpace so = t->space(odd, dev);
  REQUIRE(so.valid(so.default_config()));
  CHECK(so.default_config()["VEC"] == 4);
  CHECK_FALSE(so.valid(with(so, so.default_config(), {{"VEC", 8}})));
  std::string why;
  CHECK_FALSE(t->can_implement(odd, with(so, so.default_config(), {{"VEC", 8}}), &why));
  CHECK(why.find("hidden=100") != std::string::npos);
  // RMSNorm has no statistics choice.
  CHECK(so.params()[so.find("STATS").value()].values == std::vector<Value>{0});
  // f32 rows of 65536 never fit shared memory (256 KiB); registers need > 64 per thread.
  const Problem big = ln_problem("64x65536", "f32", "layernorm");
  const SearchSpace sb = t->space(big, dev);
  CHECK(sb.default_config()["ROW_MODE"] == 2);
  CHECK_FALSE(sb.valid(with(sb, sb.default_config(), {{"THREADS", 1024}, {"TPR", 1024}, {"ROW_MODE", 1}})));
  CHECK_FALSE(sb.valid(with(sb, sb.default_config(), {{"THREADS", 1024}, {"TPR", 1024}, {"ROW_MODE", 0}})));
  CHECK(t->space(ln_problem("64x65536", "f16", "layernorm"), dev).default_config()["ROW_MODE"] == 1);
}

TEST_CASE("layernorm defaults are valid for the benchmark and odd shapes", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  for (const char* shape : {"32768x1024", "32768x4096", "8192x16384", "4096x65536", "1x64",
                            "3x65", "5x1000", "2x12288"})
    for (const char* dtype : {"f32", "f16", "bf16"})
      for (const char* norm : {"layernorm", "rmsnorm"}) {
        const Problem p = ln_problem(shape, dtype, norm);
        const SearchSpace s = t->space(p, dev);
        INFO(p.key() << " " << s.default_config().str());
        CHECK(s.valid(s.default_config()));
        CHECK(t->can_implement(p, s.default_config()));
      }
}

TEST_CASE("layernorm launch plans", "[layernorm]") {
  auto t = make_layernorm_template();
  const Device dev = Device::h200();
  const Problem p = ln_problem("1000x2048", "bf16", "layernorm");
  const SearchSpace s = t->space(p, dev);
  const Config c = with(s, s.default_config(), {{"THREADS", 256}, {"TPR", 64}, {"ROW_MODE", 1}});
  const LaunchPlan plan = t->launch(p, c, dev);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].grid[0] == 250u);  // 4 rows per block
  CHECK(plan.steps[0].dynamic_smem == 4u * 2048u * 2u);
  CHECK(plan.steps[0].args.size() == 8);
  CHECK(plan.steps[0].args[4].buffer == 4);  // mean
  const Problem r = ln_problem("1000x2048", "bf16", "rmsnorm");
  const LaunchPlan rp = t->launch(r, with(s, c, {{"ROW_MODE", 0}}), dev);
  CHECK(rp.steps[0].dynamic_smem == 0u);
  CHECK(rp.steps[0].args[2].kind == KernelArg::Kind::i64);  // no beta
  CHECK(rp.steps[0].args[5].buffer == 3);                   // rstd
  const std::vector<std::string> want = {"-DKT_DTYPE=2", "-DKT_NORM=1", "-DKT_HIDDEN=2048"};
  CHECK(t->problem_defines(r) == want);
}

TEST_CASE("layernorm reference matches hand-computed rows", "[layernorm]") {
  auto t = make_layernorm_template();
  // One row alternating 1, 3: mean 2, variance 1; gamma 2, beta 0.5.
  auto w = t->workload(ln_problem("1x64", "f32", "layernorm"));
  auto b = ktune::test::host_buffers(*w);
  REQUIRE(b.size() == 6);
  std::vector<double> x(64), gamma(64, 2.0), beta(64, 0.5);
  for (int i = 0; i < 64; ++i) x[i] = i % 2 ? 3.0 : 1.0;
  ktune::test::set_values(b[0], x);
  ktune::test::set_values(b[1], gamma);
  ktune::test::set_values(b[2], beta);
  w->reference(b);
  const double rstd = 1.0 / std::sqrt(1.0 + 1e-5);
  CHECK(read_element(b[4], 0) == 2.0);
  CHECK(read_element(b[5], 0) == Approx(rstd).epsilon(1e-7));
  CHECK(read_element(b[3], 0) == Approx(-2.0 * rstd + 0.5).epsilon(1e-7));
  CHECK(read_element(b[3], 1) == Approx(2.0 * rstd + 0.5).epsilon(1e-7));
  // RMSNorm of alternating 2, -2: mean square 4.
  auto wr = t->workload(ln_problem("1x64", "f32", "rmsnorm"));
  auto br = ktune::test::host_buffers(*wr);
  REQUIRE(br.size() == 4);
  for (int i = 0; i < 64; ++i) x[i] = i % 2 ? -2.0 : 2.0;
  ktune::test::set_values(br[0], x);
  ktune::test::set_values(br[1], gamma);
  wr->reference(br);
  const double rrms = 1.0 / std::sqrt(4.0 + 1e-5);
  CHECK(read_element(br[3], 0) == Approx(rrms).epsilon(1e-7));
  CHECK(read_element(br[2], 0) == Approx(4.0 * rrms).epsilon(1e-7));
  CHECK(read_element(br[2], 1) == Approx(-4.0 * rrms).epsilon(1e-7));
}

TEST_CASE("layernorm fill has large-mean rows and no zeros", "[layernorm]") {
  auto t = make_layernorm_template();
  auto w = t->workload(ln_problem("8x256", "f32", "layernorm"));
  auto b = ktune::test::host_buffers(*w);
  w->fill(b, 11);
  w->reference(b);
  for (int r = 0; r < 8; ++r) {
    const double mean = read_element(b[4], static_cast<std::size_t>(r));
    const double rstd = read_element(b[5], static_cast<std::size_t>(r));
    if (r % 4 == 3) {
      CHECK(std::abs(mean - 256.0) < 0.1);  // large mean ...
      CHECK(rstd > 2.0);                    // ... and a spread below 0.5
    } else {
      CHECK(std::abs(mean) < 10.0);
    }
  }
  for (double v : ktune::test::values_of(b[0])) REQUIRE(v != 0.0);
  for (double v : ktune::test::values_of(b[1])) REQUIRE(v != 0.0);
  CHECK(w->bytes() == 2.0 * 8 * 256 * 4 + 2.0 * 256 * 4 + 2.0 * 8 * 4);
}

TEST_CASE("layernorm spaces compile with NVRTC for sm_90", "[layernorm][nvrtc]") {
  auto t = make_layernorm_template();
  ktune::test::expect_space_compiles(*t, ln_problem("32768x4096", "f16", "layernorm"), 3, 1);
  ktune::test::expect_space_compiles(*t, ln_problem("4096x65536", "f32", "layernorm"), 2, 2);
  ktune::test::expect_space_compiles(*t, ln_problem("5x1000", "bf16", "rmsnorm"), 2, 3);
  ktune::test::expect_space_compiles(*t, ln_problem("8192x16384", "f16", "rmsnorm"), 1, 4);
}
