// `ktune replay`: runs searchers R times with different seeds against recorded measurements
// (a Kernel Tuner cache) and prints, per budget of 25/50/100/200/400 evaluations, the mean
// fraction of optimum with its 95% confidence interval next to the exact random-search
// expectation, plus the methodology score of Willemsen et al. 2024; as a table and as JSON.
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "commands.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/replay.h"
#include "ktune/searcher.h"
#include "replay_metrics.h"
#include "sqlite_db.h"
#include "option_checks.h"

namespace ktune::cli {

namespace {

struct ReplaySettings {
  std::string data;
  std::string space;
  std::string searchers = "random";
  std::string options;
  std::size_t budget = 400;
  std::size_t repeats = 20;
  std::uint64_t seed = 1;
  std::size_t batch = 1;
  std::string objective = "recorded";
  std::string json_path;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // "genetic, random": the blanks around a name are not part of it.
    const auto first = item.find_first_not_of(" \t");
    item = first == std::string::npos ? "" : item.substr(first, item.find_last_not_of(" \t") - first + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// The options of --options meant for `searcher`. With one searcher listed, all of them (an
/// unknown one is make_searcher's error); with several, each option goes to the listed
/// searchers that have it, and one that none of them has is an error naming them.
SearcherOptions options_for(const std::string& searcher, const std::string& text,
                            const std::vector<std::string>& listed) {
  const SearcherOptions all = SearcherOptions::parse(text);
  if (listed.size() < 2) return all;
  auto has = [](const std::string& name, const std::string& option) {
    for (const auto& info : searcher_catalog())
      if (info.name == name)
        for (const auto& o : info.options)
          if (o.name == option) return true;
    return false;
  };
  SearcherOptions mine;
  for (const auto& [option, value] : all.values()) {
    if (has(searcher, option)) {
      mine.set(option, value);
      continue;
    }
    if (std::none_of(listed.begin(), listed.end(), [&](const std::string& n) { return has(n, option); })) {
      std::string names;
      for (const auto& n : listed) names += (names.empty() ? "" : ", ") + n;
      throw Error(ErrorCode::unknown_name, "--options " + option + ": none of the searchers " +
                                               names + " has that option (see `ktune list`)");
    }
  }
  return mine;
}

std::vector<std::size_t> report_budgets(std::size_t budget) {
  std::vector<std::size_t> out;
  for (std::size_t b : {25, 50, 100, 200, 400}) {
    if (b <= budget) out.push_back(b);
  }
  if (out.empty() || out.back() != budget) out.push_back(budget);
  return out;
}

nlohmann::json replay_one(const ReplaySettings& s, const std::string& searcher_name,
                          ReplayMeasurer& measurer, const replay::RandomSearchExpectation& random,
                          std::FILE* text) {
  const SearcherOptions own = options_for(searcher_name, s.options, split_list(s.searchers));
  auto searcher = make_searcher(searcher_name, own);
  std::string own_text;  // the options this searcher received, not every searcher's
  for (const auto& [name, value] : own.values()) own_text += (own_text.empty() ? "" : ",") + name + "=" + value;
  std::vector<ReplayRun> runs;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t r = 0; r < s.repeats; ++r) {
    runs.push_back(replay_search(*searcher, measurer, s.seed + r, s.budget, s.batch));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double opt = random.optimum();
  const auto curve = replay::mean_best_time_curve(runs, s.budget, random.worst());
  const auto score = replay::methodology_score(random, curve);

  std::size_t evaluated = 0;  // runs end early when the space is exhausted
  for (const auto& run : runs) evaluated += run.best_ms.size();
  const double evaluations = std::max<double>(1, static_cast<double>(evaluated));
  std::fprintf(text, "\nsearcher %s%s%s: %zu runs, %.1f s (%.2f ms per evaluation)\n",
               searcher_name.c_str(), own_text.empty() ? "" : " ", own_text.c_str(), runs.size(),
               seconds, 1e3 * seconds / evaluations);
  // A run ends before its budget when the searcher proposes nothing new. That is expected once
  // every recorded config was evaluated; before that, the searcher could not reach the others
  // (valid configs that no one-parameter move from its start leads to, spaces.md), and the
  // fractions below describe a search that stopped, which is said.
  const std::size_t reachable = std::min<std::size_t>(s.budget, measurer.size());
  std::size_t stopped = 0, stopped_evaluations = 0;
  for (const auto& run : runs)
    if (run.best_ms.size() < reachable) {
      ++stopped;
      stopped_evaluations += run.best_ms.size();
    }
  if (stopped)
    std::fprintf(text, "  note: %zu of %zu runs stopped early (after %.1f evaluations on average, "
                       "of %zu that the budget and the %zu recorded configs allow): the searcher "
                       "had nothing new to propose\n",
                 stopped, runs.size(),
                 static_cast<double>(stopped_evaluations) / static_cast<double>(stopped), reachable,
                 measurer.size());
  std::fprintf(text, "  %7s  %-24s  %s\n", "budget", "fraction of optimum", "random expectation");
  nlohmann::json j;
  j["searcher"] = searcher_name;
  j["options"] = own_text;
  j["seconds"] = seconds;
  j["runs"] = runs.size();
  j["runs_stopped_early"] = stopped;
  for (std::size_t b : report_budgets(s.budget)) {
    const auto ci = replay::mean_confidence_95(replay::fractions_at(runs, b, opt), 0.0, 1.0);
    const double expect = random.expected_fraction(b);
    // One run has no interval (a Student-t interval needs two): said, not shown as certainty.
    const bool interval = runs.size() >= 2;
    if (interval)
      std::fprintf(text, "  %7zu  %.3f [%.3f, %.3f]     %.3f\n", b, ci.mean, ci.low, ci.high, expect);
    else
      std::fprintf(text, "  %7zu  %.3f (one run: no interval)  %.3f\n", b, ci.mean, expect);
    j["budgets"].push_back({{"budget", b}, {"mean_fraction", ci.mean},
                            {"ci_low", interval ? nlohmann::json(ci.low) : nlohmann::json()},
                            {"ci_high", interval ? nlohmann::json(ci.high) : nlohmann::json()},
                            {"random_expectation", expect}});
  }
  if (score.available) {
    const std::size_t window = score.last - score.first + 1;
    std::fprintf(text, "  methodology score %.3f over budgets %zu..%zu%s%s\n", score.score + 0.0,
                 score.first, score.last,
                 score.budgets < window
                     ? (" (" + std::to_string(score.budgets) + " of them: at the others random "
                        "search already has the optimum)").c_str()
                     : "",
                 score.truncated ? (" (truncated: random closes 96% of the gap at " +
                                    std::to_string(score.full_last) + ")").c_str()
                                 : "");
  } else {
    if (!(random.median() > opt))
      std::fprintf(text, "  methodology score: not available (the median record is the optimum: "
                         "no gap to close)\n");
    else if (score.last < score.first)
      std::fprintf(text, "  methodology score: not available (runs end before budget %zu)\n",
                   score.first);
    else
      std::fprintf(text, "  methodology score: not available (at budgets %zu..%zu random search "
                         "already has the optimum: no gap to close)\n",
                   score.first, score.last);
  }
  j["score"] = {{"value", score.available ? nlohmann::json(score.score) : nlohmann::json()},
                {"first", score.first}, {"last", score.last}, {"full_last", score.full_last},
                {"truncated", score.truncated}, {"budgets", score.budgets}};
  j["mean_fraction_curve"] = replay::mean_fraction_curve(runs, s.budget, opt);
  std::size_t failures = 0;
  for (const auto& r : runs) failures += r.failures;
  j["failed_evaluations_per_run"] = static_cast<double>(failures) / static_cast<double>(runs.size());
  return j;
}

/// A Kernel Tuner cache holds every valid config of the space it was measured in. A space
/// with valid configs the data lacks (a value never measured) would let the random
/// expectation and the score describe only the recorded part, and stop a searcher when it
/// first proposes one: refused before any run, naming the first such config and the values no
/// usable record holds. The walk over the valid configs stops at the first one missing, or
/// after kWalkLimit of them (a space that large is left to the error at its proposal).
void require_space_recorded(const SearchSpace& space, const ReplayMeasurer& measurer,
                            const std::string& space_path, const std::string& data) {
  constexpr std::uint64_t kWalkLimit = std::uint64_t{1} << 20;
  std::optional<Config> first_missing;
  std::uint64_t walked = 0;
  for (std::optional<Index> i = space.next_valid(0); i && walked < kWalkLimit;
       i = space.next_valid(*i + 1), ++walked) {
    Config c = space.at(*i);
    if (!measurer.recorded(c)) {
      first_missing = std::move(c);
      break;
    }
  }
  if (!first_missing) return;
  std::string how_many = "some";
  try {
    const std::uint64_t valid = space.count_valid(Index{1} << 22);
    how_many = std::to_string(valid - std::min<std::uint64_t>(valid, measurer.size())) + " of the " +
               std::to_string(valid);
  } catch (const Error&) {  // too many to count here
  }
  std::vector<std::set<Value>> seen(space.dims());
  for (const Config& c : measurer.configs())
    for (std::size_t d = 0; d < space.dims(); ++d) seen[d].insert(c.values()[d]);
  std::string unseen;
  int listed = 0;
  for (std::size_t d = 0; d < space.dims(); ++d)
    for (Value v : space.params()[d].values)
      if (!seen[d].count(v) && listed++ < 12)
        unseen += (unseen.empty() ? "" : ", ") + space.params()[d].name + "=" + std::to_string(v);
  if (listed > 12) unseen += ", ... (" + std::to_string(listed) + " in all)";
  throw Error(ErrorCode::invalid_argument,
              "'" + data + "' has no record of " + how_many + " valid configs of the space '" +
                  space_path + "' (the first: " + first_missing->str() + ")" +
                  (unseen.empty() ? "" : "; values that no usable record holds: " + unseen) +
                  ". A Kernel Tuner cache holds every valid config of the space it was measured "
                  "in: give that space, or leave out what was not measured");
}

/// Throws Error(invalid_argument) when `data` is a ktune log (a database or a JSON-lines
/// export) rather than a Kernel Tuner cache, saying which command replays it. A pipe is left
/// to the cache reader (reading its start here would lose it).
void refuse_ktune_log(const std::string& data) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(data, ec)) return;
  bool ktune_log = sqlite::is_sqlite_file(data);
  if (!ktune_log) {
    try {
      ktune_log = detect_log_format(data) == LogFormat::jsonl;
    } catch (const Error&) {  // not a log of any kind: the cache reader says what is wrong
    }
  }
  if (ktune_log)
    throw Error(ErrorCode::invalid_argument,
                "replay data '" + data + "' is a ktune tuning log; `replay` reads Kernel Tuner caches "
                "with their T1 space, and `ktune tune --replay " + data + "` replays a ktune log");
}

void run_replay(const ReplaySettings& s) {
  std::string space_path = s.space;
  std::error_code ec;
  if (!std::filesystem::exists(s.data, ec))  // named first: its T1 file is looked for beside it
    throw Error(ErrorCode::not_found, "replay data '" + s.data + "' " +
                                          (ec ? "cannot be reached: " + ec.message() : "does not exist"));
  refuse_ktune_log(s.data);
  if (space_path.empty()) {
    auto found = find_t1_beside(s.data);
    if (!found) {
      std::string looked;
      for (const std::string& path : t1_paths_beside(s.data)) looked += (looked.empty() ? "" : ", ") + path;
      throw Error(ErrorCode::not_found, "no --space given and no T1 file beside '" + s.data +
                                            "' (looked for " + looked + ")");
    }
    space_path = *found;
  }
  if (s.objective != "recorded" && s.objective != "median") {
    throw Error(ErrorCode::invalid_argument, "--objective '" + s.objective + "': expected recorded or median");
  }
  // Everything the user typed is checked before the runs: searcher names and options, and
  // that the JSON output can be written.
  const std::vector<std::string> searchers = split_list(s.searchers);
  if (searchers.empty())
    throw Error(ErrorCode::invalid_argument, "--searcher '" + s.searchers + "' names no searcher");
  for (std::size_t i = 0; i < searchers.size(); ++i)
    if (std::find(searchers.begin(), searchers.begin() + i, searchers[i]) != searchers.begin() + i)
      throw Error(ErrorCode::invalid_argument, "--searcher '" + s.searchers + "' names " +
                                                   searchers[i] + " twice (a run of each is "
                                                   "already the same seeds)");
  for (const auto& name : searchers) (void)make_searcher(name, options_for(name, s.options, searchers));
  if (!s.json_path.empty() && s.json_path != "-") {
    check_output_not_database(s.json_path);  // a mistyped path must not destroy a tuning log
    if (std::filesystem::is_directory(s.json_path, ec))  // said now, not after every run
      throw Error(ErrorCode::invalid_argument, "--json '" + s.json_path + "' is a folder; name a file");
    const auto folder = std::filesystem::path(s.json_path).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
      throw Error(ErrorCode::not_found, "--json '" + s.json_path + "': folder '" +
                                            folder.string() + "' does not exist");
    // The results must not replace what they were computed from.
    for (const auto& [input, option] : {std::pair{s.data, "--data"}, std::pair{space_path, "--space"}})
      if (std::filesystem::equivalent(s.json_path, input, ec))
        throw Error(ErrorCode::invalid_argument, "--json '" + s.json_path + "' is the " + option +
                                                     " file '" + input + "' being read; choose another file");
  }
  const SearchSpace space = SearchSpace::from_t1_file(space_path);
  try {
    (void)space.size();
  } catch (const Error& e) {  // records are kept by the space's indices
    throw Error(e.code(), "replay over the space '" + space_path + "': " + e.what() +
                              " (replay keeps records by index; tuning handles such spaces)");
  }
  // A space no config satisfies is named by its constraints (SearchSpace::random says them),
  // not by the records it leaves out.
  if (!space.next_valid(0)) {
    try {
      std::mt19937_64 rng(0);
      (void)space.random(rng);
    } catch (const Error& e) {
      throw Error(e.code(), "replay over the space '" + space_path + "': " + e.what());
    }
  }
  ReplayMeasurer measurer = ReplayMeasurer::from_kernel_tuner_cache(
      s.data, space, s.objective == "median" ? ReplayObjective::median_of_samples : ReplayObjective::recorded);
  const std::vector<double> outcomes = measurer.outcome_times();
  if (std::none_of(outcomes.begin(), outcomes.end(), [](double t) { return std::isfinite(t); })) {
    throw Error(ErrorCode::invalid_argument,
                "nothing to replay: no record of '" + s.data + "' is a successful config of the space '" +
                    space_path + "' (" + std::to_string(measurer.size()) +
                    " records in the space, none successful; " + std::to_string(measurer.ignored()) +
                    " ignored as outside its domains or constraints)");
  }
  require_space_recorded(space, measurer, space_path, s.data);
  const replay::RandomSearchExpectation random(outcomes);
  // With the JSON on standard output, the table goes to standard error: stdout stays JSON.
  std::FILE* const text = s.json_path == "-" ? stderr : stdout;
  std::fprintf(text,
               "data %s\nspace %s: %zu records (%zu ignored), %zu failed, optimum %.6g ms, "
               "median %.6g ms\n",
               s.data.c_str(), space_path.c_str(), measurer.size(), measurer.ignored(),
               random.size() - random.successes(), random.optimum(), random.median());

  nlohmann::json out;
  out["data"] = s.data;
  out["space"] = space_path;
  out["records"] = measurer.size();
  out["failed_records"] = random.size() - random.successes();
  out["optimum_ms"] = random.optimum();
  out["median_ms"] = random.median();
  out["budget"] = s.budget;
  out["repeats"] = s.repeats;
  out["seed"] = s.seed;
  out["batch"] = s.batch;
  out["objective"] = s.objective;
  std::vector<double> random_curve;
  for (std::size_t k = 1; k <= s.budget; ++k) random_curve.push_back(random.expected_fraction(k));
  out["random_expectation_curve"] = random_curve;
  for (const auto& name : searchers)
    out["results"].push_back(replay_one(s, name, measurer, random, text));

  if (!s.json_path.empty()) {
    if (s.json_path == "-") {
      std::printf("%s\n", out.dump(1).c_str());
    } else {
      // Whole or not at all, with the reason when it cannot be written.
      detail::write_file_atomically(s.json_path, [&](std::ostream& f) { f << out.dump(1) << "\n"; });
    }
  }
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("replay", "Benchmark searchers on recorded measurements (no GPU)");
  auto s = std::make_shared<ReplaySettings>();
  cmd->add_option("--data", s->data, "Kernel Tuner cache file (.json or .json.gz)")->required();
  cmd->add_option("--space", s->space, "T1 space file (default: the <name>.T1.json beside the data)")
      ->check(given_name());
  cmd->add_option("--searcher", s->searchers, "Searcher name, or several separated by commas");
  cmd->add_option("--options", s->options, "Searcher options name=value,... (with several searchers, each option goes to those that have it)");
  cmd->add_option("--budget", s->budget, "Evaluations per run")->check(count_in(1, 1000000));
  cmd->add_option("--repeats", s->repeats, "Runs per searcher (seeds seed .. seed+repeats-1)")
      ->check(count_in(1, 100000));
  cmd->add_option("--seed", s->seed, "Seed of the first run")->check(seed_value());
  cmd->add_option("--batch", s->batch, "Configs proposed per batch")->check(count_in(1, 4096));
  cmd->add_option("--objective", s->objective, "recorded (Kernel Tuner's time) or median (of samples)");
  cmd->add_option("--json", s->json_path,
                  "Write the results as JSON to this file ('-' = stdout, the table then on "
                  "stderr)")
      ->check(given_name());
  cmd->callback([s] { run_replay(*s); });
}

}  // namespace ktune::cli
