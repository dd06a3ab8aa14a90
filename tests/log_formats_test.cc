// Import/export of tuning logs: lossless JSON-lines and T4 round trips, foreign T4 results,
// Kernel Tuner caches (the real benchmark-hub files), and malformed input that is reported
// with file, line and field while the log stays untouched.
#include <algorithm>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <thread>

#include "jsonl_format.h"
#include "ktune/error.h"
#include "log_fixtures.h"
#include "t4_format.h"

using namespace ktune;
using ktune::test::make_record;

namespace {

std::vector<TrialRecord> sample_records() {
  return {
      make_record("BLOCK=128,VEC=1", 0.9, Status::ok, "run-1"),
      make_record("BLOCK=256,VEC=2", 0.4, Status::wrong_result, "run-1"),
      make_record("BLOCK=1024,VEC=8", 0.0, Status::compile_error, "run-2"),
      make_record("BLOCK=64,VEC=4", 1.0 / 7.0, Status::timeout, "run-2"),
  };
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// The sample records exported to `path` in `format`.
void export_sample(const std::string& path, LogFormat format) {
  test::TempDir tmp_dir;
  TuningLog tmp(tmp_dir.file("tmp.db"));
  tmp.append_batch(sample_records());
  export_file(tmp, path, format);
}

/// The lines of a text file.
std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Writes `lines` as a text file, one per line.
void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  write_text(path, text);
}

void require_same_records(const std::vector<TrialRecord>& a, const std::vector<TrialRecord>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) test::require_same_record(a[i], b[i]);
}

}  // namespace

TEST_CASE("JSON lines export and import round-trip losslessly", "[log][formats]") {
  test::TempDir dir;
  TuningLog source(dir.file("a.db"));
  source.append_batch(sample_records());
  CHECK(export_file(source, dir.file("out.jsonl"), LogFormat::jsonl) == 4);

  std::ifstream in(dir.file("out.jsonl"));
  std::string header;
  std::getline(in, header);
  CHECK_THAT(header, Catch::Contains("\"format\":\"ktune-trials\""));
  CHECK_THAT(header, Catch::Contains("\"version\":1"));

  TuningLog copy(dir.file("b.db"));
  auto summary = import_file(copy, dir.file("out.jsonl"));
  CHECK(summary.format == LogFormat::jsonl);
  CHECK(summary.records == 4);
  CHECK(summary.run_ids == std::vector<std::string>{"run-1", "run-2"});
  require_same_records(source.records(), copy.records());

  LogFilter one_run;
  one_run.run_id = "run-2";
  CHECK(export_file(source, dir.file("run2.jsonl"), LogFormat::jsonl, one_run) == 2);
}

TEST_CASE("An import check that throws anything refuses the import as parse_error, adding nothing",
          "[log][formats]") {
  test::TempDir dir;
  TuningLog source(dir.file("a.db"));
  source.append_batch(sample_records());
  REQUIRE(export_file(source, dir.file("out.jsonl"), LogFormat::jsonl) == 4);
  REQUIRE(export_file(source, dir.file("out.t4.json"), LogFormat::t4) == 4);
  for (const char* file : {"out.jsonl", "out.t4.json"}) {
    INFO(file);
    TuningLog copy(dir.file(std::string(file) + ".db"));
    ImportOptions options;
    std::size_t calls = 0;
    options.check = [&](const TrialRecord& r) {
      if (++calls == 3) throw std::runtime_error("not this one: " + r.template_name);
    };
    try {
      import_file(copy, dir.file(file), options);
      FAIL("the import went on past the check's refusal");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::parse_error);
      CHECK_THAT(e.what(), Catch::Contains(file) && Catch::Contains("not this one: "));
    }
    CHECK(copy.count() == 0);
  }
}

TEST_CASE("JSON lines exports joined with cat import as one, each header is checked",
          "[log][formats]") {
  test::TempDir dir;
  // Two machines' exports: the sample, and the sample re-run under another run id.
  export_sample(dir.file("a.jsonl"), LogFormat::jsonl);
  std::vector<TrialRecord> rerun = sample_records();
  for (auto& r : rerun) r.run_id = "rerun";
  {
    TuningLog tmp(dir.file("b.db"));
    tmp.append_batch(rerun);
    export_file(tmp, dir.file("b.jsonl"), LogFormat::jsonl);
  }
  std::vector<std::string> joined = read_lines(dir.file("a.jsonl"));
  const std::size_t second_header = joined.size() + 1;
  for (const auto& line : read_lines(dir.file("b.jsonl"))) joined.push_back(line);
  write_lines(dir.file("joined.jsonl"), joined);
  TuningLog log(dir.file("joined.db"));
  const auto summary = import_file(log, dir.file("joined.jsonl"));
  CHECK(summary.records == 2 * sample_records().size());
  CHECK(log.count() == static_cast<std::int64_t>(2 * sample_records().size()));
  const auto runs = log.runs();
  CHECK(std::count_if(runs.begin(), runs.end(), [](const RunSummary& r) { return r.run_id == "rerun"; }) == 1);
  // A later header of a version this ktune cannot read is refused by its line, as a first one.
  auto future = joined;
  future[second_header - 1] = R"({"format":"ktune-trials","version":99})";
  write_lines(dir.file("future.jsonl"), future);
  TuningLog other(dir.file("other.db"));
  CHECK_THROWS_WITH(import_file(other, dir.file("future.jsonl")),
                    Catch::Contains("future.jsonl:" + std::to_string(second_header)) &&
                        Catch::Contains("version 99"));
  CHECK(other.count() == 0);
}

TEST_CASE("T4 export and import round-trip losslessly and follow the T4 schema", "[log][formats]") {
  test::TempDir dir;
  TuningLog source(dir.file("a.db"));
  source.append_batch(sample_records());
  CHECK(export_file(source, dir.file("out.t4.json"), LogFormat::t4) == 4);

  auto doc = nlohmann::json::parse(std::ifstream(dir.file("out.t4.json")));
  CHECK(doc["schema_version"] == "1.0.0");
  REQUIRE(doc["results"].size() == 4);
  const auto& first = doc["results"][0];
  for (const char* required : {"configuration", "times", "invalidity", "correctness"})
    CHECK(first.contains(required));
  CHECK(first["configuration"]["BLOCK"] == 128);
  CHECK(first["invalidity"] == "correct");
  CHECK(doc["results"][1]["invalidity"] == "correctness");
  CHECK(doc["results"][1]["correctness"] == 0);
  CHECK(doc["results"][2]["invalidity"] == "compile");
  CHECK(doc["results"][3]["invalidity"] == "timeout");
  CHECK(first["times"]["runtimes"].size() == 4);

  TuningLog copy(dir.file("b.db"));
  CHECK(import_file(copy, dir.file("out.t4.json")).format == LogFormat::t4);
  require_same_records(source.records(), copy.records());

  // Written one result at a time: a filter that matches nothing still gives a document.
  LogFilter none;
  none.run_id = "no-such-run";
  CHECK(export_file(source, dir.file("empty.t4.json"), LogFormat::t4, none) == 0);
  const auto empty = nlohmann::json::parse(std::ifstream(dir.file("empty.t4.json")));
  CHECK(empty["schema_version"] == "1.0.0");
  CHECK(empty["results"].is_array());
  CHECK(empty["results"].empty());

  // Launch and runtime errors share T4's "runtime" class; the ktune record keeps them apart.
  TuningLog errors(dir.file("e.db"));
  errors.append_batch({make_record("BLOCK=2048,VEC=1", 0.0, Status::launch_error, "run-3"),
                       make_record("BLOCK=32,VEC=1", 0.0, Status::runtime_error, "run-3")});
  CHECK(export_file(errors, dir.file("errors.t4.json"), LogFormat::t4) == 2);
  const auto error_doc = nlohmann::json::parse(std::ifstream(dir.file("errors.t4.json")));
  CHECK(error_doc["results"][0]["invalidity"] == "runtime");
  CHECK(error_doc["results"][1]["invalidity"] == "runtime");
  TuningLog errors_copy(dir.file("f.db"));
  import_file(errors_copy, dir.file("errors.t4.json"));
  require_same_records(errors.records(), errors_copy.records());
}

TEST_CASE("T4 import: runtimes before a time measurement, correctness 0, versions and disagreeing ktune objects",
          "[log][formats]") {
  test::TempDir dir;
  ImportOptions options;
  options.template_name = "conv";
  options.problem_key = "conv|n=4096|";
  options.device = test::test_device();
  options.run_id = "imported";
  // Runtimes decide the median; a "time" measurement only stands in when there are none.
  // "correct" with correctness 0 is a wrong result.
  write_text(dir.file("t4.json"), R"({"schema_version": "1.2.0", "results": [
    {"configuration": {"bx": 32}, "times": {"runtimes": [2.0, 1.0, 3.0]}, "invalidity": "correct",
     "correctness": 1, "measurements": [{"name": "time", "value": 9.0, "unit": "ms"}]},
    {"configuration": {"bx": 64}, "times": {}, "invalidity": "correct", "correctness": 1,
     "measurements": [{"name": "time", "value": 4.5, "unit": "ms"}]},
    {"configuration": {"bx": 128}, "times": {"runtimes": [1.0]}, "invalidity": "correct",
     "correctness": 0}]})");
  TuningLog log(dir.file("a.db"));
  CHECK(import_file(log, dir.file("t4.json"), options).records == 3);
  const auto records = log.records();
  REQUIRE(records.size() == 3);
  CHECK(records[0].trial.median_ms == 2.0);
  CHECK(records[1].trial.median_ms == 4.5);
  CHECK(records[2].trial.status == Status::wrong_result);

  write_text(dir.file("v2.json"), R"({"schema_version": "2.0.0", "results": []})");
  CHECK_THROWS_WITH(import_file(log, dir.file("v2.json"), options),
                    Catch::Contains("2.0.0") && Catch::Contains("not supported"));

  // A ktune export whose T4 configuration was edited no longer matches its ktune object.
  TuningLog source(dir.file("s.db"));
  source.append_batch(sample_records());
  export_file(source, dir.file("out.t4.json"), LogFormat::t4);
  auto doc = nlohmann::json::parse(std::ifstream(dir.file("out.t4.json")));
  doc["results"][0]["configuration"]["BLOCK"] = 64;
  std::ofstream(dir.file("edited.t4.json")) << doc.dump();  // keys sorted: the version comes last
  TuningLog edited(dir.file("e.db"));
  CHECK_THROWS_WITH(import_file(edited, dir.file("edited.t4.json")),
                    Catch::Contains("configuration") && Catch::Contains("disagrees"));
  CHECK(edited.count() == 0);
}

TEST_CASE("A foreign T4 file imports with the context given in the options", "[log][formats]") {
  test::TempDir dir;
  write_text(dir.file("foreign.json"), R"({"schema_version": "1.0.0", "results": [
    {"timestamp": "2023-12-22 09:53:48.5+00:00", "configuration": {"bx": 32, "by": 4},
     "times": {"compilation_time": 800.5, "runtimes": [2.0, 1.0, 3.0]},
     "invalidity": "correct", "correctness": 1, "measurements": [], "objectives": ["time"]},
    {"configuration": {"bx": 64, "by": 8}, "times": {}, "invalidity": "runtime",
     "correctness": 1}]})");
  TuningLog log(dir.file("a.db"));
  ImportOptions missing;
  CHECK_THROWS_WITH(import_file(log, dir.file("foreign.json"), missing),
                    Catch::Contains("needs the template"));
  ImportOptions options;
  options.template_name = "conv";
  options.problem_key = "conv|n=4096|";
  // No device: every result would land on a nameless "|sm_00|0".
  CHECK_THROWS_WITH(import_file(log, dir.file("foreign.json"), options),
                    Catch::Contains("names no device") && Catch::Contains("--arch"));
  // A problem key that is not one, a template name with a space: refused by name.
  options.device = test::test_device();
  for (const char* bad : {"bad", "x|y"}) {
    ImportOptions wrong = options;
    wrong.problem_key = bad;
    CHECK_THROWS_WITH(import_file(log, dir.file("foreign.json"), wrong),
                      Catch::Contains(std::string("problem key '") + bad + "'"));
  }
  ImportOptions spaced = options;
  spaced.template_name = "has space";
  CHECK_THROWS_WITH(import_file(log, dir.file("foreign.json"), spaced),
                    Catch::Contains("template name 'has space'"));
  // A device name with '|' would give every record a key that never parses back: the option
  // is named, before any record is read.
  for (const char* bad : {"A|B", "tab\there"}) {
    ImportOptions piped = options;
    piped.device->name = bad;
    try {
      import_file(log, dir.file("foreign.json"), piped);
      FAIL("device name " << bad << " was accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_argument);
      CHECK_THAT(e.what(), Catch::Contains(std::string("device name '") + bad + "' given for") &&
                               Catch::Contains("foreign.json"));
    }
  }
  CHECK(log.count() == 0);
  options.run_id = "imported";
  auto summary = import_file(log, dir.file("foreign.json"), options);
  CHECK(summary.records == 2);
  auto records = log.records();
  REQUIRE(records.size() == 2);
  CHECK(records[0].config_text == "bx=32,by=4");
  CHECK(records[0].trial.status == Status::ok);
  CHECK(records[0].trial.median_ms == 2.0);
  CHECK(records[0].trial.compile_ms == 800.5);
  CHECK(records[0].trial.timestamp_us == 1703238828500000);
  CHECK(records[1].trial.status == Status::runtime_error);
  CHECK(records[1].device_key() == device_key_of(test::test_device()));
  // T4 results name no device: an architecture alone names it "offline <arch>".
  options.device = Device::offline("sm_86");
  options.device->name.clear();
  options.run_id = "arch-only";
  TuningLog arch_log(dir.file("b.db"));
  import_file(arch_log, dir.file("foreign.json"), options);
  CHECK_THAT(arch_log.records()[0].device_key(), Catch::StartsWith("offline sm_86|sm_86|"));

  // Without a run id the file's content names the run: a second import adds nothing, also when
  // two connections (two processes) import it at the same time.
  options.run_id.clear();
  TuningLog twice(dir.file("c.db"));
  CHECK(import_file(twice, dir.file("foreign.json"), options).records == 2);
  const auto again = import_file(twice, dir.file("foreign.json"), options);
  CHECK(again.records == 0);
  CHECK(again.already_present == 2);
  CHECK(twice.count() == 2);
  std::vector<std::thread> importers;
  for (int i = 0; i < 4; ++i)
    importers.emplace_back([&] {
      TuningLog own(dir.file("d.db"));
      import_file(own, dir.file("foreign.json"), options);
    });
  for (auto& t : importers) t.join();
  CHECK(TuningLog(dir.file("d.db"), LogMode::read_only).count() == 2);

  // A time measurement that is not a number is named, not read as a time of 0 ms.
  write_text(dir.file("texttime.json"), R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"bx": 32, "by": 4}, "times": {}, "invalidity": "correct",
     "correctness": 1, "measurements": [{"name": "time", "value": "fast", "unit": "ms"}]}]})");
  TuningLog text_time(dir.file("e.db"));
  CHECK_THROWS_WITH(import_file(text_time, dir.file("texttime.json"), options),
                    Catch::Contains("the time measurement's value is not a number"));
  CHECK(text_time.count() == 0);
}

TEST_CASE("JSON lines refuse the import options meant for T4 and Kernel Tuner files",
          "[log][formats]") {
  test::TempDir dir;
  const std::string file = dir.file("t.jsonl");
  {
    std::ofstream out(file);
    jsonl::write_header(out);
    jsonl::write_record(out, test::make_record("BLOCK=1,VEC=1", 0.5));
  }
  TuningLog log(dir.file("a.db"));
  ImportOptions run;
  run.run_id = "mine";
  ImportOptions device;
  device.device = Device::offline("sm_90");
  for (const ImportOptions& options : {run, device}) {
    CHECK_THROWS_WITH(import_file(log, file, options),
                      Catch::Contains("JSON lines") && Catch::Contains("T4 and Kernel Tuner files only"));
  }
  CHECK(log.count() == 0);
  CHECK(import_file(log, file).records == 1);
}

TEST_CASE("A T4 file written by ktune refuses the import options its records override",
          "[log][formats]") {
  test::TempDir dir;
  TuningLog source(dir.file("s.db"));
  source.append_batch(sample_records());
  export_file(source, dir.file("out.t4.json"), LogFormat::t4);
  TuningLog log(dir.file("a.db"));
  ImportOptions named;
  named.template_name = "mycopy";
  ImportOptions problem;
  problem.problem_key = "copy|N=1|dtype=f32";
  ImportOptions device;
  device.device = Device::offline("sm_80");
  ImportOptions run;
  run.run_id = "myrun";
  for (const ImportOptions& options : {named, problem, device, run}) {
    CHECK_THROWS_WITH(import_file(log, dir.file("out.t4.json"), options),
                      Catch::Contains("out.t4.json") && Catch::Contains("written by ktune") &&
                          Catch::Contains("would apply to none"));
  }
  CHECK(log.count() == 0);
  // A file mixing ktune's results with foreign ones: the options go to the foreign ones.
  auto doc = nlohmann::json::parse(std::ifstream(dir.file("out.t4.json")));
  doc["results"].push_back({{"configuration", {{"bx", 32}}}, {"times", {{"runtimes", {1.5}}}},
                            {"invalidity", "correct"}, {"correctness", 1}});
  std::ofstream(dir.file("mixed.t4.json")) << doc.dump();
  ImportOptions foreign;
  foreign.template_name = "conv";
  foreign.problem_key = "conv|n=4096|";
  foreign.device = test::test_device();
  TuningLog mixed(dir.file("m.db"));
  REQUIRE(import_file(mixed, dir.file("mixed.t4.json"), foreign).records == source.count() + 1);
  const auto records = mixed.records();
  CHECK(records.front().template_name == source.records().front().template_name);
  CHECK(records.back().template_name == "conv");
  CHECK(records.back().config_text == "bx=32");
  // Without options its records keep their own template, problem, device and run.
  REQUIRE(import_file(log, dir.file("out.t4.json")).records == source.count());
  CHECK(log.records().front().template_name == source.records().front().template_name);
}

TEST_CASE("T4 and Kernel Tuner timestamps parse to Unix microseconds", "[log][formats]") {
  CHECK(t4::parse_timestamp("1970-01-01T00:00:01Z") == 1000000);
  CHECK(t4::parse_timestamp("2023-12-22 09:53:48.691683+00:00") == 1703238828691683);
  CHECK(t4::parse_timestamp("2023-12-22T10:53:48.691683+01:00") == 1703238828691683);
  CHECK(t4::parse_timestamp(t4::iso_timestamp(1764512345678901)) == 1764512345678901);
  CHECK_THROWS_AS(t4::parse_timestamp("yesterday"), Error);
  for (const char* offset : {"+99:99", "-24:00", "+05:60"})
    CHECK_THROWS_WITH(t4::parse_timestamp(std::string("2023-12-22T10:53:48") + offset),
                      Catch::Contains("bad UTC offset"));
}

TEST_CASE("Kernel Tuner caches from the benchmark hub import completely", "[log][formats]") {
  test::TempDir dir;
  std::string cache = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  TuningLog log(dir.file("kt.db"));
  auto summary = import_file(log, cache);
  CHECK(summary.format == LogFormat::kernel_tuner);
  CHECK(summary.records == 4362);
  std::map<Status, int> by_status;
  for (const auto& r : log.records()) by_status[r.trial.status]++;
  CHECK(by_status[Status::ok] == 4201);
  CHECK(by_status[Status::runtime_error] == 155);
  CHECK(by_status[Status::compile_error] == 6);
  auto tasks = log.tasks();
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].template_name == "convolution_kernel");
  CHECK(tasks[0].problem_key == "convolution_kernel|d0=4096,d1=4096|");
  CHECK(tasks[0].device_key == "NVIDIA RTX A4000|sm_00|0");
  auto best = log.best(tasks[0].template_name, tasks[0].problem_key, tasks[0].device_key);
  REQUIRE(best);
  CHECK(best->trial.config.size() == 10);
  CHECK(best->trial.times_ms.size() == 32);
  CHECK(best->trial.median_ms == Approx(*tasks[0].best_ms));

  // An architecture given without a name keeps the cache's device name; a name replaces it.
  ImportOptions arch_only;
  arch_only.device = Device::offline("sm_86");
  arch_only.device->name.clear();
  TuningLog with_arch(dir.file("kt_arch.db"));
  import_file(with_arch, cache, arch_only);
  REQUIRE(with_arch.tasks().size() == 1);
  CHECK_THAT(with_arch.tasks()[0].device_key, Catch::StartsWith("NVIDIA RTX A4000|sm_86|"));
  ImportOptions named = arch_only;
  named.device->name = "my A4000";
  TuningLog with_name(dir.file("kt_named.db"));
  import_file(with_name, cache, named);
  CHECK_THAT(with_name.tasks()[0].device_key, Catch::StartsWith("my A4000|sm_86|"));
}

TEST_CASE("Malformed input names file, line and field, and imports nothing", "[log][formats]") {
  test::TempDir dir;
  TuningLog log(dir.file("a.db"));
  log.append(make_record("BLOCK=1,VEC=1", 1.0, Status::ok, "before"));
  const auto before = log.count();

  SECTION("JSON lines with a bad field on line 3") {
    std::string path = dir.file("bad.jsonl");
    export_sample(path, LogFormat::jsonl);
    std::vector<std::string> lines = read_lines(path);
    auto pos = lines[2].find("\"median_ms\":");
    REQUIRE(pos != std::string::npos);
    lines[2].insert(pos + 12, "\"fast\",\"ignored\":");
    write_lines(path, lines);
    CHECK_THROWS_WITH(import_file(log, path),
                      Catch::Contains(path + ":3") && Catch::Contains("median_ms"));
  }
  SECTION("JSON lines with broken JSON") {
    write_text(dir.file("broken.jsonl"),
               "{\"format\":\"ktune-trials\",\"version\":1}\n{\"template\": \n");
    CHECK_THROWS_WITH(import_file(log, dir.file("broken.jsonl")),
                      Catch::Contains("broken.jsonl:2") && Catch::Contains("not valid JSON"));
  }
  SECTION("a JSON document with results of configurations but none of T4's marks") {
    // "results" and "configuration" alone do not make a T4 file: it needs its schema version
    // or a result's "invalidity" too.
    write_text(dir.file("other.json"),
               R"({"results": [{"configuration": {"bx": 1}, "score": 3}]})");
    CHECK_THROWS_WITH(import_file(log, dir.file("other.json")),
                      Catch::Contains("other.json") && Catch::Contains("cannot tell the format") &&
                          Catch::Contains("--format jsonl, t4 or kernel_tuner"));
  }
  SECTION("JSON lines of a newer format version") {
    write_text(dir.file("new.jsonl"), "{\"format\":\"ktune-trials\",\"version\":7}\n");
    CHECK_THROWS_WITH(import_file(log, dir.file("new.jsonl")),
                      Catch::Contains("new.jsonl:1") && Catch::Contains("version"));
  }
  SECTION("Kernel Tuner cache with a text parameter value") {
    write_text(dir.file("kt.json"), R"({
"device_name": "X", "kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["bx"], "tune_params": {"bx": [1, 2]}, "objective": "time",
"cache": {
"1": {"bx": 1, "time": 1.5, "times": [1.5], "compile_time": 1},
"2": {"bx": "two", "time": 2.5, "times": [2.5], "compile_time": 1}
}})");
    CHECK_THROWS_WITH(import_file(log, dir.file("kt.json")),
                      Catch::Contains("kt.json:6") && Catch::Contains("bx") &&
                          Catch::Contains("not an integer"));
  }
  SECTION("JSON lines whose names no command could use again") {
    // The sample's first record names template copy, problem copy|n=1024|dtype=f32, run run-1.
    const std::string path = dir.file("names.jsonl");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"\"problem\":\"copy|n=1024|dtype=f32\"", "\"problem\":\"garbage\""},
        {"\"problem\":\"copy|n=1024|dtype=f32\"", "\"problem\":\"copy|n=abc|dtype=f32\""},
        {"\"problem\":\"copy|n=1024|dtype=f32\"", "\"problem\":\"copy|n=1024|dtype=f32|zzz\""},
        {"\"template\":\"copy\"", "\"template\":\"a\\nb\""},
        {"\"template\":\"copy\"", "\"template\":\"\""},
        {"\"run_id\":\"run-1\"", "\"run_id\":\"\""},
    };
    for (const auto& [from, to] : cases) {
      CAPTURE(to);
      export_sample(path, LogFormat::jsonl);
      std::vector<std::string> lines = read_lines(path);
      const auto pos = lines[1].find(from);
      REQUIRE(pos != std::string::npos);
      lines[1].replace(pos, from.size(), to);
      write_lines(path, lines);
      CHECK_THROWS_WITH(import_file(log, path), Catch::Contains(path + ":2"));
    }
  }
  SECTION("a Kernel Tuner cache whose entries contradict their keys or name no parameter") {
    write_text(dir.file("kt.json"), R"({"device_name": "X", "kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 9], "b": [1, 9]}, "objective": "time",
"cache": {"1,1": {"a": 1, "b": 1, "time": 1.5, "times": [1.5]},
          "9,9": {"a": 1, "b": 1, "time": 0.1, "times": [0.1]}}})");
    CHECK_THROWS_WITH(import_file(log, dir.file("kt.json")),
                      Catch::Contains("cache entry '9,9' holds other values (a=1,b=1)"));
    write_text(dir.file("kt.json"), R"({"device_name": "X", "kernel_name": "k", "problem_size": [64],
"tune_params_keys": [], "tune_params": {}, "objective": "time",
"cache": {"1": {"a": 1, "time": 1.5, "times": [1.5]}}})");
    CHECK_THROWS_WITH(import_file(log, dir.file("kt.json")), Catch::Contains("\"tune_params_keys\" is empty"));
    // Python's spellings of values in keys: True, 1.0.
    write_text(dir.file("kt_ok.json"), R"({"device_name": "X", "kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["a", "b"], "tune_params": {"a": [true], "b": [1.0]}, "objective": "time",
"cache": {"True,1.0": {"a": true, "b": 1.0, "time": 1.5, "times": [1.5]}}})");
    test::TempDir other;
    TuningLog fresh(other.file("k.db"));
    CHECK(import_file(fresh, dir.file("kt_ok.json")).records == 1);
    // Such an entry is named by its key as written and its line, not by a key rebuilt from
    // its values ("1,1") that the file does not hold.
    write_text(dir.file("kt_odd.json"), R"({"device_name": "X", "kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["a", "b"], "tune_params": {"a": [true], "b": [1.0]}, "objective": "time",
"cache": {
"True,1.0": {"a": true, "b": 1.0, "time": -1.0, "times": [1.5]}}})");
    CHECK_THROWS_WITH(import_file(fresh, dir.file("kt_odd.json")),
                      Catch::Contains("kt_odd.json:4 (cache entry \"True,1.0\")") &&
                          Catch::Contains("-1 is not a time"));
  }
  SECTION("a Kernel Tuner cache whose kernel name holds '|' or whose size is 0") {
    const std::vector<std::pair<std::string, std::string>> headers = {
        {R"("kernel_name": "my|kern", "problem_size": [64])", "template name 'my|kern'"},
        {R"("kernel_name": "vector_add<float>", "problem_size": [64])", "bad operator name"},
        {R"("kernel_name": "k", "problem_size": [0])", "dimension d0 = 0"}};
    for (const auto& [header, needle] : headers) {
      CAPTURE(header);
      write_text(dir.file("kt.json"), std::string(R"({"device_name": "X", )") + header + R"(,
"tune_params_keys": ["bx"], "tune_params": {"bx": [1]}, "objective": "time",
"cache": {"1": {"bx": 1, "time": 1.5, "times": [1.5], "compile_time": 1}}})");
      CHECK_THROWS_WITH(import_file(log, dir.file("kt.json")),
                        Catch::Contains("kt.json:3 (cache entry \"1\")") && Catch::Contains(needle) &&
                            Catch::Contains("name them with --template and --problem"));
    }
  }
  CHECK(log.count() == before);
  CHECK(log.runs().size() == 1);
}

namespace {

/// The sample records as JSON lines in `path`, with `from` replaced by `to` in the first
/// record (line 2: BLOCK=128,VEC=1, ok, median 0.9 ms).
void write_mutated_jsonl(const std::string& path, const std::string& from, const std::string& to) {
  export_sample(path, LogFormat::jsonl);
  std::vector<std::string> lines = read_lines(path);
  REQUIRE(lines.size() >= 2);
  const auto pos = lines[1].find(from);
  REQUIRE(pos != std::string::npos);
  lines[1].replace(pos, from.size(), to);
  write_lines(path, lines);
}

}  // namespace

TEST_CASE("Impossible values are refused by name instead of wrapped or imported", "[log][formats]") {
  test::TempDir dir;
  TuningLog log(dir.file("a.db"));
  log.append(make_record("BLOCK=1,VEC=1", 1.0, Status::ok, "before"));
  const std::string path = dir.file("bad.jsonl");

  SECTION("a number beyond a double") {
    write_mutated_jsonl(path, "\"median_ms\":0.9", "\"median_ms\":1e400");
    CHECK_THROWS_WITH(import_file(log, path), Catch::Contains(path + ":2") &&
                                                  Catch::Contains("not valid JSON") &&
                                                  Catch::Contains("1e400"));
  }
  SECTION("an SM count beyond 32 bits (would wrap to 132)") {
    write_mutated_jsonl(path, "\"sm_count\":132", "\"sm_count\":4294967428");
    CHECK_THROWS_WITH(import_file(log, path), Catch::Contains(path + ":2") &&
                                                  Catch::Contains("sm_count") &&
                                                  Catch::Contains("out of range"));
  }
  SECTION("a negative SM count or a minor capability past 9 (no device has them)") {
    write_mutated_jsonl(path, "\"sm_count\":132", "\"sm_count\":-5");
    CHECK_THROWS_WITH(import_file(log, path), Catch::Contains(path + ":2") &&
                                                  Catch::Contains("-5 SMs") &&
                                                  Catch::Contains("SM count >= 0"));
    write_mutated_jsonl(path, "\"cc_minor\":0", "\"cc_minor\":12");
    CHECK_THROWS_WITH(import_file(log, path), Catch::Contains("compute capability 9.12"));
  }
  SECTION("a timestamp beyond 63 bits (would wrap to -1)") {
    write_mutated_jsonl(path, "\"timestamp_us\":1764512345678901",
                        "\"timestamp_us\":18446744073709551615");
    CHECK_THROWS_WITH(import_file(log, path),
                      Catch::Contains("timestamp_us") && Catch::Contains("out of range"));
  }
  SECTION("an ok trial with a negative median (would become the best)") {
    write_mutated_jsonl(path, "\"median_ms\":0.9", "\"median_ms\":-1.0");
    CHECK_THROWS_WITH(import_file(log, path), Catch::Contains(path + ":2") &&
                                                  Catch::Contains("finite time above 0"));
    try {
      import_file(log, path);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::parse_error);  // malformed input, like every import error
    }
  }
  SECTION("a Kernel Tuner cache whose keys are a string, not a list") {
    write_text(path, R"({"kernel_name": "k", "problem_size": [64],
"tune_params_keys": "bx", "tune_params": {"bx": [1, 2]},
"cache": {"1": {"bx": 1, "time": 1.5, "times": [1.5]}}})");
    CHECK_THROWS_WITH(import_file(log, path, {.format = LogFormat::kernel_tuner}),
                      Catch::Contains("tune_params_keys") && Catch::Contains("array of names"));
  }
  SECTION("a Kernel Tuner cache with text among the times") {
    write_text(path, R"({"kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["bx"], "tune_params": {"bx": [1, 2]},
"cache": {"1": {"bx": 1, "time": 1.5, "times": [1.5, "slow"]}}})");
    CHECK_THROWS_WITH(import_file(log, path, {.format = LogFormat::kernel_tuner}),
                      Catch::Contains("times") && Catch::Contains("\"slow\""));
  }
  SECTION("a T4 result whose ktune record contradicts its T4 status") {
    export_sample(path, LogFormat::t4);
    std::ifstream in(path);
    auto doc = nlohmann::ordered_json::parse(in);
    in.close();
    REQUIRE(doc["results"][0]["invalidity"] == "correct");
    doc["results"][0]["invalidity"] = "compile";  // the ktune record still says ok
    write_text(path, doc.dump());
    CHECK_THROWS_WITH(import_file(log, path, {.format = LogFormat::t4}),
                      Catch::Contains("results[0]") && Catch::Contains("invalidity") &&
                          Catch::Contains("compile_error") && Catch::Contains("ok"));
  }
  CHECK(log.count() == 1);
}

TEST_CASE("Timestamps with a field out of range are refused", "[log][formats]") {
  CHECK_THROWS_WITH(t4::parse_timestamp("2024-13-45T99:99:99Z"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(t4::parse_timestamp("2024-02-01T24:00:00Z"), Catch::Contains("out of range"));
  CHECK(t4::parse_timestamp("2024-12-31T23:59:59Z") > 0);
}

TEST_CASE("A Kernel Tuner cache that grew adds only its new records when imported again",
          "[log][formats]") {
  test::TempDir dir;
  const std::string head = R"({"device_name": "Test GPU", "kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["bx"], "tune_params": {"bx": [32, 64, 128]}, "objective": "time",
"cache": {
"32": {"bx": 32, "time": 3.0, "times": [2.9, 3.0, 3.1], "timestamp": "2023-12-22 09:53:48.691683+00:00"},
"64": {"bx": 64, "time": 2.0, "times": [2.0, 2.0, 2.1], "timestamp": "2023-12-22 09:53:49.000000+00:00"})";
  const std::string more =
      R"(,
"128": {"bx": 128, "time": 1.5, "times": [1.5], "timestamp": "2023-12-22 09:53:50.000000+00:00"})";
  std::ofstream(dir.file("k.json")) << head + "}}";
  TuningLog log(dir.file("k.db"));
  CHECK(import_file(log, dir.file("k.json")).records == 2);
  std::ofstream(dir.file("k.json")) << head + more + "}}";  // tuning went on: one entry more
  const auto grown = import_file(log, dir.file("k.json"));
  CHECK(grown.records == 1);
  CHECK(grown.already_present == 2);
  CHECK(log.count() == 3);
  // A run id given by the user is its own run: the same records are added under it.
  ImportOptions named;
  named.run_id = "mine";
  CHECK(import_file(log, dir.file("k.json"), named).records == 3);
  CHECK(log.count() == 6);
}

TEST_CASE("A Kernel Tuner entry's median comes from its times, its time only when it has none",
          "[log][formats]") {
  test::TempDir dir;
  // Kernel Tuner's "time" is the mean of "times" (here pulled up by one slow run).
  std::ofstream(dir.file("k.json")) << R"({"device_name": "Test GPU", "kernel_name": "k",
"problem_size": [64], "tune_params_keys": ["bx"], "tune_params": {"bx": [32, 64]}, "objective": "time",
"cache": {
"32": {"bx": 32, "time": 4.0, "times": [1.0, 2.0, 9.0], "timestamp": "2023-12-22 09:53:48.691683+00:00"},
"64": {"bx": 64, "time": 2.5, "timestamp": "2023-12-22 09:53:49.000000+00:00"}}})";
  TuningLog log(dir.file("k.db"));
  REQUIRE(import_file(log, dir.file("k.json")).records == 2);
  const auto records = log.records();
  REQUIRE(records.size() == 2);
  CHECK(records[0].trial.median_ms == 2.0);
  CHECK(records[1].trial.median_ms == 2.5);
}

// Edge cases from the mutation audit of session 33.
TEST_CASE("JSON lines: version 0, extra params, CRLF blank lines, verbatim config text",
          "[log][formats]") {
  const std::string header = jsonl::header().dump() + "\n";
  const TrialRecord rec = test::make_record("BLOCK=128,VEC=1", 0.5);
  {
    std::istringstream in(R"({"format":"ktune-trials","version":0})" "\n");
    CHECK_THROWS_WITH(jsonl::read(in, "v0"), Catch::Contains("v0:1") && Catch::Contains("version 0"));
  }
  {
    nlohmann::json j = jsonl::to_json(rec);
    j["params"]["EXTRA"] = 1;
    std::istringstream in(header + j.dump() + "\n");
    CHECK_THROWS_WITH(jsonl::read(in, "extra"), Catch::Contains("extra:2") && Catch::Contains("params"));
  }
  {
    std::istringstream in(header + "\r\n" + jsonl::to_json(rec).dump() + "\r\n");
    const auto records = jsonl::read(in, "crlf");
    REQUIRE(records.size() == 1);
    CHECK(records[0].id == 3);  // named by its line
  }
  {
    TrialRecord verbatim = rec;  // as ConfigText::verbatim reads a config it cannot parse
    verbatim.config_text = "BLOCK=abc";
    verbatim.trial.config = Config{};
    CHECK(jsonl::to_json(verbatim)["config"] == "BLOCK=abc");
  }
  {
    nlohmann::json j = jsonl::to_json(rec);  // a record with a "format" key is still a record
    j["format"] = "something else";
    std::istringstream in(header + j.dump() + "\n");
    CHECK(jsonl::read(in, "fmt").size() == 1);
  }  {
    // An export from before launch forms were recorded has no "launch": read as unknown.
    nlohmann::json j = jsonl::to_json(rec);
    CHECK(j["launch"] == "programmatic");
    j.erase("launch");
    std::istringstream in(header + j.dump() + "\n");
    const auto records = jsonl::read(in, "old");
    REQUIRE(records.size() == 1);
    CHECK(records[0].trial.launch == LaunchForm::unknown);
  }
  {
    nlohmann::json j = jsonl::to_json(rec);
    j["launch"] = "warp";
    std::istringstream bad_name(header + j.dump() + "\n");
    CHECK_THROWS_WITH(jsonl::read(bad_name, "launch"),
                      Catch::Contains("launch:2: field 'launch'") && Catch::Contains("\"warp\"") &&
                          Catch::Contains("expected unknown, stream"));
    j["launch"] = 3;
    std::istringstream bad_type(header + j.dump() + "\n");
    CHECK_THROWS_WITH(jsonl::read(bad_type, "launch"),
                      Catch::Contains("field 'launch'") && Catch::Contains("expected a string"));
  }
}
