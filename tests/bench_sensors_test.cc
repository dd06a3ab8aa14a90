// The benchmarks' sensor sampling without NVML or without the device: the timed loop still
// runs exactly once and the readings say "unknown" (-1) instead of inventing a clock. Also the
// benchmarks' parsing of numeric flags.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "benchmarks/gpu_bench_support.h"
#include "nvml.h"

using namespace ktune;

TEST_CASE("sensor readings are -1 and the loop runs once when the GPU cannot be read",
          "[bench][nvml]") {
  const nvml::GpuSensor missing("");  // no PCI bus id: never found
  CHECK_FALSE(missing.available());
  CHECK(missing.sm_clock_mhz() == -1);
  CHECK(missing.temperature_c() == -1);
  CHECK(missing.power_w() == -1);
  int runs = 0;
  const bench::SensorReading r = bench::sample_sensors(missing, [&] { ++runs; });
  CHECK(runs == 1);
  CHECK(r.sm_mhz == -1);
  CHECK(r.power_w == -1);
  CHECK(r.samples == 0);
  // An exception from the loop reaches the caller.
  CHECK_THROWS_WITH(bench::sample_sensors(missing, [] { throw std::runtime_error("boom"); }),
                    "boom");
}

namespace {

/// A sensor whose clock rises by 10 MHz per reading (power: clock / 10 W).
struct RampSensor {
  mutable std::atomic<int> reads{0};
  bool available() const { return true; }
  int sm_clock_mhz() const { return 1000 + 10 * reads++; }
  double power_w() const { return 100.0 + reads.load(); }
};

}  // namespace

TEST_CASE("sensor readings are the medians of what was sampled while the loop ran",
          "[bench][nvml]") {
  RampSensor sensor;
  const bench::SensorReading r = bench::sample_sensors(
      sensor, [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); });
  REQUIRE(r.samples >= 5);  // every 2 ms for 60 ms, allowing a slow scheduler
  // Clocks 1000, 1010, ... : the median is the middle reading, not the first or the last.
  CHECK(r.sm_mhz == 1000 + 10 * (r.samples / 2));
  CHECK(r.power_w > 100.0);
  CHECK_THROWS_WITH(bench::sample_sensors(sensor, [] { throw std::runtime_error("late"); }),
                    "late");
}

TEST_CASE("benchmark flags take whole numbers within bounds and name what was wrong", "[bench]") {
  CHECK(bench::parse_number<std::size_t>("--trials", "40") == 40u);
  CHECK(bench::parse_number<double>("--seconds", "2.5") == 2.5);
  CHECK(bench::parse_number<int>("--runs-per-sample", "10", 1) == 10);
  for (const char* bad : {"", "12abc", "-1", "x", " 3"}) {
    INFO(bad);
    try {
      bench::parse_number<std::size_t>("--trials", bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(std::string("--trials=") + bad));
      CHECK_THAT(e.what(), Catch::Contains("an integer >= 0"));
    }
  }
  CHECK_THROWS_WITH(bench::parse_number<int>("--runs-per-sample", "0", 1),
                    Catch::Contains("--runs-per-sample=0: expected an integer >= 1"));
  CHECK_THROWS_WITH(bench::parse_number<double>("--seconds", "1.5s"),
                    Catch::Contains("a number >= 0"));
}
