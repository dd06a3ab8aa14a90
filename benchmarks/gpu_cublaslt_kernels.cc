// GPU study of NVIDIA's own GEMM kernels on one problem (issue 8: what the mma.sync target
// means on this GPU). Enumerates every cuBLASLt algorithm config that cublasLtMatmulAlgoCheck
// accepts for the problem (algo id x tile x stages x CTA swizzle x custom option, and a cluster
// shape where the algo needs one; split-K off), times each briefly, then re-times the fastest
// config of each (algo id, tile), taken in turns across the algo ids, in the same CUDA-event loop as cublasGemmEx's default choice, alternating with it, and checks each
// re-timed config's output against cublasGemmEx's. The problem is gpu_gemm's: row-major C =
// 1.5 * op(A) * op(B) + 0.5 * C, C in the input dtype, fp32 accumulation, random inputs.
//
// cuBLASLt does not say which kernel a config runs; the instruction family is in the kernel's
// name. With --identify=TIMING.json the program launches, for each config re-timed in that
// earlier run, a marker kernel whose grid.x is the config's "id" + 1 and then the config once,
// so that `ncu --csv --page raw` lists each config's kernel after its marker
// (benchmarks/cublaslt_names.py joins the two and sorts the kernels into families).
//
// Usage: gpu_cublaslt_kernels OUT.json [--shape=MxNxK] [--dtypes=f16,bf16] [--layout=NT]
//                                      [--loop-ms=T] [--shortlist=N] [--max-configs=N]
//                                      [--sweep-seconds=S] [--calls-per-sample=N]
//                                      [--identify=TIMING.json]
// --loop-ms: how long each side of a re-timing pair samples (default 10 ms, as gpu_gemm's
// --loop-ms); --shortlist: at most N configs re-timed per dtype (default 300), taken in turns:
// every algo id's fastest tile (algo ids ordered by their fastest config), then every one's
// second, ..., so that a small N still covers every algo id, slow ones included, rather than
// the N fastest tiles of one family;
// --max-configs: enumeration stops after N valid configs per dtype (default 20000; the JSON
// says when it stopped); --sweep-seconds: the ranking sweep stops after S seconds per dtype
// (default 90; the JSON says how many configs it timed); --calls-per-sample: back-to-back calls
// between each re-timing sample's two events (default 10), so that no library's host launch
// cost is charged to its time. cuBLAS / cuBLASLt are loaded at run time (benchmarks/cublas_api.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cublas_api.h"
#include "cublaslt_problem.h"
#include "cuda_module.h"
#include "gpu_bench_support.h"
#include "host_dtype.h"
#include "json_output.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "templates/gemm/gemm_problem.h"

using namespace ktune;
using detail::check_cuda;
using nlohmann::json;

namespace {

/// Command-line settings.
struct Settings {
  std::string out_path;
  std::int64_t M = 4096, N = 4096, K = 4096;
  std::vector<std::string> dtypes = {"f16", "bf16"};
  std::string layout = "NT";
  double loop_ms = 10;
  std::size_t shortlist = 300;
  std::size_t max_configs = 20000;
  double sweep_seconds = 90;
  int calls_per_sample = 10;
  std::string identify;  // TIMING.json of an earlier run: launch its configs behind markers
};

Settings parse_args(int argc, char** argv) {
  Settings s;
  s.out_path = bench::output_argument(
      argc, argv,
      "usage: gpu_cublaslt_kernels OUT.json [--shape=MxNxK] [--dtypes=f16,bf16] "
      "[--layout=NN|NT|TN|TT] [--loop-ms=T] [--shortlist=N] [--max-configs=N] "
      "[--sweep-seconds=S] [--calls-per-sample=N] [--identify=TIMING.json]");
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto [key, value] = bench::option_parts(arg);
    if (key == "--shape") {
      const auto dims = bench::split_list(value, 'x');
      if (dims.size() != 3)
        throw Error(ErrorCode::invalid_argument, "--shape=" + value + ": expected MxNxK");
      s.M = bench::parse_number<std::int64_t>(key, dims[0], 1);
      s.N = bench::parse_number<std::int64_t>(key, dims[1], 1);
      s.K = bench::parse_number<std::int64_t>(key, dims[2], 1);
      if (std::max({s.M, s.N, s.K}) > (std::int64_t{1} << 20))
        throw Error(ErrorCode::invalid_argument, "--shape=" + value + ": each dimension at most 2^20");
    } else if (key == "--dtypes") s.dtypes = bench::split_list(value);
    else if (key == "--layout") s.layout = value;
    else if (key == "--loop-ms") s.loop_ms = bench::parse_number<double>(key, value, 1.0);
    else if (key == "--shortlist") s.shortlist = bench::parse_number<std::size_t>(key, value, 1);
    else if (key == "--max-configs") s.max_configs = bench::parse_number<std::size_t>(key, value, 1);
    else if (key == "--sweep-seconds") s.sweep_seconds = bench::parse_number<double>(key, value, 1.0);
    else if (key == "--calls-per-sample") s.calls_per_sample = bench::parse_number<int>(key, value, 1);
    else if (key == "--identify") s.identify = value;
    else throw Error(ErrorCode::invalid_argument, "unknown option " + arg);
  }
  bench::check_choices("--dtypes", s.dtypes, {"f16", "bf16"});
  bench::check_choices("--layout", {s.layout}, {"NN", "NT", "TN", "TT"});
  return s;
}

/// The problem's buffers on the device, filled with uniform random values in [-1, 1].
struct Operands {
  gemm::GemmShape shape;
  detail::DeviceMemory a, b, c, c_start;  // c_start: C before any product (restored for checks)

  Operands(const gemm::GemmShape& s, std::uint64_t seed)
      : shape(s),
        a(static_cast<std::size_t>(s.M * s.K) * 2),
        b(static_cast<std::size_t>(s.K * s.N) * 2),
        c(static_cast<std::size_t>(s.M * s.N) * 2),
        c_start(static_cast<std::size_t>(s.M * s.N) * 2) {
    std::mt19937_64 rng(seed);
    fill(a, rng);
    fill(b, rng);
    fill(c_start, rng);
    restore_c();
  }
  void restore_c() {
    check_cuda(cudaMemcpy(c.get(), c_start.get(), c.bytes(), cudaMemcpyDeviceToDevice), "restore C");
  }
  /// C on the host (compared with bench::rel_l2).
  HostBuffer read_c() const {
    HostBuffer out = make_host_buffer(spec_of(c, "C"));
    check_cuda(cudaMemcpy(out.bytes.data(), c.get(), c.bytes(), cudaMemcpyDeviceToHost), "read C");
    return out;
  }

 private:
  /// A buffer of the problem's 16-bit element type (inputs and C share it: out=same).
  BufferSpec spec_of(const detail::DeviceMemory& buffer, const std::string& name) const {
    BufferSpec spec;
    spec.name = name;
    spec.dtype = shape.input_dtype();
    spec.elements = buffer.bytes() / 2;
    return spec;
  }
  void fill(detail::DeviceMemory& buffer, std::mt19937_64& rng) const {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    HostBuffer host = make_host_buffer(spec_of(buffer, "operand"));
    for (std::size_t i = 0; i < host.spec.elements; ++i) write_element(host, i, dist(rng));
    check_cuda(cudaMemcpy(buffer.get(), host.bytes.data(), buffer.bytes(), cudaMemcpyHostToDevice),
               "upload operand");
  }
};

gemm::GemmShape make_shape(const Settings& s, const std::string& dtype) {
  gemm::GemmShape shape;
  shape.M = s.M;
  shape.N = s.N;
  shape.K = s.K;
  shape.precision = dtype == "f16" ? gemm::Precision::f16 : gemm::Precision::bf16;
  shape.out_f32 = false;
  shape.a_transposed = s.layout[0] == 'T';
  shape.b_transposed = s.layout[1] == 'T';
  return shape;
}

/// The timing run: enumerate, sweep, shortlist, re-time against cublasGemmEx, check.
json time_dtype(const Settings& settings, const std::string& dtype, int* next_id) {
  const gemm::GemmShape shape = make_shape(settings, dtype);
  const double flops = 2.0 * shape.M * shape.N * shape.K;
  Operands x(shape, 27);
  bench::LtProblem lt(shape);
  const bench::CublasHandle cublas;
  auto run_cublas = [&] { bench::cublas_gemm(cublas.handle, shape, x.a.get(), x.b.get(), x.c.get()); };

  bool stopped = false;
  const auto configs = lt.valid_configs(settings.max_configs, &stopped);
  std::printf("%s %lldx%lldx%lld %s: %zu valid cuBLASLt configs%s\n", dtype.c_str(),
              static_cast<long long>(shape.M), static_cast<long long>(shape.N),
              static_cast<long long>(shape.K), settings.layout.c_str(), configs.size(),
              stopped ? " (enumeration stopped at --max-configs)" : "");
  std::fflush(stdout);

  // Sweep: a short loop per config (a few calls), to rank them.
  const bench::EventLoop sweep_loop{1, 1, 3, 0, 3};
  std::vector<std::pair<double, std::size_t>> ranked;  // (ms, index into configs)
  std::size_t failed = 0;
  bool sweep_stopped = false;
  const auto sweep_start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count() >
        settings.sweep_seconds) {
      sweep_stopped = true;
      break;
    }
    cublasLtMatmulAlgo_t algo;
    if (!lt.configure(configs[i], &algo)) continue;
    try {
      ranked.emplace_back(bench::event_median_ms([&] { lt.run(algo, x.a.get(), x.b.get(), x.c.get()); }, sweep_loop), i);
    } catch (const Error&) {
      ++failed;
      cudaGetLastError();
    }
  }
  std::sort(ranked.begin(), ranked.end());

  // Shortlist: the fastest config of each (algo id, tile), taken in turns across the algo ids
  // (each algo's fastest tile, then each one's second, ...), so that a capped shortlist still
  // holds every algo id's best (one fast family must not crowd out the others).
  std::map<int, std::vector<std::pair<double, std::size_t>>> by_algo;  // fastest first
  std::vector<int> algo_order;  // algo ids by their fastest config
  std::set<std::pair<int, std::uint32_t>> seen;
  for (const auto& [ms, i] : ranked)
    if (seen.emplace(configs[i].algo, configs[i].tile).second) {
      if (by_algo.find(configs[i].algo) == by_algo.end()) algo_order.push_back(configs[i].algo);
      by_algo[configs[i].algo].emplace_back(ms, i);
    }
  std::vector<std::pair<double, std::size_t>> shortlist;  // (sweep ms, index into configs)
  for (std::size_t turn = 0; shortlist.size() < settings.shortlist; ++turn) {
    bool any = false;
    for (int algo : algo_order)
      if (turn < by_algo[algo].size() && shortlist.size() < settings.shortlist) {
        shortlist.push_back(by_algo[algo][turn]);
        any = true;
      }
    if (!any) break;
  }

  // cublasGemmEx's output from the starting C: the reference of every check.
  x.restore_c();
  run_cublas();
  check_cuda(cudaDeviceSynchronize(), "cublasGemmEx");
  const HostBuffer reference = x.read_c();

  bench::EventLoop loop;
  loop.min_total_ms = settings.loop_ms;
  loop.max_samples = 1000000;
  loop.calls_per_sample = settings.calls_per_sample;
  const auto& sensor = bench::device0_sensor();
  json rows = json::array();
  json doc;
  doc["cublas_gemm_ex"] = {{"id", (*next_id)++}};
  double best_ratio = 0;
  for (const auto& [sweep_ms, index] : shortlist) {
    const bench::LtConfig& c = configs[index];
    cublasLtMatmulAlgo_t algo;
    if (!lt.configure(c, &algo)) continue;
    json row = c.to_json();
    row["id"] = (*next_id)++;
    row["sweep_ms"] = sweep_ms;
    try {
      x.restore_c();
      lt.run(algo, x.a.get(), x.b.get(), x.c.get());
      check_cuda(cudaDeviceSynchronize(), "cublasLtMatmul");
      row["rel_l2_vs_cublas"] = bench::rel_l2(x.read_c(), reference);
      double ms_cublas = 0, ms_lt = 0;
      const auto cs = bench::sample_sensors(sensor, [&] { ms_cublas = bench::event_median_ms(run_cublas, loop); });
      const auto ls = bench::sample_sensors(sensor, [&] { ms_lt = bench::event_median_ms([&] { lt.run(algo, x.a.get(), x.b.get(), x.c.get()); }, loop); });
      row["ms"] = ms_lt;
      row["tflops"] = flops / (ms_lt * 1e-3) / 1e12;
      row["cublas_ms"] = ms_cublas;
      row["cublas_tflops"] = flops / (ms_cublas * 1e-3) / 1e12;
      row["ratio_to_cublas"] = ms_cublas / ms_lt;
      row["sm_mhz"] = ls.sm_mhz;
      row["cublas_sm_mhz"] = cs.sm_mhz;
      best_ratio = std::max(best_ratio, ms_cublas / ms_lt);
    } catch (const Error& e) {
      row["error"] = e.what();
      cudaGetLastError();
    }
    rows.push_back(row);
  }
  doc["dtype"] = dtype;
  doc["valid_configs"] = configs.size();
  doc["enumeration_stopped"] = stopped;
  doc["sweep_failed"] = failed;
  doc["sweep_timed"] = ranked.size();
  doc["sweep_stopped"] = sweep_stopped;
  doc["configs"] = rows;
  if (auto h = lt.heuristic_choice()) doc["heuristic_choice"] = h->to_json();
  std::printf("  re-timed %zu configs (fastest of each algo id and tile); best %.3fx cublasGemmEx\n",
              rows.size(), best_ratio);
  return doc;
}

/// The identify run: each config of TIMING.json that ran there, once, behind a marker kernel
/// with grid.x = id + 1, on TIMING.json's own problem (its shape and layout, whatever the
/// command line says).
json identify(Settings settings) {
  std::ifstream in(settings.identify);
  if (!in) throw Error(ErrorCode::not_found, "--identify=" + settings.identify + ": cannot open");
  json timing;
  try {
    timing = json::parse(in);
    const auto shape = timing.at("shape").get<std::vector<std::int64_t>>();
    if (shape.size() != 3) throw Error(ErrorCode::invalid_argument, "\"shape\" is not [M, N, K]");
    settings.M = shape[0];
    settings.N = shape[1];
    settings.K = shape[2];
    settings.layout = timing.at("layout").get<std::string>();
    bench::check_choices("\"layout\"", {settings.layout}, {"NN", "NT", "TN", "TT"});
    timing.at("dtypes");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, "--identify=" + settings.identify +
                                                 ": not a timing file of this program (" + e.what() + ")");
  }
  const Device device = query_device(0);
  auto marker = detail::load_utility_kernels(
      "extern \"C\" __global__ void ktune_config_marker() {}\n", "ktune_config_marker.cu",
      device.arch(), "the config marker kernel");
  auto mark = [&](int id) {
    const auto status = marker->launch("ktune_config_marker", dim3(static_cast<unsigned>(id) + 1),
                                       dim3(32), 0, nullptr, nullptr);
    if (!status.ok()) throw Error(ErrorCode::cuda_error, status.message);
  };
  json launched = json::array();
  for (const auto& entry : timing.at("dtypes")) {
    const std::string dtype = entry.at("dtype");
    const gemm::GemmShape shape = make_shape(settings, dtype);
    Operands x(shape, 27);
    bench::LtProblem lt(shape);
    const bench::CublasHandle cublas;
    mark(entry.at("cublas_gemm_ex").at("id").get<int>());
    bench::cublas_gemm(cublas.handle, shape, x.a.get(), x.b.get(), x.c.get());
    check_cuda(cudaDeviceSynchronize(), "cublasGemmEx");
    launched.push_back({{"id", entry["cublas_gemm_ex"]["id"]}, {"dtype", dtype}, {"what", "cublasGemmEx"}});
    for (const auto& row : entry.at("configs")) {
      if (!row.contains("ms")) continue;  // it failed when timed: nothing to name
      const bench::LtConfig c = bench::LtConfig::from_json(row);
      cublasLtMatmulAlgo_t algo;
      if (!lt.configure(c, &algo))
        throw Error(ErrorCode::invalid_argument,
                    "--identify: cuBLASLt refuses config " + c.text() + ", which the timing run ran");
      mark(row.at("id").get<int>());
      lt.run(algo, x.a.get(), x.b.get(), x.c.get());
      check_cuda(cudaDeviceSynchronize(), "cublasLtMatmul");
      launched.push_back({{"id", row["id"]}, {"dtype", dtype}, {"what", "cublasLtMatmul"}});
    }
  }
  std::printf("identify: %zu configs launched behind markers\n", launched.size());
  return {{"launched", launched}};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings settings = parse_args(argc, argv);
    if (!settings.identify.empty()) {
      bench::write_json(settings.out_path, identify(settings));
      return 0;
    }
    json doc;
    doc["program"] = "gpu_cublaslt_kernels";
    doc["shape"] = {settings.M, settings.N, settings.K};
    doc["layout"] = settings.layout;
    doc["loop_ms"] = settings.loop_ms;
    doc["calls_per_sample"] = settings.calls_per_sample;
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    doc["gpu"] = prop.name;
    int next_id = 0;
    for (const auto& dtype : settings.dtypes) {
      doc["dtypes"].push_back(time_dtype(settings, dtype, &next_id));
      bench::write_json(settings.out_path, doc);  // what is done so far survives a cut
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_cublaslt_kernels: %s\n", e.what());
    return 1;
  }
}
