// scripts/demo end to end with the built ktune program (KTUNE_DEMO_KTUNE, so no set-up and no
// build): on a GPU it tunes examples/demo_plan.json and the custom template example on the
// device; without one (or with KTUNE_DEMO_REPLAY=1) it replays the recorded H100 log. Both
// must store trials of every demo task, print a `best` table with a winner per task, and
// write the HTML report.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_fixtures.h"
#include "gpu_guard.h"

using namespace ktune;
using ktune::test::TempDir;

namespace {

/// Runs scripts/demo with `env` prepended; returns exit status and output.
test::CliResult run_demo(const TempDir& dir, const std::string& env) {
  const std::string out = dir.file("demo-output.txt");
  const std::string command = env + " KTUNE_DEMO_KTUNE='" + test::ktune_program() +
                              "' KTUNE_DEMO_DB='" + dir.file("ktune.db") + "' '" +
                              test::source_path("scripts/demo") + "' > '" + out + "' 2>&1";
  const int raw = std::system(command.c_str());
  test::CliResult r;
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  r.output = text.str();
  return r;
}

/// The demo's database holds ok trials of every plan task; returns the templates seen.
std::set<std::string> check_demo_database(const std::string& db) {
  TuningLog log(db, LogMode::read_only);
  std::set<std::string> templates;
  for (const auto& task : log.tasks()) {
    INFO(task.template_name << " " << task.problem_key);
    CHECK(task.ok_trials > 0);
    CHECK(task.best_ms.has_value());
    templates.insert(task.template_name);
  }
  for (const char* t : {"gemm_mma", "layernorm", "reduction", "copy"}) {
    INFO(t);
    CHECK(templates.count(t) == 1);
  }
  return templates;
}

/// The `best` table printed by the demo has a row with a winning config for `tmpl`.
void check_best_row(const std::string& output, const std::string& tmpl) {
  const auto table = output.find("== ktune best");
  REQUIRE(table != std::string::npos);
  const auto row = output.find("\n" + tmpl + " ", table);
  INFO("no best row for " << tmpl);
  REQUIRE(row != std::string::npos);
  const std::string line = output.substr(row + 1, output.find('\n', row + 1) - row - 1);
  INFO(line);
  CHECK(line.find("|sm_90|132") != std::string::npos);
  CHECK(line.find('=') != std::string::npos);  // the winning config "A=1,B=2"
}

}  // namespace

TEST_CASE("demo: without a GPU the demo replays the recorded H100 log into best and a report",
          "[cli][demo]") {
  TempDir dir;
  auto r = run_demo(dir, "KTUNE_DEMO_REPLAY=1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("replaying the tuning log recorded on an H100") != std::string::npos);
  CHECK(r.output.find("dry run: 1 task(s) checked") != std::string::npos);
  check_demo_database(dir.file("ktune.db"));
  for (const char* t : {"gemm_mma", "layernorm", "reduction", "copy"}) check_best_row(r.output, t);
  CHECK(std::filesystem::file_size(dir.file("ktune-report.html")) > 1000);
  // A second run keeps the log (it may hold the user's own measurements) and resumes it.
  const auto records = TuningLog(dir.file("ktune.db"), LogMode::read_only).count();
  r = run_demo(dir, "KTUNE_DEMO_REPLAY=1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("exists: kept") != std::string::npos);
  CHECK(TuningLog(dir.file("ktune.db"), LogMode::read_only).count() == records);
}

TEST_CASE("demo: on a GPU the demo tunes the plan and the custom kernel, stores trials, and best "
          "prints a winner for each", "[cli][demo][gpu]") {
  KTUNE_REQUIRE_GPU();
  TempDir dir;
  auto r = run_demo(dir, "");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("on the GPU into") != std::string::npos);
  const auto templates = check_demo_database(dir.file("ktune.db"));
  CHECK(templates.count("my_transpose") == 1);
  {
    TuningLog log(dir.file("ktune.db"), LogMode::read_only);
    LogFilter filter;
    // Every plan entry spent its budget (plus the final re-measurement trials).
    const auto plan = nlohmann::json::parse(std::ifstream(test::source_path("examples/demo_plan.json")));
    const std::vector<std::string> templates_in_order = {"gemm_mma", "layernorm", "reduction", "copy"};
    REQUIRE(plan.size() == templates_in_order.size());
    for (std::size_t i = 0; i < plan.size(); ++i) {
      filter.template_name = templates_in_order[i];
      INFO(templates_in_order[i]);
      CHECK(log.count(filter) >= plan[i]["budget"].get<std::int64_t>());
    }
    filter.template_name = "my_transpose";
    CHECK(log.count(filter) >= 30);
    // The demo times on a plain stream (no --programmatic-launch or --graph-timing): every ok
    // trial says so, and every failed one says it was not timed.
    std::size_t ok = 0;
    for (const auto& rec : log.records()) {
      if (rec.template_name.starts_with("vendor:")) continue;  // recorded by `ktune vendor`
      INFO(rec.template_name << " " << rec.config_text << " " << rec.trial.message);
      CHECK(rec.trial.launch == (rec.trial.ok() ? LaunchForm::stream : LaunchForm::unknown));
      ok += rec.trial.ok();
    }
    CHECK(ok > 0);
  }
  // The table rows are of the GPU the test runs on, which need not be an H200: check names.
  const auto table = r.output.find("== ktune best");
  REQUIRE(table != std::string::npos);
  for (const char* t : {"gemm_mma", "layernorm", "reduction", "copy", "my_transpose"}) {
    INFO(t);
    CHECK(r.output.find(std::string("\n") + t + " ", table) != std::string::npos);
  }
  CHECK(std::filesystem::file_size(dir.file("ktune-report.html")) > 1000);
}
