// Vendor reference rows: `ktune vendor` records cuBLAS times (by hand or from a GPU benchmark
// result file) as "vendor:cublas" trials, and `ktune best` / `ktune report` show them next to
// the tuned GEMM of the same problem and device with the ratio, never as tasks of their own.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli_fixtures.h"

using namespace ktune;
using ktune::test::run_ktune;
using ktune::test::TempDir;

namespace {

constexpr const char* kDevice = "NVIDIA H200|sm_90|132";

/// A log with two ok trials of gemm_mma on one problem: the default config at 0.02 ms and
/// another valid config at 0.01 ms; returns the problem key.
std::string write_gemm_log(const std::string& path) {
  auto tmpl = find_template("gemm_mma");
  const Problem problem = make_problem(*tmpl, "512x512x512", {{"dtype", "f16"}, {"layout", "NT"}});
  const Device device = Device::h200();
  const SearchSpace space = tmpl->space(problem, device);
  std::mt19937_64 rng(3);
  Config other = space.random(rng);
  while (other == space.default_config()) other = space.random(rng);
  TuningLog log(path, LogMode::read_write);
  std::vector<TrialRecord> records;
  for (auto [config, ms] : {std::pair{space.default_config(), 0.02}, std::pair{other, 0.01}}) {
    Trial t;
    t.config = config;
    t.status = Status::ok;
    t.times_ms = {ms, ms, ms};
    summarize_times(t);
    t.timestamp_us = 1764500000000000;
    records.push_back(TrialRecord::make(*tmpl, problem, device, t, "run-1"));
  }
  log.append_batch(records);
  return problem.key();
}

nlohmann::json best_json(const TempDir& dir, const std::string& db) {
  auto r = run_ktune(dir, "best --json --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.output);
}

}  // namespace

TEST_CASE("cli: vendor times recorded by hand appear as the vendor columns of best and report",
          "[cli][vendor]") {
  TempDir dir;
  const std::string db = dir.file("v.db");
  const std::string key = write_gemm_log(db);

  auto before = best_json(dir, db);
  REQUIRE(before.size() == 1);
  CHECK(before[0]["vendor"] == "cublas");
  CHECK(before[0]["vendor_ms"].is_null());

  auto r = run_ktune(dir, "vendor --db " + db + " --name cublas --problem '" + key + "' --device '" +
                              kDevice + "' --ms 0.0125");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("vendor:cublas") != std::string::npos);

  auto rows = best_json(dir, db);
  REQUIRE(rows.size() == 1);  // the vendor trial is not a task row of its own
  CHECK(rows[0]["template"] == "gemm_mma");
  CHECK(rows[0]["median_ms"].get<double>() == Approx(0.01));
  CHECK(rows[0]["speedup"].get<double>() == Approx(2.0));
  CHECK(rows[0]["vendor_ms"].get<double>() == Approx(0.0125));
  CHECK(rows[0]["vendor_ratio"].get<double>() == Approx(1.25));

  auto table = run_ktune(dir, "best --db " + db);
  CHECK(table.output.find("vendor ms") != std::string::npos);
  CHECK(table.output.find("1.25 cublas") != std::string::npos);
  CHECK(table.output.find("vendor:cublas") == std::string::npos);

  auto report = run_ktune(dir, "report --db " + db + " --out " + dir.file("r.html"));
  REQUIRE(report.status == 0);
  std::ifstream in(dir.file("r.html"));
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.find("<th>vendor</th>") != std::string::npos);
  CHECK(html.find("1.25 of cublas") != std::string::npos);
  CHECK(html.find("<h2>vendor:cublas") == std::string::npos);
}

TEST_CASE("cli: vendor times come from GPU benchmark result files", "[cli][vendor]") {
  TempDir dir;
  const std::string db = dir.file("v.db");
  const std::string key = write_gemm_log(db);
  const std::string bench = dir.file("gpu_gemm.json");
  test::write_text(bench, nlohmann::json{{"device", kDevice},
                                         {"results", {{{"problem", key}, {"cublas_ms", 0.008},
                                                       {"ktune_ms", 0.01}}}}}
                              .dump());
  auto r = run_ktune(dir, "vendor " + bench + " --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("recorded 1 vendor time") != std::string::npos);
  auto rows = best_json(dir, db);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["vendor_ratio"].get<double>() == Approx(0.8));
  {
    TuningLog log(db, LogMode::read_only);
    LogFilter f;
    f.template_name = "vendor:cublas";
    const auto records = log.records(f);
    REQUIRE(records.size() == 1);
    CHECK(records[0].config_text.empty());
    CHECK(records[0].device_key() == kDevice);
  }
}

TEST_CASE("cli: vendor argument errors name what is wrong", "[cli][vendor]") {
  TempDir dir;
  const std::string db = dir.file("v.db");
  SECTION("bad device key") {
    auto r = run_ktune(dir, "vendor --db " + db + " --name cublas --problem 'gemm|M=1,N=1,K=1|' "
                            "--device 'H200' --ms 1");
    CHECK(r.status == 2);
    CHECK(r.output.find("device key \"H200\"") != std::string::npos);
  }
  SECTION("bad vendor name") {
    auto r = run_ktune(dir, "vendor --db " + db + " --name 'cu BLAS' --problem 'gemm|M=1,N=1,K=1|' "
                            "--device '" + std::string(kDevice) + "' --ms 1");
    CHECK(r.status == 2);
    CHECK(r.output.find("vendor name") != std::string::npos);
  }
  SECTION("nothing given") {
    auto r = run_ktune(dir, "vendor --db " + db);
    CHECK(r.status == 2);
    CHECK(r.output.find("--ms") != std::string::npos);
  }
  SECTION("a hand-given time without --ms names that one") {
    auto r = run_ktune(dir, "vendor --db " + db + " --name cublas --problem 'gemm|M=1,N=1,K=1|' "
                            "--device '" + std::string(kDevice) + "'");
    CHECK(r.status == 2);
    CHECK(r.output.find("(missing: --ms)") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(db));
  }
  SECTION("a file that is no benchmark result") {
    test::write_text(dir.file("x.json"), "[1, 2]");
    auto r = run_ktune(dir, "vendor " + dir.file("x.json") + " --db " + db);
    CHECK(r.status == 2);
    CHECK(r.output.find("x.json") != std::string::npos);
  }
}

TEST_CASE("cli: vendor times no table could show are refused, naming why", "[cli][vendor]") {
  TempDir dir;
  const std::string db = dir.file("v.db");
  const std::string complete = "gemm|M=4096,N=4096,K=4096|bias=0,dtype=f16,layout=NT,out=same";
  auto vendor = [&](const std::string& name, const std::string& problem) {
    return run_ktune(dir, "vendor --db " + db + " --name " + name + " --problem '" + problem +
                              "' --device '" + std::string(kDevice) + "' --ms 0.5");
  };
  auto r = vendor("cublas", "gemm|M=4096,N=4096,K=4096|dtype=f16,layout=NT");  // attrs missing
  CHECK(r.status == 2);
  CHECK(r.output.find("not a complete problem") != std::string::npos);
  r = vendor("cublas", "foo|x=1|");
  CHECK(r.status == 2);
  CHECK(r.output.find("no template has op \"foo\"") != std::string::npos);
  r = vendor("torch", complete);
  CHECK(r.status == 2);
  CHECK(r.output.find("cublas") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(db));  // nothing was written
  CHECK(vendor("cublas", complete).status == 0);

  // Benchmark files: a row without a problem and a time that is no number are named; the
  // options of a hand-given time do not go with files.
  test::write_text(dir.file("rows.json"), std::string("{\"device\": \"") + kDevice +
                                              "\", \"results\": [{\"cublas_ms\": 1.0}]}");
  r = run_ktune(dir, "vendor --db " + db + " " + dir.file("rows.json"));
  CHECK(r.status == 2);
  CHECK(r.output.find("results[0]") != std::string::npos);
  test::write_text(dir.file("text.json"), std::string("{\"device\": \"") + kDevice +
                                              "\", \"results\": [{\"problem\": \"" + complete +
                                              "\", \"cublas_ms\": \"0.5\"}]}");
  r = run_ktune(dir, "vendor --db " + db + " " + dir.file("text.json"));
  CHECK(r.status == 2);
  CHECK(r.output.find("not a number") != std::string::npos);
  r = run_ktune(dir, "vendor --db " + db + " " + dir.file("text.json") + " --ms 9");
  CHECK(r.status == 2);
  CHECK(r.output.find("not both") != std::string::npos);
}

TEST_CASE("cli: copy and plain-named vendor records, typical copy trials, unusual names",
          "[cli][vendor]") {
  TempDir dir;
  const std::string db = dir.file("v.db");
  const std::string key = write_gemm_log(db);
  // "copy" is computed from the log's copy trials, never recorded: refused, by hand or in a
  // benchmark file (a copy_ms row is a row without a reference time).
  const std::string ln_key = "layernorm|rows=8192,hidden=4096|dtype=f16,norm=layernorm";
  auto r = run_ktune(dir, "vendor --db " + db + " --name copy --problem '" + ln_key +
                              "' --device '" + kDevice + "' --ms 0.01");
  CHECK(r.status == 2);
  CHECK(r.output.find("not a library") != std::string::npos);
  test::write_text(dir.file("membound.json"),
                   nlohmann::json{{"device", kDevice},
                                  {"results", {{{"problem", ln_key}, {"copy_ms", 0.2}}}}}
                       .dump());
  r = run_ktune(dir, "vendor " + dir.file("membound.json") + " --db " + db);
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK(r.output.find("no row with a problem and its reference time") != std::string::npos);
  {
    LogFilter f;
    f.template_name = "vendor:copy";
    CHECK(TuningLog(db, LogMode::read_only).count(f) == 0);
  }

  {
    TuningLog log(db, LogMode::read_write);
    // A vendor time under the plain name older logs used: the vendor column, not a task.
    auto legacy = log.records().front();
    legacy.template_name = "cublas";
    legacy.config_text = "";
    legacy.trial.config = Config();
    legacy.trial.median_ms = 0.0125;
    legacy.trial.times_ms = {0.0125};
    legacy.source_hash = "";
    log.append(legacy);
    // A copy task whose best config has trials of 1.0, 1.1, 1.2 and 1.3 ms: typical 1.1 ms.
    auto copy = find_template("copy");
    const Problem problem = make_problem(*copy, "1048576", {{"dtype", "f32"}});
    const Config best = copy->space(problem, Device::h200()).default_config();
    for (double ms : {1.3, 1.0, 1.2, 1.1}) {
      Trial t;
      t.config = best;
      t.status = Status::ok;
      t.times_ms = {ms};
      summarize_times(t);
      t.timestamp_us = 1764500000000000 + static_cast<std::int64_t>(ms * 1000);
      log.append(TrialRecord::make(*copy, problem, Device::h200(), t, "copy-run"));
    }
  }
  const auto rows = best_json(dir, db);
  REQUIRE(rows.size() == 2);  // gemm_mma and copy; the "cublas" record is no task of its own
  for (const auto& row : rows) {
    if (row["template"] == "gemm_mma") {
      CHECK(row["vendor_ms"].get<double>() == Approx(0.0125));
    } else {
      REQUIRE(row["template"] == "copy");
      CHECK(row["median_ms"].get<double>() == Approx(1.1));
      // Judged by the same typical trial, the copy row is exactly its own reference.
      CHECK(row["vendor_ms"].get<double>() == Approx(1.1));
      CHECK(row["vendor_ratio"].get<double>() == Approx(1.0));
    }
  }
  (void)key;
}

TEST_CASE("cli: best --json answers for names that are not UTF-8, list --arch sm_80 finishes",
          "[cli]") {
  TempDir dir;
  const std::string db = dir.file("u.db");
  {
    TuningLog log(db, LogMode::read_write);
    auto tmpl = find_template("copy");
    const Problem problem = make_problem(*tmpl, "4096", {{"dtype", "f32"}});
    Trial t;
    t.config = tmpl->space(problem, Device::h200()).default_config();
    t.status = Status::ok;
    t.times_ms = {0.5};
    summarize_times(t);
    auto record = TrialRecord::make(*tmpl, problem, Device::h200(), t, "r");
    record.template_name = "bad\xff" "name";  // as an import with --template may store it
    log.append(record);
  }
  const auto rows = best_json(dir, db);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["template"].get<std::string>() == "bad\xEF\xBF\xBDname");  // U+FFFD

  auto list = run_ktune(dir, "list --arch sm_80");
  INFO(list.output);
  CHECK(list.status == 0);
  CHECK(list.output.find("not available on sm_80") != std::string::npos);  // the sm_90a ones
  CHECK(list.output.find("bayesian") != std::string::npos);  // the searchers still follow
}
