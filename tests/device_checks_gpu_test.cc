// [gpu] tests of the worker's GPU-side verification (lib/device_checks.*): on the same planted
// faults in every dtype, DeviceChecks::compare and the host's verify::compare must reach the same
// verdict, since on a GPU the host check runs only when the device check reports a problem.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_module.h"
#include "device_checks.h"
#include "gpu_guard.h"
#include "host_dtype.h"
#include "ktune/device.h"
#include "verify.h"

using namespace ktune;

namespace {

/// A host buffer of `n` random values of `t` in [-2, 2] (integers: [-1000, 1000]; u8: [0, 255]),
/// none of them zero, from `seed`.
HostBuffer random_buffer(DType t, std::size_t n, std::uint64_t seed) {
  HostBuffer b{BufferSpec{"out", t, n, Role::output, 0}, std::vector<std::uint8_t>(n * dtype_size(t))};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(0.25, 2.0);
  std::uniform_int_distribution<int> integer(1, 1000);
  for (std::size_t i = 0; i < n; ++i) {
    const double sign = (rng() & 1) ? 1.0 : -1.0;
    double v = 0;
    switch (t) {
      case DType::i32: case DType::i64: v = sign * integer(rng); break;
      case DType::u8: v = 1 + integer(rng) % 255; break;
      default: v = sign * real(rng);
    }
    write_element(b, i, v);
  }
  return b;
}

/// Sets every byte of element i to `byte`.
void set_bytes(HostBuffer& b, std::size_t i, std::uint8_t byte) {
  const std::size_t size = dtype_size(b.spec.dtype);
  for (std::size_t k = 0; k < size; ++k) b.bytes[i * size + k] = byte;
}

/// A quiet NaN that is not the poison pattern, written into element i of a float buffer.
void set_quiet_nan(HostBuffer& b, std::size_t i) {
  write_element(b, i, std::numeric_limits<double>::quiet_NaN());
  REQUIRE_FALSE(verify::is_poison(b.bytes.data(), b.spec.dtype, i));
}

struct Verdicts {
  bool device_ok = false, host_ok = false;
  double device_rel = 0, host_rel = 0;
  std::string host_message;
};

/// Uploads `got` and `expected` and compares them both ways under `tol`, as the worker does
/// (the device verdict: no element flagged and the relative L2 norm within tol.rel_l2).
Verdicts both_ways(worker::DeviceChecks& checks, const HostBuffer& got, const HostBuffer& expected,
                   const Tolerance& tol) {
  detail::DeviceMemory g(got.bytes.size()), e(expected.bytes.size());
  detail::check_cuda(cudaMemcpy(g.get(), got.bytes.data(), got.bytes.size(), cudaMemcpyHostToDevice), "upload");
  detail::check_cuda(cudaMemcpy(e.get(), expected.bytes.data(), expected.bytes.size(), cudaMemcpyHostToDevice), "upload");
  detail::check_cuda(checks.reset(nullptr), "reset");
  detail::check_cuda(checks.compare(g.get(), e.get(), got.spec.dtype, got.spec.elements, tol, 0, nullptr), "compare");
  std::vector<worker::CheckResult> results;
  detail::check_cuda(checks.read(1, nullptr, results), "read");
  REQUIRE(results.size() == 1);
  Verdicts v;
  const auto& r = results[0];
  v.device_rel = r.ref2 > 0 ? std::sqrt(r.diff2 / r.ref2) : std::sqrt(r.diff2);
  v.device_ok = !r.first_bad && v.device_rel <= tol.rel_l2;
  const verify::Comparison c = verify::compare(got, expected, tol);
  v.host_ok = c.ok;
  v.host_rel = c.rel_l2;
  v.host_message = c.message;
  return v;
}

}  // namespace

TEST_CASE("GPU-side verification reaches the host's verdict on planted faults in every dtype",
          "[gpu][worker]") {
  KTUNE_REQUIRE_GPU();
  const Device dev = query_device(0);
  worker::DeviceChecks checks(dev.arch(), 4);
  std::random_device fresh;
  const std::uint64_t seed = (std::uint64_t{fresh()} << 32) | fresh();
  INFO("seed " << seed);
  const std::size_t n = 10007;  // odd: a partial last block and warp
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64, DType::u8}) {
    INFO(to_string(t));
    const bool floating = t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
    const HostBuffer expected = random_buffer(t, n, seed);
    const Tolerance tol = verify::with_element_bound(Tolerance{1e-3, -1, 0}, expected);
    std::mt19937_64 rng(seed + 1);
    const std::size_t at = rng() % n;
    INFO("element " << at);
    auto expect_agree = [&](const HostBuffer& got, bool want_ok, const char* what) {
      INFO(what);
      const Verdicts v = both_ways(checks, got, expected, tol);
      INFO("host: " << v.host_message);
      CHECK(v.host_ok == want_ok);
      CHECK(v.device_ok == want_ok);
      if (v.host_ok && v.device_ok) CHECK(v.device_rel == Approx(v.host_rel).margin(1e-12));
    };
    expect_agree(expected, true, "identical outputs pass");
    if (t != DType::u8) {  // every u8 value is a byte someone may write: no poison check there
      HostBuffer got = expected;
      set_bytes(got, at, verify::poison_byte(t));
      expect_agree(got, false, "one element left unwritten (poison) fails");
    }
    {
      HostBuffer got = expected;
      const double e = read_element(expected, at);
      write_element(got, at, t == DType::u8 ? (e > 128 ? e - 120 : e + 120) : e * 3 + 7);
      expect_agree(got, false, "one element far off, which the L2 norm alone would hide, fails");
    }
    {  // every element off by 1 % relative: within the per-element bound, over rel_l2 1e-3
      HostBuffer got = expected;
      for (std::size_t i = 0; i < n; ++i) write_element(got, i, read_element(expected, i) * 1.01);
      if (floating && t != DType::f16 && t != DType::bf16)  // 16-bit rounding moves it too little to say
        expect_agree(got, false, "a uniform 1 % error over the whole output fails on the norm");
    }
    if (!floating) continue;
    HostBuffer with_nan = expected;
    set_quiet_nan(with_nan, at);
    {
      Verdicts v = both_ways(checks, with_nan, with_nan, tol);
      CHECK(v.host_ok);
      CHECK(v.device_ok);  // a NaN where the reference has one is a match
    }
    {
      HostBuffer got = with_nan;
      set_bytes(got, at, verify::poison_byte(t));
      const Verdicts v = both_ways(checks, got, with_nan, tol);
      INFO("host: " << v.host_message);
      CHECK_FALSE(v.host_ok);
      CHECK_FALSE(v.device_ok);  // an unwritten element over an expected NaN is still unwritten
    }
    {
      const Verdicts v = both_ways(checks, with_nan, expected, tol);
      CHECK_FALSE(v.host_ok);
      CHECK_FALSE(v.device_ok);  // a NaN where the reference is finite
    }
    {
      HostBuffer got = expected;
      write_element(got, at, std::numeric_limits<double>::infinity());
      const Verdicts v = both_ways(checks, got, expected, tol);
      CHECK_FALSE(v.host_ok);
      CHECK_FALSE(v.device_ok);
    }
  }
}
