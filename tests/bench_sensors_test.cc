// The benchmarks' sensor sampling without NVML or without the device: the timed loop still
// runs exactly once and the readings say "unknown" (-1) instead of inventing a clock. Also the
// benchmarks' parsing of numeric flags.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
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

TEST_CASE("an NVML field value is read through the member its value type names",
          "[bench][nvml]") {
  nvml::FieldValue f;
  f.value_type = 1;  // unsigned int: the instantaneous power field's milliwatts
  f.value.ui = 612345;
  CHECK(nvml::field_number(f) == 612345.0);
  f.value_type = 0;
  f.value.d = 0.5;
  CHECK(nvml::field_number(f) == 0.5);
  f.value_type = 3;
  f.value.ull = 1ull << 40;
  CHECK(nvml::field_number(f) == static_cast<double>(1ull << 40));
  f.value_type = 4;
  f.value.sll = -7;
  CHECK(nvml::field_number(f) == -7.0);
  f.value_type = 5;
  f.value.ull = 0;
  f.value.si = -3;
  CHECK(nvml::field_number(f) == -3.0);
  f.value_type = 6;
  f.value.ull = 0;
  f.value.us = 65535;
  CHECK(nvml::field_number(f) == 65535.0);
  f.value_type = 2;
  f.value.ul = 42;
  CHECK(nvml::field_number(f) == 42.0);
  f.value_type = 7;  // not a documented nvmlValueType_t
  CHECK_FALSE(nvml::field_number(f).has_value());
  f.value_type = 1;
  f.nvml_return = 3;  // NVML_ERROR_NOT_SUPPORTED: the driver lacks the field
  CHECK_FALSE(nvml::field_number(f).has_value());
}

TEST_CASE("the benchmarks say which power reading they record", "[bench][nvml]") {
  const nvml::GpuSensor missing("");
  CHECK_FALSE(missing.power_is_instant());
  CHECK(std::string(bench::power_reading_kind(missing)) == "none");
  struct Fake {
    bool present, instant;
    bool available() const { return present; }
    bool power_is_instant() const { return instant; }
  };
  CHECK(std::string(bench::power_reading_kind(Fake{true, true})) == "instantaneous");
  CHECK(std::string(bench::power_reading_kind(Fake{true, false})) == "one-second average");
  CHECK(std::string(bench::power_reading_kind(Fake{false, true})) == "none");
}

namespace {

/// A sensor whose clock rises by 10 MHz per reading (power: clock / 10 W).
struct RampSensor {
  mutable std::atomic<int> reads{0};
  bool available() const { return true; }
  int sm_clock_mhz() const { return 1000 + 10 * reads++; }
  double power_w() const { return 100.0 + reads.load(); }
  double window = 10.0;  // ms
  double power_window_ms() const { return window; }
};

}  // namespace

TEST_CASE("sensor readings are the medians of what was sampled while the loop ran",
          "[bench][nvml]") {
  RampSensor sensor;
  const bench::SensorReading r = bench::sample_sensors(
      sensor, [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); });
  REQUIRE(r.samples >= 5);  // every 2 ms for 60 ms, allowing a slow scheduler
  // Clocks 1000, 1010, ... : the median is the middle reading (the mean of the middle two
  // for an even count), not the first or the last.
  CHECK(r.sm_mhz == 1000 + 10 * (r.samples / 2) - (r.samples % 2 == 0 ? 5 : 0));
  CHECK(r.power_w > 100.0);
  CHECK(r.loop_ms >= 60.0);
  CHECK_THROWS_WITH(bench::sample_sensors(sensor, [] { throw std::runtime_error("late"); }),
                    "late");
}

namespace {

/// A sensor whose power still shows the earlier load (100 W) for its window after the loop
/// starts, then the loop's (700 W), as a trailing average would.
struct LaggingSensor {
  std::chrono::steady_clock::time_point loop_start = std::chrono::steady_clock::now();
  bool available() const { return true; }
  int sm_clock_mhz() const { return 1980; }
  double power_window_ms() const { return 40.0; }
  double power_w() const {
    const double since = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - loop_start).count();
    return since < power_window_ms() ? 100.0 : 700.0;
  }
};

}  // namespace

TEST_CASE("board power counts only readings taken a whole window after the loop started",
          "[bench][nvml]") {
  LaggingSensor sensor;
  sensor.loop_start = std::chrono::steady_clock::now();
  // 60 ms: half of the readings would still be of the earlier load.
  const bench::SensorReading r = bench::sample_sensors(
      sensor, [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); });
  CHECK(r.power_w == 700.0);
  CHECK(r.sm_mhz == 1980);
}

TEST_CASE("round medians of sensor readings skip the rounds that read nothing", "[bench]") {
  CHECK(bench::known_median<double>({-1.0, 700.0}) == 700.0);
  CHECK(bench::known_median<double>({-1.0, -1.0, 700.0, 710.0}) == Approx(705.0));
  CHECK(bench::known_median<double>({-1.0, -1.0}) == -1.0);
  CHECK(bench::known_median<int>({1980, -1, 1755}) == 1867);
}

TEST_CASE("board power is not reported for a loop shorter than the sensor's power window",
          "[bench][nvml]") {
  RampSensor sensor;
  sensor.window = 1000.0;  // the one-second average: a 30 ms loop would show what ran before it
  const bench::SensorReading r = bench::sample_sensors(
      sensor, [] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
  CHECK(r.samples >= 1);
  CHECK(r.sm_mhz >= 1000);  // the clock is still read
  CHECK(r.power_w == -1);
  const nvml::GpuSensor missing("");
  CHECK(missing.power_window_ms() == 1000.0);
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
                    Catch::Contains("a finite number >= 0"));
  // from_chars reads these as numbers; a loop of NaN milliseconds ends after its minimum
  for (const char* bad : {"nan", "inf", "-inf", "infinity"}) {
    INFO(bad);
    CHECK_THROWS_WITH(bench::parse_number<double>("--loop-ms", bad, 1.0),
                      Catch::Contains(std::string("--loop-ms=") + bad));
  }
}
