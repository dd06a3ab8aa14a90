// A compact log for deployment (`ExportSelection::best_configs`, `ktune export --best N`): per
// task and template source, the N configs best() ranks first with all their ok trials, plus
// what also_keep asks for; and the property that makes it one: best(), the Dispatcher and
// `ktune best` read back from the export what they read from the whole log.
#include <fstream>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_fixtures.h"
#include "jsonl_format.h"
#include "ktune/dispatch.h"
#include "ktune/build.h"
#include "ktune/log.h"
#include "ktune/user_template.h"

using namespace ktune;
using test::make_record;
using test::TempDir;

namespace {

constexpr const char* kProblem = "copy|n=1024|dtype=f32";
constexpr const char* kOtherProblem = "copy|n=4096|dtype=f32";

/// A record of the config `name`=1 measured at `ms`.
TrialRecord trial(const std::string& name, double ms, const std::string& source = "s-new",
                  Status status = Status::ok, const std::string& problem = kProblem) {
  TrialRecord r = make_record(name + "=1", ms, status, "run-a", problem);
  r.source_hash = source;
  return r;
}

/// The records an export keeps, read back from its JSON lines.
std::vector<TrialRecord> exported(const TuningLog& log, const ExportSelection& selection,
                                  const LogFilter& filter = {}) {
  std::stringstream out;
  const std::size_t written = export_records(log, out, LogFormat::jsonl, filter, selection);
  auto records = jsonl::read(out, "export");
  CHECK(records.size() == written);
  return records;
}

/// "name@median" of each record (config name=1), in order.
std::vector<std::string> labels(const std::vector<TrialRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) {
    std::ostringstream label;
    label << r.config_text.substr(0, r.config_text.find('=')) << '@' << r.trial.median_ms;
    out.push_back(label.str());
  }
  return out;
}

/// One task whose luckiest trials and typical trials rank its configs differently.
std::vector<TrialRecord> ranked_task() {
  return {
      trial("A", 0.50), trial("B", 0.80),  trial("A", 0.90), trial("C", 0.85),
      trial("A", 0.95), trial("D", 0.40, "s-new", Status::launch_error),
      trial("C", 0.85), trial("E", 0.70),  trial("DEF", 1.30), trial("DEF", 1.20),
      trial("G", 0.60, "s-old"), trial("H", 0.65, "s-old"),
  };
}

}  // namespace

TEST_CASE("export best: each source's N fastest configs by typical trial, all their ok trials",
          "[log][export]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append_batch(ranked_task());

  ExportSelection three;
  three.best_configs = 3;
  // Typical trials: A 0.90 (its 0.50 is luck), B 0.80, C 0.85 (both trials kept), E 0.70,
  // DEF 1.20; the failed D is not a config that can be deployed. Of the older source: G 0.60,
  // H 0.65.
  CHECK(labels(exported(log, three)) ==
        std::vector<std::string>{"B@0.8", "C@0.85", "C@0.85", "E@0.7", "G@0.6", "H@0.65"});

  ExportSelection one_usable;
  one_usable.best_configs = 1;
  one_usable.usable = [](const TrialRecord& r) { return r.config_text != "E=1"; };  // refused
  one_usable.also_keep = [](const TrialRecord& r) { return r.config_text == "DEF=1"; };
  CHECK(labels(exported(log, one_usable)) ==
        std::vector<std::string>{"B@0.8", "DEF@1.3", "DEF@1.2", "G@0.6"});

  ExportSelection many;
  many.best_configs = 100;  // more than there are: every config with an ok trial
  CHECK(exported(log, many).size() == 11);
}

TEST_CASE("export best: the N fastest of each launch way, each ranked by its own trials",
          "[log][export]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  auto timed = [](const std::string& name, double ms, LaunchForm launch) {
    TrialRecord r = trial(name, ms);
    r.trial.launch = launch;
    return r;
  };
  // Plain: A 0.50, B 0.60 (C has no plain trial). Programmatic: C 0.40, A 0.45. D, the
  // fastest either way, failed once: out either way.
  log.append_batch({timed("A", 0.50, LaunchForm::stream), timed("B", 0.60, LaunchForm::unknown),
                    timed("C", 0.40, LaunchForm::programmatic),
                    timed("A", 0.45, LaunchForm::programmatic_graph),
                    timed("D", 0.30, LaunchForm::programmatic), timed("D", 0.55, LaunchForm::graph)});
  TrialRecord failed = trial("D", 0.30, "s-new", Status::wrong_result);
  log.append(failed);
  ExportSelection one;
  one.best_configs = 1;
  // Only A's plain trial is kept with it: its programmatic 0.45 is not what ranked it.
  CHECK(labels(exported(log, one)) == std::vector<std::string>{"A@0.5", "C@0.4"});
  ExportSelection two;
  two.best_configs = 2;
  CHECK(labels(exported(log, two)) ==
        std::vector<std::string>{"A@0.5", "B@0.6", "C@0.4", "A@0.45"});
  // Read back, either way ranks first what it ranks first over the whole log.
  const std::string device = device_key_of(test::test_device());
  for (const bool programmatic : {false, true}) {
    INFO("programmatic launch " << programmatic);
    const auto ranked =
        ranked_representatives(trials_ranked_for_launch(exported(log, one), programmatic));
    REQUIRE_FALSE(ranked.empty());
    CHECK(ranked.front().config_text ==
          log.best("copy", kProblem, device, "", {}, programmatic)->config_text);
  }
}

TEST_CASE("export best: ties go to the config measured first, filters still apply",
          "[log][export]") {
  TempDir dir;
  TuningLog log(dir.file("t.db"));
  log.append_batch({trial("late", 0.9, "s"), trial("first", 0.5, "s"), trial("second", 0.5, "s"),
                    trial("other", 0.1, "s", Status::ok, kOtherProblem)});
  ExportSelection one;
  one.best_configs = 1;
  CHECK(labels(exported(log, one)) == std::vector<std::string>{"first@0.5", "other@0.1"});

  LogFilter only_first_task;
  only_first_task.problem_key = kProblem;
  CHECK(labels(exported(log, one, only_first_task)) == std::vector<std::string>{"first@0.5"});
  LogFilter failed;
  failed.status = Status::launch_error;
  CHECK(exported(log, one, failed).empty());  // best_configs keeps ok trials only
  LogFilter other_run;
  other_run.run_id = "run-b";
  CHECK(exported(log, one, other_run).empty());
}

TEST_CASE("export best: best() over the export names what it names over the whole log",
          "[log][export]") {
  TempDir dir;
  TuningLog whole(dir.file("whole.db"));
  auto records = ranked_task();
  // A second task where C wins: typical trials A 0.9, B 0.6, C 0.3.
  for (const auto& [config, scale] : {std::pair{"A", 3.0}, {"B", 2.0}, {"C", 1.0}})
    for (double ms : {0.3, 0.2, 0.4})
      records.push_back(trial(config, ms * scale, "s-new", Status::ok, kOtherProblem));
  whole.append_batch(records);
  ExportSelection one;
  one.best_configs = 1;
  const std::string compact_path = dir.file("compact.jsonl");
  export_file(whole, compact_path, LogFormat::jsonl, {}, one);
  TuningLog compact(dir.file("compact.db"));
  import_file(compact, compact_path);
  const std::string device = test::test_device().key();
  for (const char* problem : {kProblem, kOtherProblem}) {
    for (const char* prefer : {"", "s-new", "s-old"}) {
      INFO(problem << " preferring '" << prefer << "'");
      const auto from_whole = whole.best("copy", problem, device, prefer);
      const auto from_compact = compact.best("copy", problem, device, prefer);
      REQUIRE(from_whole);
      REQUIRE(from_compact);
      CHECK(from_compact->config_text == from_whole->config_text);
      CHECK(from_compact->source_hash == from_whole->source_hash);
      CHECK(from_compact->trial.median_ms == from_whole->trial.median_ms);
    }
  }
}

TEST_CASE("export best: a Dispatcher over the export selects what it selects over the log",
          "[log][export][dispatch]") {
  TempDir dir;
  const std::string db = dir.file("recorded.db");
  test::write_recorded_copy_db(db, {1 << 20, 1 << 24});
  TuningLog whole(db, LogMode::read_only);
  ExportSelection one;
  one.best_configs = 1;
  const std::string compact = dir.file("compact.jsonl");
  REQUIRE(export_file(whole, compact, LogFormat::jsonl, {}, one) == 2);  // one trial per task
  Dispatcher from_whole(db), from_compact(compact);
  const auto copy = find_template("copy");
  for (const char* n : {"1048576", "16777216", "4000000"}) {  // two exact shapes, one nearest
    INFO("n = " << n);
    const Problem problem = make_problem(*copy, n, {{"dtype", "f32"}});
    const auto a = from_whole.select("copy", problem, Device::h200());
    const auto b = from_compact.select("copy", problem, Device::h200());
    CHECK(a.config == b.config);
    CHECK(a.reason == b.reason);
  }
}

TEST_CASE("cli: export --best keeps what best shows, --best 0 and a failed status are refused",
          "[cli][export]") {
  TempDir dir;
  const std::string whole = dir.file("whole.db"), compact = dir.file("compact.db"),
                    jsonl = dir.file("compact.jsonl");
  const std::string recorded = test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  REQUIRE(test::run_ktune(dir, "import --db " + whole + " " + recorded).status == 0);
  auto exported_run = test::run_ktune(dir, "export --db " + whole + " --best 1 " + jsonl);
  INFO(exported_run.output);
  REQUIRE(exported_run.status == 0);
  REQUIRE(test::run_ktune(dir, "import --db " + compact + " " + jsonl).status == 0);
  CHECK(TuningLog(compact, LogMode::read_only).count() < TuningLog(whole, LogMode::read_only).count() / 3);

  auto best_json = [&](const std::string& db) {
    auto run = test::run_ktune(dir, "best --json --db " + db);
    REQUIRE(run.status == 0);
    auto rows = nlohmann::json::parse(run.output);
    for (auto& row : rows) {  // the counts of trials are what the export leaves out
      row.erase("trials");
      row.erase("ok_trials");
    }
    return rows;
  };
  const auto rows = best_json(whole);
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) CHECK(row["speedup"].is_number());  // defaults kept
  CHECK(best_json(compact) == rows);

  auto zero = test::run_ktune(dir, "export --db " + whole + " --best 0 " + dir.file("zero.jsonl"));
  CHECK(zero.status != 0);
  CHECK(zero.output.find("--best") != std::string::npos);
  auto failed = test::run_ktune(dir, "export --db " + whole + " --best 2 --status launch_error " +
                                         dir.file("failed.jsonl"));
  CHECK(failed.status != 0);
  CHECK(failed.output.find("--best keeps ok trials only") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("failed.jsonl")));
}

TEST_CASE("The Dispatcher deploys what best shows, also configs recorded before the template "
          "gained parameters", "[cli][export][dispatch]") {
  // The recorded demo log predates parameters layernorm and reduction have since gained: best
  // counts its configs with those at their defaults, and so must the deployed lookup.
  TempDir dir;
  const std::string db = dir.file("demo.db");
  const std::string recorded = test::source_path("benchmarks/results/2026-11-30-h200/demo-h200.jsonl");
  REQUIRE(test::run_ktune(dir, "import --db " + db + " " + recorded).status == 0);
  const auto run = test::run_ktune(dir, "best --json --db " + db);
  REQUIRE(run.status == 0);
  const auto rows = nlohmann::json::parse(run.output);
  REQUIRE(rows.size() == 4);
  DispatcherOptions strict;
  strict.strict = true;
  for (const std::string& path : {db, recorded}) {
    Dispatcher lenient(path), refusing(path, strict);
    for (const auto& row : rows) {
      const std::string name = row["template"];
      INFO(path << ": " << name << " " << row["problem"].get<std::string>());
      REQUIRE(row["device"] == Device::h200().key());
      const auto tmpl = find_template(name);
      const Problem problem = Problem::from_key(row["problem"]);
      const Config shown = tmpl->space(problem, Device::h200()).with_changes(row["config"].get<std::string>());
      const Selection s = lenient.select(name, problem, Device::h200());
      CHECK(s.reason == SelectionReason::exact);
      CHECK(s.config == shown);
      CHECK(refusing.select(name, problem, Device::h200()).config == shown);
    }
    CHECK(lenient.rejections().empty());
  }
}

TEST_CASE("cli: export --best --space keeps a user template's default, without it, says so",
          "[cli][export][user_template]") {
  TempDir dir;
  const std::string spec = test::source_path("examples/custom_template/transpose.T1.json");
  const auto tmpl = load_user_template({spec, ""});
  const Problem problem = tmpl->example_problem();
  const SearchSpace space = tmpl->space(problem, Device::h200());
  const Config def = space.default_config();
  std::mt19937_64 rng(5);
  Config fast = space.random(rng);
  while (fast == def) fast = space.random(rng);
  auto record = [&](const Config& c, double ms) {
    TrialRecord r = make_record(c.str(), ms, Status::ok, "run-u", problem.key(), tmpl->name(),
                                Device::h200());
    r.source_hash = Builder::source_hash(tmpl->source());
    return r;
  };
  const std::string db = dir.file("t.db");
  {
    TuningLog log(db);
    log.append_batch({record(def, 2.0), record(fast, 1.0), record(def, 2.1)});
  }
  auto kept = [&](const std::string& space_option, std::string* output) {
    const std::string out = dir.file("out" + std::to_string(output->size()) + ".jsonl");
    const auto run = test::run_ktune(dir, "export --db " + db + " --best 1 " + space_option + out);
    *output = run.output;
    REQUIRE(run.status == 0);
    std::ifstream in(out);
    return jsonl::read(in, out).size();
  };
  std::string with_output, without_output;
  CHECK(kept("--space " + spec + " ", &with_output) == 3);  // the fast config and the default's two
  CHECK(with_output.find("note:") == std::string::npos);
  CHECK(kept("", &without_output) == 1);
  CHECK(without_output.find("template " + tmpl->name() + " is not known") != std::string::npos);
  CHECK(without_output.find("--space") != std::string::npos);
}
