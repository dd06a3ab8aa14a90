// GPU benchmark of the conv2d templates against cuDNN in the same process (issue 9): for each
// distinct convolution layer of ResNet-50 at batch 32 and each dtype (f16 -> conv2d_mma,
// f32 -> conv2d_simt), tunes the template with a searcher at a stated trial budget through
// the isolated GPU measurer, then times the winner and cuDNN (NHWC, its fastest algorithm
// found by cudnnFindConvolutionForwardAlgorithmEx in this process; fp32 with CUDNN_FMA_MATH,
// i.e. no TF32) with one identical CUDA-event loop (median of samples of 10 back-to-back
// calls after warm-up; L2 warm for both) on the same buffers, compares the two
// outputs, and prints TFLOP/s, the ratio to cuDNN per layer and the geometric means. The
// headline times (ktune_ms, cudnn_ms) launch the 10 calls as one CUDA graph, as
// benchmarks/peers/torch_conv.py times cuDNN through torch, so that every kernel compared
// pays the same launch costs; the same loop with stream launches is kept beside them
// (ktune_stream_ms, cudnn_stream_ms), and is the headline where a capture fails.
//
// Usage: gpu_conv OUT.json [--budget=N] [--searcher=NAME] [--dtypes=f16,f32]
//                          [--layers=stem,s1_3x3,...|all] [--seed=S] [--min-time-ms=T]
//                          [--template=NAME] [--variants="K=V,K=V;K=V"]
// --template names the f16/bf16 template (default conv2d_mma; e.g. conv2d_wgmma); a layer
// it cannot implement (conv2d_wgmma: C not a multiple of 8, the stem) runs conv2d_mma, and
// its row says so ("fallback"). --variants are overrides of each layer's default config,
// checked against cuDNN's output and timed with the same event loop after it (skipped where
// a name or value is outside the layer's space or the config cannot run it).
// cuDNN is loaded at run time (dlopen libcudnn.so.9, or $KTUNE_CUDNN_LIB), so the program
// links nothing beyond ktune.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "json_output.h"
#include "builtin_templates.h"
#include "cuda_module.h"
#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/template.h"
#include "ktune/tuner.h"
#include "gpu_bench_support.h"
#include "launch_plan_runner.h"
#include "templates/conv/conv_problem.h"

using namespace ktune;
using detail::check_cuda;
using nlohmann::json;

namespace {

/// One distinct convolution of ResNet-50 (torchvision v1.5: the stride sits on the 3x3 of a
/// stage's first block and on its 1x1 downsample), batch 32, NHWC.
struct Layer {
  const char* name;
  int H, W, C, K, R, S, stride, pad;
};

/// The 23 distinct layers (each named by stage, filter, channels and stride).
const std::vector<Layer>& resnet50_layers() {
  static const std::vector<Layer> layers = {
      {"stem_7x7_3_64_s2", 224, 224, 3, 64, 7, 7, 2, 3},
      {"s1_1x1_64_64", 56, 56, 64, 64, 1, 1, 1, 0},
      {"s1_3x3_64_64", 56, 56, 64, 64, 3, 3, 1, 1},
      {"s1_1x1_64_256", 56, 56, 64, 256, 1, 1, 1, 0},  // also the stage-1 downsample
      {"s1_1x1_256_64", 56, 56, 256, 64, 1, 1, 1, 0},
      {"s2_1x1_256_128", 56, 56, 256, 128, 1, 1, 1, 0},
      {"s2_3x3_128_128_s2", 56, 56, 128, 128, 3, 3, 2, 1},
      {"s2_1x1_128_512", 28, 28, 128, 512, 1, 1, 1, 0},
      {"s2_down_256_512_s2", 56, 56, 256, 512, 1, 1, 2, 0},
      {"s2_1x1_512_128", 28, 28, 512, 128, 1, 1, 1, 0},
      {"s2_3x3_128_128", 28, 28, 128, 128, 3, 3, 1, 1},
      {"s3_1x1_512_256", 28, 28, 512, 256, 1, 1, 1, 0},
      {"s3_3x3_256_256_s2", 28, 28, 256, 256, 3, 3, 2, 1},
      {"s3_1x1_256_1024", 14, 14, 256, 1024, 1, 1, 1, 0},
      {"s3_down_512_1024_s2", 28, 28, 512, 1024, 1, 1, 2, 0},
      {"s3_1x1_1024_256", 14, 14, 1024, 256, 1, 1, 1, 0},
      {"s3_3x3_256_256", 14, 14, 256, 256, 3, 3, 1, 1},
      {"s4_1x1_1024_512", 14, 14, 1024, 512, 1, 1, 1, 0},
      {"s4_3x3_512_512_s2", 14, 14, 512, 512, 3, 3, 2, 1},
      {"s4_1x1_512_2048", 7, 7, 512, 2048, 1, 1, 1, 0},
      {"s4_down_1024_2048_s2", 14, 14, 1024, 2048, 1, 1, 2, 0},
      {"s4_1x1_2048_512", 7, 7, 2048, 512, 1, 1, 1, 0},
      {"s4_3x3_512_512", 7, 7, 512, 512, 3, 3, 1, 1},
  };
  return layers;
}

/// Batch size of every layer.
constexpr int kBatch = 32;

/// Command-line settings.
struct Settings {
  std::string out_path;
  std::size_t budget = 24;
  std::string searcher = "bayesian";  // best fraction of optimum at ~25 trials in the replays
  std::vector<std::string> dtypes = {"f16", "f32"};
  std::vector<std::string> layers;    // empty = all
  std::uint64_t seed = 1;
  double min_time_ms = 20;            // tuning: timed samples per candidate add up to this
  std::string mma_template = "conv2d_mma";  // the f16 / bf16 template (--template)
  std::vector<std::string> variants;  // "K=V,K=V" overrides of each layer's default config
};


Settings parse_settings(int argc, char** argv) {
  Settings s;
  s.out_path = bench::output_argument(
      argc, argv,
      "usage: gpu_conv OUT.json [--budget=N] [--searcher=NAME] [--dtypes=f16,f32] "
      "[--layers=NAME,...] [--seed=S] [--min-time-ms=T] [--template=NAME] "
      "[--variants=\"K=V,K=V;K=V\"]");
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto [key, value] = bench::option_parts(arg);
    if (key == "--budget") s.budget = bench::parse_number<std::size_t>(key, value);
    else if (key == "--searcher") s.searcher = value;
    else if (key == "--dtypes") s.dtypes = bench::split_list(value);
    else if (key == "--layers") s.layers = value == "all" ? std::vector<std::string>{} : bench::split_list(value);
    else if (key == "--seed") s.seed = bench::parse_number<std::uint64_t>(key, value);
    else if (key == "--min-time-ms") s.min_time_ms = bench::parse_number<double>(key, value);
    else if (key == "--template") s.mma_template = value;
    else if (key == "--variants") s.variants = bench::split_list(value, ';');
    else throw Error(ErrorCode::invalid_argument, "unknown option " + arg);
  }
  bench::check_choices("--dtypes", s.dtypes, {"f16", "bf16", "f32"});
  bench::check_choices("--template", {s.mma_template}, {"conv2d_mma", "conv2d_wgmma"});
  bench::check_searcher("--searcher", s.searcher);
  bench::check_budget_ends(s.budget, 0);
  for (const auto& name : s.layers) {
    const auto& all = resnet50_layers();
    if (std::none_of(all.begin(), all.end(), [&](const Layer& l) { return name == l.name; }))
      throw Error(ErrorCode::invalid_argument, "unknown layer " + name +
                                                   " (see resnet50_layers in gpu_conv.cc)");
  }
  return s;
}

/// The cuDNN entry points used here, loaded from the shared library at run time.
struct CudnnApi {
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_conv = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnFindConvolutionForwardAlgorithmEx) find = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;

  /// Loads libcudnn; throws Error(not_found) naming what was tried.
  static const CudnnApi& get() {
    static const CudnnApi api = [] {
      std::vector<std::string> names;
      if (const char* path = std::getenv("KTUNE_CUDNN_LIB")) names.push_back(path);
      names.insert(names.end(), {"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9",
                                 "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcudnn.so"});
      void* lib = nullptr;
      std::string tried;
      for (const auto& name : names) {
        if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
        tried += " " + name;
      }
      if (!lib)
        throw Error(ErrorCode::not_found, "gpu_conv: cannot load cuDNN (tried" + tried +
                                              "; set KTUNE_CUDNN_LIB or LD_LIBRARY_PATH)");
      CudnnApi a;
      auto load = [lib](auto& fn, const char* symbol) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
        if (!fn) throw Error(ErrorCode::not_found, std::string("gpu_conv: no ") + symbol + " in cuDNN");
      };
      load(a.create, "cudnnCreate");
      load(a.destroy, "cudnnDestroy");
      load(a.error_string, "cudnnGetErrorString");
      load(a.create_tensor, "cudnnCreateTensorDescriptor");
      load(a.set_tensor, "cudnnSetTensor4dDescriptor");
      load(a.destroy_tensor, "cudnnDestroyTensorDescriptor");
      load(a.create_filter, "cudnnCreateFilterDescriptor");
      load(a.set_filter, "cudnnSetFilter4dDescriptor");
      load(a.destroy_filter, "cudnnDestroyFilterDescriptor");
      load(a.create_conv, "cudnnCreateConvolutionDescriptor");
      load(a.set_conv, "cudnnSetConvolution2dDescriptor");
      load(a.set_math, "cudnnSetConvolutionMathType");
      load(a.destroy_conv, "cudnnDestroyConvolutionDescriptor");
      load(a.find, "cudnnFindConvolutionForwardAlgorithmEx");
      load(a.forward, "cudnnConvolutionForward");
      load(a.set_stream, "cudnnSetStream");
      return a;
    }();
    return api;
  }
};

/// Throws Error(cuda_error) naming the call when cuDNN failed.
void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(ErrorCode::cuda_error, std::string(what) + " failed: " +
                                           CudnnApi::get().error_string(status));
}

/// A cuDNN forward convolution of one shape, NHWC / KRSC, with its fastest algorithm.
class CudnnConv {
 public:
  CudnnConv(cudnnHandle_t handle, const conv::ConvShape& s, const void* x, const void* w,
            void* y)
      : handle_(handle), x_(x), w_(w), y_(y) {
    const CudnnApi& api = CudnnApi::get();
    const cudnnDataType_t type = s.dtype == DType::f16    ? CUDNN_DATA_HALF
                                 : s.dtype == DType::bf16 ? CUDNN_DATA_BFLOAT16
                                                          : CUDNN_DATA_FLOAT;
    auto i = [](std::int64_t v) { return static_cast<int>(v); };
    check_cudnn(api.create_tensor(&x_desc_), "cudnnCreateTensorDescriptor");
    check_cudnn(api.set_tensor(x_desc_, CUDNN_TENSOR_NHWC, type, i(s.N), i(s.C), i(s.H), i(s.W)),
                "cudnnSetTensor4dDescriptor(x)");
    check_cudnn(api.create_tensor(&y_desc_), "cudnnCreateTensorDescriptor");
    check_cudnn(api.set_tensor(y_desc_, CUDNN_TENSOR_NHWC, type, i(s.N), i(s.K), i(s.P()), i(s.Q())),
                "cudnnSetTensor4dDescriptor(y)");
    check_cudnn(api.create_filter(&w_desc_), "cudnnCreateFilterDescriptor");
    check_cudnn(api.set_filter(w_desc_, type, CUDNN_TENSOR_NHWC, i(s.K), i(s.C), i(s.R), i(s.S)),
                "cudnnSetFilter4dDescriptor");
    check_cudnn(api.create_conv(&conv_desc_), "cudnnCreateConvolutionDescriptor");
    check_cudnn(api.set_conv(conv_desc_, i(s.pad), i(s.pad), i(s.stride), i(s.stride),
                             i(s.dilation), i(s.dilation), CUDNN_CROSS_CORRELATION,
                             CUDNN_DATA_FLOAT),
                "cudnnSetConvolution2dDescriptor");
    // fp32: FMA only (no TF32 tensor cores); f16 / bf16: tensor cores.
    check_cudnn(api.set_math(conv_desc_, s.dtype == DType::f32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
                "cudnnSetConvolutionMathType");
    workspace_bytes_ = std::size_t{1} << 30;
    check_cuda(cudaMalloc(&workspace_, workspace_bytes_), "cudnn workspace");
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    check_cudnn(api.find(handle_, x_desc_, x_, w_desc_, w_, conv_desc_, y_desc_, y_,
                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, workspace_,
                         workspace_bytes_),
                "cudnnFindConvolutionForwardAlgorithmEx");
    for (int k = 0; k < returned; ++k)
      if (perf[k].status == CUDNN_STATUS_SUCCESS) {
        algo_ = perf[k].algo;
        algo_ms_ = perf[k].time;
        found_ = true;
        break;
      }
    if (!found_) throw Error(ErrorCode::cuda_error, "cuDNN found no working forward algorithm");
  }
  ~CudnnConv() {
    const CudnnApi& api = CudnnApi::get();
    cudaFree(workspace_);
    api.destroy_conv(conv_desc_);
    api.destroy_filter(w_desc_);
    api.destroy_tensor(y_desc_);
    api.destroy_tensor(x_desc_);
  }
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  /// y = conv(x, w) with the chosen algorithm, on `stream` (the handle goes back to the
  /// default stream afterwards).
  void run(cudaStream_t stream = nullptr) const {
    const float alpha = 1.0f, beta = 0.0f;
    const CudnnApi& api = CudnnApi::get();
    if (stream) check_cudnn(api.set_stream(handle_, stream), "cudnnSetStream");
    const cudnnStatus_t status = api.forward(handle_, &alpha, x_desc_, x_, w_desc_, w_, conv_desc_,
                                             algo_, workspace_, workspace_bytes_, &beta, y_desc_, y_);
    if (stream) check_cudnn(api.set_stream(handle_, nullptr), "cudnnSetStream");
    check_cudnn(status, "cudnnConvolutionForward");
  }
  /// The algorithm cuDNN's search chose.
  int algorithm() const { return static_cast<int>(algo_); }
  /// cuDNN's own time of it (ms).
  float search_ms() const { return algo_ms_; }

 private:
  cudnnHandle_t handle_;
  const void* x_;
  const void* w_;
  void* y_;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  float algo_ms_ = 0;
  bool found_ = false;
};

/// Short kernels (ResNet layers take 5-60 us): 10 back-to-back calls per pair of CUDA events,
/// so that a sample is not dominated by the events; 5 warm-up calls, then samples until 100 ms
/// of GPU time or 200 samples (at least 15).
constexpr bench::EventLoop kLoop = {5, 10, 15, 100, 200};
double event_median_ms(const std::function<void()>& run) { return bench::event_median_ms(run, kLoop); }

/// The same calls launched as one CUDA graph of 10 (see the file comment), nullopt when they
/// cannot be captured.
std::optional<double> graph_median_ms(const std::function<void(cudaStream_t)>& run) {
  return bench::graph_median_ms(run, kLoop);
}

/// The problem of a layer in a dtype (plain convolution: no bias, no ReLU, like cuDNN's).
Problem layer_problem(const KernelTemplate& tmpl, const Layer& l, const std::string& dtype) {
  const std::string shape = std::to_string(kBatch) + "x" + std::to_string(l.H) + "x" +
                            std::to_string(l.W) + "x" + std::to_string(l.C) + "x" +
                            std::to_string(l.K) + "x" + std::to_string(l.R) + "x" +
                            std::to_string(l.S);
  return make_problem(tmpl, shape, {{"dtype", dtype}, {"stride", std::to_string(l.stride)},
                                    {"pad", std::to_string(l.pad)}});
}

/// Throws Error naming a --variants item that names no parameter of the run's templates (those
/// of each dtype, with conv2d_mma, the fallback), checked on the first layer before the device.
void check_variants(const Settings& s) {
  if (s.variants.empty()) return;
  std::vector<SearchSpace> spaces;
  for (const std::string& dtype : s.dtypes) {
    const std::vector<std::string> names =
        dtype == "f32" ? std::vector<std::string>{"conv2d_simt"}
                       : std::vector<std::string>{s.mma_template, "conv2d_mma"};
    for (const std::string& name : names) {
      const auto tmpl = find_template(name);
      try {
        spaces.push_back(tmpl->space(layer_problem(*tmpl, resnet50_layers().front(), dtype), Device::h200()));
      } catch (const Error&) {  // a template that cannot take this layer or dtype: the run says so
      }
    }
  }
  bench::check_variant_names("--variants", s.variants, spaces);
}

/// Device buffers of a workload (inputs uploaded) followed by a plan's scratch.
struct DeviceBuffers {
  std::vector<detail::DeviceMemory> memory;
  std::vector<detail::DeviceBuffer> views;

  DeviceBuffers(const std::vector<HostBuffer>& host, const LaunchPlan& plan) {
    memory.reserve(host.size() + plan.scratch.size());
    for (const auto& b : host) add(b.bytes.size(), b.bytes.data());
    for (const auto& sc : plan.scratch) add(sc.elements * dtype_size(sc.dtype), nullptr);
  }
  /// Allocates one buffer, uploading `data` when given.
  void add(std::size_t bytes, const void* data) {
    memory.emplace_back(bytes);
    views.push_back({memory.back().get(), bytes});
    if (data) check_cuda(cudaMemcpy(memory.back().get(), data, bytes, cudaMemcpyHostToDevice), "upload");
  }
  /// Downloads buffer `i` into a host buffer of spec `spec`.
  HostBuffer download(std::size_t i, const BufferSpec& spec) const {
    HostBuffer h{spec, std::vector<std::uint8_t>(views[i].bytes)};
    check_cuda(cudaMemcpy(h.bytes.data(), views[i].ptr, h.bytes.size(), cudaMemcpyDeviceToHost),
               "download");
    return h;
  }
};

/// The cubin of a config; throws Error(compile_error) naming `what` when it does not compile.
BuildResult checked_build(Builder& builder, const KernelTemplate& tmpl, const Problem& problem,
                          const Config& config, const Device& device, const std::string& what) {
  BuildResult built = builder.build(tmpl, problem, config, device);
  if (!built.ok) throw Error(ErrorCode::compile_error, what + " does not compile: " + built.log);
  return built;
}

/// One config of a layer, built and loaded, with its own device buffers (the inputs of `host`
/// uploaded, then its plan's scratch).
struct LoadedConv {
  LoadedConv(const KernelTemplate& tmpl, const Problem& problem, const Config& config,
             const Device& device, Builder& builder, const std::vector<HostBuffer>& host,
             const std::string& what)
      : plan(tmpl.launch(problem, config, device)),
        built(checked_build(builder, tmpl, problem, config, device, what)),
        module(*built.cubin),
        dev(host, plan) {}
  /// Runs the plan on `stream`; throws Error(cuda_error) when a launch fails.
  void run(cudaStream_t stream = nullptr) {
    const detail::CudaStatus status = detail::run_launch_plan(module, plan, dev.views, stream);
    if (!status.ok()) throw Error(ErrorCode::cuda_error, status.message);
  }
  LaunchPlan plan;
  BuildResult built;
  detail::CudaModule module;
  DeviceBuffers dev;
};

/// Tunes one layer and times the winner next to cuDNN.
json run_layer(const Settings& settings, const Layer& layer, const std::string& dtype,
               const Device& device, Builder& builder, cudnnHandle_t handle) {
  auto tmpl = find_template(dtype == "f32" ? "conv2d_simt" : settings.mma_template);
  Problem problem = layer_problem(*tmpl, layer, dtype);
  std::string fallback;  // why the chosen template cannot run this layer
  if (!tmpl->can_implement(problem, tmpl->space(problem, device).default_config(), &fallback)) {
    tmpl = find_template("conv2d_mma");
    problem = layer_problem(*tmpl, layer, dtype);
  }
  const conv::ConvShape s = conv::conv_shape(problem);
  auto workload = tmpl->workload(problem);
  const double flops = workload->flops();
  json row = {{"layer", layer.name}, {"dtype", dtype}, {"template", tmpl->name()},
              {"problem", problem.key()}, {"gflop", flops / 1e9}};
  if (!fallback.empty()) row["fallback"] = fallback;

  // 1. Tune through the isolated measurer (verification against the reference, timing).
  const SearchSpace space = tmpl->space(problem, device);
  RunnerOptions runner;
  runner.timing.min_time_ms = settings.min_time_ms;
  runner.timing.max_reps = 200;
  GpuMeasurer measurer(tmpl, problem, device, builder, runner);
  const TuneResult result =
      bench::tune(space, settings.searcher, measurer, settings.budget, 0, settings.seed, 3);
  row["trials"] = result.trials.size();
  row["tune_seconds"] = result.elapsed_s;
  json statuses = json::object();
  for (const auto& [status, count] : result.status_counts) statuses[to_string(status)] = count;
  row["statuses"] = statuses;
  if (result.default_trial && result.default_trial->ok())
    row["default_ms"] = result.default_trial->median_ms;
  if (!result.best) {
    row["error"] = "no candidate succeeded";
    if (!result.trials.empty()) row["first_message"] = result.trials.front().message;
    return row;
  }
  const Config best = result.best->config;
  row["best_config"] = best.str();
  row["tuned_ms"] = result.best->median_ms;

  // 2. Same process, same event loop, same buffers: the winner and cuDNN.
  std::vector<HostBuffer> host;
  for (const auto& spec : workload->buffers()) host.push_back(make_host_buffer(spec));
  workload->fill(host, 42);
  LoadedConv winner(*tmpl, problem, best, device, builder, host, "the winner");
  DeviceBuffers& dev = winner.dev;
  auto run_ktune = [&] { winner.run(); };
  CudnnConv cudnn(handle, s, dev.views[0].ptr, dev.views[1].ptr, dev.views[2].ptr);
  auto run_cudnn = [&] { cudnn.run(); };
  row["cudnn_algorithm"] = cudnn.algorithm();
  row["cudnn_search_ms"] = cudnn.search_ms();

  run_ktune();
  check_cuda(cudaDeviceSynchronize(), "ktune run");
  const HostBuffer ours = dev.download(2, host[2].spec);
  run_cudnn();
  check_cuda(cudaDeviceSynchronize(), "cudnn run");
  const HostBuffer theirs = dev.download(2, host[2].spec);
  row["rel_l2_vs_cudnn"] = bench::rel_l2(ours, theirs);
  row["tolerance"] = workload->tolerance(host[2].spec).rel_l2;

  double ktune_stream_ms = 0, cudnn_stream_ms = 0;
  std::optional<double> ktune_graph_ms, cudnn_graph_ms;
  const auto& sensor = bench::device0_sensor();
  const bench::SensorReading ktune_s = bench::sample_sensors(sensor, [&] {
    ktune_stream_ms = event_median_ms(run_ktune);
    ktune_graph_ms = graph_median_ms([&](cudaStream_t st) { winner.run(st); });
  });
  const bench::SensorReading cudnn_s = bench::sample_sensors(sensor, [&] {
    cudnn_stream_ms = event_median_ms(run_cudnn);
    cudnn_graph_ms = graph_median_ms([&](cudaStream_t st) { cudnn.run(st); });
  });
  // The headline pair: both from graphs where both could be captured, else both streamed.
  const bool graphs = ktune_graph_ms && cudnn_graph_ms;
  const double ktune_ms = graphs ? *ktune_graph_ms : ktune_stream_ms;
  const double cudnn_ms = graphs ? *cudnn_graph_ms : cudnn_stream_ms;
  row["timing"] = graphs ? "cuda graph of 10 calls" : "10 stream launches per sample";
  row["ktune_stream_ms"] = ktune_stream_ms;
  row["cudnn_stream_ms"] = cudnn_stream_ms;
  row["ktune_sm_mhz"] = ktune_s.sm_mhz;
  row["ktune_power_w"] = ktune_s.power_w;
  row["cudnn_sm_mhz"] = cudnn_s.sm_mhz;
  row["cudnn_power_w"] = cudnn_s.power_w;
  row["ktune_ms"] = ktune_ms;
  row["cudnn_ms"] = cudnn_ms;
  row["ktune_tflops"] = flops / ktune_ms / 1e9;
  row["cudnn_tflops"] = flops / cudnn_ms / 1e9;
  row["ratio"] = cudnn_ms / ktune_ms;  // > 1: ktune is faster

  // 3. Variants (overrides of the default config): checked against cuDNN's output and timed
  //    with the same event loop, each on its own copy of the buffers (its own scratch).
  const json variants = bench::variant_rows(
      settings.variants, space, *tmpl, problem, flops, cudnn_ms, [&](const Config& config) {
        LoadedConv variant(*tmpl, problem, config, device, builder, host, "the variant");
        variant.run();
        check_cuda(cudaDeviceSynchronize(), "variant run");
        const std::optional<double> g =
            graphs ? graph_median_ms([&](cudaStream_t st) { variant.run(st); }) : std::nullopt;
        json v{{"rel_l2_vs_cudnn", bench::rel_l2(variant.dev.download(2, host[2].spec), theirs)},
               {"ms", g ? *g : event_median_ms([&] { variant.run(); })},
               {"timing", g ? "cuda graph of 10 calls" : "10 stream launches per sample"}};
        // streamed (no graph): against cuDNN's streamed time, not its graph time
        if (!g) v["reference_ms"] = cudnn_stream_ms;
        return v;
      });
  row["variants"] = variants;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings settings = parse_settings(argc, argv);
    check_variants(settings);
    if (auto why = cuda_unavailable_reason()) {
      std::fprintf(stderr, "gpu_conv: %s\n", why->c_str());
      return 77;
    }
    check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
    const Device device = query_device(0);
    Builder builder(bench::tuning_builder_options());
    cudnnHandle_t handle;
    check_cudnn(CudnnApi::get().create(&handle), "cudnnCreate");

    json out;
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", std::gmtime(&now));
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    out["date_utc"] = date;
    out["device"] = device.key();
    out["power_reading"] = bench::power_reading_kind(bench::device0_sensor());
    out["command"] = command;
    out["batch"] = kBatch;
    out["budget_trials"] = settings.budget;
    out["searcher"] = settings.searcher;
    out["results"] = json::array();
    std::map<std::string, std::vector<double>> ratios;
    std::size_t failed_rows = 0, rows = 0;
    std::printf("%-5s %-22s %8s %9s %9s %7s %9s  %s\n", "dtype", "layer", "GFLOP", "ktune TF/s",
                "cuDNN TF/s", "ratio", "rel_l2", "best config");
    for (const auto& dtype : settings.dtypes)
      for (const auto& layer : resnet50_layers()) {
        if (!settings.layers.empty() &&
            std::find(settings.layers.begin(), settings.layers.end(), layer.name) ==
                settings.layers.end())
          continue;
        json row;
        try {
          row = run_layer(settings, layer, dtype, device, builder, handle);
        } catch (const std::exception& e) {
          row = {{"layer", layer.name}, {"dtype", dtype}, {"error", e.what()}};
        }
        out["results"].push_back(row);
        ++rows;
        if (row.contains("ratio")) {
          ratios[dtype].push_back(row["ratio"].get<double>());
          std::printf("%-5s %-22s %8.2f %9.1f %9.1f %7.3f %9.2e  %s\n", dtype.c_str(), layer.name,
                      row["gflop"].get<double>(), row["ktune_tflops"].get<double>(),
                      row["cudnn_tflops"].get<double>(), row["ratio"].get<double>(),
                      row["rel_l2_vs_cudnn"].get<double>(),
                      row["best_config"].get<std::string>().c_str());
          bench::print_variant_rows(row["variants"], "rel_l2_vs_cudnn");
        } else {
          ++failed_rows;
          std::printf("%-5s %-22s failed: %s\n", dtype.c_str(), layer.name,
                      row.value("error", std::string("?")).c_str());
        }
        std::fflush(stdout);
        bench::write_json(settings.out_path, out);  // keep partial results
      }
    json means = json::object();
    for (const auto& [dtype, values] : ratios) {
      const double g = bench::geomean(values);
      const auto ahead = std::count_if(values.begin(), values.end(), [](double r) { return r > 1; });
      means[dtype] = {{"geomean_ratio", g}, {"layers", values.size()}, {"layers_ahead", ahead}};
      std::printf("geomean ratio to cuDNN %-5s %.3f over %zu layers (%ld ahead)\n", dtype.c_str(),
                  g, values.size(), static_cast<long>(ahead));
    }
    out["geomeans"] = means;
    bench::write_json(settings.out_path, out);
    CudnnApi::get().destroy(handle);
    return bench::exit_status("gpu_conv", failed_rows, rows,
                              "their \"error\" is in the JSON and printed above");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_conv: %s\n", e.what());
    return 1;
  }
}
