// What the GPU benchmark programs (gpu_gemm, gpu_conv, gpu_memory_bound) share: list
// parsing, the CUDA-event median timing loop every side-by-side figure uses, config
// variants given as "K=V,K=V" overrides of a space's default (found, measured against the
// reference and printed the same way), the comparison metrics, the SM clock and board power
// sampled while a loop runs, the tuning call with its stated budget, and the Builder settings
// the tuning runs compile with.
#pragma once

#include <cuda_runtime.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_args.h"
#include "cuda_module.h"
#include "host_dtype.h"
#include "nvml.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/space.h"
#include "ktune/template.h"
#include "ktune/tuner.h"

namespace ktune::bench {

/// Builder settings of the benchmarks' tuning runs: as `ktune tune` compiles by default, one
/// NVRTC helper process per compile thread (docs/building.md, "Parallel builds").
inline BuilderOptions tuning_builder_options() {
  BuilderOptions options;
  options.compile_processes = kHelperPerCompileThread;
  return options;
}

/// The non-empty items of `text` split at `sep`.
inline std::vector<std::string> split_list(const std::string& text, char sep = ',') {
  std::vector<std::string> items;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) items.push_back(item);
  return items;
}

/// The number `text` given for command-line flag `flag`, all of it, at least `min`; throws
/// Error(invalid_argument) naming the flag and what was expected otherwise (std::stoul and
/// friends would accept "12abc", wrap "-1" and name only themselves).
template <class T>
T parse_number(const std::string& flag, const std::string& text, T min = T{}) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  bool finite = true;
  if constexpr (std::is_floating_point_v<T>) finite = std::isfinite(value);
  if (text.empty() || ec != std::errc() || ptr != end || !finite || value < min) {
    std::ostringstream expected;
    expected << (std::is_integral_v<T> ? "an integer" : "a finite number") << " >= " << min;
    throw Error(ErrorCode::invalid_argument,
                flag + "=" + text + ": expected " + expected.str());
  }
  return value;
}

/// Median of `values` (the mean of the middle pair for an even count); 0 when empty.
template <class T = double>
T median(std::vector<T> values) {
  if (values.empty()) return T{};
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  if (values.size() % 2 == 1) return values[mid];
  return static_cast<T>((values[mid - 1] + values[mid]) / 2);
}

/// How event_median_ms samples.
struct EventLoop {
  int warmup_calls = 3;       ///< untimed calls first
  int calls_per_sample = 1;   ///< calls between the two events of one sample
  int min_samples = 10;       ///< at least this many samples
  double min_total_ms = 100;  ///< and until this much GPU time was sampled
  int max_samples = 300;      ///< or this many samples
};

/// Median per-call time (ms) of `run` on the default stream from CUDA events, after warm-up.
inline double event_median_ms(const std::function<void()>& run, const EventLoop& loop = {}) {
  for (int i = 0; i < loop.warmup_calls; ++i) run();
  detail::check_cuda(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  detail::check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  detail::check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> per_call;
  double total = 0;
  while (static_cast<int>(per_call.size()) < loop.min_samples ||
         (total < loop.min_total_ms && static_cast<int>(per_call.size()) < loop.max_samples)) {
    detail::check_cuda(cudaEventRecord(start), "cudaEventRecord");
    for (int i = 0; i < loop.calls_per_sample; ++i) run();
    detail::check_cuda(cudaEventRecord(stop), "cudaEventRecord");
    detail::check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    detail::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    total += ms;
    per_call.push_back(ms / loop.calls_per_sample);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(std::move(per_call));
}

/// Device-to-device copy bandwidth in GB/s (read + written over the median time) of
/// cudaMemcpyAsync moving `bytes` from `src` to `dst`, `calls` back to back between two CUDA
/// events per sample, as the measurer chains a candidate's timed runs.
inline double memcpy_gbps(void* dst, const void* src, std::size_t bytes, int calls, int samples) {
  const double ms = event_median_ms(
      [&] {
        detail::check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice),
                           "cudaMemcpyAsync");
      },
      {3, calls, samples, 0, samples});
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

/// memcpy_gbps of `bytes` between two fresh allocations.
inline double copy_bandwidth_gbps(std::size_t bytes, int calls, int samples) {
  detail::DeviceMemory src(bytes), dst(bytes);
  detail::check_cuda(cudaMemset(src.get(), 0x3c, bytes), "cudaMemset");
  return memcpy_gbps(dst.get(), src.get(), bytes, calls, samples);
}

/// `calls` calls of `run(stream)` captured on `stream` (thread-local mode) into an
/// instantiated CUDA graph. When the capture fails, ok() is false and why() says what failed
/// (the capture is ended and the runtime's error cleared), so a caller can report the graph
/// form as unavailable and go on.
class CapturedGraph {
 public:
  CapturedGraph(cudaStream_t stream, int calls, const std::function<void(cudaStream_t)>& run) {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      why_ = "cudaStreamBeginCapture failed";
    } else {
      try {
        for (int i = 0; i < calls; ++i) run(stream);
      } catch (const std::exception& e) {
        why_ = e.what();
      }
      const cudaError_t end = cudaStreamEndCapture(stream, &graph_);
      if (why_.empty() && end != cudaSuccess) why_ = std::string("capture: ") + cudaGetErrorString(end);
      if (why_.empty() && cudaGraphInstantiate(&exec_, graph_, 0) != cudaSuccess)
        why_ = "cudaGraphInstantiate failed";
    }
    if (!why_.empty()) cudaGetLastError();  // a failed capture leaves its error behind
  }
  ~CapturedGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  /// True when the graph is ready to launch.
  bool ok() const { return why_.empty(); }
  /// What failed ("" when ok()).
  const std::string& why() const { return why_; }
  /// Launches the graph on `stream`; throws Error(cuda_error) on failure.
  void launch(cudaStream_t stream) const {
    detail::check_cuda(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch");
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::string why_;
};

/// event_median_ms with each sample's `loop.calls_per_sample` calls of `run(stream)` recorded
/// into one CUDA graph (stream capture on a stream of its own) and launched as one graph on
/// the default stream: how benchmarks/peers/torch_conv.py times cuDNN through torch, so that
/// two kernels compared this way pay the same launch costs. Median per-call time (ms), or
/// nullopt (after logging why) when the calls cannot be captured.
inline std::optional<double> graph_median_ms(const std::function<void(cudaStream_t)>& run,
                                             EventLoop loop) {
  const int calls = std::max(1, loop.calls_per_sample);
  cudaStream_t stream = nullptr;
  detail::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::optional<double> ms;
  {
    const CapturedGraph graph(stream, calls, run);
    if (graph.ok()) {
      loop.calls_per_sample = 1;
      ms = event_median_ms([&] { graph.launch(nullptr); }, loop) / calls;
    } else {
      std::fprintf(stderr, "graph timing unavailable: %s\n", graph.why().c_str());
    }
  }
  cudaStreamDestroy(stream);
  return ms;
}

/// Medians of the SM clock and board power sampled (NVML, every 2 ms) while a timing loop
/// ran: whether two loops compared side by side ran at the same clock, or one was held back
/// by the power limit. -1 when NVML is not there.
struct SensorReading {
  int sm_mhz = -1;       ///< median SM clock
  double power_w = -1;   ///< median board power over the readings taken at least one power
                         ///< window after the loop started (earlier ones still show what ran
                         ///< before it); -1 when there are none (a loop shorter than that)
  int samples = 0;       ///< readings taken
  double loop_ms = 0;    ///< how long the loop ran (wall time)
};

/// Median of the known readings (>= 0); -1 when there are none (a sensor's "unknown").
template <class T>
T known_median(std::vector<T> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](T v) { return !(v >= 0); }),
               values.end());
  return values.empty() ? T(-1) : median(std::move(values));
}

/// The sensor of CUDA device 0 (found by its PCI bus id on first use).
inline const nvml::GpuSensor& device0_sensor() {
  static const nvml::GpuSensor sensor([] {
    char bus[64] = {0};
    return cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess ? std::string(bus)
                                                                      : std::string();
  }());
  return sensor;
}

/// What the sensor's power readings are, for the JSON and the printed rows: "instantaneous",
/// "one-second average" (nvmlDeviceGetPowerUsage on a driver without the instantaneous field:
/// it lags a timing loop shorter than a second, so it understates a loop's draw) or "none".
/// `Sensor`: an nvml::GpuSensor, or anything with available() and power_is_instant().
template <class Sensor>
const char* power_reading_kind(const Sensor& sensor) {
  if (!sensor.available()) return "none";
  return sensor.power_is_instant() ? "instantaneous" : "one-second average";
}

/// `loop()` with the GPU's sensors sampled on a second thread while it runs (`Sensor`: an
/// nvml::GpuSensor, or anything with available(), sm_clock_mhz(), power_w() and
/// power_window_ms()). The power is the median of the readings taken power_window_ms() or more
/// after the loop started, so it is -1 for a loop shorter than that.
template <class Sensor, class Loop>
SensorReading sample_sensors(const Sensor& sensor, const Loop& loop) {
  SensorReading r;
  if (!sensor.available()) {
    loop();
    return r;
  }
  std::vector<int> mhz;
  std::vector<double> watts;  // readings taken a whole power window after the loop started
  std::atomic<bool> done{false};
  const auto start = std::chrono::steady_clock::now();
  std::thread poll([&] {
    while (!done.load()) {
      mhz.push_back(sensor.sm_clock_mhz());
      const double w = sensor.power_w();
      // Earlier readings still show (part of) what ran before the loop.
      if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() >=
          sensor.power_window_ms())
        watts.push_back(w);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  try {
    loop();
  } catch (...) {
    done = true;
    poll.join();
    throw;
  }
  r.loop_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  done = true;
  poll.join();
  r.samples = static_cast<int>(mhz.size());
  if (!mhz.empty()) r.sm_mhz = median(std::move(mhz));
  r.power_w = known_median(std::move(watts));
  return r;
}

/// Tunes `space` through `measurer` with the named searcher: at most `trials` trials and
/// `seconds` of wall time (0: no cap), searcher seed `seed`, the `top_k` best re-measured at
/// the end (the tuner's TunerOptions for everything else).
inline TuneResult tune(const SearchSpace& space, const std::string& searcher_name,
                       Measurer& measurer, std::size_t trials, double seconds,
                       std::uint64_t seed, std::size_t top_k) {
  const auto searcher = make_searcher(searcher_name);
  TunerOptions options;
  options.max_trials = trials;
  options.max_seconds = seconds;
  options.seed = seed;
  options.top_k = top_k;
  Tuner tuner(space, *searcher, measurer, options);
  return tuner.run();
}

/// The default config of `space` with "K=V,K=V" overrides, or nullopt when a name or value
/// is outside the space or the result is invalid / not implementable.
inline std::optional<Config> variant_of(const SearchSpace& space, const KernelTemplate& tmpl,
                                        const Problem& problem, const std::string& overrides) {
  try {
    const Config c = space.with_changes(overrides);
    if (!space.valid(c) || !tmpl.can_implement(problem, c)) return std::nullopt;
    return c;
  } catch (const std::exception&) {  // a value that is no integer or outside its domain
    return std::nullopt;
  }
}

/// ||a - b|| / ||b|| over two host buffers of the same spec.
inline double rel_l2(const HostBuffer& a, const HostBuffer& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < b.spec.elements; ++i) {
    const double u = read_element(a, i), v = read_element(b, i);
    diff += (u - v) * (u - v);
    norm += v * v;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// Geometric mean (0 for an empty list).
inline double geomean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double x : values) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

/// The "variants" rows of a benchmark result: for each "K=V,K=V" override of the default
/// config that gives a valid config (variant_of), {"overrides", "config"} plus the fields
/// `measure(config)` returns (at least "ms", and its rel-L2 against the reference), then
/// "tflops" from `flops` and "ratio" = ref_ms / ms; or "error" with the exception's message.
template <class Measure>
nlohmann::json variant_rows(const std::vector<std::string>& variants, const SearchSpace& space,
                            const KernelTemplate& tmpl, const Problem& problem, double flops,
                            double ref_ms, const Measure& measure) {
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& overrides : variants) {
    const auto config = variant_of(space, tmpl, problem, overrides);
    if (!config) continue;
    nlohmann::json v = {{"overrides", overrides}, {"config", config->str()}};
    try {
      v.update(measure(*config));
      const double ms = v.at("ms").get<double>();
      // A variant timed another way than the reference (e.g. streamed where the reference
      // ran as a graph) names its own reference time, measured the same way.
      const double ref = v.contains("reference_ms") ? v["reference_ms"].get<double>() : ref_ms;
      v["tflops"] = flops / ms / 1e9;
      v["ratio"] = ref / ms;
    } catch (const std::exception& e) {
      v["error"] = e.what();
    }
    rows.push_back(v);
  }
  return rows;
}

/// Prints variant_rows under a result line: TFLOP/s, ratio and `rel_key` (their rel-L2 field).
inline void print_variant_rows(const nlohmann::json& rows, const char* rel_key) {
  for (const auto& v : rows) {
    if (v.contains("error"))
      std::printf("    variant %-40s failed: %s\n", v["overrides"].get<std::string>().c_str(),
                  v["error"].get<std::string>().c_str());
    else
      std::printf("    variant %-40s %10.1f TF/s %8.3f  rel_l2 %.2e\n",
                  v["overrides"].get<std::string>().c_str(), v["tflops"].get<double>(),
                  v["ratio"].get<double>(), v[rel_key].get<double>());
  }
}

}  // namespace ktune::bench
