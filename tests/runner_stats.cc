// CPU tests of the runner's arithmetic: sample statistics and the noise verdict, timing plans
// (repetitions, L2 policy), host-side verification of outputs, canaries and inputs, and the
// classification of CUDA errors into trial statuses.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <cuda_runtime_api.h>

#include "stats.h"
#include "timing.h"
#include "verify.h"
#include "worker_faults.h"

using namespace ktune;

TEST_CASE("stats: median, min, spread and quantiles of unsorted samples", "[runner]") {
  std::vector<double> s{5, 1, 4, 2, 3};
  CHECK(stats::median(s) == 3);
  CHECK(stats::minimum(s) == 1);
  CHECK(stats::quantile(s, 0.25) == 2);
  CHECK(stats::relative_spread(s) == Approx((4.6 - 1.4) / 3));
  CHECK(stats::median({}) == 0);
  CHECK(stats::relative_spread({7}) == 0);
  CHECK(stats::relative_range({100, 101, 99}) == Approx(2.0 / 99));
}

TEST_CASE("stats: two candidates 0.2% apart with 2% round noise are within noise", "[runner]") {
  auto v = stats::compare_rounds({1.00, 1.02, 0.99}, {1.002, 0.995, 1.021});
  CHECK(v.within_noise);
  auto w = stats::compare_rounds({1.00, 1.001, 0.999}, {1.20, 1.21, 1.19});
  CHECK_FALSE(w.within_noise);
  CHECK(w.difference == Approx(0.2));
  // The noise is the mean of the two relative spreads (each a p10..p90 width over the median),
  // not below the floor; a difference just inside it is within noise, just outside is not.
  const std::vector<double> a{1.00, 1.04, 0.96, 1.00, 1.00}, b{2.00, 2.00, 2.00, 2.00, 2.00};
  const double half = 0.5 * (stats::relative_spread(a) + stats::relative_spread(b));
  REQUIRE(half > 0.01);
  const auto at = stats::compare_rounds(a, b, 0.0);
  CHECK(at.noise == Approx(half));
  auto shifted = [&](double d) {
    std::vector<double> c;
    for (double x : b) c.push_back(x / 2 * (1 + d));
    return stats::compare_rounds(a, c, 0.0);
  };
  CHECK(shifted(0.95 * half).within_noise);
  CHECK_FALSE(shifted(1.05 * half).within_noise);
  CHECK(stats::compare_rounds(a, b, 0.5).noise == 0.5);  // the floor
}

TEST_CASE("timing: repetitions fill the minimum time within the bounds", "[runner]") {
  TimingOptions o;  // 50 ms, 10..1000 reps
  o.runs_per_sample = 1;
  timing::TimingPlan p;
  timing::plan_repetitions(p, o, 0.1);  // 100 us kernel -> 500 reps
  CHECK(p.reps == 500);
  timing::plan_repetitions(p, o, 0.001);  // 1 us -> capped
  CHECK(p.reps == 1000);
  timing::plan_repetitions(p, o, 100);  // 100 ms -> minimum count
  CHECK(p.reps == 10);
  CHECK(p.warmup >= o.min_warmup);
  CHECK(p.planned_ms == Approx(100.0 * (p.reps + p.warmup)));
}

TEST_CASE("timing: a NaN estimate or option time plans the fewest runs, never undefined counts",
          "[runner]") {
  TimingOptions o;  // 10..1000 reps, at least 2 warm-up runs
  timing::TimingPlan p;
  timing::plan_repetitions(p, o, std::nan(""));
  CHECK(p.reps * p.runs_per_sample >= o.min_reps);
  CHECK(p.reps * p.runs_per_sample <= o.max_reps);
  CHECK(p.warmup >= o.min_warmup);
  o.min_time_ms = std::nan("");
  o.warmup_ms = std::nan("");
  timing::plan_repetitions(p, o, 0.1);
  CHECK(p.reps * p.runs_per_sample == o.min_reps);
  CHECK(p.warmup == o.min_warmup);
  o.min_time_ms = 1e300;  // beyond int: the cap
  timing::plan_repetitions(p, o, 1e-300);
  CHECK(p.reps * p.runs_per_sample <= o.max_reps);
}

TEST_CASE("timing: back-to-back runs per sample keep at least min_reps samples", "[runner]") {
  TimingOptions o;  // 50 ms, 10..1000 reps
  o.runs_per_sample = 10;
  timing::TimingPlan p;
  timing::plan_repetitions(p, o, 0.1);  // 500 runs -> 50 samples of 10
  CHECK(p.runs_per_sample == 10);
  CHECK(p.reps == 50);
  CHECK(p.planned_ms == Approx(0.1 * (500 + p.warmup)));
  timing::plan_repetitions(p, o, 2.0);  // 25 runs: 10 samples needed -> 2 runs per sample
  CHECK(p.runs_per_sample == 2);
  CHECK(p.reps == 12);
  timing::plan_repetitions(p, o, 100);  // long kernel: one run per sample, as without batching
  CHECK(p.runs_per_sample == 1);
  CHECK(p.reps == 10);
  o.runs_per_sample = 1;
  timing::plan_repetitions(p, o, 0.1);
  CHECK(p.runs_per_sample == 1);
  CHECK(p.reps == 500);
  // Work between runs: the same 500 runs, each timed alone.
  o.runs_per_sample = 10;
  timing::plan_repetitions(p, o, 0.1);
  const double planned = p.planned_ms;
  timing::one_run_per_sample(p);
  CHECK(p.runs_per_sample == 1);
  CHECK(p.reps == 500);
  CHECK(p.planned_ms == planned);
}

TEST_CASE("timing: automatic L2 policy rotates small buffers and leaves large ones", "[runner]") {
  const std::size_t l2 = 50u << 20;
  TimingOptions o;
  auto small = timing::make_plan(o, 0.01, 8u << 20, l2);  // 8 MiB: rotate over >= 100 MiB
  CHECK(small.l2 == L2Policy::rotate);
  CHECK(small.buffer_sets * (8u << 20) >= 2 * l2);
  auto large = timing::make_plan(o, 1, 512u << 20, l2);
  CHECK(large.l2 == L2Policy::none);
  CHECK(large.buffer_sets == 1);
  auto tiny = timing::make_plan(o, 0.001, 4096, l2);  // would need thousands of copies
  CHECK(tiny.l2 == L2Policy::flush);
  o.l2 = L2Policy::flush;
  CHECK(timing::make_plan(o, 1, 8u << 20, l2).l2 == L2Policy::flush);
}

namespace {
HostBuffer floats(const std::string& name, std::vector<float> v) {
  HostBuffer b;
  b.spec = BufferSpec{name, DType::f32, v.size(), Role::output, 0};
  b.bytes.resize(v.size() * 4);
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}
}  // namespace

TEST_CASE("verify: outputs within tolerance pass and report their error norm", "[runner]") {
  auto ref = floats("y", {1, 2, 3, 4});
  auto got = floats("y", {1, 2, 3, 4.000001f});
  auto c = verify::compare(got, ref, Tolerance{1e-5});
  CHECK(c.ok);
  CHECK(c.rel_l2 > 0);
  CHECK(c.rel_l2 < 1e-6);
}

TEST_CASE("verify: the element bound catches a few wrong elements the L2 norm hides", "[runner]") {
  // A 2048^2-element output with the tolerance of an f16 GEMM (rel_l2 2.2e-3).
  const std::size_t n = std::size_t{1} << 22;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> ref_values(n), near(n);
  for (std::size_t i = 0; i < n; ++i) {
    ref_values[i] = normal(rng);
    // rounding as an f16 output would: relative error up to 2^-11
    near[i] = ref_values[i] * (1.0f + std::ldexp(static_cast<float>(i % 3) - 1.0f, -11));
  }
  const auto ref = floats("c", ref_values);
  const Tolerance tol{2.2e-3};
  const Tolerance bounded = verify::with_element_bound(tol, ref);
  CHECK(bounded.rel_l2 == tol.rel_l2);
  CHECK(bounded.rel_elem == Approx(verify::kElementBoundFactor * 2.2e-3));
  CHECK(bounded.max_abs == Approx(verify::kElementBoundFactor * 2.2e-3 * 3.0).epsilon(0.01));
  // Rounding-size errors everywhere pass both ways.
  CHECK(verify::compare(floats("c", near), ref, tol).ok);
  CHECK(verify::compare(floats("c", near), ref, bounded).ok);
  // Three elements replaced by garbage (a race in an epilogue, a tile corner written twice):
  // the norm moves to ~1.8e-3, under the tolerance; the element bound names the first.
  std::vector<float> broken = near;
  for (std::size_t i : {std::size_t{12345}, std::size_t{600000}, n - 1}) broken[i] = ref_values[i] + 6.0f;
  const auto hidden = verify::compare(floats("c", broken), ref, tol);
  CHECK(hidden.ok);
  const auto caught = verify::compare(floats("c", broken), ref, bounded);
  CHECK_FALSE(caught.ok);
  CHECK_THAT(caught.message, Catch::Contains("c[12345]"));
  // A workload's own per-element bound is kept; an all-zero reference gets none (the norm is
  // absolute there).
  CHECK(verify::with_element_bound(Tolerance{1e-3, 0.5, 0.1}, ref).max_abs == 0.5);
  CHECK(verify::with_element_bound(tol, floats("z", std::vector<float>(16, 0.0f))).max_abs < 0);
}

TEST_CASE("verify: a wrong value, a NaN and an unwritten element are named", "[runner]") {
  auto ref = floats("y", {1, 2, 3, 4});
  auto wrong = verify::compare(floats("y", {1, 2, 3.5f, 4}), ref, Tolerance{1e-5});
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.message.find("relative L2 error") != std::string::npos);
  CHECK(wrong.rel_l2 == Approx(0.5 / std::sqrt(30.0)));

  auto nan = verify::compare(floats("y", {1, NAN, 3, 4}), ref, Tolerance{1e-5});
  CHECK_FALSE(nan.ok);
  CHECK(nan.message.find("non-finite value in y at element 1") != std::string::npos);

  auto unwritten = floats("y", {1, 2, 3, 4});
  std::memset(unwritten.bytes.data() + 8, verify::poison_byte(DType::f32), 4);
  auto u = verify::compare(unwritten, ref, Tolerance{1e-5});
  CHECK_FALSE(u.ok);
  CHECK(u.message == "element 2 of y was never written");
}

TEST_CASE("verify: per-element bound catches one bad element the L2 norm would hide", "[runner]") {
  std::vector<float> r(1000, 1.0f), g(1000, 1.0f);
  g[500] = 1.01f;
  auto c = verify::compare(floats("y", g), floats("y", r), Tolerance{1e-2, 1e-3, 0});
  CHECK_FALSE(c.ok);
  CHECK(c.message.find("y[500]") != std::string::npos);
}

TEST_CASE("verify: f16 and bf16 elements decode exactly", "[runner]") {
  auto half = [](std::uint16_t bits) { return verify::element(reinterpret_cast<const std::uint8_t*>(&bits), DType::f16, 0); };
  auto bf16 = [](std::uint16_t bits) { return verify::element(reinterpret_cast<const std::uint8_t*>(&bits), DType::bf16, 0); };
  CHECK(half(0x3C00) == 1.0);
  CHECK(half(0xC000) == -2.0);
  CHECK(half(0x0001) == std::ldexp(1.0, -24));
  CHECK(half(0x7BFF) == 65504.0);
  CHECK(std::isinf(half(0xFC00)));
  CHECK(std::isnan(half(0xFFFF)));
  CHECK(bf16(0x3F80) == 1.0);
  CHECK(std::isnan(bf16(0xFFFF)));
  CHECK(verify::poison_byte(DType::i32) != verify::poison_byte(DType::f32));
}

TEST_CASE("verify: canaries and input changes are located", "[runner]") {
  std::vector<std::uint8_t> guard(64, verify::kCanaryByte);
  CHECK_FALSE(verify::first_bad_canary(guard.data(), guard.size()));
  guard[17] = 0;
  CHECK(verify::first_bad_canary(guard.data(), guard.size()) == std::optional<std::size_t>(17));
  std::vector<std::uint8_t> a(100, 1), b(100, 1);
  CHECK_FALSE(verify::first_difference(a.data(), b.data(), 100));
  b[42] = 2;
  CHECK(verify::first_difference(a.data(), b.data(), 100) == std::optional<std::size_t>(42));
}

TEST_CASE("worker faults: sticky CUDA errors lose the context, launch errors do not", "[runner]") {
  auto illegal = worker::classify_cuda_error(cudaErrorIllegalAddress, "running k");
  CHECK(illegal.status == Status::runtime_error);
  CHECK(illegal.context_lost);
  CHECK(illegal.message.find("cudaErrorIllegalAddress") != std::string::npos);
  CHECK(illegal.message.rfind("running k: ", 0) == 0);
  for (auto code : {cudaErrorLaunchFailure, cudaErrorMisalignedAddress, cudaErrorAssert})
    CHECK(worker::is_sticky_cuda_error(code));
  auto resources = worker::classify_cuda_error(cudaErrorLaunchOutOfResources, "launch");
  CHECK(resources.status == Status::launch_error);
  CHECK_FALSE(resources.context_lost);
  CHECK(worker::classify_cuda_error(cudaErrorInvalidConfiguration, "launch").status ==
        Status::launch_error);
  CHECK(worker::classify_cuda_error(cudaErrorInvalidValue, "smem").status == Status::launch_error);
}
