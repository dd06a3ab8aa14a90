// End to end without a GPU: `ktune tune --plan` in replay mode over a recorded database of
// synthetic copy measurements, resume, `ktune best --json` and `ktune report`. Runs the built
// `ktune` binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <filesystem>
#include <set>

#include "cli_fixtures.h"
#include "ktune/dispatch.h"
#include "skip.h"

using namespace ktune;
using ktune::test::run_ktune;
using ktune::test::TempDir;

namespace {

constexpr std::int64_t kSmall = 1 << 20;
constexpr std::int64_t kLarge = 1 << 22;

std::string problem_key(std::int64_t n) { return "copy|N=" + std::to_string(n) + "|dtype=f32"; }

std::int64_t count_trials(const std::string& db, std::int64_t n) {
  TuningLog log(db, LogMode::read_only);
  LogFilter filter;
  filter.template_name = "copy";
  filter.problem_key = problem_key(n);
  return log.count(filter);
}

/// The log's best record of the copy task of size n on the H200 (it must have one).
TrialRecord fastest_record(const TuningLog& log, std::int64_t n) {
  auto best = log.best("copy", problem_key(n), device_key_of(Device::h200()));
  REQUIRE(best);
  return *best;
}

/// A two-problem plan: the small copy with the command's budget, the large one with 20.
std::string write_plan(const TempDir& dir) {
  const std::string plan = dir.file("plan.json");
  test::write_text(plan, "[{\"template\": \"copy\", \"shape\": \"" + std::to_string(kSmall) +
                             "\", \"dtype\": \"f32\"},\n {\"op\": \"copy\", \"shape\": [" +
                             std::to_string(kLarge) + "], \"dtype\": \"f32\", \"budget\": 20}]");
  return plan;
}

}  // namespace

TEST_CASE("cli: a replay of an older template source resumes instead of recording twice",
          "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  const std::string older = "0123456789abcdef-older-source";
  test::write_recorded_copy_db(recorded, {kSmall, kLarge}, older);
  const std::string out = dir.file("out.db");
  const std::string tune = "tune --plan " + write_plan(dir) + " --replay " + recorded + " --db " +
                           out + " --budget 30 --seed 3";
  auto first = run_ktune(dir, tune);
  INFO(first.output);
  REQUIRE(first.status == 0);
  {
    TuningLog log(out, LogMode::read_only);
    for (const auto& rec : log.records()) CHECK(rec.source_hash == older);  // kept, not restamped
  }
  auto again = run_ktune(dir, tune);
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(again.output.find("30 resumed") != std::string::npos);
  CHECK(again.output.find("20 resumed") != std::string::npos);
  CHECK(count_trials(out, kSmall) == 30);
  CHECK(count_trials(out, kLarge) == 20);
}

TEST_CASE("cli: a replayed plan records every trial with its context, resumes, and feeds best",
          "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  const auto optimum = test::write_recorded_copy_db(recorded, {kSmall, kLarge});
  const std::string plan = write_plan(dir);
  const std::string out = dir.file("out.db");
  const std::string tune = "tune --plan " + plan + " --replay " + recorded + " --db " + out +
                           " --budget 30 --seed 3";

  auto r = run_ktune(dir, tune);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(count_trials(out, kSmall) == 30);
  CHECK(count_trials(out, kLarge) == 20);  // the plan entry's own budget

  // Every record carries template, source hash, problem, device, versions and one run id.
  {
    TuningLog log(out, LogMode::read_only);
    const auto records = log.records();
    REQUIRE(records.size() == 50);
    const std::string hash = Builder::source_hash(find_template("copy")->source());
    for (const auto& rec : records) {
      CHECK(rec.template_name == "copy");
      CHECK(rec.source_hash == hash);
      CHECK(rec.device_key() == device_key_of(Device::h200()));
      CHECK(rec.run_id == records.front().run_id);
      CHECK_FALSE(rec.ktune_version.empty());
      CHECK(rec.trial.timestamp_us > 0);
    }
    CHECK(log.runs().size() == 1);
  }

  SECTION("the same command again measures nothing new") {
    auto again = run_ktune(dir, tune);
    INFO(again.output);
    REQUIRE(again.status == 0);
    CHECK(again.output.find("30 resumed") != std::string::npos);
    // A task whose budget the resumed trials fill keeps its default as the reference.
    CHECK(again.output.find("over the default") != std::string::npos);
    CHECK(count_trials(out, kSmall) == 30);
    CHECK(count_trials(out, kLarge) == 20);
  }

  SECTION("a resumed run names the winner best picks when a config was measured again") {
    // The fastest config's later measurements (as final rounds add them) are slow: its typical
    // trial is no longer the fastest, so `best` names another config, and so must the resume.
    std::string lucky;
    {
      TuningLog log(out);
      const TrialRecord fastest = fastest_record(log, kSmall);
      lucky = fastest.config_text;
      TrialRecord slow = fastest;
      for (double& t : slow.trial.times_ms) t *= 10;
      slow.trial.median_ms *= 10;
      slow.trial.min_ms *= 10;
      log.append(slow);
      log.append(slow);
    }
    auto best = run_ktune(dir, "best --db " + out + " --json");
    REQUIRE(best.status == 0);
    std::string winner;
    for (const auto& row : nlohmann::json::parse(best.output))
      if (row["problem"] == problem_key(kSmall)) winner = row["config"];
    REQUIRE_FALSE(winner.empty());
    REQUIRE(winner != lucky);
    auto again = run_ktune(dir, tune);
    INFO(again.output);
    REQUIRE(again.status == 0);
    const std::string line = "copy " + problem_key(kSmall) + ": best ";
    const auto at = again.output.find(line);
    REQUIRE(at != std::string::npos);
    const std::string summary = again.output.substr(at, again.output.find('\n', at) - at);
    CHECK(summary.find("with " + winner + ";") != std::string::npos);
    CHECK(summary.find("with " + lucky + ";") == std::string::npos);
  }

  SECTION("a larger budget continues without measuring a config twice") {
    auto more = run_ktune(dir, "tune --plan " + plan + " --replay " + recorded + " --db " + out +
                                   " --budget 45 --seed 3");
    INFO(more.output);
    REQUIRE(more.status == 0);
    CHECK(count_trials(out, kSmall) == 45);
    TuningLog log(out, LogMode::read_only);
    LogFilter filter;
    filter.problem_key = problem_key(kSmall);
    std::set<std::string> configs;
    for (const auto& rec : log.records(filter)) CHECK(configs.insert(rec.config_text).second);
  }

  SECTION("best --json reports the fastest trial, its speed-up and the copy-bandwidth ratio") {
    auto best = run_ktune(dir, "best --db " + out + " --json");
    INFO(best.output);
    REQUIRE(best.status == 0);
    const auto rows = nlohmann::json::parse(best.output);
    REQUIRE(rows.size() == 2);
    TuningLog log(out, LogMode::read_only);
    for (const auto& row : rows) {
      const std::string key = row["problem"];
      const auto fastest = log.best("copy", key, device_key_of(Device::h200()));
      REQUIRE(fastest);
      CHECK(row["median_ms"].get<double>() == Approx(fastest->trial.median_ms));
      CHECK(row["median_ms"].get<double>() >= optimum[key == problem_key(kSmall) ? 0 : 1] * 0.999999);
      // The default (ITEMS=1) is measured first in the run; the synthetic optimum is 1/0.9 faster.
      REQUIRE(row["speedup"].is_number());
      CHECK(row["speedup"].get<double>() >= 1.0);
      CHECK(row["speedup"].get<double>() <= 1.0 / 0.9 + 1e-9);
      CHECK(row["vendor"] == "copy");
      REQUIRE(row["vendor_ratio"].is_number());
      CHECK(row["vendor_ratio"].get<double>() > 0.5);
      CHECK(row["vendor_ratio"].get<double>() <= 1.0 + 1e-9);
    }
    auto table = run_ktune(dir, "best --db " + out);
    CHECK(table.status == 0);
    CHECK(table.output.find(problem_key(kLarge)) != std::string::npos);
  }
}

TEST_CASE("cli: exhaustive replay finds the recorded optimum, JSON-lines data replays too",
          "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  const auto optimum = test::write_recorded_copy_db(recorded, {kSmall});
  {
    TuningLog log(recorded, LogMode::read_only);
    export_file(log, dir.file("recorded.jsonl"), LogFormat::jsonl);
  }
  for (const std::string data : {recorded, dir.file("recorded.jsonl")}) {
    const std::string out = dir.file("out-" + std::to_string(data.size()) + ".db");
    auto r = run_ktune(dir, "tune --template copy --shape " + std::to_string(kSmall) +
                                " --dtype f32 --searcher exhaustive --budget 0 --replay " + data +
                                " --db " + out);
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("stop: exhausted") != std::string::npos);
    TuningLog log(out, LogMode::read_only);
    const auto best = log.best("copy", problem_key(kSmall), device_key_of(Device::h200()));
    REQUIRE(best);
    CHECK(best->trial.median_ms == Approx(optimum[0]));
    CHECK(best->config_text == "VEC=4,THREADS=256,ITEMS=4,GRID_STRIDE=0");
    LogFilter failed;
    failed.status = Status::launch_error;
    CHECK(log.count(failed) == 6);  // THREADS=1024 with ITEMS=8: failures are recorded too
  }
}

TEST_CASE("cli: a config recorded several times replays as its typical trial, as best judges it",
          "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  const auto optimum = test::write_recorded_copy_db(recorded, {kSmall});
  const std::string fastest = "VEC=4,THREADS=256,ITEMS=4,GRID_STRIDE=0";
  {  // the fastest config measured twice more, slower both times: its typical trial is slower
    TuningLog log(recorded);
    const TrialRecord first = fastest_record(log, kSmall);
    REQUIRE(first.config_text == fastest);
    for (int i = 0; i < 2; ++i) {
      TrialRecord again = first;
      again.trial.median_ms = optimum[0] * 1.5;
      log.append(again);
    }
  }
  const auto judged = fastest_record(TuningLog(recorded, LogMode::read_only), kSmall);
  REQUIRE(judged.config_text != fastest);  // `best` judges by the typical trial
  // Every recorded config replayed into a fresh log: that log's fastest record.
  auto replay_all = [&](const std::string& data, const std::string& out) {
    auto r = run_ktune(dir, "tune --template copy --shape " + std::to_string(kSmall) +
                                " --dtype f32 --searcher exhaustive --budget 0 --replay " + data +
                                " --db " + out);
    INFO(r.output);
    REQUIRE(r.status == 0);
    return fastest_record(TuningLog(out, LogMode::read_only), kSmall);
  };
  const auto replayed = replay_all(recorded, dir.file("out.db"));
  CHECK(replayed.config_text == judged.config_text);
  CHECK(replayed.trial.median_ms == Approx(judged.trial.median_ms));
  // Records of two older sources: each source's trials are judged apart, and the faster
  // source's typical trial answers, as best ranks them (not a median over both).
  const std::string older = dir.file("older.db");
  const auto opt = test::write_recorded_copy_db(older, {kSmall}, "aaaaaaaaaaaaaaaa");
  {
    TuningLog log(older);
    TrialRecord slow = fastest_record(log, kSmall);
    REQUIRE(slow.config_text == fastest);
    slow.source_hash = "bbbbbbbbbbbbbbbb";
    slow.trial.median_ms = opt[0] * 3;
    log.append(slow);
    log.append(slow);
  }
  REQUIRE(fastest_record(TuningLog(older, LogMode::read_only), kSmall).config_text == fastest);
  const auto replayed2 = replay_all(older, dir.file("out2.db"));
  CHECK(replayed2.config_text == fastest);
  CHECK(replayed2.trial.median_ms == Approx(opt[0]));
}

TEST_CASE("cli: tune's header and progress say what the budget is and was", "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db"), out = dir.file("out.db");
  test::write_recorded_copy_db(recorded, {kSmall});
  const std::string tune = "tune --template copy --shape " + std::to_string(kSmall) +
                           " --dtype f32 --searcher exhaustive --progress 0 --replay " + recorded +
                           " --db " + out;
  const auto all = run_ktune(dir, tune + " --budget 0");
  INFO(all.output);
  REQUIRE(all.status == 0);
  CHECK(all.output.find("exhaustive, no trial limit") != std::string::npos);
  CHECK(all.output.find("budget 0") == std::string::npos);
  // Resumed past a smaller budget: the count says so instead of "N/2".
  const auto again = run_ktune(dir, tune + " --budget 2");
  INFO(again.output);
  REQUIRE(again.status == 0);
  const auto n = count_trials(out, kSmall);
  CHECK(again.output.find(std::to_string(n) + " (budget 2) trials") != std::string::npos);
  CHECK(again.output.find(std::to_string(n) + "/2") == std::string::npos);
  // A tuning plan given as --replay data is named as such.
  test::write_text(dir.file("plan.json"), "[\n  {\"template\": \"copy\"}\n]\n");
  const auto plan = run_ktune(dir, "tune --template copy --replay " + dir.file("plan.json") + " --db " +
                                       dir.file("p.db"));
  INFO(plan.output);
  CHECK(plan.status != 0);
  CHECK(plan.output.find("plan.json' is a JSON list") != std::string::npos);
  CHECK(plan.output.find("given as --plan") != std::string::npos);
}

TEST_CASE("cli: plain progress lines end with the final count whatever stopped the run",
          "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  test::write_recorded_copy_db(recorded, {kSmall});
  const std::string out = dir.file("out.db");
  // Early stop: the run ends after 3 trials without improvement, before its budget.
  auto r = run_ktune(dir, "tune --template copy --shape " + std::to_string(kSmall) +
                              " --dtype f32 --searcher exhaustive --early-stop 3 --budget 0"
                              " --progress 0 --replay " + recorded + " --db " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  REQUIRE(r.output.find("stop: patience") != std::string::npos);
  const std::string done = std::to_string(count_trials(out, kSmall));
  const auto summary = r.output.find(": best ");
  REQUIRE(summary != std::string::npos);
  const auto last_progress = r.output.rfind(" trials, ", summary);
  REQUIRE(last_progress != std::string::npos);
  const auto line_start = r.output.rfind('\n', last_progress) + 1;
  CHECK(r.output.substr(line_start, last_progress - line_start).find(": " + done + "/") !=
        std::string::npos);
}

TEST_CASE("cli: replay of a problem the data does not hold names what the data has", "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  test::write_recorded_copy_db(recorded, {kSmall});
  auto r = run_ktune(dir, "tune --op copy --shape 77 --replay " + recorded + " --db " + dir.file("o.db"));
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK(r.output.find("copy|N=77|dtype=f32") != std::string::npos);
  CHECK(r.output.find(problem_key(kSmall)) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("o.db")));  // nothing created on bad input
}

TEST_CASE("cli: a dry run with --replay checks the data as the run would, and GPU options are "
          "refused beside --replay",
          "[cli][replay]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  test::write_recorded_copy_db(recorded, {kSmall});
  const std::string task =
      "tune --template copy --shape " + std::to_string(kSmall) + " --dtype f32 ";
  // Described for the device of the records, with what it replays.
  const auto dry = run_ktune(dir, task + "--dry-run --replay " + recorded);
  INFO(dry.output);
  REQUIRE(dry.status == 0);
  const auto copy = find_template("copy");
  const Problem problem = make_problem(*copy, std::to_string(kSmall), {{"dtype", "f32"}});
  std::size_t valid = 0;
  copy->space(problem, Device::h200()).for_each_valid([&](Index, const Config&) { ++valid; });
  CHECK(dry.output.find("replay: " + std::to_string(valid) + " recorded configs of " +
                        Device::h200().key() + " from " + recorded) != std::string::npos);
  // A target named beside the records would be ignored: refused.
  require_failure_mentioning(run_ktune(dir, task + "--dry-run --arch sm_80 --replay " + recorded),
                             {"--arch", "--replay"});
  // Data that cannot be replayed fails the dry run as it fails the run, naming what it holds.
  const auto other = run_ktune(dir, "tune --op copy --shape 77 --dry-run --replay " + recorded);
  INFO(other.output);
  CHECK(other.status != 0);
  CHECK(other.output.find(problem_key(kSmall)) != std::string::npos);
  test::write_text(dir.file("bad.jsonl"),
                   "{\"format\":\"ktune-trials\",\"version\":1}\n{\"config\":\n");
  const auto bad = run_ktune(dir, task + "--dry-run --replay " + dir.file("bad.jsonl"));
  INFO(bad.output);
  CHECK(bad.status != 0);
  CHECK(bad.output.find("bad.jsonl:2") != std::string::npos);
  CHECK(bad.output.find("dry run:") == std::string::npos);
  // Options of a GPU run do nothing in a replay: refused, naming both.
  for (const std::string option :
       {"--gpu 1", "--jobs 1", "--compile-processes 1", "--cache-dir x", "--worker x",
        "--graph-timing"}) {
    const std::string name = option.substr(0, option.find(' '));
    const auto refused =
        run_ktune(dir, task + "--replay " + recorded + " --db " + dir.file("o.db") + " " + option);
    INFO(refused.output);
    CHECK(refused.status > 100);  // a usage error
    CHECK((refused.output.find("--replay excludes " + name) != std::string::npos ||
           refused.output.find(name + " excludes --replay") != std::string::npos));
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("o.db")));
}

TEST_CASE("cli: replay --json - keeps standard output pure JSON (the table goes to stderr)",
          "[cli][replay]") {
  TempDir dir;
  const std::string data = std::string(KTUNE_DATASETS_DIR) + "/dedispersion_milo_A6000.json.gz";
  const std::string out = dir.file("stdout.json"), err = dir.file("stderr.txt");
  const std::string command = "'" + test::ktune_program() + "' replay --data " + data +
                              " --budget 30 --repeats 2 --json - > '" + out + "' 2> '" + err + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);  // throws on any table line in stdout
  CHECK(j["results"].size() == 1);
  CHECK(j["budget"] == 30);
  std::ifstream table(err);
  std::stringstream text;
  text << table.rdbuf();
  CHECK(text.str().find("fraction of optimum") != std::string::npos);
}

TEST_CASE("cli: replay of several searchers gives each the options it has, intervals stay in [0, 1]",
          "[cli][replay]") {
  TempDir dir;
  const std::string data = std::string(KTUNE_DATASETS_DIR) + "/dedispersion_milo_A6000.json.gz";
  const std::string json = dir.file("r.json");
  const auto both = test::run_ktune(dir, "replay --data " + data + " --searcher genetic,random "
                                         "--options population=6 --budget 30 --repeats 2 --json " + json);
  INFO(both.output);
  REQUIRE(both.status == 0);
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["results"].size() == 2);
  for (const auto& result : j["results"])
    for (const auto& b : result["budgets"]) {
      CHECK(b["ci_low"].get<double>() >= 0.0);
      CHECK(b["ci_high"].get<double>() <= 1.0);
    }
  const auto none = test::run_ktune(dir, "replay --data " + data + " --searcher genetic,random "
                                         "--options nope=1 --budget 30 --repeats 2");
  CHECK(none.status != 0);
  CHECK(none.output.find("--options nope: none of the searchers genetic, random") != std::string::npos);
  // One searcher: an option it lacks is still its own error.
  const auto one = test::run_ktune(dir, "replay --data " + data + " --searcher random "
                                        "--options population=6 --budget 30 --repeats 2");
  CHECK(one.status != 0);
  CHECK(one.output.find("searcher 'random' has no option 'population'") != std::string::npos);
}

TEST_CASE("cli: report writes a self-contained page with plots and the best table", "[cli][report]") {
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  test::write_recorded_copy_db(recorded, {kSmall, kLarge});
  const std::string out = dir.file("out.db");
  REQUIRE(run_ktune(dir, "tune --plan " + write_plan(dir) + " --replay " + recorded + " --db " +
                             out + " --budget 25")
              .status == 0);
  const std::string html = dir.file("report.html");
  auto r = run_ktune(dir, "report --db " + out + " --out " + html);
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(html);
  std::stringstream text;
  text << in.rdbuf();
  const std::string page = text.str();
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</html>") != std::string::npos);
  // Two tasks: a convergence chart and a distribution each, plus the status chart.
  std::size_t svgs = 0;
  for (auto at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) ++svgs;
  CHECK(svgs == 5);
  CHECK(page.find("<polyline") != std::string::npos);
  CHECK(page.find("launch_error") != std::string::npos);  // failure counts by status
  CHECK(page.find(problem_key(kLarge)) != std::string::npos);
  // No network needed: nothing is fetched from elsewhere.
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href=") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
}

TEST_CASE("cli: the report renders in headless Chromium (scripts/render_report.sh)", "[cli][report]") {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    KTUNE_SKIP("chromium is not installed (apt-get install -y chromium)");
  }
  TempDir dir;
  const std::string recorded = dir.file("recorded.db");
  test::write_recorded_copy_db(recorded, {kSmall});
  const std::string out = dir.file("out.db");
  REQUIRE(run_ktune(dir, "tune --op copy --shape " + std::to_string(kSmall) + " --replay " +
                             recorded + " --db " + out + " --budget 20")
              .status == 0);
  REQUIRE(run_ktune(dir, "report --db " + out + " --out " + dir.file("r.html")).status == 0);
  const std::string png = dir.file("r.png");
  const std::string command = std::string(KTUNE_SOURCE_DIR) + "/scripts/render_report.sh " +
                              dir.file("r.html") + " " + png + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  REQUIRE(std::filesystem::exists(png));
  CHECK(std::filesystem::file_size(png) > 10000);  // a page with charts, not a blank image
}

TEST_CASE("cli: best never names a config the dispatcher would refuse, however fast its record",
          "[cli][replay]") {
  TempDir dir;
  const std::string db = dir.file("recorded.db");
  const auto optimum = test::write_recorded_copy_db(db, {kSmall});
  {
    // Records written by hand or by another tool: a number in a form the strict parser
    // refuses, a vector width outside the domain, an unknown parameter.
    TuningLog log(db);
    const TrialRecord fastest = fastest_record(log, kSmall);
    for (const std::string text : {"VEC=1e0,THREADS=256,ITEMS=1,GRID_STRIDE=0",
                                   "VEC=3,THREADS=256,ITEMS=1,GRID_STRIDE=0",
                                   "VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0,EVIL=1"}) {
      TrialRecord hostile = fastest;
      hostile.config_text = text;
      hostile.trial.median_ms = hostile.trial.min_ms = 1e-6;
      hostile.trial.times_ms = {1e-6};
      test::append_edited(db, hostile);
    }
    // Without the check the hostile record would win: the test can fail.
    REQUIRE(log.best("copy", problem_key(kSmall), device_key_of(Device::h200()))->trial.median_ms == 1e-6);
  }
  auto best = run_ktune(dir, "best --db " + db + " --json");
  INFO(best.output);
  REQUIRE(best.status == 0);
  const auto rows = nlohmann::json::parse(best.output);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["median_ms"].get<double>() == Approx(optimum[0]));
  CHECK(rows[0]["config"] == "VEC=4,THREADS=256,ITEMS=4,GRID_STRIDE=0");
  // The dispatcher picks the same config from the same log.
  Dispatcher dispatch(db);
  auto copy = find_template("copy");
  const auto selection = dispatch.select("copy", make_problem(*copy, std::to_string(kSmall), {{"dtype", "f32"}}),
                                         Device::h200());
  CHECK(selection.config.str() == rows[0]["config"].get<std::string>());
}

TEST_CASE("cli: resume drops a config that failed since, as best does, and leaves out configs outside the space",
          "[cli][replay]") {
  TempDir dir;
  // Replay data without the THREADS=256, ITEMS=8 configs: the replayed space is narrowed to
  // the recorded configs, so VEC=4,THREADS=256,ITEMS=8 has every value in its domain but is
  // not a valid config of it.
  const std::string all = dir.file("all.db"), recorded = dir.file("recorded.db");
  test::write_recorded_copy_db(all, {kSmall});
  {
    TuningLog from(all, LogMode::read_only), to(recorded);
    std::vector<TrialRecord> kept;
    for (const auto& r : from.records())
      if (r.config_text.find("THREADS=256,ITEMS=8") == std::string::npos) kept.push_back(r);
    to.append_batch(kept);
  }
  const std::string out = dir.file("out.db");
  const std::string tune = "tune --template copy --shape " + std::to_string(kSmall) +
                           " --dtype f32 --replay " + recorded + " --db " + out + " --budget 30 --seed 3";
  auto first = run_ktune(dir, tune);
  INFO(first.output);
  REQUIRE(first.status == 0);
  std::string winner;
  TrialRecord fastest;
  {
    TuningLog log(out);
    fastest = fastest_record(log, kSmall);
    winner = fastest.config_text;
    // The winner fails twice afterwards (a runtime error when measured again).
    TrialRecord failed = fastest;
    failed.trial.status = Status::runtime_error;
    failed.trial.median_ms = failed.trial.min_ms = 1e-6;
    log.append(failed);
    log.append(failed);
  }
  // What `best` names now, a config other than the failed winner.
  auto best = run_ktune(dir, "best --db " + out + " --json");
  REQUIRE(best.status == 0);
  const auto rows = nlohmann::json::parse(best.output);
  REQUIRE(rows.size() == 1);
  const std::string named = rows[0]["config"].get<std::string>();
  INFO("best names " << named << "; the failed winner was " << winner);
  CHECK(named != winner);
  {
    // A config the replayed space does not hold appears, faster than anything.
    TuningLog log(out);
    TrialRecord outside = fastest;
    outside.config_text = "VEC=4,THREADS=256,ITEMS=8,GRID_STRIDE=0";
    outside.trial.config = parse_config_text(outside.config_text);
    outside.trial.median_ms = outside.trial.min_ms = 1e-6;
    outside.trial.times_ms = {1e-6};
    log.append(outside);
  }
  auto again = run_ktune(dir, tune);
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(again.output.find("resuming from 30 recorded trials") != std::string::npos);
  // The failed winner is never named again, nor the config outside the replayed space: the
  // resumed run names what `best` named before that config appeared.
  CHECK(again.output.find("with " + winner + ";") == std::string::npos);
  CHECK(again.output.find("with " + named + ";") != std::string::npos);
}

TEST_CASE("cli: report charts plot ok times only: the best so far never rises, failures never count",
          "[cli][report]") {
  TempDir dir;
  const std::string db = dir.file("t.db");
  {
    // One run: ok 2.0 ms, a failure recorded with a tiny time, ok 1.0 ms, ok 1.5 ms.
    TuningLog log(db);
    auto record = [&](double ms, Status status) {
      auto r = test::make_record("VEC=4,THREADS=256,ITEMS=1,GRID_STRIDE=0", ms, status, "run-r",
                                 problem_key(kSmall), "copy", Device::h200());
      log.append(r);
    };
    record(2.0, Status::ok);
    record(0.001, Status::wrong_result);
    record(1.0, Status::ok);
    record(1.5, Status::ok);
  }
  const std::string html = dir.file("r.html");
  REQUIRE(run_ktune(dir, "report --db " + db + " --out " + html).status == 0);
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The distribution is relative to the fastest ok trial, not to the failed one's time.
  CHECK(page.find("fastest = 1.000 ms") != std::string::npos);
  // The convergence curve: the best ok median so far after each trial of the run. A faster
  // time sits lower on the chart (a larger y pixel), so the pixels never decrease.
  const auto poly = page.find("<polyline");
  REQUIRE(poly != std::string::npos);
  const auto from = page.find("points=\"", poly) + 8;
  std::istringstream points(page.substr(from, page.find('"', from) - from));
  std::vector<double> ys;
  std::string point;
  while (points >> point) ys.push_back(std::stod(point.substr(point.find(',') + 1)));
  REQUIRE(ys.size() == 4);
  CHECK(ys[1] == ys[0]);  // the failure, whatever time it carries, leaves the best at 2.0 ms
  CHECK(ys[2] > ys[1]);   // 1.0 ms: lower on the chart
  CHECK(ys[3] == ys[2]);  // 1.5 ms does not beat 1.0 ms
}

TEST_CASE("cli: a resume measures again the configs timed only the other launch way, and best "
          "ranks each way by its own trials",
          "[cli][replay]") {
  TempDir dir;
  // The same measurements recorded twice: on a plain stream (no form recorded: plain), and
  // launched programmatically, 3 % faster.
  const std::string plain = dir.file("plain.db"), programmatic = dir.file("programmatic.db");
  test::write_recorded_copy_db(plain, {kSmall});
  test::write_recorded_copy_db(programmatic, {kSmall});
  test::raw_sql(programmatic,
                "UPDATE trials SET launch = 'programmatic', median_ms = median_ms * 0.97 "
                "WHERE status = 'ok'");
  const std::string out = dir.file("out.db");
  const std::string tune = "tune --template copy --shape " + std::to_string(kSmall) +
                           " --dtype f32 --budget 12 --seed 3 --progress 0 --db " + out;
  const auto first = run_ktune(dir, tune + " --replay " + plain);
  INFO(first.output);
  REQUIRE(first.status == 0);
  CHECK(first.output.find("timed only") == std::string::npos);
  // Replayed programmatic records keep their form: nothing ok of the first run resumes.
  const auto second = run_ktune(dir, tune + " --replay " + programmatic + " --programmatic-launch");
  INFO(second.output);
  REQUIRE(second.status == 0);
  CHECK(second.output.find("timed only without programmatic launch, which this run uses; they are "
                           "not resumed but measured again") != std::string::npos);
  std::map<LaunchForm, int> forms;
  {
    TuningLog log(out, LogMode::read_only);
    for (const auto& r : log.records()) {
      if (!r.trial.ok()) continue;
      ++forms[r.trial.launch];
    }
  }
  CHECK(forms.size() == 2);
  CHECK(forms[LaunchForm::unknown] > 0);
  CHECK(forms[LaunchForm::programmatic] > 0);
  const std::int64_t after_second = count_trials(out, kSmall);
  // A third run of the programmatic way resumes the second's trials and measures nothing of
  // its configs again.
  const auto third = run_ktune(dir, tune + " --replay " + programmatic + " --programmatic-launch");
  INFO(third.output);
  REQUIRE(third.status == 0);
  CHECK(count_trials(out, kSmall) == after_second);

  // best ranks each way by its own trials: the programmatic row's time is the programmatic
  // record of its config, 3 % under the plain record of the same config.
  auto rows_of = [&](const std::string& flags) {
    const auto r = run_ktune(dir, "best --json --db " + out + flags);
    INFO(r.output);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(test::json_array_of(r.output));
  };
  const auto plain_rows = rows_of(""), programmatic_rows = rows_of(" --programmatic-launch");
  REQUIRE(plain_rows.size() == 1);
  REQUIRE(programmatic_rows.size() == 1);
  CHECK(plain_rows[0]["launch"] == "unknown");
  CHECK(programmatic_rows[0]["launch"] == "programmatic");
  CHECK(plain_rows[0]["unranked_ok_trials"] == forms[LaunchForm::programmatic]);
  CHECK(programmatic_rows[0]["unranked_ok_trials"] == forms[LaunchForm::unknown]);
  const Device device = Device::h200();
  auto copy = find_template("copy");
  const Problem problem = make_problem(*copy, std::to_string(kSmall), {{"dtype", "f32"}});
  const Config best = copy->space(problem, device).parse(programmatic_rows[0]["config"]);
  CHECK(programmatic_rows[0]["median_ms"].get<double>() ==
        Approx(test::synthetic_copy_trial(best, kSmall).median_ms * 0.97));

  // The report's table ranks as best does, and says which way and that the other is there.
  for (const bool programmatic : {false, true}) {
    const std::string html = dir.file(programmatic ? "p.html" : "r.html");
    REQUIRE(run_ktune(dir, "report --db " + out + " --out " + html +
                               (programmatic ? " --programmatic-launch" : ""))
                .status == 0);
    const std::string page = test::read_text(html);
    CHECK(page.find(programmatic ? "timed with programmatic launch when it has any"
                                 : "timed without programmatic launch when it has any") !=
          std::string::npos);
    CHECK(page.find("1 task also holds ok trials timed the other way") != std::string::npos);
    CHECK(page.find(programmatic ? "<td>programmatic</td>" : "<td>unknown</td>") !=
          std::string::npos);
  }
}

TEST_CASE("cli: an ok trial without a time (a log edited by another program) crashes nothing "
          "and is never a best",
          "[cli][replay]") {
  TempDir dir;
  const std::string edited = dir.file("edited.db");
  test::write_recorded_copy_db(edited, {kSmall});
  // The fastest config's one trial loses its time, as a hand edit or another tool could do.
  test::raw_sql(edited, "UPDATE trials SET median_ms = NULL WHERE id = (SELECT id FROM trials "
                        "WHERE status = 'ok' ORDER BY median_ms LIMIT 1)");
  std::string nulled;
  {
    TuningLog log(edited, LogMode::read_only);
    for (const auto& r : log.records())
      if (r.trial.ok() && std::isnan(r.trial.median_ms)) nulled = r.config_text;
  }
  REQUIRE_FALSE(nulled.empty());
  for (const std::string args : {"best --db " + edited, "best --json --db " + edited,
                                 "report --db " + edited + " --out " + dir.file("r.html")}) {
    const auto r = run_ktune(dir, args);
    INFO(args << "\n" << r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find(nulled) == std::string::npos);  // never shown as the best
    CHECK(r.output.find("nan") == std::string::npos);
  }
  const std::string tune = "tune --template copy --shape " + std::to_string(kSmall) +
                           " --dtype f32 --budget 200 --progress 0";
  // Replayed from the edited log: the config without a time is a failed trial, not a time.
  const auto replayed = run_ktune(dir, tune + " --replay " + edited + " --db " + dir.file("a.db"));
  INFO(replayed.output);
  CHECK(replayed.status == 0);
  CHECK(replayed.output.find("best nan") == std::string::npos);
  // Resumed from it: the same.
  const std::string clean = dir.file("clean.db");
  test::write_recorded_copy_db(clean, {kSmall});
  const auto resumed = run_ktune(dir, tune + " --replay " + clean + " --db " + edited);
  INFO(resumed.output);
  CHECK(resumed.status == 0);
  CHECK(resumed.output.find("best nan") == std::string::npos);
  // A JSON-lines log with such a record is refused by its line, as `ktune import` refuses it.
  REQUIRE(run_ktune(dir, "export --db " + clean + " " + dir.file("log.jsonl")).status == 0);
  std::string text = test::read_text(dir.file("log.jsonl"));
  const auto median = text.find("\"median_ms\":", text.find('\n'));
  REQUIRE(median != std::string::npos);
  const auto value_end = text.find_first_of(",}", median + 12);
  text.replace(median + 12, value_end - (median + 12), "null");
  test::write_text(dir.file("nulled.jsonl"), text);
  const auto refused = run_ktune(dir, tune + " --replay " + dir.file("nulled.jsonl") + " --db " +
                                          dir.file("b.db"));
  test::require_failure_mentioning(refused, "nulled.jsonl:2: trial copy");
  CHECK(refused.output.find("has status ok but median nan ms") != std::string::npos);
}

TEST_CASE("cli: import refuses a tuning log database and says how to merge one", "[cli][import]") {
  TempDir dir;
  const std::string source = dir.file("source.db");
  test::write_recorded_copy_db(source, {kSmall});
  const auto r = run_ktune(dir, "import --db " + dir.file("target.db") + " " + source);
  test::require_failure_mentioning(r, "is an SQLite database");
  CHECK(r.output.find("ktune export --db '" + source + "' - | ktune import --db TARGET -") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("target.db")));
  const auto forced =
      run_ktune(dir, "import --format jsonl --db " + dir.file("target.db") + " " + source);
  test::require_failure_mentioning(forced, "is an SQLite database");
}
