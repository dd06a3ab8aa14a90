// Helpers shared by the tuning-log and dispatcher tests: temporary directories, synthetic
// trial records, a field-by-field record comparison (NaN equals NaN), and SQL run on a log
// file behind ktune's back.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "ktune/log.h"

namespace ktune::test {

/// A fresh empty directory under the system temp dir, removed when the object dies.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("ktune-db-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  /// A file path inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
};

/// The device used by synthetic records.
inline Device test_device(const std::string& name = "NVIDIA H200", int sm = 132, int major = 9,
                          int minor = 0) {
  Device d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sm;
  d.driver_version = 13000;
  return d;
}

/// A synthetic record with every field set to something distinctive.
inline TrialRecord make_record(const std::string& config_text, double median_ms,
                               Status status = Status::ok, const std::string& run_id = "run-a",
                               const std::string& problem_key = "copy|n=1024|dtype=f32",
                               const std::string& template_name = "copy",
                               const Device& device = test_device()) {
  TrialRecord r;
  r.template_name = template_name;
  r.source_hash = "00ff00ff00ff00ff";
  r.problem_key = problem_key;
  r.device = device;
  r.ktune_version = "0.1.0";
  r.nvrtc_version = "13.0";
  r.run_id = run_id;
  r.config_text = config_text;
  Trial& t = r.trial;
  t.config = parse_config_text(config_text);
  t.status = status;
  t.message = status == Status::ok ? "" : "failed: \"quoted\"\nsecond line";
  t.times_ms = {median_ms * 1.01, median_ms, median_ms * 0.99, 0.1 + 0.2};
  t.median_ms = median_ms;
  t.min_ms = median_ms * 0.99;
  t.spread = 1.0 / 3.0;
  t.error_norm = status == Status::ok ? 1e-7 : std::nan("");
  t.resources = Resources{32, 1024, 0, 0, 8, 360};
  t.compile_ms = 123.456789;
  t.wall_ms = 7.25;
  t.sm_clock_mhz = 1980;
  t.temperature_c = 41;
  t.timestamp_us = 1764512345678901;
  t.launch = status == Status::ok ? LaunchForm::programmatic : LaunchForm::unknown;
  return r;
}

/// True when two doubles are equal or both NaN.
inline bool same_double(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

/// Checks every stored field of two records (the row id excepted).
inline void require_same_record(const TrialRecord& a, const TrialRecord& b) {
  CHECK(a.template_name == b.template_name);
  CHECK(a.source_hash == b.source_hash);
  CHECK(a.problem_key == b.problem_key);
  CHECK(a.device.name == b.device.name);
  CHECK(a.device.cc_major == b.device.cc_major);
  CHECK(a.device.cc_minor == b.device.cc_minor);
  CHECK(a.device.sm_count == b.device.sm_count);
  CHECK(a.device.driver_version == b.device.driver_version);
  CHECK(a.ktune_version == b.ktune_version);
  CHECK(a.nvrtc_version == b.nvrtc_version);
  CHECK(a.run_id == b.run_id);
  CHECK(a.config_text == b.config_text);
  CHECK(a.trial.config == b.trial.config);
  CHECK(a.trial.status == b.trial.status);
  CHECK(a.trial.message == b.trial.message);
  REQUIRE(a.trial.times_ms.size() == b.trial.times_ms.size());
  for (std::size_t i = 0; i < a.trial.times_ms.size(); ++i)
    CHECK(same_double(a.trial.times_ms[i], b.trial.times_ms[i]));
  CHECK(same_double(a.trial.median_ms, b.trial.median_ms));
  CHECK(same_double(a.trial.min_ms, b.trial.min_ms));
  CHECK(same_double(a.trial.spread, b.trial.spread));
  CHECK(same_double(a.trial.error_norm, b.trial.error_norm));
  CHECK(a.trial.resources.registers == b.trial.resources.registers);
  CHECK(a.trial.resources.shared_bytes == b.trial.resources.shared_bytes);
  CHECK(a.trial.resources.spill_stores == b.trial.resources.spill_stores);
  CHECK(a.trial.resources.spill_loads == b.trial.resources.spill_loads);
  CHECK(a.trial.resources.stack_bytes == b.trial.resources.stack_bytes);
  CHECK(a.trial.resources.const_bytes == b.trial.resources.const_bytes);
  CHECK(same_double(a.trial.compile_ms, b.trial.compile_ms));
  CHECK(same_double(a.trial.wall_ms, b.trial.wall_ms));
  CHECK(a.trial.sm_clock_mhz == b.trial.sm_clock_mhz);
  CHECK(a.trial.temperature_c == b.trial.temperature_c);
  CHECK(a.trial.timestamp_us == b.trial.timestamp_us);
  CHECK(a.trial.launch == b.trial.launch);
}

/// Runs `sql` on the SQLite file at `path` directly, as a hand edit or another program would.
inline void raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

/// Appends `record` to the log at `path` as a hand edit or another program could leave it: its
/// config text goes in through SQL, past the checks TuningLog::append applies (a config text
/// that does not parse strictly). Returns the row id.
inline std::int64_t append_edited(const std::string& path, TrialRecord record) {
  const std::string text = record.config_text;
  record.config_text.clear();
  record.trial.config = Config();
  std::int64_t id = 0;
  {
    TuningLog log(path);
    id = log.append(record);
  }
  std::string quoted;
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  raw_sql(path, "UPDATE trials SET config = '" + quoted + "' WHERE id = " + std::to_string(id));
  return id;
}

}  // namespace ktune::test
