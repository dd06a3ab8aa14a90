// NVRTC compile throughput of the Builder, in configs per second (items_per_second): cold
// (a fresh Builder without a disk cache, so every config is compiled) and cached (every
// config already in the in-memory cache), cold with 1 to 16 compile threads (the GPU host has
// 16 cores) and in 1 to 8 helper processes, cached with 1 and 2. Configs are distinct
// points of the built-in copy template for sm_90. Also the space check each build makes before
// its cache lookup, for four templates.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "builtin_templates.h"
#include "ktune/build.h"
#include "ktune/template.h"

namespace {

constexpr int kBatch = 8;  // configs per iteration

/// The copy template, its example problem, the H200 and kBatch distinct valid configs.
struct CompileWork {
  std::shared_ptr<ktune::KernelTemplate> tmpl = ktune::make_copy_template();
  ktune::Device device = ktune::Device::h200();
  ktune::Problem problem = tmpl->example_problem();
  std::vector<ktune::Config> configs;
  CompileWork() {
    ktune::SearchSpace space = tmpl->space(problem, device);
    std::mt19937_64 rng(11);
    while (configs.size() < kBatch) {
      ktune::Config c = space.random(rng);
      if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
    }
    // Load NVRTC and its built-in headers once, outside the timed loops.
    ktune::Builder warmup(ktune::BuilderOptions{1, "", {}});
    warmup.build(*tmpl, problem, configs.front(), device);
  }
};

const CompileWork& work() {
  static const CompileWork w;
  return w;
}

void BM_CompileCold(benchmark::State& state) {
  const CompileWork& w = work();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    ktune::Builder builder(ktune::BuilderOptions{threads, "", {}});  // empty cache
    auto results = builder.build_all(w.tmpl, w.problem, w.configs, w.device);
    if (builder.stats().compiles != kBatch || !results.back().ok)
      state.SkipWithError("cold batch did not compile every config");
    benchmark::DoNotOptimize(results);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_CompileCold)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->Iterations(3);

// The same cold compiles in `processes` helper processes (ktune-worker --compile, one per compile
// thread), started and warmed up before the timed loop; the memory cache is emptied per batch.
void BM_CompileColdHelpers(benchmark::State& state) {
  const CompileWork& w = work();
  const int processes = static_cast<int>(state.range(0));
  ktune::BuilderOptions options{processes, "", {}};
  options.compile_processes = processes;
  ktune::Builder builder(options);
  builder.build_all(w.tmpl, w.problem, w.configs, w.device);  // starts the helpers
  const auto before = builder.stats();
  for (auto _ : state) {
    builder.clear_memory_cache();
    auto results = builder.build_all(w.tmpl, w.problem, w.configs, w.device);
    if (!results.back().ok) state.SkipWithError("cold batch did not compile every config");
    benchmark::DoNotOptimize(results);
  }
  const auto after = builder.stats();
  if (after.helper_compiles - before.helper_compiles != after.compiles - before.compiles)
    state.SkipWithError("some compiles ran in this process (no ktune-worker found?)");
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["processes"] = processes;
}
BENCHMARK(BM_CompileColdHelpers)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Iterations(3);

void BM_CompileCached(benchmark::State& state) {
  const CompileWork& w = work();
  const int threads = static_cast<int>(state.range(0));
  ktune::Builder builder(ktune::BuilderOptions{threads, "", {}});
  builder.build_all(w.tmpl, w.problem, w.configs, w.device);  // fill the memory cache
  for (auto _ : state) {
    auto results = builder.build_all(w.tmpl, w.problem, w.configs, w.device);
    benchmark::DoNotOptimize(results);
  }
  if (builder.stats().compiles != kBatch) state.SkipWithError("cached batch recompiled");
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_CompileCached)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// What Builder::build spends before its cache lookup to refuse a config of another space: the
// template's space for the problem and device, and contains() of the default config.
void BM_SpaceCheck(benchmark::State& state, const std::string& name) {
  const auto tmpl = ktune::find_template(name);
  const ktune::Device device = ktune::Device::h200();
  const ktune::Problem problem = tmpl->example_problem();
  const ktune::Config config = tmpl->space(problem, device).default_config();
  for (auto _ : state) {
    const ktune::SearchSpace space = tmpl->space(problem, device);
    if (!space.contains(config)) state.SkipWithError("the default config is not in its space");
  }
}
BENCHMARK_CAPTURE(BM_SpaceCheck, copy, std::string("copy"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SpaceCheck, gemm_mma, std::string("gemm_mma"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SpaceCheck, layernorm, std::string("layernorm"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SpaceCheck, conv2d_wgmma, std::string("conv2d_wgmma"))
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
