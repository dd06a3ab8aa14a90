// Command-line checks found by an audit of bad input: outputs that would replace a tuning
// log, numbers outside an option's range, options that contradict each other, shapes too
// large for a template, malformed files given where another format was expected, targets a
// template cannot run on, an unsatisfiable space in a dry run, the same problem with or
// without --shape, and Ctrl-C during a replayed run. Runs the built `ktune` binary.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_fixtures.h"
#include "gpu_guard.h"
#include "ktune/dispatch.h"
#include "skip.h"

using ktune::test::CliResult;
using ktune::test::require_failure_mentioning;
using ktune::test::run_ktune;
using ktune::test::run_ktune_unprivileged;
using ktune::test::source_path;
using ktune::test::TempDir;
using ktune::test::write_text;

namespace {

/// The example user template copied into `dir` with its files, plus the condition
/// `expression` on block_size_x; returns the copied document's path.
std::string transpose_with_condition(const TempDir& dir, const std::string& expression) {
  std::filesystem::copy(source_path("examples/custom_template"), dir.file("t"),
                        std::filesystem::copy_options::recursive);
  const std::string spec = dir.file("t/transpose.T1.json");
  std::ifstream in(spec);
  auto doc = nlohmann::json::parse(in);
  in.close();
  doc["ConfigurationSpace"]["Conditions"].push_back(
      {{"Expression", expression}, {"Parameters", {"block_size_x"}}});
  write_text(spec, doc.dump(1));
  return spec;
}

}  // namespace

TEST_CASE("cli: export and report never replace the log they read or another log", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db"), other = dir.file("other.db");
  ktune::test::write_recorded_copy_db(db, {1048576});
  ktune::test::write_recorded_copy_db(other, {2097152});
  require_failure_mentioning(run_ktune(dir, "export --db " + db + " " + db), {"t.db", "being read"});
  require_failure_mentioning(run_ktune(dir, "report --db " + db + " -o " + db), {"t.db", "being read"});
  require_failure_mentioning(run_ktune(dir, "export --db " + db + " " + other),
                             {"other.db", "SQLite database"});
  for (const auto& path : {db, other}) {
    const CliResult best = run_ktune(dir, "best --db " + path);
    INFO(best.output);
    CHECK(best.status == 0);  // both logs are intact
  }
}

TEST_CASE("cli: numbers outside an option's range are refused, naming the option", "[cli]") {
  TempDir dir;
  const std::string tune = "tune --dry-run --template copy ";
  require_failure_mentioning(run_ktune(dir, tune + "--budget -1"), {"--budget", "'-1'"});
  require_failure_mentioning(run_ktune(dir, tune + "--budget 18446744073709551616"), {"--budget"});
  require_failure_mentioning(run_ktune(dir, tune + "--early-stop -1"), {"--early-stop"});
  require_failure_mentioning(run_ktune(dir, tune + "--time nan"), {"--time", "finite"});
  require_failure_mentioning(run_ktune(dir, tune + "--time -1"), {"--time", "0 or more"});
  require_failure_mentioning(run_ktune(dir, "compile --template copy -j -1"), {"--jobs"});
  // Seeds are whole numbers from 0 (-1 was read as 2^64 - 1); fractions are named as such.
  require_failure_mentioning(run_ktune(dir, tune + "--seed -1"), {"--seed", "'-1' is outside"});
  require_failure_mentioning(run_ktune(dir, "compile --template copy --seed 99999999999999999999999"),
                             {"--seed", "outside"});
  const std::string replay = "replay --data " + source_path("tests/data/none.json") + " ";
  require_failure_mentioning(run_ktune(dir, replay + "--seed -1"), {"--seed", "'-1' is outside"});
  require_failure_mentioning(run_ktune(dir, replay + "--budget 10.5"), {"--budget", "'10.5' is not a whole number"});
  require_failure_mentioning(run_ktune(dir, replay + "--repeats 2.7"), {"--repeats", "not a whole number"});
  require_failure_mentioning(run_ktune(dir, tune + "--searcher genetic --options population=-1"),
                             {"population", "2..100000"});
  require_failure_mentioning(
      run_ktune(dir, "vendor --db " + dir.file("v.db") + " --name cublas --problem p --device d --ms 0"),
      {"--ms", "above 0"});
  CHECK_FALSE(std::filesystem::exists(dir.file("v.db")));
}

TEST_CASE("cli: a Kernel Tuner entry whose time is not a time: replay counts it failed and says "
          "so, import refuses it by line",
          "[cli][replay]") {
  TempDir dir;
  const std::string data = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  const std::string plain = dir.file("conv_bad.json");
  REQUIRE(std::system(("gzip -dc '" + data + "' > '" + plain + "'").c_str()) == 0);
  std::string text = ktune::test::read_text(plain);
  // The first cache entry's time becomes -1; its samples stay as they were.
  const auto at = text.find("\"time\": ", text.find("\"cache\""));
  REQUIRE(at != std::string::npos);
  const auto end = text.find(',', at);
  text.replace(at, end - at, "\"time\": -1.0");
  ktune::test::write_text(plain, text);
  std::filesystem::copy_file(std::string(KTUNE_DATASETS_DIR) + "/convolution_milo.T1.json",
                             dir.file("conv_bad.T1.json"));
  // The warning goes to stderr: with --json -, standard output stays one JSON document.
  const CliResult replay = ktune::test::run_shell(
      dir, "{ '" + ktune::test::ktune_program() + "' replay --data " + plain +
               " --searcher random --budget 5 --repeats 1 --json - 2> '" + dir.file("err.txt") + "'; }");
  INFO(replay.output);
  CHECK(replay.status == 0);
  CHECK_NOTHROW(nlohmann::json::parse(replay.output));
  CHECK(ktune::test::read_text(dir.file("err.txt"))
            .find("1 record has an ok time that is not a positive number and counts as failed") !=
        std::string::npos);
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("k.db") + " " + plain),
                             {"conv_bad.json:" + std::to_string(line) + " (cache entry", "field 'time'",
                              "-1 is not a time"});
  CHECK_FALSE(std::filesystem::exists(dir.file("k.db")));
}

TEST_CASE("cli: replay says when runs stop before the budget with recorded configs left",
          "[cli][replay]") {
  TempDir dir;
  // 10^9 points, 10 valid (every p_i equal to p0): no one-parameter move from a valid config
  // reaches another, so a sampling searcher stops after its first proposal.
  nlohmann::json params = nlohmann::json::array(), conditions = nlohmann::json::array();
  nlohmann::json cache = nlohmann::json::object(), tune = nlohmann::json::object();
  std::vector<std::string> names;
  for (int i = 0; i < 9; ++i) {
    const std::string name = "p" + std::to_string(i);
    names.push_back(name);
    params.push_back({{"Name", name}, {"Values", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, {"Default", 0}});
    tune[name] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    if (i > 0) conditions.push_back({{"Expression", name + " == p0"}});
  }
  for (int v = 0; v < 10; ++v) {
    std::string key;
    nlohmann::json entry = {{"time", 1.0 + v}, {"times", {1.0 + v}}};
    for (const auto& name : names) {
      key += (key.empty() ? "" : ",") + std::to_string(v);
      entry[name] = v;
    }
    cache[key] = entry;
  }
  write_text(dir.file("sparse.T1.json"),
                   nlohmann::json({{"ConfigurationSpace",
                                    {{"TuningParameters", params}, {"Conditions", conditions}}}})
                       .dump());
  write_text(dir.file("sparse_X.json"),
                   nlohmann::json({{"device_name", "X"}, {"kernel_name", "k"}, {"problem_size", {1}},
                                   {"tune_params_keys", names}, {"tune_params", tune},
                                   {"cache", cache}})
                       .dump());
  const CliResult r = run_ktune(dir, "replay --data " + dir.file("sparse_X.json") +
                                         " --searcher random --budget 20 --repeats 2");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("note: 2 of 2 runs stopped early (after 1.0 evaluations on average, of 10 "
                      "that the budget and the 10 recorded configs allow)") != std::string::npos);
  // Exhaustive search evaluates all 10: nothing stopped early.
  const CliResult all = run_ktune(dir, "replay --data " + dir.file("sparse_X.json") +
                                           " --searcher exhaustive --budget 20 --repeats 1");
  INFO(all.output);
  CHECK(all.status == 0);
  CHECK(all.output.find("stopped early") == std::string::npos);
}

TEST_CASE("cli: contradicting or empty choices are refused", "[cli]") {
  TempDir dir;
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --op conv2d --template gemm_mma"),
                             {"gemm_mma", "conv2d"});
  require_failure_mentioning(run_ktune(dir, "nope"), {"ktune: error (unknown_name): unknown subcommand 'nope'", "tune"});
  require_failure_mentioning(run_ktune(dir, "best --db ''"), {"path is empty"});
  const std::string data =
      std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  require_failure_mentioning(run_ktune(dir, "replay --data " + data + " --searcher , --budget 2"),
                             {"--searcher", "names no searcher"});
  // A searcher named twice, an empty option value, empty paths: refused, not run or ignored.
  require_failure_mentioning(
      run_ktune(dir, "replay --data " + data + " --searcher genetic,genetic --budget 2"),
      {"names genetic twice"});
  require_failure_mentioning(
      run_ktune(dir, "replay --data " + data + " --searcher genetic --options population= --budget 2"),
      {"searcher option 'population' has an empty value"});
  require_failure_mentioning(run_ktune(dir, "replay --data " + data + " --budget 2 --json ''"),
                             {"--json", "empty"});
  require_failure_mentioning(run_ktune(dir, "replay --data " + data + " --budget 2 --space ''"),
                             {"--space", "empty"});
  // Blanks around searcher names are not part of them.
  const CliResult spaced =
      run_ktune(dir, "replay --data " + data + " --searcher 'genetic, random' --budget 5 --repeats 1");
  INFO(spaced.output);
  CHECK(spaced.status == 0);
  CHECK(spaced.output.find("searcher random:") != std::string::npos);
  // Each searcher is labelled with the options it received; one run has no interval.
  const CliResult two = run_ktune(dir, "replay --data " + data + " --searcher genetic,annealing "
                                       "--options population=8 --budget 25 --repeats 2");
  INFO(two.output);
  CHECK(two.status == 0);
  CHECK(two.output.find("searcher genetic population=8:") != std::string::npos);
  CHECK(two.output.find("searcher annealing:") != std::string::npos);
  const CliResult one = run_ktune(dir, "replay --data " + data + " --searcher random --budget 25 --repeats 1");
  INFO(one.output);
  CHECK(one.status == 0);
  CHECK(one.output.find("(one run: no interval)") != std::string::npos);
  // Data without its T1 file: the paths looked at are named.
  std::filesystem::copy_file(data, dir.file("conv_X.json.gz"));
  require_failure_mentioning(run_ktune(dir, "replay --data " + dir.file("conv_X.json.gz") + " --budget 2"),
                             {"no T1 file beside", dir.file("conv_X.T1.json") + ", " + dir.file("conv.T1.json")});
  require_failure_mentioning(
      run_ktune(dir, "replay --data " + data + " --budget 2 --json " + dir.file("no/such/x.json")),
      {"no/such"});
  // A folder as --json is refused before the runs, not after them.
  const auto folder = run_ktune(dir, "replay --data " + data + " --budget 2 --json " + dir.path.string());
  require_failure_mentioning(folder, {"is a folder"});
  CHECK(folder.output.find("optimum") == std::string::npos);
  // A ktune log as --data: named, with the command that replays it.
  ktune::test::write_recorded_copy_db(dir.file("recorded.db"), {4096});
  REQUIRE(run_ktune(dir, "export --db " + dir.file("recorded.db") + " " + dir.file("recorded.jsonl")).status == 0);
  for (const char* log : {"recorded.db", "recorded.jsonl"})
    require_failure_mentioning(run_ktune(dir, "replay --data " + dir.file(log) + " --budget 2"),
                               {"is a ktune tuning log", "ktune tune --replay"});
  // /dev/stdout, a link to the pipe the output goes into, is written through.
  const auto piped = run_ktune(dir, "replay --data " + data + " --budget 2 --repeats 1 --json /dev/stdout");
  INFO(piped.output);
  CHECK(piped.status == 0);
  CHECK(piped.output.find("\"random_expectation_curve\"") != std::string::npos);
  // Nor its own inputs (copies, so that a regression cannot touch the shared datasets; the
  // data named through a link).
  const std::string data_copy = dir.file("data.json.gz"), space_copy = dir.file("space.T1.json");
  std::filesystem::copy_file(data, data_copy);
  std::filesystem::copy_file(std::string(KTUNE_DATASETS_DIR) + "/convolution_milo.T1.json", space_copy);
  std::filesystem::create_symlink(data_copy, dir.file("data-link.json.gz"));
  const auto data_size = std::filesystem::file_size(data_copy);
  for (const std::string& input : {dir.file("data-link.json.gz"), space_copy}) {
    require_failure_mentioning(run_ktune(dir, "replay --data " + data_copy + " --space " + space_copy +
                                                  " --budget 2 --json " + input),
                               {"--json", "being read"});
  }
  CHECK(std::filesystem::file_size(data_copy) == data_size);
  // A mistyped --json naming a tuning log must not replace it.
  ktune::test::write_recorded_copy_db(dir.file("log.db"), {4096});
  const auto before = std::filesystem::file_size(dir.file("log.db"));
  require_failure_mentioning(
      run_ktune(dir, "replay --data " + data + " --budget 2 --json " + dir.file("log.db")),
      {"log.db", "SQLite database"});
  CHECK(std::filesystem::file_size(dir.file("log.db")) == before);
  CHECK(ktune::TuningLog(dir.file("log.db"), ktune::LogMode::read_only).count() > 0);
}

TEST_CASE("cli: shapes too large for a memory-bound template are refused", "[cli]") {
  TempDir dir;
  require_failure_mentioning(
      run_ktune(dir, "tune --dry-run --template elementwise --shape "
                     "9223372036854775807x9223372036854775807"),
      {"2^40"});
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --template reduction --shape 1x9223372036854775807"),
                             {"2^40"});
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --template copy --shape 4398046511104"),
                             {"2^40"});
}

TEST_CASE("cli: files of the wrong kind are named for what they are", "[cli]") {
  TempDir dir;
  write_text(dir.file("bad.T1.json"), "{bad json");
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --space " + dir.file("bad.T1.json")),
                             {"bad.T1.json", "not valid JSON"});
  write_text(dir.file("obj.json"), "{}\n");
  const CliResult r = run_ktune(dir, "tune --template copy --replay " + dir.file("obj.json") +
                                         " --db " + dir.file("o.db"));
  require_failure_mentioning(r, {"obj.json", "format"});
  CHECK(r.output.find("SQLite") == std::string::npos);
}

TEST_CASE("cli: compile --config builds the named changes of the default, or names what is wrong", "[cli]") {
  TempDir dir;
  const CliResult ok = run_ktune(dir, "compile --template copy --samples 0 --config VEC=2,THREADS=128 "
                                      "--config ITEMS=2 -j 1");
  INFO(ok.output);
  REQUIRE(ok.status == 0);
  CHECK(ok.output.find("2 configs") != std::string::npos);
  CHECK(ok.output.find("VEC=2,THREADS=128,") != std::string::npos);
  CHECK(ok.output.find(",ITEMS=2,") != std::string::npos);
  CHECK(ok.output.find("(default)") == std::string::npos);
  // A named config that is the default (no change of it) is marked as the default.
  const CliResult same = run_ktune(dir, "compile --template copy --samples 0 --config ITEMS=2 "
                                        "--config VEC=4 -j 1");
  INFO(same.output);
  REQUIRE(same.status == 0);
  CHECK(same.output.find(",ITEMS=2,GRID_STRIDE=0\n") != std::string::npos);
  CHECK(same.output.find(",ITEMS=1,GRID_STRIDE=0  (default)") != std::string::npos);
  require_failure_mentioning(run_ktune(dir, "compile --template copy --config NOPE=3"),
                             {"--config \"NOPE=3\"", "unknown parameter 'NOPE'"});
  require_failure_mentioning(run_ktune(dir, "compile --template copy --config VEC=3"),
                             {"VEC=3", "{1, 2, 4}"});
  // A config outside the constraints: LayerNorm's row cannot fit in 64 warps' registers.
  require_failure_mentioning(
      run_ktune(dir, "compile --template layernorm --shape 32768x1024 --dtype f16 --config "
                     "THREADS=128,TPR=128,VEC=8,RPG=4,PREFETCH=1,PARAMS=1,MIN_WARPS=64"),
      {"breaks a constraint", "fits in registers"});
}

TEST_CASE("cli: compile compiles only what the template can implement, and as many as asked",
          "[cli]") {
  TempDir dir;
  // gemm_wgmma's problem left at its defaults is one it can do (layout NT), and it compiles.
  const CliResult wgmma = run_ktune(dir, "compile --template gemm_wgmma --samples 0 -j 1");
  INFO(wgmma.output);
  CHECK(wgmma.status == 0);
  CHECK(wgmma.output.find("layout=NT") != std::string::npos);
  require_failure_mentioning(run_ktune(dir, "compile --template gemm_wgmma --layout NN --samples 0"),
                             {"layout NN is not supported", "use gemm_mma"});
  // A shape the template cannot do is named with its reason, not handed to NVRTC to stop at
  // a static_assert.
  const CliResult conv = run_ktune(dir, "compile --template conv2d_wgmma --shape 1x8x8x3x64x3x3 "
                                        "--samples 0");
  INFO(conv.output);
  CHECK(conv.status != 0);
  CHECK(conv.output.find("cannot implement") != std::string::npos);
  CHECK(conv.output.find("C = 3 is not a multiple of 8") != std::string::npos);
  CHECK(conv.output.find("static assertion") == std::string::npos);
  // --samples N gives N distinct configs besides the default while the space has them, and
  // says so when it has fewer (copy: 120 valid configs).
  const CliResult some = run_ktune(dir, "compile --template copy --samples 7 -j 1");
  CHECK(some.output.find("8 configs") != std::string::npos);
  const CliResult all = run_ktune(dir, "compile --template copy --samples 200 -j 1");
  INFO(all.output);
  CHECK(all.status == 0);
  CHECK(all.output.find("120 configs") != std::string::npos);
  CHECK(all.output.find("119 of the 200 sampled configs") != std::string::npos);
  // A default that breaks a constraint of its space (a user's T1 document can say so) is
  // refused as tuning refuses it, not compiled as "ok (default)".
  const std::string spec = transpose_with_condition(dir, "block_size_x >= 64");
  const CliResult user = run_ktune(dir, "compile --space " + spec + " --samples 1 -j 1");
  INFO(user.output);
  CHECK(user.status != 0);
  CHECK(user.output.find("breaks a constraint: block_size_x >= 64") != std::string::npos);
  CHECK(user.output.find("(default)") == std::string::npos);
}

TEST_CASE("cli: compile resolves --op as tune does, an unknown op lists each op once", "[cli]") {
  TempDir dir;
  const CliResult simt = run_ktune(dir, "compile --op gemm --dtype f32 --samples 0 -j 1");
  INFO(simt.output);
  REQUIRE(simt.status == 0);
  CHECK(simt.output.find("gemm_simt on gemm|") != std::string::npos);
  const CliResult unknown = run_ktune(dir, "tune --op nope --dry-run");
  INFO(unknown.output);
  CHECK(unknown.status != 0);
  const auto first = unknown.output.find("conv2d");
  REQUIRE(first != std::string::npos);
  CHECK(unknown.output.find("conv2d", first + 1) == std::string::npos);
  CHECK(unknown.output.find("gemm, layernorm") != std::string::npos);
}

TEST_CASE("cli: a folder, a FIFO or a read-only file as --db is refused when it is opened", "[cli]") {
  TempDir dir;
  std::filesystem::create_directory(dir.file("folder.db"));
  require_failure_mentioning(run_ktune(dir, "best --db " + dir.file("folder.db")), {"is a folder"});
  // Reading a FIFO would wait for a writer forever.
  REQUIRE(mkfifo(dir.file("fifo.db").c_str(), 0644) == 0);
  require_failure_mentioning(run_ktune(dir, "best --db " + dir.file("fifo.db")), {"is a FIFO (named pipe), not a regular file"});
  require_failure_mentioning(run_ktune(dir, "export --db " + dir.file("fifo.db") + " " + dir.file("o.jsonl")),
                             {"not a regular file"});
  require_failure_mentioning(run_ktune(dir, "best --db /dev/null"), {"is a device, not a regular file"});

  // A log the user may not write is refused before anything is measured or read into it.
  const std::string plan = source_path("examples/demo_plan.json");
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string db = dir.file("ro.db");
  REQUIRE(run_ktune(dir, "import --db " + db + " " + recorded).status == 0);
  std::filesystem::permissions(db, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                       std::filesystem::perms::others_read);
  const auto r = run_ktune_unprivileged(dir, "tune --plan " + plan + " --replay " + recorded + " --db " +
                                                 db + " --budget 100 --progress 0");
  if (!r) {
    WARN("skipped the read-only log check: running as root without setpriv");
    return;
  }
  require_failure_mentioning(*r, {"ro.db", "is read-only"});
  CHECK(r->output.find("INSERT") == std::string::npos);  // refused at open, not at an insert
}

TEST_CASE("cli: /dev/stdout redirected to a file is written through, never replaced", "[cli]") {
  TempDir dir;
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string db = dir.file("s.db");
  REQUIRE(run_ktune(dir, "import --db " + db + " " + recorded).status == 0);
  const std::string k = "'" + ktune::test::ktune_program() + "'";
  // What the shell wrote before and after, and what was in a file opened for appending, stays.
  write_text(dir.file("appended.txt"), "existing\n");
  const std::string commands =
      "{ echo header; " + k + " export --db " + db + " --template copy --best 1 /dev/stdout; echo footer; } > '" +
      dir.file("g.txt") + "'; " + k + " report --db " + db + " --out /dev/stdout >> '" + dir.file("appended.txt") + "'";
  const CliResult r = ktune::test::run_shell(dir, "bash -c \"" + commands + "\"");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream g(dir.file("g.txt"));
  const std::string text((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  CHECK(text.rfind("header\n{\"format\":\"ktune-trials\"", 0) == 0);
  CHECK(text.size() > 7);
  CHECK(text.substr(text.size() - 7) == "footer\n");
  std::ifstream a(dir.file("appended.txt"));
  const std::string appended((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  CHECK(appended.rfind("existing\n<!DOCTYPE html>", 0) == 0);
  // The summaries go to stderr, not into the data: the records between the shell's lines
  // import, and the page ends with the page.
  CHECK(text.find("exported") == std::string::npos);
  CHECK(r.output.find("exported 4 records to /dev/stdout") != std::string::npos);
  CHECK(appended.find("wrote /dev/stdout") == std::string::npos);
  CHECK(r.output.find("wrote /dev/stdout") != std::string::npos);
  write_text(dir.file("records.jsonl"), text.substr(7, text.size() - 14));
  const CliResult back = run_ktune(dir, "import --db " + dir.file("back.db") + " " + dir.file("records.jsonl"));
  INFO(back.output);
  CHECK(back.status == 0);
  CHECK(back.output.find("imported 4 records") != std::string::npos);
  // /dev/null holds no data to spoil: with stdout silenced there too, the summary stays silent.
  const CliResult silenced = ktune::test::run_shell(
      dir, "{ " + k + " export --db " + db + " /dev/null > /dev/null; " + k + " report --db " + db +
               " --out /dev/null > /dev/null; }");
  INFO(silenced.output);
  CHECK(silenced.status == 0);
  CHECK(silenced.output.empty());
}

TEST_CASE("cli: standard output that cannot take what a command prints fails the command",
          "[cli]") {
  if (!std::filesystem::exists("/dev/full")) {
    KTUNE_SKIP("this system has no /dev/full");
  }
  TempDir dir;
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  REQUIRE(run_ktune(dir, "import --db " + dir.file("s.db") + " " + recorded).status == 0);
  for (const std::string args : {std::string("list"), "best --db " + dir.file("s.db"),
                                 "best --json --db " + dir.file("s.db")}) {
    INFO(args);
    // The group's own redirect wins for stdout; stderr still reaches the captured output.
    const CliResult r =
        ktune::test::run_shell(dir, "{ '" + ktune::test::ktune_program() + "' " + args + " > /dev/full; }");
    CHECK(r.status == 2);
    CHECK(r.output.find("writing to standard output failed") != std::string::npos);
  }
}

TEST_CASE("cli: a new log in a folder the user cannot write names the folder and the reason",
          "[cli]") {
  TempDir dir;
  const std::filesystem::path folder = dir.path / "locked";
  std::filesystem::create_directory(folder);
  std::filesystem::permissions(folder, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                                           std::filesystem::perms::group_read | std::filesystem::perms::group_exec |
                                           std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const auto r = run_ktune_unprivileged(dir, "import --db " + (folder / "new.db").string() + " " + recorded);
  if (!r) {
    WARN("skipped the unwritable-folder check: running as root without setpriv");
    return;
  }
  require_failure_mentioning(*r, {"new.db", "cannot create it: folder", "locked", "Permission denied"});
  CHECK_FALSE(std::filesystem::exists(folder / "new.db"));
}

TEST_CASE("cli: a new log or an output under a path the system cannot follow is refused by name",
          "[cli]") {
  TempDir dir;
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  write_text(dir.file("afile"), "x\n");
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("afile/new.db") + " " + recorded),
                             {"afile/new.db", "cannot create it", "afile' is not a folder"});
  // SQLite would read "nodir/.." as "." and create the log where no later command finds it.
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("nodir/../j.db") + " " + recorded),
                             {"nodir/../j.db", "nodir' does not exist"});
  CHECK_FALSE(std::filesystem::exists(dir.file("j.db")));
  REQUIRE(run_ktune(dir, "import --db " + dir.file("s.db") + " " + recorded).status == 0);
  require_failure_mentioning(run_ktune(dir, "export --db " + dir.file("s.db") + " " + dir.file("afile/../y.jsonl")),
                             {"afile' is not a folder"});
  if (std::filesystem::exists("/dev/full"))
    require_failure_mentioning(
        run_ktune(dir, "export --db " + dir.file("s.db") + " --format t4 /dev/full"),
        {"/dev/full", "failed"});
  // A file another user owns in a folder open to all: renaming over it would take it over.
  namespace fs = std::filesystem;
  fs::create_directory(dir.path / "shared");
  fs::permissions(dir.path / "shared", fs::perms::all);
  write_text(dir.file("shared/theirs.txt"), "theirs\n");
  fs::permissions(dir.file("shared/theirs.txt"),
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  const auto r = run_ktune_unprivileged(dir, "export --db " + dir.file("s.db") + " " + dir.file("shared/theirs.txt"));
  if (!r) {
    WARN("skipped the other user's file check: running as root without setpriv");
    return;
  }
  require_failure_mentioning(*r, {"theirs.txt", "Permission denied"});
  std::ifstream kept(dir.file("shared/theirs.txt"));
  CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "theirs\n");
  // Behind a folder the user may not search, a log or an input exists but cannot be reached.
  fs::create_directories(dir.path / "private" / "open");
  fs::permissions(dir.path / "private" / "open", fs::perms::all);
  fs::copy_file(recorded, dir.path / "private" / "open" / "data.jsonl");
  fs::permissions(dir.path / "private", fs::perms::owner_all);
  const auto hidden_log = run_ktune_unprivileged(dir, "import --db " + dir.file("private/open/x.db") + " " + recorded);
  require_failure_mentioning(*hidden_log, {"x.db", "cannot be reached", "Permission denied"});
  const auto hidden_data = run_ktune_unprivileged(
      dir, "tune --template copy --shape 67108864 --replay " + dir.file("private/open/data.jsonl") + " --db " +
               dir.file("shared/t.db") + " --progress 0");
  require_failure_mentioning(*hidden_data, {"data.jsonl", "cannot be reached", "Permission denied"});
}

TEST_CASE("cli: a log in a read-only folder is read where it is, with nothing created beside it",
          "[cli]") {
  namespace fs = std::filesystem;
  TempDir dir;
  // A deployment: a read-only image or mount, in a folder whose name SQLite's URIs must escape.
  const fs::path folder = dir.path / "im age?#%20";
  fs::create_directory(folder);
  const std::string db = (folder / "deploy.db").string();
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string source = dir.file("tuned.db");
  REQUIRE(run_ktune(dir, "import --db " + source + " " + recorded).status == 0);
  const CliResult writable = run_ktune(dir, "best --db " + source);
  REQUIRE(writable.status == 0);
  const CliResult exported_here = run_ktune(dir, "export --db " + source + " " + dir.file("y.jsonl"));
  REQUIRE(exported_here.status == 0);
  const auto count = exported_here.output.substr(0, exported_here.output.find(" records"));
  fs::copy_file(source, db);  // the log file alone, as a deployment carries it
  const auto listing = [](const fs::path& where) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(where)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  };
  const fs::path out = dir.path / "out";
  fs::create_directory(out);
  fs::permissions(out, fs::perms::all);
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const auto best = run_ktune_unprivileged(dir, "best --db '" + db + "'");
  if (!best) {
    WARN("skipped the read-only folder check: running as root without setpriv");
    return;
  }
  INFO(best->output);
  CHECK(best->status == 0);
  CHECK(best->output == writable.output);
  const auto exported = run_ktune_unprivileged(dir, "export --db '" + db + "' " + (out / "x.jsonl").string());
  INFO(exported->output);
  CHECK(exported->status == 0);
  CHECK(exported->output.find(count + " records") != std::string::npos);
  CHECK(listing(folder) == std::vector<std::string>{"deploy.db"});

  // Trials still in a -wal file (copied while a writer had the log open) cannot be read without
  // writing a -shm file there: refused by name rather than read as a snapshot without them.
  const fs::path open_copy = dir.path / "open-copy";
  fs::create_directory(open_copy);
  {
    const std::string live = dir.file("live.db");
    REQUIRE(run_ktune(dir, "import --db " + live + " " + recorded).status == 0);
    ktune::TuningLog writer(live, ktune::LogMode::read_write);
    ktune::TrialRecord extra = *writer.records().begin();
    extra.trial.timestamp_us += 1;
    writer.append(extra);
    REQUIRE(fs::file_size(live + "-wal") > 32);
    fs::copy_file(live, open_copy / "deploy.db");
    fs::copy_file(live + "-wal", open_copy / "deploy.db-wal");
  }
  fs::permissions(open_copy, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                 fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const auto refused = run_ktune_unprivileged(dir, "best --db " + (open_copy / "deploy.db").string());
  require_failure_mentioning(*refused, {"deploy.db", "cannot be read where it is"});

  // Symbolic links: SQLite keeps -wal / -shm beside the link's target, and so does the snapshot
  // decision. A link in the read-only folder to a log being written elsewhere reads the trials
  // its -wal holds; a link in a writable folder to the read-only log reads it as a snapshot.
  const fs::path live_folder = dir.path / "live";
  fs::create_directory(live_folder);
  fs::permissions(live_folder, fs::perms::all);
  const std::string live = (live_folder / "tuned.db").string();
  fs::copy_file(source, live);
  fs::permissions(live, fs::perms::all);
  fs::permissions(folder, fs::perms::owner_all);
  fs::create_symlink(live, folder / "link.db");
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const fs::path open_folder = dir.path / "writable";
  fs::create_directory(open_folder);
  fs::permissions(open_folder, fs::perms::all);
  fs::create_symlink(db, open_folder / "to-image.db");
  {
    ktune::TuningLog writer(live, ktune::LogMode::read_write);
    ktune::TrialRecord extra = *writer.records().begin();
    extra.trial.timestamp_us += 1;
    writer.append(extra);  // in the -wal while the writer holds the log open
    REQUIRE(fs::file_size(live + "-wal") > 32);
    const auto through_link = run_ktune_unprivileged(
        dir, "export --db '" + (folder / "link.db").string() + "' " + (out / "l.jsonl").string());
    INFO(through_link->output);
    CHECK(through_link->status == 0);
    CHECK(through_link->output.find(std::to_string(std::stoll(count.substr(count.rfind(' ') + 1)) + 1) +
                                    " records") != std::string::npos);
  }
  const auto to_image = run_ktune_unprivileged(dir, "best --db " + (open_folder / "to-image.db").string());
  INFO(to_image->output);
  CHECK(to_image->status == 0);
  CHECK(to_image->output == writable.output);
  CHECK(listing(folder) == std::vector<std::string>{"deploy.db", "link.db"});
  // A link in a writable folder to the copy whose -wal holds trials: refused as that copy is,
  // never read as a snapshot without them (the -wal is beside the target, not the link).
  fs::create_symlink(open_copy / "deploy.db", open_folder / "to-open-copy.db");
  const auto to_open_copy = run_ktune_unprivileged(dir, "best --db " + (open_folder / "to-open-copy.db").string());
  require_failure_mentioning(*to_open_copy, {"to-open-copy.db", "cannot be read where it is"});
  // A damaged log there is named as damaged, not as a folder it cannot write beside.
  const fs::path damaged = dir.path / "damaged";
  fs::create_directory(damaged);
  fs::copy_file(source, damaged / "deploy.db");
  {
    std::fstream f(damaged / "deploy.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);  // the first page's b-tree header
  }
  fs::permissions(damaged, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                               fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const auto broken = run_ktune_unprivileged(dir, "best --db " + (damaged / "deploy.db").string());
  require_failure_mentioning(*broken, {"deploy.db", "corrupted"});
  CHECK(broken->output.find("cannot be read where it is") == std::string::npos);
  fs::permissions(damaged, fs::perms::owner_all);
  fs::permissions(folder, fs::perms::owner_all);  // TempDir removes them
  fs::permissions(open_copy, fs::perms::owner_all);
}

TEST_CASE("A log the user may not read is named as such, not as missing or foreign", "[cli][dispatch]") {
  namespace fs = std::filesystem;
  TempDir dir;
  fs::permissions(dir.path, fs::perms::all);  // the folder open to all, the files not
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string db = dir.file("secret.db"), jsonl = dir.file("secret.jsonl");
  REQUIRE(run_ktune(dir, "import --db " + db + " " + recorded).status == 0);
  fs::copy_file(recorded, jsonl);
  for (const auto& f : {db, jsonl}) fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write);
  const auto best = run_ktune_unprivileged(dir, "best --db " + db);
  if (!best) {
    WARN("skipped the unreadable log check: running as root without setpriv");
    return;
  }
  require_failure_mentioning(*best, {"secret.db", "cannot be read", "Permission denied"});
  CHECK(best->output.find("header") == std::string::npos);
  require_failure_mentioning(*run_ktune_unprivileged(dir, "import --db " + dir.file("x.db") + " " + jsonl),
                             {"secret.jsonl", "cannot be read", "Permission denied"});
  // The Dispatcher, as a deployed program running as another user would open them.
  for (const auto& path : {db, jsonl}) {
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      close(pipe_fds[0]);
      std::string message = "opened";
      if (geteuid() != 0 || (setgid(65534) == 0 && setuid(65534) == 0)) {
        try {
          ktune::Dispatcher d(path);
        } catch (const std::exception& e) {
          message = e.what();
        }
      } else {
        message = "setuid failed";
      }
      (void)!write(pipe_fds[1], message.data(), message.size());
      _exit(0);
    }
    close(pipe_fds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t got; (got = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, got);
    close(pipe_fds[0]);
    waitpid(child, nullptr, 0);
    INFO(message);
    CHECK_THAT(message, Catch::Contains(path) && Catch::Contains("cannot be read") &&
                            Catch::Contains("Permission denied"));
  }
}

TEST_CASE("cli: an output in a folder the user may not write names the folder", "[cli][export]") {
  namespace fs = std::filesystem;
  TempDir dir;
  fs::permissions(dir.path, fs::perms::all);
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string db = dir.file("t.db");
  REQUIRE(run_ktune(dir, "import --db " + db + " " + recorded).status == 0);
  fs::permissions(db, fs::perms::all);
  const fs::path locked = dir.path / "locked";
  fs::create_directory(locked);
  write_text((locked / "deploy.jsonl").string(), "old\n");
  fs::permissions(locked / "deploy.jsonl", fs::perms::all);  // the file writable, its folder not
  fs::permissions(locked, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  const auto r = run_ktune_unprivileged(dir, "export --db " + db + " " + (locked / "deploy.jsonl").string());
  if (!r) {
    WARN("skipped the locked folder check: running as root without setpriv");
    return;
  }
  require_failure_mentioning(*r, {"deploy.jsonl", "its folder '" + locked.string() + "'", "Permission denied"});
  std::ifstream kept(locked / "deploy.jsonl");
  CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "old\n");
}

TEST_CASE("cli: a write cut short (no space, a file size limit) says so and keeps the log as it was",
          "[cli][log]") {
  TempDir dir;
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string db = dir.file("full.db");
  REQUIRE(run_ktune(dir, "import --db " + db + " " + recorded).status == 0);
  const auto before = ktune::TuningLog(db, ktune::LogMode::read_only).count();
  // Another machine's records, under a file size limit the -wal file reaches first (SIGXFSZ
  // ignored, so the write comes back short as on a full disk).
  const std::string other = dir.file("other.jsonl");
  {
    std::ifstream in(recorded);
    std::ofstream out(other);
    for (std::string line; std::getline(in, line);) {
      const auto at = line.find("\"run_id\":\"");
      if (at != std::string::npos) line.insert(at + 10, "other-");
      out << line << "\n";
    }
  }
  const CliResult r = ktune::test::run_shell(dir, "bash -c \"ulimit -f 256; trap '' XFSZ; '" +
                                                        ktune::test::ktune_program() + "' import --db " +
                                                        db + " " + other + "\"");
  require_failure_mentioning(r, {"full.db", "holds what it held before"});
  // The system's reason where SQLite kept it, else that the write came back short.
  CHECK((r.output.find("File too large") != std::string::npos ||
         r.output.find("cut short") != std::string::npos));
  CHECK(ktune::TuningLog(db, ktune::LogMode::read_only).count() == before);
}

TEST_CASE("cli: a new log whose first write is cut short is removed again", "[cli][log]") {
  TempDir dir;
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  // 4 KiB: room for SQLite's header page, not for the schema and records (as on a full disk).
  const auto limited = [&](const std::string& args) {
    return ktune::test::run_shell(dir, "bash -c \"ulimit -f 4; trap '' XFSZ; '" +
                                           ktune::test::ktune_program() + "' " + args + "\"");
  };
  require_failure_mentioning(limited("import --db " + dir.file("new.db") + " " + recorded),
                             {"new.db", "File too large"});
  require_failure_mentioning(
      limited("vendor --db " + dir.file("v.db") + " --name cublas --problem "
              "'gemm|M=64,N=64,K=64|bias=0,dtype=f16,layout=NT,out=same' --device 'NVIDIA H200|sm_90|132' "
              "--ms 1"),
      {"v.db"});
  require_failure_mentioning(limited("tune --template copy --shape 67108864 --replay " + recorded +
                                     " --db " + dir.file("t.db") + " --budget 4 --progress 0"),
                             {"t.db"});
  for (const char* name : {"new.db", "v.db", "t.db"})
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      INFO(name << suffix);
      CHECK_FALSE(std::filesystem::exists(dir.file(std::string(name) + suffix)));
    }
}

namespace {

/// Records `runs` runs ("run0", "run1", ...) of 20000 synthetic ok trials each, one per valid
/// config of gemm_mma 2048^3 f16 NT, into `path`: data that takes long enough to replay or
/// import that the command can be interrupted.
void write_many_gemm_trials(const std::string& path, int runs) {
  ktune::TuningLog log(path, ktune::LogMode::read_write);
  auto tmpl = ktune::find_template("gemm_mma");
  const ktune::Problem problem =
      ktune::make_problem(*tmpl, "2048x2048x2048", {{"dtype", "f16"}, {"layout", "NT"}});
  const ktune::Device device = ktune::Device::h200();
  const ktune::SearchSpace space = tmpl->space(problem, device);
  for (int run = 0; run < runs; ++run) {
    std::vector<ktune::TrialRecord> records;
    space.for_each_valid([&](ktune::Index index, const ktune::Config& c) {
      if (records.size() >= 20000) return;
      ktune::Trial t;
      t.config = c;
      t.status = ktune::Status::ok;
      t.median_ms = 1.0 + static_cast<double>(index % 977) / 977.0;
      t.times_ms = {t.median_ms};
      records.push_back(
          ktune::TrialRecord::make(*tmpl, problem, device, t, "run" + std::to_string(run)));
    });
    log.append_batch(records);
  }
}

/// Starts `ktune <args>` in the background with its output in `out`; returns its process id.
int start_ktune_in_background(const std::string& args, const std::string& out) {
  const std::string command =
      "'" + ktune::test::ktune_program() + "' " + args + " > '" + out + "' 2>&1 & echo $!";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  int pid = 0;
  const int read = std::fscanf(pipe, "%d", &pid);
  pclose(pipe);
  REQUIRE(read == 1);
  return pid;
}

/// Sends SIGINT to process `pid` (not our child), waits up to 60 s for it to end, and returns
/// the text of its output file `out`.
std::string interrupt_and_wait(int pid, const std::string& out) {
  REQUIRE(kill(pid, SIGINT) == 0);
  for (int i = 0; i < 600; ++i) {
    if (kill(pid, 0) != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ktune::test::read_text(out);
}

}  // namespace

TEST_CASE("cli: a failed command keeps the new log it created when another process has it open",
          "[cli][log]") {
  TempDir dir;
  const std::string db = dir.file("new.db");
  // The import creates new.db, then checks a long file whose last line is malformed and fails
  // on it; meanwhile this process opens the new log, as a second writer would, and writes
  // after the failure.
  const std::string data = dir.file("data.db"), exported = dir.file("big.jsonl");
  write_many_gemm_trials(data, 5);
  REQUIRE(run_ktune(dir, "export --db " + data + " " + exported).status == 0);
  std::ofstream(exported, std::ios::app) << "not a record\n";
  const std::string k = "'" + ktune::test::ktune_program() + "'";
  const std::string command = "( " + k + " import --db '" + db + "' '" + exported +
                              "' ; echo $? > '" + dir.file("rc.txt") + "' ) > /dev/null 2>&1 &";
  REQUIRE(std::system(command.c_str()) == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!std::filesystem::exists(db + "-shm") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ktune::TuningLog second(db);
  REQUIRE_FALSE(std::filesystem::exists(dir.file("rc.txt")));  // opened before the import failed
  while (!std::filesystem::exists(dir.file("rc.txt")) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rc.txt written, then closed
  std::ifstream rc(dir.file("rc.txt"));
  int status = -1;
  rc >> status;
  CHECK(status == 2);
  REQUIRE(std::filesystem::exists(db));
  second.append(ktune::test::make_record("BLOCK=1,VEC=1", 0.5));
  CHECK(ktune::TuningLog(db, ktune::LogMode::read_only).count() == 1);
}

TEST_CASE("cli: import --arch keeps a Kernel Tuner cache's device name, SM count unknown or given",
          "[cli]") {
  TempDir dir;
  const std::string cache = std::string(KTUNE_DATASETS_DIR) + "/convolution_milo_A4000.json.gz";
  const CliResult imported = run_ktune(dir, "import --db " + dir.file("kt.db") + " " + cache +
                                                " --template conv --arch sm_86");
  INFO(imported.output);
  REQUIRE(imported.status == 0);
  const CliResult best = run_ktune(dir, "best --db " + dir.file("kt.db"));
  INFO(best.output);
  CHECK(best.output.find("NVIDIA RTX A4000|sm_86|0 ") != std::string::npos);
  // --sm-count gives the device's SM count, so the records match that GPU exactly.
  const CliResult counted = run_ktune(dir, "import --db " + dir.file("kt48.db") + " " + cache +
                                               " --template conv --arch sm_86 --sm-count 48");
  INFO(counted.output);
  REQUIRE(counted.status == 0);
  CHECK(run_ktune(dir, "best --db " + dir.file("kt48.db")).output.find("NVIDIA RTX A4000|sm_86|48 ") !=
        std::string::npos);
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("x.db") + " " + cache +
                                                " --template conv --sm-count 48"),
                             {"--sm-count 48 needs --arch"});
  require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("x.db") + " " + cache +
                                                " --template conv --arch sm_86 --sm-count 0"),
                             {"--sm-count"});
  // Any GPU's compute capability, not only the targets ktune compiles for.
  for (const char* arch : {"sm_75", "sm_100", "sm_90a"}) {
    CAPTURE(arch);
    const std::string db = dir.file(std::string(arch) + ".db");
    REQUIRE(run_ktune(dir, "import --db " + db + " " + cache + " --template conv --arch " + arch).status == 0);
    const std::string portable = std::string(arch) == "sm_90a" ? "sm_90" : arch;
    CHECK(run_ktune(dir, "best --db " + db).output.find("NVIDIA RTX A4000|" + portable + "|0 ") !=
          std::string::npos);
  }
  // A cache without a device name (the MI250X one) takes the offline name of any arch; with
  // neither a name nor --arch it is refused, naming the field, not imported under "|sm_00|0".
  const std::string nameless = std::string(KTUNE_DATASETS_DIR) + "/dedispersion_milo_MI250X.json.gz";
  require_failure_mentioning(
      run_ktune(dir, "import --db " + dir.file("none.db") + " " + nameless + " --template dedisp"),
      {"field 'device_name': empty", "--device-name"});
  CHECK_FALSE(std::filesystem::exists(dir.file("none.db")));
  REQUIRE(run_ktune(dir, "import --db " + dir.file("mi.db") + " " + nameless + " --template dedisp --arch sm_100")
              .status == 0);
  CHECK(run_ktune(dir, "best --db " + dir.file("mi.db")).output.find("offline sm_100|sm_100|0 ") != std::string::npos);
  for (const char* arch : {"sm_7", "gfx90a", "sm_05"})
    require_failure_mentioning(run_ktune(dir, "import --db " + dir.file("x.db") + " " + cache +
                                                  " --template conv --arch " + arch),
                               {std::string("--arch '") + arch + "'", "e.g. sm_75"});
  CHECK_FALSE(std::filesystem::exists(dir.file("x.db")));
}

TEST_CASE("cli: --arch names the target of a dry run and is refused where it would be ignored",
          "[cli]") {
  TempDir dir;
  // Described for the named target (on a GPU machine too: the GPU is not asked).
  const CliResult named = run_ktune(dir, "tune --dry-run --arch sm_86 --template copy --shape 4096");
  INFO(named.output);
  REQUIRE(named.status == 0);
  CHECK(named.output.find("on " + ktune::Device::offline("sm_86").key()) != std::string::npos);
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --arch bogus --template copy"),
                             {"'bogus'", "sm_90"});
  // A tuning run builds for the GPU it measures: --arch there is refused, not ignored, and
  // before any GPU or log is touched.
  require_failure_mentioning(
      run_ktune(dir, "tune --arch sm_80 --template copy --db " + dir.file("t.db")),
      {"--arch", "--dry-run"});
  CHECK_FALSE(std::filesystem::exists(dir.file("t.db")));
}

TEST_CASE("cli: a Hopper-only template on another target is refused before any build", "[cli]") {
  TempDir dir;
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --arch sm_80 --template gemm_wgmma"),
                             {"sm_90a", "sm_80"});
  require_failure_mentioning(run_ktune(dir, "compile --arch sm_86 --template gemm_wgmma --samples 0"),
                             {"sm_90a", "sm_86"});
}

TEST_CASE("cli: the same problem with or without --shape, every template's reason", "[cli]") {
  TempDir dir;
  const CliResult implicit = run_ktune(dir, "tune --dry-run --op gemm --dtype f16");
  const CliResult written = run_ktune(dir, "tune --dry-run --op gemm --dtype f16 --shape 1024x1024x1024");
  REQUIRE(implicit.status == 0);
  REQUIRE(written.status == 0);
  const auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(first_line(implicit.output) == first_line(written.output));  // same task, same key
  // No template takes it: each one's reason is listed (the SIMT one is about the size).
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --op gemm --dtype f32 --shape 99999999999x1x1"),
                             {"gemm_simt", "<= 2^30", "gemm_mma"});
}

TEST_CASE("cli: a dry run says which kernels allow programmatic launch", "[cli]") {
  TempDir dir;
  // The reduction's two passes both wait for the previous grid; GEMM's kernel does not.
  const CliResult reduction = run_ktune(
      dir, "tune --dry-run --programmatic-launch --graph-timing --template reduction --shape 64x100003");
  INFO(reduction.output);
  REQUIRE(reduction.status == 0);
  CHECK(reduction.output.find("waits for the previous grid: programmatic launch allowed") !=
        std::string::npos);
  const CliResult gemm = run_ktune(dir, "tune --dry-run --template gemm_simt --shape 64x64x64");
  INFO(gemm.output);
  REQUIRE(gemm.status == 0);
  CHECK(gemm.output.find("programmatic launch") == std::string::npos);
}

TEST_CASE("cli: a dry run of an unsatisfiable space fails, naming the task", "[cli]") {
  TempDir dir;
  // The example user template, copied with its files, plus a condition no config meets.
  const std::string spec = transpose_with_condition(dir, "block_size_x > 1000");
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --space " + spec),
                             {"no config satisfies", "0 valid"});
  // compile names the --space file whose constraints admit nothing.
  require_failure_mentioning(run_ktune(dir, "compile --space " + spec),
                             {"--space " + spec + " on ", "no configuration satisfies"});
}

TEST_CASE("cli: a dry run whose default breaks a constraint still finds a problem no config can do",
          "[cli]") {
  TempDir dir;
  // C = 3 is refused by every conv2d_wgmma config; at this shape the default also breaks the
  // split-K rule (K = 147), which once hid the refusal and let the dry run pass.
  const CliResult r = run_ktune(dir, "tune --dry-run --template conv2d_wgmma --shape 2x9x11x3x17x7x7");
  require_failure_mentioning(r, {"INVALID", "none of 256 sampled valid configs", "C = 3", "no config satisfies"});
  // Rows beyond one grid of row blocks are refused by the template, naming the limit.
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --op reduction --shape 2147483648x1"),
                             {"rows=2147483648", "2^31 - 1"});
  require_failure_mentioning(run_ktune(dir, "tune --dry-run --op layernorm --shape 4294967296x64"),
                             {"rows=4294967296", "2^31 - 1"});
  // The product of the extents is what exceeds 2^40, and the message says so.
  require_failure_mentioning(
      run_ktune(dir, "tune --dry-run --op elementwise --shape 99999999999x99999999999"),
      {"rows x cols is more than 2^40 elements"});
}

TEST_CASE("cli: Ctrl-C during a replayed run ends it with status 130, trials kept", "[cli][replay]") {
  TempDir dir;
  const std::string data = dir.file("big.db"), db = dir.file("out.db");
  write_many_gemm_trials(data, 1);  // a replay long enough to interrupt
  const std::string out = dir.file("run.txt");
  const int pid = start_ktune_in_background(
      "tune --template gemm_mma --shape 2048x2048x2048 --dtype f16 --layout NT --searcher random "
      "--budget 0 --progress 0 --replay " + data + " --db " + db,
      out);
  // Interrupt once trials are being recorded (the handler is installed by then).
  bool recording = false;
  for (int i = 0; i < 600 && !recording; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    recording = ktune::test::read_text(out).find("replaying") != std::string::npos &&
                std::filesystem::exists(db) &&
                ktune::TuningLog(db, ktune::LogMode::read_only).count() > 0;
  }
  REQUIRE(recording);
  const std::string s = interrupt_and_wait(pid, out);
  INFO(s);
  CHECK(s.find("stopped by Ctrl-C") != std::string::npos);
  CHECK(s.find("done:") == std::string::npos);
  const auto kept = ktune::TuningLog(db, ktune::LogMode::read_only).count();
  CHECK(kept > 0);
  CHECK(kept < 20000);
}

TEST_CASE("cli: Ctrl-C during an import adds nothing and leaves no new log", "[cli]") {
  TempDir dir;
  // An export long enough to interrupt: 100000 trials.
  const std::string data = dir.file("data.db"), exported = dir.file("big.jsonl");
  write_many_gemm_trials(data, 5);
  REQUIRE(run_ktune(dir, "export --db " + data + " " + exported).status == 0);
  // Interrupted as soon as the log it opens is there (the handler is installed before the log
  // is opened), or, for a log there already, soon after the start.
  auto interrupted_import = [&](const std::string& db, bool exists_before) {
    const std::string out = dir.file("import.txt");
    const int pid = start_ktune_in_background("import --db " + db + " " + exported, out);
    if (!exists_before)
      for (int i = 0; i < 2000 && !std::filesystem::exists(db); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return interrupt_and_wait(pid, out);
  };
  const std::string fresh = dir.file("fresh.db");
  const std::string said = interrupted_import(fresh, false);
  INFO(said);
  CHECK(said.find("stopped by Ctrl-C: nothing was imported into " + fresh) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(fresh));
  CHECK_FALSE(std::filesystem::exists(fresh + "-wal"));
  CHECK_FALSE(std::filesystem::exists(fresh + "-shm"));
  // An existing log keeps exactly what it held.
  const std::string kept = dir.file("kept.db");
  ktune::test::write_recorded_copy_db(kept, {1048576});
  const auto before = ktune::TuningLog(kept, ktune::LogMode::read_only).count({});
  const std::string again = interrupted_import(kept, true);
  INFO(again);
  CHECK(again.find("stopped by Ctrl-C") != std::string::npos);
  CHECK(ktune::TuningLog(kept, ktune::LogMode::read_only).count({}) == before);
}

TEST_CASE("cli: Ctrl-C while an import copies a pipe removes the partial copy", "[cli]") {
  TempDir dir;
  const std::string exported = dir.file("big.jsonl"), data = dir.file("data.db");
  write_many_gemm_trials(data, 1);
  REQUIRE(run_ktune(dir, "export --db " + data + " " + exported).status == 0);
  // A FIFO whose writer sends the export and then holds it open: the copy waits in a read.
  const std::string fifo = dir.file("pipe"), tmp = dir.file("tmp");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::filesystem::create_directory(tmp);
  FILE* writer = popen(("( cat '" + exported + "'; exec sleep 30 ) > '" + fifo + "' & echo $!").c_str(), "r");
  REQUIRE(writer);
  int writer_pid = 0;
  REQUIRE(std::fscanf(writer, "%d", &writer_pid) == 1);
  pclose(writer);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string kept_tmpdir = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const std::string db = dir.file("new.db"), out = dir.file("import.txt");
  const int pid = start_ktune_in_background("import --db " + db + " " + fifo, out);
  if (old_tmpdir) ::setenv("TMPDIR", kept_tmpdir.c_str(), 1);
  else ::unsetenv("TMPDIR");
  // Interrupted once the copy holds the export (the writer is still there).
  auto copy_size = [&] {
    std::error_code ec;
    std::uintmax_t size = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp, ec))
      if (e.path().filename().string().rfind("ktune-input-", 0) == 0) size += e.file_size(ec);
    return size;
  };
  const auto full = std::filesystem::file_size(exported);
  for (int i = 0; i < 2000 && copy_size() < full; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(copy_size() == full);
  const std::string said = interrupt_and_wait(pid, out);
  ::kill(writer_pid, SIGTERM);
  INFO(said);
  CHECK(said.find("stopped by Ctrl-C: nothing was imported into " + db) != std::string::npos);
  CHECK(std::filesystem::is_empty(tmp));
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE("cli: SIGTERM while an import copies a pipe removes the partial copy, and NULs are "
          "refused",
          "[cli]") {
  TempDir dir;
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directory(tmp);
  const std::string k = "TMPDIR='" + tmp + "' '" + ktune::test::ktune_program() + "'";
  // A device that never ends is refused within its first 64 KiB, leaving nothing.
  require_failure_mentioning(
      ktune::test::run_shell(dir, k + " import --db '" + dir.file("z.db") + "' /dev/zero"),
      {"'/dev/zero' holds NUL bytes", "not a tuning log"});
  CHECK(std::filesystem::is_empty(tmp));
  CHECK_FALSE(std::filesystem::exists(dir.file("z.db")));
  // An endless text stream, ended by SIGTERM as `timeout` or `kill` end a command.
  const std::string db = dir.file("y.db"), out = dir.file("out.txt");
  FILE* started = popen(("yes '{}' | " + k + " import --db '" + db + "' - > '" + out +
                         "' 2>&1 & echo $!").c_str(), "r");
  REQUIRE(started);
  int pid = 0;
  REQUIRE(std::fscanf(started, "%d", &pid) == 1);
  pclose(started);
  auto copied = [&] {
    std::error_code ec;
    std::uintmax_t size = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) size += e.file_size(ec);
    return size;
  };
  for (int i = 0; i < 2000 && copied() < (1u << 20); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(copied() >= (1u << 20));  // the copy is under way
  REQUIRE(::kill(pid, SIGTERM) == 0);
  for (int i = 0; i < 600 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(::kill(pid, 0) != 0);
  CHECK(std::filesystem::is_empty(tmp));
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE("cli: replayed trials say so and keep the source they were measured with",
          "[cli][replay]") {
  TempDir dir;
  const std::string base = dir.file("base.db"), data = dir.file("recorded.db"),
                    db = dir.file("out.db");
  ktune::test::write_recorded_copy_db(base, {1048576});
  auto records = ktune::TuningLog(base, ktune::LogMode::read_only).records();
  REQUIRE(records.size() > 2);
  const std::string older = "0123456789abcdef";
  records[0].source_hash = older;  // this config was only measured with an older source
  ktune::TrialRecord duplicate = records[1];  // and this one also with an older source,
  duplicate.source_hash = older;              // faster there: not what the current one does
  duplicate.trial.median_ms *= 0.5;
  records.push_back(duplicate);
  ktune::TuningLog(data).append_batch(records);

  const CliResult r = run_ktune(dir, "tune --template copy --shape 1048576 --dtype f32 "
                                     "--searcher exhaustive --progress 0 --replay " + data +
                                     " --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string current =
      ktune::Builder::source_hash(ktune::find_template("copy")->source());
  std::size_t checked = 0;
  for (const auto& rec : ktune::TuningLog(db, ktune::LogMode::read_only).records()) {
    CHECK(rec.trial.message.rfind("replayed from " + data, 0) == 0);
    if (rec.config_text == records[0].config_text) {
      CHECK(rec.source_hash == older);
      ++checked;
    } else if (rec.config_text == records[1].config_text) {
      CHECK(rec.source_hash == current);
      if (rec.trial.ok()) CHECK(rec.trial.median_ms == records[1].trial.median_ms);
      ++checked;
    } else {
      CHECK(rec.source_hash == current);
    }
  }
  CHECK(checked == 2);
}

TEST_CASE("cli: importing the same file twice adds nothing the second time", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db"), copy = dir.file("again.db");
  ktune::test::write_recorded_copy_db(db, {1048576});
  REQUIRE(run_ktune(dir, "export --db " + db + " " + dir.file("t.jsonl")).status == 0);
  const CliResult first = run_ktune(dir, "import --db " + copy + " " + dir.file("t.jsonl"));
  const CliResult second = run_ktune(dir, "import --db " + copy + " " + dir.file("t.jsonl"));
  INFO(first.output << second.output);
  CHECK(first.status == 0);
  CHECK(second.status == 0);
  CHECK(second.output.find("imported 0 records") != std::string::npos);
  CHECK(second.output.find("were in") != std::string::npos);
  CHECK(ktune::TuningLog(copy, ktune::LogMode::read_only).count() ==
        ktune::TuningLog(db, ktune::LogMode::read_only).count());
}

TEST_CASE("cli: an import of many runs names the first eight and counts the rest", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("runs.db");
  {
    ktune::TuningLog log(db);
    for (int k = 0; k < 11; ++k)
      log.append(ktune::test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.5,
                                          ktune::Status::ok, "run-" + std::to_string(k)));
  }
  REQUIRE(run_ktune(dir, "export --db " + db + " " + dir.file("runs.jsonl")).status == 0);
  const CliResult imported = run_ktune(dir, "import --db " + dir.file("copy.db") + " " + dir.file("runs.jsonl"));
  INFO(imported.output);
  CHECK(imported.status == 0);
  CHECK(imported.output.find("imported 11 records") != std::string::npos);
  CHECK(imported.output.find(" and 3 more\n") != std::string::npos);
  CHECK(std::count(imported.output.begin(), imported.output.end(), '\n') <= 2);
}

TEST_CASE("cli: export - writes only the records to standard output", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db");
  ktune::test::write_recorded_copy_db(db, {1048576});
  const std::string out = dir.file("stdout.jsonl"), err = dir.file("stderr.txt");
  const std::string command = "cd '" + dir.path.string() + "' && '" +
                              ktune::test::ktune_program() + "' export --db " + db + " - > '" +
                              out + "' 2> '" + err + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("-")));  // no file named '-'
  std::ifstream in(out);
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    CHECK_NOTHROW(nlohmann::json::parse(line));  // the summary line is not among them
    ++lines;
  }
  CHECK(static_cast<std::int64_t>(lines) ==
        ktune::TuningLog(db, ktune::LogMode::read_only).count() + 1);  // + the header line
  std::ifstream summary(err);
  std::getline(summary, line);
  CHECK(line.find("to standard output") != std::string::npos);
}

TEST_CASE("cli: best's speed-up judges default and best alike, each launch way, a winning "
          "default is 1.00x",
          "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db");
  auto copy = ktune::find_template("copy");
  const ktune::Problem problem = ktune::make_problem(*copy, "1048576", {{"dtype", "f32"}});
  const ktune::Device device = ktune::Device::h200();
  const ktune::SearchSpace space = copy->space(problem, device);
  auto trial = [&](const ktune::Config& c, double ms) {
    ktune::Trial t;
    t.config = c;
    t.status = ktune::Status::ok;
    t.median_ms = ms;
    t.times_ms = {ms};
    // The final rounds' trials were launched programmatically: the row says how its time was.
    t.launch = ms == 0.18 ? ktune::LaunchForm::programmatic : ktune::LaunchForm::stream;
    return ktune::TrialRecord::make(*copy, problem, device, t, "run-1");
  };
  const ktune::Config def = space.default_config();
  std::mt19937_64 rng(5);
  ktune::Config other = space.random(rng);
  while (other == def) other = space.random(rng);
  {
    ktune::TuningLog log(db);
    // The default, measured first at 0.20 ms and then three times at 0.18 ms (final rounds),
    // is the best: the speed-up over itself is exactly 1.
    log.append_batch({trial(def, 0.20), trial(other, 0.30), trial(def, 0.18), trial(def, 0.18),
                      trial(def, 0.18)});
  }
  // Ranked by its programmatic trials (the final rounds'), the default is 0.18 ms; ranked by
  // its plain trials, 0.20 ms, and still the best. Each way, default and best are judged by
  // the same trials, so the speed-up is exactly 1.
  for (const bool programmatic : {true, false}) {
    const CliResult r = run_ktune(dir, std::string("best --json --db ") + db +
                                           (programmatic ? " --programmatic-launch" : ""));
    INFO(r.output);
    REQUIRE(r.status == 0);
    const auto rows = nlohmann::json::parse(ktune::test::json_array_of(r.output));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["config"] == def.str());
    CHECK(rows[0]["median_ms"] == (programmatic ? 0.18 : 0.20));
    CHECK(rows[0]["default_ms"] == (programmatic ? 0.18 : 0.20));
    CHECK(rows[0]["speedup"] == 1.0);
    CHECK(rows[0]["launch"] == (programmatic ? "programmatic" : "stream"));
    CHECK(rows[0]["unranked_ok_trials"] == (programmatic ? 2 : 3));
  }
  const CliResult text = run_ktune(dir, "best --programmatic-launch --db " + db);
  INFO(text.output);
  CHECK(text.output.find("  launch  ") != std::string::npos);  // the column's heading
  CHECK(text.output.find("  programmatic  ") != std::string::npos);
  CHECK(text.output.find("note: 1 task also holds ok trials timed the other way") !=
        std::string::npos);
  CHECK(text.output.find("1 without it (`ktune best` without --programmatic-launch ranks by "
                         "them)") != std::string::npos);
  const CliResult plain = run_ktune(dir, "best --db " + db);
  INFO(plain.output);
  CHECK(plain.output.find("  stream  ") != std::string::npos);
  CHECK(plain.output.find("1 with programmatic launch (`ktune best --programmatic-launch` ranks "
                          "by them)") != std::string::npos);
}

TEST_CASE("cli: best prints rows longer than 1 KiB whole", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db");
  std::string config;  // a user template's config of 200 parameters, about 1.9 KiB
  for (int i = 0; i < 200; ++i) config += (i ? ",PARAM_" : "PARAM_") + std::to_string(i) + "=1";
  {
    ktune::TuningLog log(db);
    auto r = ktune::test::make_record("VEC=4", 0.5, ktune::Status::ok, "run-1",
                                      "my_kernel|n=7|", "my_kernel");
    r.config_text = config;
    r.trial.config = ktune::parse_config_text(config);
    log.append(r);
  }
  const CliResult r = run_ktune(dir, "best --db " + db);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto end_of_config = r.output.find("PARAM_199=1\n");
  CHECK(r.output.find(config) != std::string::npos);
  CHECK(end_of_config != std::string::npos);  // and its newline: the next line starts clean
}

TEST_CASE("cli: best and report mark a best only an older template source measured", "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db");
  {
    ktune::TuningLog log(db);
    log.append(ktune::test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", 0.5));
  }
  const CliResult best = run_ktune(dir, "best --db " + db);
  INFO(best.output);
  CHECK(best.status == 0);
  CHECK(best.output.find("(older source)") != std::string::npos);
  const CliResult report = run_ktune(dir, "report --db " + db + " -o " + dir.file("r.html"));
  REQUIRE(report.status == 0);
  std::ifstream in(dir.file("r.html"));
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.find("(older source)") != std::string::npos);
}

TEST_CASE("cli: a replay of a task the data lacks names the file and the tasks it has", "[cli][replay]") {
  TempDir dir;
  const std::string db = dir.file("recorded.db");
  ktune::test::write_recorded_copy_db(db, {1048576});
  require_failure_mentioning(
      run_ktune(dir, "tune --template copy --shape 4096 --dtype f32 --replay " + db + " --db " +
                         dir.file("out.db")),
      {"recorded.db", "no recorded trials of template copy", "copy|N=4096|dtype=f32",
       "it has: copy copy|N=1048576|dtype=f32"});
  // In a plan, the error also says which entry asked for the missing task.
  ktune::test::write_text(dir.file("plan.json"),
                          "[{\"template\": \"copy\", \"shape\": \"1048576\", \"dtype\": \"f32\"},\n"
                          " {\"template\": \"copy\", \"shape\": \"4096\", \"dtype\": \"f32\"}]\n");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("plan.json") + " --replay " + db +
                                                " --db " + dir.file("out.db")),
                             {"plan.json entry 2: ", "no recorded trials of template copy",
                              "copy|N=4096|dtype=f32"});
  CHECK_FALSE(std::filesystem::exists(dir.file("out.db")));
}

TEST_CASE("cli: a gzip-compressed export imports, a failed import leaves no new database",
          "[cli]") {
  TempDir dir;
  const std::string db = dir.file("t.db");
  ktune::test::write_recorded_copy_db(db, {1048576});
  const std::string gz = dir.file("trials.jsonl.gz");
  // The pipeline database.md shows: an export on standard output, compressed.
  REQUIRE(std::system(("'" + ktune::test::ktune_program() + "' export --db " + db + " - | gzip > " + gz).c_str()) == 0);
  const std::string copy = dir.file("copy.db");
  const CliResult imported = run_ktune(dir, "import --db " + copy + " " + gz);
  INFO(imported.output);
  REQUIRE(imported.status == 0);
  CHECK(ktune::TuningLog(copy, ktune::LogMode::read_only).count({}) ==
        ktune::TuningLog(db, ktune::LogMode::read_only).count({}));
  // Named .json.gz (Kernel Tuner's suffix), it is still read by its content; so is a gzipped T4.
  const std::string json_gz = dir.file("trials.json.gz");
  std::filesystem::copy_file(gz, json_gz);
  const CliResult by_content = run_ktune(dir, "import --db " + dir.file("c2.db") + " " + json_gz);
  INFO(by_content.output);
  CHECK(by_content.status == 0);
  CHECK(by_content.output.find("(jsonl)") != std::string::npos);
  const std::string t4_gz = dir.file("trials.t4.json.gz");
  REQUIRE(std::system(("'" + ktune::test::ktune_program() + "' export --db " + db + " --format t4 - | gzip > " +
                       t4_gz).c_str()) == 0);
  const CliResult t4 = run_ktune(dir, "import --db " + dir.file("c3.db") + " " + t4_gz);
  INFO(t4.output);
  CHECK(t4.status == 0);
  CHECK(t4.output.find("(t4)") != std::string::npos);

  // A refused file: the database the command would have created is not left behind, and an
  // existing one is kept as it was.
  const std::string bad = dir.file("bad.jsonl");
  ktune::test::write_text(bad, "{\"format\": \"ktune-trials\", \"version\": 1}\n{\"template\": 1}\n");
  const std::string fresh = dir.file("fresh.db");
  require_failure_mentioning(run_ktune(dir, "import --db " + fresh + " " + bad), {"bad.jsonl:2"});
  CHECK_FALSE(std::filesystem::exists(fresh));
  CHECK_FALSE(std::filesystem::exists(fresh + "-wal"));
  require_failure_mentioning(run_ktune(dir, "import --db " + copy + " " + bad), {"bad.jsonl:2"});
  CHECK(ktune::TuningLog(copy, ktune::LogMode::read_only).count({}) ==
        ktune::TuningLog(db, ktune::LogMode::read_only).count({}));
}

TEST_CASE("cli: replaying a Kernel Tuner cache or T4 file says to import it first", "[cli][replay]") {
  TempDir dir;
  const std::string cache = dir.file("cache.json");
  ktune::test::write_text(cache, R"({"kernel_name": "k", "problem_size": [64],
"tune_params_keys": ["bx"], "tune_params": {"bx": [1, 2]},
"cache": {"1": {"bx": 1, "time": 1.5, "times": [1.5]}}})");
  require_failure_mentioning(
      run_ktune(dir, "tune --template copy --shape 4096 --dtype f32 --replay " + cache + " --db " +
                         dir.file("out.db")),
      {"cache.json", "Kernel Tuner cache", "ktune import"});
}

TEST_CASE("cli: import names at most eight runs and counts the rest", "[cli]") {
  TempDir dir;
  for (const int runs : {8, 9}) {
    const std::string db = dir.file("r" + std::to_string(runs) + ".db");
    {
      ktune::TuningLog log(db);
      for (int i = 0; i < runs; ++i)
        log.append(ktune::test::make_record("BLOCK=1,VEC=1", 1.0 + i, ktune::Status::ok,
                                            "run-" + std::to_string(i)));
      ktune::export_file(log, dir.file("r.jsonl"), ktune::LogFormat::jsonl);
    }
    const CliResult r = run_ktune(dir, "import --db " + dir.file("new" + std::to_string(runs) + ".db") +
                                           " " + dir.file("r.jsonl"));
    INFO(r.output);
    REQUIRE(r.status == 0);
    for (int i = 0; i < 8; ++i) CHECK(r.output.find(" run-" + std::to_string(i)) != std::string::npos);
    CHECK(r.output.find(" run-8") == std::string::npos);
    CHECK((r.output.find("and 1 more") != std::string::npos) == (runs == 9));
    CHECK(r.output.find("and 0 more") == std::string::npos);
  }
}

TEST_CASE("cli: a missing input file is one not_found line and exit status 2, whatever the option",
          "[cli]") {
  TempDir dir;
  const std::string nope = dir.file("nope.json");
  for (const std::string& args :
       {"tune --plan " + nope, "tune --space " + nope + " --dry-run", "import " + nope,
        "vendor " + nope, "best --space " + nope, "report --space " + nope + " " + dir.file("r.html"),
        "replay --data " + nope}) {
    INFO(args);
    const bool has_db = !args.starts_with("replay");
    const CliResult r = run_ktune(dir, args + (has_db ? " --db " + dir.file("t.db") : ""));
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("ktune: error (not_found): ") == 0);
    CHECK(r.output.find("'" + nope + "' does not exist") != std::string::npos);
    CHECK(r.output.find("Run with --help") == std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("t.db")));  // and no log is left behind
}

TEST_CASE("cli: attributes that contradict each other are refused, a plan's time 0 is no limit",
          "[cli]") {
  TempDir dir;
  // A malformed --attr or --shape is the input's fault, said once rather than per template.
  for (const auto& [args, reason] :
       {std::pair{std::string("--attr bias"), std::string("--attr \"bias\": expected name=value")},
        std::pair{std::string("--shape 64x64xabc"), std::string("\"abc\" is not an integer")}}) {
    const CliResult r = run_ktune(dir, "compile --op gemm --samples 0 " + args);
    INFO(r.output);
    CHECK(r.status != 0);
    const auto at = r.output.find(reason);
    CHECK(at != std::string::npos);
    CHECK(r.output.find(reason, at + 1) == std::string::npos);
    CHECK(r.output.find("no template of op") == std::string::npos);
  }
  // Reasons that differ between the op's templates are each named with their template.
  const CliResult odd = run_ktune(dir, "compile --op gemm --samples 0 --dtype f64");
  INFO(odd.output);
  CHECK(odd.status != 0);
  CHECK(odd.output.find("no template of op \"gemm\" accepts the problem") != std::string::npos);
  require_failure_mentioning(run_ktune(dir, "tune --template gemm_mma --dtype f16 --attr dtype=bf16 --dry-run"),
                             {"--dtype f16 and --attr dtype=bf16 disagree"});
  require_failure_mentioning(run_ktune(dir, "tune --template gemm_mma --layout NT --attr layout=TN --dry-run"),
                             {"--layout NT and --attr layout=TN disagree"});
  require_failure_mentioning(run_ktune(dir, "tune --template gemm_mma --attr bias=1 --attr bias=0 --dry-run"),
                             {"--attr bias is given twice (1 and 0)"});
  const CliResult same = run_ktune(dir, "tune --template gemm_mma --dtype f16 --attr dtype=f16 "
                                        "--attr bias=1 --attr bias=1 --dry-run");
  INFO(same.output);
  CHECK(same.status == 0);
  CHECK(same.output.find("bias=1,dtype=f16") != std::string::npos);

  write_text(dir.file("plan.json"), R"([{"template": "copy", "time": 0}])");
  const CliResult unlimited = run_ktune(dir, "tune --plan " + dir.file("plan.json") + " --dry-run");
  INFO(unlimited.output);
  CHECK(unlimited.status == 0);
  write_text(dir.file("bad.json"), R"([{"template": "copy", "time": -1}])");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("bad.json") + " --dry-run"),
                             {"entry 1", "\"time\"", "seconds >= 0"});
  // The {"problems": [...]} wrapper holds only the list: a budget beside it is not dropped.
  write_text(dir.file("wrapped.json"), R"({"problems": [{"template": "copy"}]})");
  CHECK(run_ktune(dir, "tune --plan " + dir.file("wrapped.json") + " --dry-run").status == 0);
  // A plan entry's contradiction is told in the plan's own keys, not as command-line options.
  write_text(dir.file("both.json"), R"([{"template": "copy", "op": "gemm"}])");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("both.json") + " --dry-run"),
                             {"both.json entry 1: \"template\" copy implements op \"copy\", not \"op\" gemm"});
  write_text(dir.file("wrapped_budget.json"), R"({"problems": [{"template": "copy"}], "budget": 5})");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("wrapped_budget.json") + " --dry-run"),
                             {"wrapped_budget.json", "unknown key \"budget\" beside \"problems\""});
  // A config named twice is compiled once.
  const CliResult twice = run_ktune(dir, "compile -j 1 --template copy --samples 0 --config VEC=2 --config VEC=2");
  INFO(twice.output);
  CHECK(twice.status == 0);
  CHECK(twice.output.find("1 config") != std::string::npos);
  // An empty "space" is named as such, not as a missing one.
  write_text(dir.file("empty_space.json"), R"([{"space": "", "shape": "1"}])");
  require_failure_mentioning(run_ktune(dir, "tune --plan " + dir.file("empty_space.json") + " --dry-run"),
                             {"entry 1", "\"space\" is empty"});
}

TEST_CASE("cli: a number out of range, one dimension and an empty output path are named as such",
          "[cli]") {
  TempDir dir;
  require_failure_mentioning(run_ktune(dir, "tune --template copy --shape 99999999999999999999 --dry-run"),
                             {"\"99999999999999999999\" is out of range"});
  require_failure_mentioning(run_ktune(dir, "tune --template copy --shape 2x3 --dry-run"),
                             {"expected 1 dimension N"});
  const std::string db = dir.file("t.db");
  { ktune::TuningLog log(db); }
  require_failure_mentioning(run_ktune(dir, "export --db " + db + " ''"), {"the output path is empty"});
}

TEST_CASE("cli: list shows the problem commands use without options when it is not the example",
          "[cli]") {
  TempDir dir;
  const CliResult list = run_ktune(dir, "list");
  INFO(list.output);
  REQUIRE(list.status == 0);
  const auto gemm = list.output.find("gemm_mma ");
  REQUIRE(gemm != std::string::npos);
  const std::string block = list.output.substr(gemm, list.output.find("space for", gemm) - gemm);
  CHECK(block.find("example problem: gemm|M=1024,N=1024,K=1024|bias=0,dtype=f16,layout=NT") !=
        std::string::npos);
  CHECK(block.find("with no --shape or attributes: gemm|M=1024,N=1024,K=1024|bias=0,dtype=f16,"
                   "layout=NN") != std::string::npos);
  CHECK(block.find("layout: NN, NT, TN, TT (default NN)") != std::string::npos);
  // gemm_wgmma's only layout is its example's: no second line.
  const auto wgmma = list.output.find("gemm_wgmma ");
  REQUIRE(wgmma != std::string::npos);
  const std::string wg = list.output.substr(wgmma, list.output.find("space for", wgmma) - wgmma);
  CHECK(wg.find("with no --shape") == std::string::npos);
}

TEST_CASE("cli: tune --replay reads a pipe once and names a folder for what it is", "[cli]") {
  TempDir dir;
  const std::string recorded = source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  const std::string k = "'" + ktune::test::ktune_program() + "'";
  // A process substitution: the start is read to tell a database from JSON lines, then the
  // whole file; a pipe gives its bytes once, so it is read into a temporary copy.
  const CliResult piped = ktune::test::run_shell(
      dir, "bash -c \"" + k + " tune --template copy --shape 67108864 --replay <(cat '" + recorded +
               "') --db '" + dir.file("p.db") + "' --budget 4 --progress 0\"");
  INFO(piped.output);
  CHECK(piped.status == 0);
  CHECK(piped.output.find("4 trials recorded") != std::string::npos);
  std::filesystem::create_directory(dir.file("folder"));
  require_failure_mentioning(run_ktune(dir, "tune --template copy --shape 67108864 --replay " +
                                                dir.file("folder") + " --db " + dir.file("f.db") +
                                                " --budget 4 --progress 0"),
                             {"folder", "is a folder"});
  CHECK_FALSE(std::filesystem::exists(dir.file("f.db")));
}

TEST_CASE("cli: each trial records its launch form, a resume measures configs timed the other "
          "way again and says so",
          "[cli][gpu]") {
  KTUNE_REQUIRE_GPU();
  TempDir dir;
  const std::string db = dir.file("t.db");
  const std::string tune = "tune --template copy --shape 1048576 --dtype f32 --seed 1 --progress 0 --db " + db;
  const CliResult stream = run_ktune(dir, tune + " --budget 4");
  INFO(stream.output);
  REQUIRE(stream.status == 0);
  CHECK(stream.output.find("timed with") == std::string::npos);
  const CliResult programmatic = run_ktune(dir, tune + " --budget 8 --programmatic-launch");
  INFO(programmatic.output);
  REQUIRE(programmatic.status == 0);
  CHECK(programmatic.output.find("timed only without programmatic launch, which this run uses") !=
        std::string::npos);
  // The first run's trials were timed on a plain stream, the second run's programmatically.
  ktune::TuningLog log(db, ktune::LogMode::read_only);
  std::map<std::string, std::set<ktune::LaunchForm>> forms;  // run id -> forms of its ok trials
  for (const auto& r : log.records())
    if (r.trial.ok()) forms[r.run_id].insert(r.trial.launch);
  REQUIRE(forms.size() == 2);
  const auto runs = log.runs();
  REQUIRE(runs.size() == 2);
  CHECK(forms[runs[0].run_id] == std::set<ktune::LaunchForm>{ktune::LaunchForm::stream});
  CHECK(forms[runs[1].run_id] == std::set<ktune::LaunchForm>{ktune::LaunchForm::programmatic});
  // Back on a plain stream: the configs only the second run timed are measured again.
  const CliResult back = run_ktune(dir, tune + " --budget 10");
  INFO(back.output);
  REQUIRE(back.status == 0);
  CHECK(back.output.find("timed only with programmatic launch, which this run does not use") !=
        std::string::npos);
}
