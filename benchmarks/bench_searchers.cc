// Proposal cost of each searcher (Google Benchmark): time of one propose(1) on the shared
// dedispersion space (11130 valid configs) after n observations replayed from the A6000
// cache. Target of issue 5: bayesian under 50 ms per proposed config at 500 observations.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>

#include "ktune/replay.h"
#include "ktune/searcher.h"

namespace {

const std::string kData = std::string(KTUNE_DATASETS_DIR) + "/dedispersion_milo_A6000.json.gz";

ktune::ReplayMeasurer& measurer() {
  static ktune::ReplayMeasurer m = ktune::ReplayMeasurer::from_kernel_tuner_cache(
      kData, ktune::SearchSpace::from_t1_file(*ktune::find_t1_beside(kData)));
  return m;
}

void propose_after(benchmark::State& state, const std::string& name) {
  if (!std::filesystem::exists(kData)) {
    state.SkipWithError("shared datasets not found");
    return;
  }
  const auto observations = static_cast<std::size_t>(state.range(0));
  auto searcher = ktune::make_searcher(name);
  searcher->reset(measurer().space(), 1);
  std::size_t seen = 0;
  while (seen < observations) {
    auto batch = searcher->propose(std::min<std::size_t>(16, observations - seen));
    if (batch.empty()) break;
    seen += batch.size();
    searcher->observe(measurer().measure(batch));
  }
  for (auto _ : state) {
    auto batch = searcher->propose(1);
    benchmark::DoNotOptimize(batch);
    state.PauseTiming();
    searcher->observe(measurer().measure(batch));  // keeps the searcher's state consistent
    state.ResumeTiming();
  }
  state.counters["observations"] = static_cast<double>(observations);
}

}  // namespace

BENCHMARK_CAPTURE(propose_after, random, std::string("random"))->Arg(100)->Arg(500)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(propose_after, genetic, std::string("genetic"))->Arg(100)->Arg(500)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(propose_after, annealing, std::string("annealing"))->Arg(100)->Arg(500)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(propose_after, bayesian, std::string("bayesian"))->Arg(100)->Arg(500)->Iterations(20)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
