// Hostile input files: JSON nested deep enough to overflow a recursive reader, gzip files that
// inflate without bound, paths that cannot be followed, and text that is not UTF-8 — each
// refused with an error naming the file (or written with U+FFFD), for every reader: JSON lines,
// Kernel Tuner caches, T4 results, T1 documents, plans, and the replay command.
#include <catch2/catch.hpp>

#include <chrono>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "cli_fixtures.h"
#include "input_file.h"
#include "json_input.h"
#include "ktune/dispatch.h"
#include "ktune/template.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/space.h"
#include "log_fixtures.h"

using namespace ktune;

namespace {

/// `depth` nested arrays around a 1.
std::string nested(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

/// The message of the ktune::Error that `f` throws, with its code checked.
template <class F>
std::string error_of(F f, ErrorCode code = ErrorCode::parse_error) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == code);
    return e.what();
  }
  FAIL("no error");
  return "";
}

/// Writes `text` gzip-compressed to `path`.
void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb9");
  REQUIRE(f);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(f);
}

}  // namespace

TEST_CASE("json input: nesting is limited, brackets inside strings do not count", "[log][formats]") {
  CHECK_NOTHROW(detail::require_json_depth(nested(detail::kMaxJsonDepth), "x.json"));
  const std::string m = error_of([] { detail::require_json_depth(nested(65), "x.json"); });
  CHECK_THAT(m, Catch::Contains("x.json") && Catch::Contains("deeper than 64"));
  CHECK_NOTHROW(detail::require_json_depth("{\"a\": \"" + std::string(200, '[') + "\"}", "s"));
  CHECK_NOTHROW(detail::require_json_depth("[\"\\\"" + std::string(200, '{') + "\"]", "escaped quote"));
}

TEST_CASE("json input: a key given twice in one object is refused by name", "[log][formats]") {
  CHECK_THROWS_WITH(detail::parse_json_document(R"([{"op": "copy", "op": "gemm"}])", "plan.json"),
                    Catch::Contains("plan.json") && Catch::Contains("\"op\" is given twice"));
  CHECK_THROWS_WITH(detail::parse_json_document(R"({"a": {"b": 1, "c": {"b": 2}, "b": 3}})", "doc"),
                    Catch::Contains("\"b\" is given twice"));
  // The same key in sibling or nested objects is fine; JSON lines records skip the check.
  CHECK(detail::parse_json_document(R"([{"b": 1}, {"b": 2, "c": {"b": 3}}])", "doc").size() == 2);
  CHECK(detail::parse_json_document(R"({"b": 1, "b": 2})", "line", false)["b"] == 2);
}

TEST_CASE("json input: quoted values are shortened and made valid UTF-8", "[log][formats]") {
  const std::string excerpt = detail::json_excerpt(nlohmann::json(std::string(5000, 'x')));
  CHECK(excerpt.size() < 200);
  CHECK_THAT(excerpt, Catch::Contains("(5002 characters)"));
  CHECK(detail::json_excerpt(nlohmann::json("a\xFF")) == "\"a\xEF\xBF\xBD\"");
}

TEST_CASE("json input: every reader refuses deep nesting by file name instead of crashing",
          "[log][formats]") {
  test::TempDir dir;
  const std::string deep = nested(100000);
  SECTION("JSON lines, by line") {
    TuningLog source(dir.file("a.db"));
    source.append_batch({test::make_record("BLOCK=128,VEC=1", 0.9)});
    export_file(source, dir.file("x.jsonl"), LogFormat::jsonl);
    std::ofstream(dir.file("x.jsonl"), std::ios::app) << "{\"config\": " << deep << "}\n";
    TuningLog target(dir.file("b.db"));
    CHECK_THAT(error_of([&] { import_file(target, dir.file("x.jsonl")); }),
               Catch::Contains("x.jsonl:3") && Catch::Contains("nested deeper"));
    CHECK(target.records().empty());
  }
  SECTION("Kernel Tuner cache, T4 results, T1 document") {
    std::ofstream(dir.file("c.json")) << "{\"tune_params_keys\": [\"a\"], \"cache\": " << deep << "}";
    TuningLog target(dir.file("b.db"));
    CHECK_THAT(error_of([&] { import_file(target, dir.file("c.json")); }),
               Catch::Contains("c.json") && Catch::Contains("nested deeper"));
    std::ofstream(dir.file("r.t4.json")) << "{\"schema_version\": \"1.0.0\", \"results\": " << deep << "}";
    CHECK_THAT(error_of([&] { import_file(target, dir.file("r.t4.json")); }),
               Catch::Contains("r.t4.json") && Catch::Contains("nested deeper"));
    CHECK_THAT(error_of([&] {
                 SearchSpace::from_t1_json("{\"ConfigurationSpace\": " + deep + "}", "d.T1.json");
               }),
               Catch::Contains("d.T1.json") && Catch::Contains("nested deeper"));
  }
}

TEST_CASE("json input: gzip that inflates beyond any real log is refused early", "[log][formats]") {
  test::TempDir dir;
  // 80 MiB of blanks compress to ~80 KiB: 1000 times, against under 10 for real logs.
  const std::string blanks(80u << 20, ' ');
  write_gzip(dir.file("bomb.jsonl.gz"), blanks);
  write_gzip(dir.file("bomb_A100.json.gz"), "{\"cache\": {" + blanks + "}}");
  TuningLog target(dir.file("b.db"));
  for (const char* name : {"bomb.jsonl.gz", "bomb_A100.json.gz"}) {
    INFO(name);
    CHECK_THAT(error_of([&] { import_file(target, dir.file(name)); }),
               Catch::Contains(name) && Catch::Contains("inflates to more than 100 times"));
  }
  CHECK(target.records().empty());
  // The same bytes uncompressed are read as they are (their size is plain to see).
  std::ofstream(dir.file("plain.json")) << blanks;
  CHECK(detail::read_maybe_gzip(dir.file("plain.json"), "test file").size() == blanks.size());
  // A real compressed log reads whole.
  write_gzip(dir.file("small.json.gz"), "{\"cache\": {}}");
  CHECK(detail::read_maybe_gzip(dir.file("small.json.gz"), "test file") == "{\"cache\": {}}");
}

TEST_CASE("json input: a gzip file cut short is refused, not read as a shorter file", "[log][formats]") {
  test::TempDir dir;
  const std::string recorded = test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  std::ifstream in(recorded);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_gzip(dir.file("whole.jsonl.gz"), text);
  const auto size = std::filesystem::file_size(dir.file("whole.jsonl.gz"));
  std::filesystem::copy_file(dir.file("whole.jsonl.gz"), dir.file("cut.jsonl.gz"));
  std::filesystem::resize_file(dir.file("cut.jsonl.gz"), size / 2);  // an interrupted copy
  CHECK(detail::read_maybe_gzip(dir.file("whole.jsonl.gz"), "test file") == text);
  CHECK_THAT(error_of([&] { detail::read_maybe_gzip(dir.file("cut.jsonl.gz"), "test file"); },
                      ErrorCode::parse_error),
             Catch::Contains("cut.jsonl.gz") && Catch::Contains("truncated"));
  // The streamed readers: import and the Dispatcher refuse it by name, adding nothing.
  const test::CliResult imported = test::run_ktune(dir, "import --db " + dir.file("t.db") + " " + dir.file("cut.jsonl.gz"));
  CHECK(imported.status != 0);
  CHECK_THAT(imported.output, Catch::Contains("truncated"));
  CHECK_THROWS_WITH(Dispatcher(dir.file("cut.jsonl.gz")), Catch::Contains("truncated"));
  CHECK(Dispatcher(dir.file("whole.jsonl.gz")).select("copy", make_problem(*find_template("copy"), "67108864", {{"dtype", "f32"}}),
                                                        Device::h200()).reason == SelectionReason::exact);
  // After a whole member: another member reads on (joined exports); plain text appended to the
  // .gz (`export - >> log.jsonl.gz`) or a member cut after its first byte is refused, where
  // zlib would skip it as trailing garbage and read a shorter file.
  const std::string gz = test::read_text(dir.file("whole.jsonl.gz"));
  test::write_text(dir.file("joined.jsonl.gz"), gz + gz);
  CHECK(detail::read_maybe_gzip(dir.file("joined.jsonl.gz"), "test file") == text + text);
  test::write_text(dir.file("appended.jsonl.gz"), gz + text);
  CHECK_THAT(error_of([&] { detail::read_maybe_gzip(dir.file("appended.jsonl.gz"), "test file"); },
                      ErrorCode::parse_error),
             Catch::Contains("appended.jsonl.gz") && Catch::Contains("data that is not gzip") &&
                 Catch::Contains("at byte " + std::to_string(size)));
  CHECK_THROWS_WITH(Dispatcher(dir.file("appended.jsonl.gz")), Catch::Contains("not gzip"));
  test::write_text(dir.file("one_byte.jsonl.gz"), gz + "\x1f");
  CHECK_THAT(error_of([&] { detail::read_maybe_gzip(dir.file("one_byte.jsonl.gz"), "test file"); },
                      ErrorCode::parse_error),
             Catch::Contains("a gzip member cut short"));
  // A plain file reads as it is, whatever its size (empty, one byte).
  test::write_text(dir.file("empty.txt"), "");
  CHECK(detail::read_maybe_gzip(dir.file("empty.txt"), "test file").empty());
  test::write_text(dir.file("one.txt"), "x");
  CHECK(detail::read_maybe_gzip(dir.file("one.txt"), "test file") == "x");
}

TEST_CASE("json input: a path that cannot be followed is not_found with the reason", "[log][formats]") {
  test::TempDir dir;
  std::filesystem::create_symlink(dir.file("loop"), dir.file("loop"));
  const std::string m =
      error_of([&] { detail::read_maybe_gzip(dir.file("loop"), "cache file"); }, ErrorCode::not_found);
  CHECK_THAT(m, Catch::Contains("cannot be reached"));
  CHECK_THAT(error_of([&] { detail::read_maybe_gzip(dir.file("none"), "cache file"); },
                      ErrorCode::not_found),
             Catch::Contains("does not exist"));
}

TEST_CASE("json input: a T4 export replaces text that is not UTF-8, as JSON lines do", "[log][formats]") {
  test::TempDir dir;
  TuningLog source(dir.file("a.db"));
  TrialRecord r = test::make_record("BLOCK=128,VEC=1", 0.9, Status::compile_error);
  r.trial.message = "ABC\xFF";
  source.append_batch({r});
  REQUIRE(export_file(source, dir.file("out.t4.json"), LogFormat::t4) == 1);
  std::ifstream in(dir.file("out.t4.json"));
  const auto doc = nlohmann::json::parse(in);
  CHECK(doc["results"][0]["ktune"]["message"] == "ABC\xEF\xBF\xBD");
}

TEST_CASE("cli: plans, replay data and replay spaces that cannot be used are named, exit 2", "[cli]") {
  test::TempDir dir;
  test::write_text(dir.file("plan.json"), nested(1000));
  auto r = test::run_ktune(dir, "tune --plan " + dir.file("plan.json") + " --dry-run");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("plan.json") && Catch::Contains("nested deeper"));
  std::filesystem::create_symlink(dir.file("loop"), dir.file("loop"));
  r = test::run_ktune(dir, "replay --data " + dir.file("loop") + " --space " +
                               test::source_path("examples/custom_template/transpose.T1.json"));
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("loop") && Catch::Contains("cannot be reached"));
}

namespace {

/// The example transpose document (with its kernel files) copied into `dir`, its
/// TuningParameters and Conditions extended by `edit`; returns the document's path.
template <class Edit>
std::string edited_transpose(const test::TempDir& dir, Edit edit) {
  for (const char* f : {"transpose.cu", "transpose_reference.cu"})
    std::filesystem::copy_file(test::source_path(std::string("examples/custom_template/") + f), dir.file(f),
                               std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(test::source_path("examples/custom_template/transpose.T1.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  edit(doc["ConfigurationSpace"]);
  test::write_text(dir.file("edited.T1.json"), doc.dump(1));
  return dir.file("edited.T1.json");
}

}  // namespace

TEST_CASE("cli: a dry run checks spaces too large to count or to index", "[cli]") {
  test::TempDir dir;
  SECTION("an unsatisfiable space of 4.9e9 points fails, naming the document") {
    const std::string doc = edited_transpose(dir, [](nlohmann::json& space) {
      std::vector<int> values(300);
      for (int i = 0; i < 300; ++i) values[i] = i;
      for (const char* n : {"a", "b", "c"}) space["TuningParameters"].push_back({{"Name", n}, {"Values", values}});
      space["Conditions"].push_back({{"Expression", "a + b + c < 0"}});
    });
    const auto r = test::run_ktune(dir, "tune --space " + doc + " --dry-run");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("no valid config") && Catch::Contains("edited.T1.json"));
  }
  SECTION("a space of more than 2^63 points is described, not refused") {
    const std::string doc = edited_transpose(dir, [](nlohmann::json& space) {
      for (int i = 0; i < 60; ++i)
        space["TuningParameters"].push_back({{"Name", "h" + std::to_string(i)}, {"Values", {0, 1}}});
    });
    const auto r = test::run_ktune(dir, "tune --space " + doc + " --dry-run");
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("more than 2^63 points"));
  }
}

TEST_CASE("cli: replay over a space that none of the data satisfies says so", "[cli]") {
  test::TempDir dir;
  // A space no config satisfies is named by its constraints.
  std::ifstream in(std::string(KTUNE_DATASETS_DIR) + "/convolution_milo.T1.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["ConfigurationSpace"]["Conditions"].push_back({{"Expression", "0 == 1"}});
  test::write_text(dir.file("never.T1.json"), doc.dump());
  const auto r = test::run_ktune(dir, "replay --data " + std::string(KTUNE_DATASETS_DIR) +
                                          "/convolution_milo_A4000.json.gz --space " +
                                          dir.file("never.T1.json") + " --budget 5 --repeats 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("error (unsatisfiable)") && Catch::Contains("never.T1.json") &&
                           Catch::Contains("no configuration satisfies") && Catch::Contains("\"0 == 1\""));
  // A space with valid configs of which the data holds only failures has nothing to replay.
  test::write_text(dir.file("k_X.json"),
                   R"({"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2], "b": [1, 2]},
"cache": {"1,1": {"a": 1, "b": 1, "time": 1.0}, "1,2": {"a": 1, "b": 2, "time": 1.5},
          "2,1": {"a": 2, "b": 1, "time": "CompilationFailedConfig"},
          "2,2": {"a": 2, "b": 2, "time": "RuntimeFailedConfig"}}})");
  test::write_text(dir.file("k.T1.json"), R"({"General": {"BenchmarkName": "k"},
"ConfigurationSpace": {"TuningParameters": [
  {"Name": "a", "Type": "int", "Values": "[1, 2]", "Default": 2},
  {"Name": "b", "Type": "int", "Values": "[1, 2]", "Default": 1}],
 "Conditions": [{"Expression": "a == 2", "Parameters": ["a"]}]},
"KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu"}})");
  const auto failed = test::run_ktune(dir, "replay --data " + dir.file("k_X.json") + " --space " +
                                               dir.file("k.T1.json") + " --repeats 2");
  CHECK(failed.status == 2);
  CHECK_THAT(failed.output, Catch::Contains("nothing to replay") && Catch::Contains("k.T1.json") &&
                                Catch::Contains("2 records in the space, none successful"));
}

TEST_CASE("cli: replay refuses a space the data does not cover, a compressed space, a space past 2^63",
          "[cli]") {
  test::TempDir dir;
  const std::string data = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  std::ifstream in(std::string(KTUNE_DATASETS_DIR) + "/convolution_milo.T1.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  // A value never measured: refused before any run (exhaustive at budget 300 once passed,
  // its expectation and score computed over the recorded part alone).
  nlohmann::json extra = doc;
  for (auto& p : extra["ConfigurationSpace"]["TuningParameters"])
    if (p["Name"] == "block_size_x") p["Values"] = "[16, 17, 32, 48, 64, 80, 96, 112, 128]";
  test::write_text(dir.file("extra.T1.json"), extra.dump());
  auto r = test::run_ktune(dir, "replay --data " + data + " --space " + dir.file("extra.T1.json") +
                                    " --searcher exhaustive --budget 300 --repeats 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("values that no usable record holds: block_size_x=17.") &&
                           Catch::Contains("extra.T1.json") && !Catch::Contains("methodology score"));
  // 218 million valid configs (read_only widened to 100000 values, no constraint on it): the
  // check stops at the first config without a record instead of walking them all (55 s).
  nlohmann::json wide_values = doc;
  std::vector<int> many(100000);
  for (int i = 0; i < 100000; ++i) many[i] = i;
  for (auto& p : wide_values["ConfigurationSpace"]["TuningParameters"])
    if (p["Name"] == "read_only") p["Values"] = many;
  test::write_text(dir.file("many.T1.json"), wide_values.dump());
  const auto start = std::chrono::steady_clock::now();
  r = test::run_ktune(dir, "replay --data " + data + " --space " + dir.file("many.T1.json") +
                               " --budget 5 --repeats 1");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("has no record of") && Catch::Contains("read_only=2"));
  // The compressed cache given as the space is named as compressed, not as deep JSON.
  r = test::run_ktune(dir, "replay --data " + data + " --space " + data + " --budget 5 --repeats 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("gzip-compressed data, not JSON text") &&
                           !Catch::Contains("nested deeper"));
  // 70 two-valued parameters: more than 2^63 points, which replay cannot index; said with the file.
  nlohmann::json wide = doc;
  for (int i = 0; i < 70; ++i)
    wide["ConfigurationSpace"]["TuningParameters"].push_back(
        {{"Name", "h" + std::to_string(i)}, {"Type", "int"}, {"Values", "[0, 1]"}, {"Default", 0}});
  test::write_text(dir.file("wide.T1.json"), wide.dump());
  r = test::run_ktune(dir, "replay --data " + data + " --space " + dir.file("wide.T1.json") +
                               " --budget 5 --repeats 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("wide.T1.json") && Catch::Contains("2^63") &&
                           Catch::Contains("replay keeps records by index"));
}

TEST_CASE("a parser's quote of a huge malformed value is cut in the message", "[json]") {
  const std::string text = "{\"a\": \"" + std::string(1000000, 'y');  // never closed
  try {
    (void)detail::parse_json_document(text, "big.json");
    FAIL("malformed JSON was accepted");
  } catch (const Error& e) {
    const std::string message = e.what();
    CHECK(message.size() < 600);
    CHECK_THAT(message, Catch::StartsWith("big.json: not valid JSON") &&
                            Catch::Contains("last read: '\"yyy") && Catch::Contains("characters)"));
  }
  // The parser's own words after the quote stay, and the count is the quote's.
  try {
    (void)detail::parse_json_document("{\"a\" \"" + std::string(300, 'b'), "key.json");
    FAIL("malformed JSON was accepted");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("(301 characters); expected ':'"));
  }
  // A short quote stays whole.
  CHECK_THROWS_WITH(detail::parse_json_document(std::string("{\"a\": tru"), "small.json"),
                    Catch::Contains("last read: '\"a\": tru'"));
}
