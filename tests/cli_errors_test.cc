// Argument errors of every ktune subcommand (unknown op, bad shape, unknown searcher, missing
// database, malformed plan, missing device) end with a message naming the bad input and a
// non-zero exit status. Runs the built `ktune` binary.
#include <catch2/catch.hpp>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixtures.h"
#include "ktune/log.h"
#include "log_fixtures.h"
#include "ktune/version.h"
#include "ktune/device.h"
#include "skip.h"

using ktune::test::CliResult;
using ktune::test::require_failure_mentioning;
using ktune::test::run_ktune;
using ktune::test::TempDir;

namespace {

}  // namespace

TEST_CASE("cli: tune rejects an unknown op, naming it and the known ops", "[cli]") {
  TempDir dir;
  auto r = run_ktune(dir, "tune --op nosuchop --replay x.db --db " + dir.file("o.db"));
  require_failure_mentioning(r, "unknown op \"nosuchop\"");
  CHECK(r.output.find("copy") != std::string::npos);  // the known ops are listed
}

TEST_CASE("cli: an option the subcommand does not know gets a hint", "[cli]") {
  TempDir dir;
  const CliResult misspelt = run_ktune(dir, "tune --dryrun --budjet 3 --samples 2 --template copy");
  INFO(misspelt.output);
  CHECK(misspelt.status > 100);
  CHECK(misspelt.output.find("--dryrun: did you mean --dry-run?") != std::string::npos);
  CHECK(misspelt.output.find("--budjet: did you mean --budget?") != std::string::npos);
  CHECK(misspelt.output.find("--samples:") == std::string::npos);  // resembles nothing of tune's
  const CliResult global = run_ktune(dir, "best --log-level debug");
  INFO(global.output);
  CHECK(global.status > 100);
  CHECK(global.output.find("--log-level is a global option: give it before the subcommand") !=
        std::string::npos);
}

TEST_CASE("cli: tune and compile reject a malformed shape", "[cli]") {
  TempDir dir;
  require_failure_mentioning(
      run_ktune(dir, "tune --op copy --shape 12xbanana --replay x.db --db " + dir.file("o.db")),
      "12xbanana");
  require_failure_mentioning(run_ktune(dir, "compile --op copy --shape 0"), "0");
}

TEST_CASE("cli: tune rejects an unknown searcher and an unknown searcher option", "[cli]") {
  TempDir dir;
  auto r = run_ktune(dir, "tune --op copy --searcher nosuchsearcher --replay x.db --db " +
                              dir.file("o.db"));
  require_failure_mentioning(r, "nosuchsearcher");
  r = run_ktune(dir, "tune --op copy --searcher genetic --options nosuchoption=3 --replay x.db");
  require_failure_mentioning(r, "nosuchoption");
}

TEST_CASE("cli: --version prints the version every record stores", "[cli]") {
  TempDir dir;
  const CliResult r = run_ktune(dir, "--version");
  CHECK(r.status == 0);
  CHECK(r.output.find(std::string("ktune ") + KTUNE_VERSION) != std::string::npos);
  // A read command on a missing log says how one is made.
  require_failure_mentioning(run_ktune(dir, "best --db " + dir.file("none.db")),
                             "`ktune tune --db " + dir.file("none.db") + "` or `ktune import` creates one");
}

TEST_CASE("cli: tune rejects a missing or malformed plan file", "[cli]") {
  TempDir dir;
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("missing.json")),
                             "missing.json");
  ktune::test::write_text(dir.file("bad.json"), "[{\"op\": \"copy\", \"shape\": \"1x2x3\"}]");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("bad.json") + " --replay x"),
                             "entry 1");
  ktune::test::write_text(dir.file("notjson.json"), "{not json");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("notjson.json")),
                             "not valid JSON");
  // A plan names its problems: problem options beside it are refused, not dropped.
  ktune::test::write_text(dir.file("p.json"), "[{\"op\": \"copy\", \"shape\": \"4096\"}]");
  for (const char* extra : {"--shape 1024", "--dtype f16", "--attr foo=1", "--layout NT"})
    require_failure_mentioning(
        run_ktune(dir, "tune --dry-run --plan " + dir.file("p.json") + " " + extra),
        "either --plan or the problem options");
  // An empty shape is an error, not the template's example shape.
  ktune::test::write_text(dir.file("empty.json"), "[{\"op\": \"copy\", \"shape\": \"\"}]");
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --plan " + dir.file("empty.json")),
                             "the shape is empty");
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --template copy --shape ''"),
                             "the shape is empty");
  // An entry's budget has --budget's range: 0 (no limit) up to 10^9.
  ktune::test::write_text(dir.file("b0.json"),
                          "[{\"op\": \"copy\", \"shape\": \"4096\", \"budget\": 0}]");
  CHECK(run_ktune(dir, "tune --dry-run --plan " + dir.file("b0.json")).status == 0);
  ktune::test::write_text(dir.file("big.json"),
                          "[{\"op\": \"copy\", \"shape\": \"4096\", \"budget\": 99999999999999}]");
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --plan " + dir.file("big.json")),
                             "from 0 (no limit)");
  // A listed dimension past 2^63 - 1 is refused as written, as in text, never wrapped.
  ktune::test::write_text(dir.file("wrap.json"),
                          "[{\"op\": \"gemm\", \"shape\": [9223372036854775808, 5, 5], \"dtype\": \"f16\"}, "
                          "{\"op\": \"copy\", \"shape\": [18446744073709551615]}]");
  const CliResult wrapped = run_ktune(dir, "tune --dry-run --plan " + dir.file("wrap.json"));
  require_failure_mentioning(wrapped, "\"9223372036854775808\" is out of range (at most 2^63 - 1)");
  CHECK(wrapped.output.find("-9223372036854775808") == std::string::npos);
}

TEST_CASE("cli: tune with missing replay data names the file", "[cli]") {
  TempDir dir;
  require_failure_mentioning(
      run_ktune(dir, "tune --op copy --replay " + dir.file("nothere.db") + " --db " + dir.file("o.db")),
      "nothere.db");
}

TEST_CASE("cli: tune without a GPU and without --replay says to use --replay", "[cli]") {
  if (ktune::cuda_unavailable_reason() == std::nullopt) {
    KTUNE_SKIP("a GPU is present: the no-device message cannot be checked here");
  }
  TempDir dir;
  auto r = run_ktune(dir, "tune --op copy --budget 2 --db " + dir.file("o.db"));
  require_failure_mentioning(r, "no CUDA device");
  CHECK(r.output.find("--replay FILE") != std::string::npos);
}

TEST_CASE("cli: best, export and report name a missing database", "[cli]") {
  TempDir dir;
  const std::string missing = dir.file("missing.db");
  require_failure_mentioning(run_ktune(dir, "best --db " + missing), "missing.db");
  require_failure_mentioning(run_ktune(dir, "best --db " + missing + " --json"), "missing.db");
  require_failure_mentioning(run_ktune(dir, "export --db " + missing + " " + dir.file("o.jsonl")),
                             "missing.db");
  require_failure_mentioning(
      run_ktune(dir, "report --db " + missing + " --out " + dir.file("r.html")), "missing.db");
}

TEST_CASE("cli: an export filter that matches nothing is refused and the output kept", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("s.db");
  REQUIRE(run_ktune(dir, "import --db " + db + " " +
                             ktune::test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl"))
              .status == 0);
  const std::string out = dir.file("deploy.jsonl");
  ktune::test::write_text(out, "kept\n");
  auto refused = [&](const std::string& filter, const std::vector<std::string>& needles) {
    const CliResult r = run_ktune(dir, "export --db " + db + " " + filter + " " + out);
    for (const auto& n : needles) require_failure_mentioning(r, n);
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "kept\n");
  };
  // An op name where a template is expected: named, with the templates the log holds.
  refused("--template gemm --best 3", {"--template gemm: no record", "gemm_mma", "nothing written"});
  // A device name without its sm_XY|SMs parts: the device keys held are listed.
  refused("--device 'NVIDIA H200'", {"--device NVIDIA H200: no record", "NVIDIA H200|sm_90|132"});
  refused("--problem 'copy|N=1|dtype=f32'", {"--problem copy|N=1|dtype=f32", "copy|N=67108864"});
  refused("--run nosuchrun", {"--run nosuchrun: no record"});
  refused("--status timeout", {"--status timeout: no record", "(the log holds: ok)"});
  // Each filter matches alone, but not together.
  refused("--template copy --problem 'layernorm|rows=8192,hidden=4096|dtype=f16,norm=layernorm'",
          {"matches the filters together"});
  const CliResult ok = run_ktune(dir, "export --db " + db + " --template copy " + out);
  CHECK(ok.status == 0);
  CHECK(ok.output.find("exported 0") == std::string::npos);
  // No filter at all, and no ok trial for --best: the log is named, not "the filters".
  const std::string failed = dir.file("failed.db");
  {
    ktune::TuningLog log(failed);
    log.append(ktune::test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.5,
                                        ktune::Status::compile_error, "run-a", "copy|N=2048|dtype=f32"));
  }
  ktune::test::write_text(out, "kept\n");
  const CliResult none = run_ktune(dir, "export --db " + failed + " --best 1 " + out);
  require_failure_mentioning(none, "failed.db holds no ok trial (--best exports ok trials only)");
  CHECK(none.output.find("filters") == std::string::npos);
  std::ifstream in(out);
  CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == "kept\n");
}

TEST_CASE("cli: import under a built-in template's name checks that the records fit it", "[cli]") {
  TempDir dir;
  const std::string cache = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  const std::string db = dir.file("k.db");
  // Another kernel's parameters under copy's name: refused, naming the record and a parameter.
  // Named by the line of its cache entry, as the reader's own errors name it.
  require_failure_mentioning(run_ktune(dir, "import --db " + db + " " + cache +
                                                " --template copy --problem 'copy|N=67108864|dtype=f32'"),
                             {"is not one of template copy", "convolution_milo_A4000.json.gz:",
                              " (cache entry \""});
  // A problem copy cannot do.
  require_failure_mentioning(run_ktune(dir, "import --db " + db + " " + cache +
                                                " --template copy --problem 'copy|N=67108864|dtype=f99'"),
                             "is not one template copy can do");
  CHECK_FALSE(std::filesystem::exists(db));
  // A template name of the file's own is not checked.
  CHECK(run_ktune(dir, "import --db " + db + " " + cache + " --template conv").status == 0);
  // A T4 file ktune wrote, with one foreign result appended: the options (and the check) apply
  // to the foreign result only; the others keep their own templates. (Rewritten through
  // nlohmann::json, its configurations come back with sorted keys, which changes no config.)
  const std::string demo = ktune::test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  REQUIRE(run_ktune(dir, "import --db " + dir.file("demo.db") + " " + demo).status == 0);
  REQUIRE(run_ktune(dir, "export --db " + dir.file("demo.db") + " --format t4 " + dir.file("demo.t4.json")).status == 0);
  nlohmann::json t4 = nlohmann::json::parse(std::ifstream(dir.file("demo.t4.json")));
  nlohmann::json foreign = t4["results"][0];  // a gemm_mma result
  REQUIRE(foreign["ktune"]["template"] == "gemm_mma");
  const std::string problem = foreign["ktune"]["problem"];
  foreign.erase("ktune");
  t4["results"].push_back(foreign);
  std::ofstream(dir.file("mixed.t4.json")) << t4.dump();
  const CliResult mixed = run_ktune(dir, "import --db " + dir.file("mixed.db") + " " + dir.file("mixed.t4.json") +
                                             " --template gemm_mma --problem '" + problem + "' --arch sm_90");
  INFO(mixed.output);
  CHECK(mixed.status == 0);
  CHECK(ktune::TuningLog(dir.file("mixed.db"), ktune::LogMode::read_only).count() ==
        static_cast<std::int64_t>(t4["results"].size()));
  // The foreign result under a template it does not fit: named by its index among the
  // results, as the T4 reader's own errors name it.
  require_failure_mentioning(
      run_ktune(dir, "import --db " + dir.file("m2.db") + " " + dir.file("mixed.t4.json") +
                         " --template copy --problem 'copy|N=1024|dtype=f32' --arch sm_90"),
      {"mixed.t4.json: results[" + std::to_string(t4["results"].size() - 1) + "]",
       "is not one of template copy"});
}

TEST_CASE("cli: best says which ok trials name no config it would launch", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("u.db");
  {
    ktune::TuningLog log(db);
    log.append(ktune::test::make_record("block_size_x=256", 0.5, ktune::Status::ok, "run-a",
                                        "copy|N=1024|dtype=f32"));
  }
  const CliResult alone = run_ktune(dir, "best --db " + db);
  INFO(alone.output);
  CHECK(alone.status == 0);
  CHECK(alone.output.find("holds no successful trial of a config this build would launch") != std::string::npos);
  CHECK(alone.output.find("note: 1 ok trial of 1 task name no config") != std::string::npos);
  CHECK(alone.output.find("copy copy|N=1024|dtype=f32 on ") != std::string::npos);
  // export --best of such a log: refused before the output is touched.
  ktune::test::write_text(dir.file("deploy.jsonl"), "kept\n");
  const CliResult none = run_ktune(dir, "export --db " + db + " --best 2 " + dir.file("deploy.jsonl"));
  require_failure_mentioning(none, "names a config this build would launch; nothing written");
  std::ifstream kept(dir.file("deploy.jsonl"));
  CHECK(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()) == "kept\n");
  {
    ktune::TuningLog log(db);
    log.append(ktune::test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.5, ktune::Status::ok,
                                        "run-a", "copy|N=2048|dtype=f32"));
  }
  const CliResult mixed = run_ktune(dir, "best --db " + db);
  INFO(mixed.output);
  CHECK(mixed.output.find("copy|N=2048|dtype=f32") != std::string::npos);  // its row
  CHECK(mixed.output.find("note: 1 ok trial of 1 task") != std::string::npos);
  // --json: stdout stays one JSON array, the note goes to stderr; the report notes it too.
  const CliResult json = ktune::test::run_shell(
      dir, "{ '" + ktune::test::ktune_program() + "' best --json --db " + db + " 2> " + dir.file("err.txt") + "; }");
  INFO(json.output);
  CHECK(json.status == 0);
  const auto rows = nlohmann::json::parse(json.output);
  CHECK(rows.size() == 1);
  std::ifstream err(dir.file("err.txt"));
  CHECK(std::string((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>())
            .find("note: 1 ok trial of 1 task") != std::string::npos);
  REQUIRE(run_ktune(dir, "report --db " + db + " --out " + dir.file("r.html")).status == 0);
  std::ifstream page(dir.file("r.html"));
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK(html.find("note: 1 ok trial of 1 task name no config") != std::string::npos);
  CHECK(html.find("copy copy|N=1024|dtype=f32 on ") != std::string::npos);
  // A task with only failed trials is said too, on its own line.
  auto append_failed = [](const std::string& path, ktune::Status status) {
    ktune::TuningLog log(path);
    log.append(ktune::test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", std::nan(""), status,
                                        "run-a", "copy|N=4096|dtype=f32"));
  };
  append_failed(db, ktune::Status::runtime_error);
  const CliResult failed = run_ktune(dir, "best --db " + db);
  INFO(failed.output);
  CHECK(failed.output.find("note: 1 ok trial of 1 task name no config") != std::string::npos);
  CHECK(failed.output.find("\nnote: 1 task has only failed trials, so no row shows it: copy "
                           "copy|N=4096|dtype=f32 on ") != std::string::npos);
  // Only failed trials in a log: no successful trial yet, and the note names the task.
  const std::string failing = dir.file("f.db");
  append_failed(failing, ktune::Status::compile_error);
  const CliResult none_ok = run_ktune(dir, "best --db " + failing);
  INFO(none_ok.output);
  CHECK(none_ok.output.find("holds no successful trial yet") != std::string::npos);
  CHECK(none_ok.output.find("1 task has only failed trials") != std::string::npos);
}

TEST_CASE("cli: import, list and compile reject bad arguments", "[cli]") {
  TempDir dir;
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " +
                                                dir.file("nothere.jsonl")),
                             "nothere.jsonl");
  require_failure_mentioning(run_ktune(dir, "list --arch sm_1"), "sm_1");
  require_failure_mentioning(run_ktune(dir, "compile --template nosuchtemplate"), "nosuchtemplate");
  require_failure_mentioning(run_ktune(dir, "nosuchcommand"), "subcommand");
  // An empty name would silently mean "not given"; a newline would split tables.
  const std::string cache = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " + cache + " --run ''"),
                             "--run: an empty value");
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " + cache +
                                                " --device-name \"$(printf 'a\\nb')\""),
                             "control character");
  require_failure_mentioning(run_ktune(dir, "export --db " + dir.file("o.db") + " --template '' x.jsonl"),
                             "--template: an empty value");
  // A --format the file contradicts: named as such, before the reader's own complaint.
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " + cache +
                                                " --format jsonl"),
                             {"looks like kernel_tuner, not jsonl as --format", "name kernel_tuner"});
  const std::string demo = ktune::test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " + demo +
                                                " --format kernel_tuner"),
                             "looks like jsonl, not kernel_tuner as --format");
  // A name alone says nothing a forced format does not override: a malformed file named like a
  // Kernel Tuner cache, read as T4, gets the T4 reader's own complaint only.
  ktune::test::write_text(dir.file("odd.json.gz"), "{\"results\": 5}");
  const CliResult odd = run_ktune(dir, "import --db " + dir.file("o.db") + " " + dir.file("odd.json.gz") +
                                           " --format t4 --template k --problem 'k|n=1|' --arch sm_90");
  INFO(odd.output);
  CHECK(odd.status != 0);
  CHECK(odd.output.find("looks like") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("o.db")));
  // A file of no records (an export's header alone, an empty T4 results list) is refused as an
  // empty file is, with no log left behind.
  ktune::test::write_text(dir.file("header.jsonl"), "{\"format\":\"ktune-trials\",\"version\":1}\n");
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " + dir.file("header.jsonl")),
                             {"header.jsonl' holds no trial record (jsonl)", "nothing to import"});
  ktune::test::write_text(dir.file("none.json"), "{\"schema_version\": \"1.0.0\", \"results\": []}");
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("o.db") + " " + dir.file("none.json") +
                                            " --format t4 --template k --problem 'k|n=1|' --arch sm_90"),
                             {"none.json' holds no trial record (t4)"});
  CHECK_FALSE(std::filesystem::exists(dir.file("o.db")));
  // Malformed JSON is told by line and column, without the parser library's own tag.
  ktune::test::write_text(dir.file("cut.jsonl"), "{\"format\":\"ktune-trials\",\"version\":1}\n{\"run_id\": \"r");
  const CliResult cut = run_ktune(dir, "import --db " + dir.file("o.db") + " " + dir.file("cut.jsonl"));
  INFO(cut.output);
  CHECK(cut.status != 0);
  CHECK(cut.output.find("cut.jsonl:2: not valid JSON: line 1, column ") != std::string::npos);
  CHECK(cut.output.find("json.exception") == std::string::npos);
}

TEST_CASE("cli: every subcommand's --help shows its options with defaults", "[cli]") {
  TempDir dir;
  auto r = run_ktune(dir, "tune --help");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("--budget") != std::string::npos);
  CHECK(r.output.find("genetic") != std::string::npos);  // the default searcher is shown
  CHECK(r.output.find("ktune.db") != std::string::npos);
  for (const char* sub : {"best", "report", "export", "import", "list", "compile"}) {
    auto h = run_ktune(dir, std::string(sub) + " --help");
    INFO(sub << ": " << h.output);
    CHECK(h.status == 0);
    CHECK(h.output.find("Usage") != std::string::npos);
  }
}

TEST_CASE("cli: a default config with a failed trial has no time in best and stays out of export --best",
          "[cli]") {
  TempDir dir;
  const std::string db = dir.file("flaky.db"), problem = "copy|N=1048576|dtype=f32";
  const std::string source = ktune::Builder::source_hash(ktune::find_template("copy")->source());
  const std::string fallback = "VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0";  // copy's default
  {
    ktune::TuningLog log(db);
    auto add = [&](const std::string& config, double ms, ktune::Status status) {
      auto r = ktune::test::make_record(config, ms, status, "run-a", problem, "copy",
                                        ktune::Device::h200());
      r.source_hash = source;
      log.append(r);
    };
    add(fallback, 0.5, ktune::Status::ok);
    add(fallback, 0.5, ktune::Status::timeout);  // timed out when measured again
    add("VEC=2,THREADS=256,ITEMS=2,GRID_STRIDE=0", 0.6, ktune::Status::ok);
  }
  const CliResult best = ktune::test::run_shell(
      dir, "{ '" + ktune::test::ktune_program() + "' best --json --db " + db + " 2> /dev/null; }");
  INFO(best.output);
  REQUIRE(best.status == 0);
  const auto rows = nlohmann::json::parse(best.output);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["config"] == "VEC=2,THREADS=256,ITEMS=2,GRID_STRIDE=0");
  CHECK(rows[0]["default_ms"].is_null());
  const CliResult exported = run_ktune(dir, "export --db " + db + " --best 1 " + dir.file("d.jsonl"));
  INFO(exported.output);
  REQUIRE(exported.status == 0);
  std::ifstream in(dir.file("d.jsonl"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("VEC=2,THREADS=256,ITEMS=2") != std::string::npos);
  CHECK(text.find(fallback) == std::string::npos);
}
