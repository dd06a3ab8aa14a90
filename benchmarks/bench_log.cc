// CPU-side costs of the tuning log and the dispatcher: warm select() latency on a log of 100k
// trials (target: p50 under 1 us; per-call percentiles reported as counters), opening a
// dispatcher on that log, and append throughput (single trials and batches of 1000).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "ktune/dispatch.h"
#include "ktune/log.h"
#include "ktune/template.h"

using namespace ktune;

namespace {

/// A template with a 2048-point space, so 100k trials spread over many distinct configs.
class BenchTemplate final : public KernelTemplate {
 public:
  std::string name() const override { return "bench_log_template"; }
  std::string op() const override { return "bench"; }
  std::string description() const override { return "bench_log template"; }
  const std::string& source() const override {
    static const std::string text = "extern \"C\" __global__ void bench() {}";
    return text;
  }
  std::vector<std::string> dim_names() const override { return {"M", "N"}; }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return {{"dtype", {"f32"}}};
  }
  Problem example_problem() const override { return problem(1024); }
  void check_problem(const Problem&) const override {}
  SearchSpace space(const Problem&, const Device&) const override {
    std::vector<Value> sixteen, eight;
    for (Value v = 1; v <= 16; ++v) sixteen.push_back(v);
    for (Value v = 1; v <= 8; ++v) eight.push_back(v);
    return SearchSpace::Builder().param("A", sixteen).param("B", sixteen).param("C", eight).build();
  }
  bool can_implement(const Problem&, const Config&, std::string*) const override { return true; }
  LaunchPlan launch(const Problem&, const Config&, const Device&) const override { return {}; }
  std::unique_ptr<Workload> workload(const Problem&) const override { return nullptr; }
  static Problem problem(std::int64_t m) {
    return Problem{"bench", {{"M", m}, {"N", 4096}}, {{"dtype", "f32"}}};
  }
};

Device bench_device() {
  Device d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  return d;
}

TrialRecord bench_record(std::int64_t m, int index, const std::string& run) {
  TrialRecord r;
  r.template_name = "bench_log_template";
  r.source_hash = "0123456789abcdef";
  r.problem_key = BenchTemplate::problem(m).key();
  r.device = bench_device();
  r.ktune_version = "bench";
  r.nvrtc_version = "13.0";
  r.run_id = run;
  r.config_text = "A=" + std::to_string(1 + index % 16) + ",B=" + std::to_string(1 + index / 16 % 16) +
                  ",C=" + std::to_string(1 + index / 256 % 8);
  r.trial.config = parse_config_text(r.config_text);
  r.trial.status = index % 10 == 0 ? Status::compile_error : Status::ok;
  r.trial.times_ms = std::vector<double>(10, 1.0 + (index * 7919 % 1000) / 1000.0);
  summarize_times(r.trial);
  r.trial.timestamp_us = 1764500000000000 + index;
  return r;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ktune-bench-" + std::to_string(getpid()) + "-" + name))
      .string();
}

/// A log of 100k trials: 50 shapes x 2000 trials, built once per process.
const std::string& log_100k() {
  static const std::string path = [] {
    auto p = temp_path("100k.db");
    std::filesystem::remove(p);
    TuningLog log(p);
    for (int shape = 0; shape < 50; ++shape) {
      std::vector<TrialRecord> batch;
      for (int i = 0; i < 2000; ++i) batch.push_back(bench_record(256 * (shape + 1), i, "bench"));
      log.append_batch(batch);
    }
    return p;
  }();
  return path;
}

void register_bench_template() {
  static bool once = [] {
    register_template(std::make_shared<BenchTemplate>());
    return true;
  }();
  (void)once;
}

void BM_SelectWarm(benchmark::State& state) {
  register_bench_template();
  Dispatcher dispatcher(log_100k());
  const Problem problem = BenchTemplate::problem(256 * 17);
  const Device device = bench_device();
  dispatcher.select("bench_log_template", problem, device);  // warm the memo
  std::vector<double> ns;
  ns.reserve(1 << 20);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto s = dispatcher.select("bench_log_template", problem, device);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(s);
    if (ns.size() < ns.capacity()) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  if (!ns.empty()) {
    state.counters["p50_ns"] = ns[ns.size() / 2];
    state.counters["p99_ns"] = ns[ns.size() * 99 / 100];
  }
  state.counters["indexed_trials"] = static_cast<double>(dispatcher.indexed_records());
}
BENCHMARK(BM_SelectWarm);

void BM_SelectNearestCold(benchmark::State& state) {
  register_bench_template();
  Dispatcher dispatcher(log_100k());
  const Device device = bench_device();
  std::int64_t m = 100000;
  for (auto _ : state) {  // every shape is new: the full rule walk, then memoized
    auto s = dispatcher.select("bench_log_template", BenchTemplate::problem(++m), device);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SelectNearestCold)->Unit(benchmark::kMicrosecond);

void BM_OpenDispatcher100k(benchmark::State& state) {
  const auto& path = log_100k();
  for (auto _ : state) {
    Dispatcher dispatcher(path);
    benchmark::DoNotOptimize(dispatcher.indexed_records());
  }
}
BENCHMARK(BM_OpenDispatcher100k)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AppendSingle(benchmark::State& state) {
  auto path = temp_path("append-single.db");
  std::filesystem::remove(path);
  TuningLog log(path);
  int i = 0;
  for (auto _ : state) log.append(bench_record(1024, i++, "single"));
  state.SetItemsProcessed(state.iterations());  // items/s = trials/s
  std::filesystem::remove(path);
}
BENCHMARK(BM_AppendSingle)->Unit(benchmark::kMicrosecond);

void BM_AppendBatch1000(benchmark::State& state) {
  auto path = temp_path("append-batch.db");
  std::filesystem::remove(path);
  TuningLog log(path);
  std::vector<TrialRecord> batch;
  for (int i = 0; i < 1000; ++i) batch.push_back(bench_record(1024, i, "batch"));
  for (auto _ : state) log.append_batch(batch);
  state.SetItemsProcessed(state.iterations() * 1000);
  std::filesystem::remove(path);
}
BENCHMARK(BM_AppendBatch1000)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove(log_100k());
  std::filesystem::remove(log_100k() + "-wal");
  std::filesystem::remove(log_100k() + "-shm");
  return 0;
}
