// Replay on the shared benchmark_hub datasets: the exact random-search expectation at 200
// evaluations reproduces the published reference points, and each of genetic, annealing and
// bayesian beats it clearly (methodology score above 0.1) at a modest budget. Skips with a
// message when the datasets are not there.
#include <catch2/catch.hpp>

#include <filesystem>

#include "ktune/replay.h"
#include "replay_metrics.h"
#include "skip.h"

using namespace ktune;

namespace {

std::string dataset(const std::string& name) {
  return std::string(KTUNE_DATASETS_DIR) + "/" + name + ".json.gz";
}

ReplayMeasurer load(const std::string& name) {
  const std::string data = dataset(name);
  return ReplayMeasurer::from_kernel_tuner_cache(data, SearchSpace::from_t1_file(*find_t1_beside(data)));
}

}  // namespace

TEST_CASE("random expectation at 200 evaluations reproduces the reference points", "[replay][dataset]") {
  if (!std::filesystem::exists(dataset("convolution_milo_A4000"))) {
    KTUNE_SKIP("shared datasets not found under " KTUNE_DATASETS_DIR);
  }
  const std::vector<std::pair<std::string, double>> references = {
      {"convolution_milo_A4000", 0.885}, {"convolution_milo_A6000", 0.840},
      {"convolution_milo_W7800", 0.916}, {"dedispersion_milo_A6000", 0.993},
      {"dedispersion_milo_MI250X", 0.893}};
  for (const auto& [name, expected] : references) {
    INFO(name);
    const ReplayMeasurer m = load(name);
    CHECK(m.ignored() == 0);
    const replay::RandomSearchExpectation r(m.outcome_times());
    CHECK(r.expected_fraction(200) == Approx(expected).margin(0.0005));
  }
}

TEST_CASE("every optimizing searcher beats the random expectation on a shared dataset",
          "[replay][dataset]") {
  if (!std::filesystem::exists(dataset("convolution_milo_A6000"))) {
    KTUNE_SKIP("shared datasets not found under " KTUNE_DATASETS_DIR);
  }
  ReplayMeasurer m = load("convolution_milo_A6000");
  const replay::RandomSearchExpectation random(m.outcome_times());
  constexpr std::size_t budget = 150;
  for (const char* name : {"genetic", "annealing", "bayesian"}) {
    INFO("searcher " << name);
    auto s = make_searcher(name);
    std::vector<ReplayRun> runs;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) runs.push_back(replay_search(*s, m, seed, budget));
    const auto ci = replay::mean_confidence_95(replay::fractions_at(runs, budget, random.optimum()));
    CHECK(ci.mean > random.expected_fraction(budget));
    const auto score = replay::methodology_score(
        random, replay::mean_best_time_curve(runs, budget, random.worst()));
    REQUIRE(score.available);
    INFO("methodology score " << score.score);
    CHECK(score.score > 0.1);
  }
}
