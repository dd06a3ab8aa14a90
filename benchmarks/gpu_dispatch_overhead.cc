// Host-side cost of Dispatcher::launch over a direct cudaLaunchKernel of the same cubin
// (target: under 2 us extra). Both paths enqueue the tuned "copy" kernel for a small problem
// on one stream (the Dispatcher also with programmatic launch); each call is timed on the host
// (steady_clock) and the stream is drained every 512 launches so the launch queue never
// blocks. Usage: gpu_dispatch_overhead <out.json>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "json_output.h"
#include "cuda_module.h"
#include "ktune/build.h"
#include "ktune/dispatch.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/template.h"

using namespace ktune;

namespace {

constexpr int kLaunches = 20000;
constexpr int kDrainEvery = 512;

struct Timing {
  double p50_us = 0, p90_us = 0, mean_us = 0;
};

// Times `launch` kLaunches times (after warm-up) on the host.
Timing time_launches(const std::function<void()>& launch, cudaStream_t stream) {
  for (int i = 0; i < 100; ++i) launch();
  detail::check_cuda(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> us;
  us.reserve(kLaunches);
  for (int i = 0; i < kLaunches; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    launch();
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if ((i + 1) % kDrainEvery == 0) detail::check_cuda(cudaStreamSynchronize(stream), "drain");
  }
  detail::check_cuda(cudaStreamSynchronize(stream), "drain");
  Timing t;
  for (double v : us) t.mean_us += v / us.size();
  std::sort(us.begin(), us.end());
  t.p50_us = us[us.size() / 2];
  t.p90_us = us[us.size() * 9 / 10];
  return t;
}

nlohmann::json to_json(const Timing& t) {
  return {{"p50_us", t.p50_us}, {"p90_us", t.p90_us}, {"mean_us", t.mean_us}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  try {
    out_path = bench::output_argument(argc, argv, "usage: gpu_dispatch_overhead OUT.json");
  } catch (const Error& e) {
    std::fprintf(stderr, "gpu_dispatch_overhead: %s\n", e.what());
    return 2;
  }
  if (auto why = cuda_unavailable_reason()) {
    std::printf("SKIPPED: %s\n", why->c_str());
    return 77;
  }
  try {
    const Device device = query_device(0);
    auto copy = find_template("copy");
    const Problem problem = make_problem(*copy, "4096", {{"dtype", "f32"}});
    const Config config = copy->space(problem, device).default_config();

    // A log holding one tuned record for the problem, so launch() takes the exact path.
    auto dir = std::filesystem::temp_directory_path() / ("ktune-overhead-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string db = (dir / "overhead.db").string();
    {
      TuningLog log(db);
      Trial t;
      t.config = config;
      t.status = Status::ok;
      t.times_ms = {0.002};
      summarize_times(t);
      log.append(TrialRecord::make(*copy, problem, device, t, new_run_id()));
    }
    const std::size_t bytes = static_cast<std::size_t>(problem.dim("N")) * sizeof(float);
    detail::DeviceMemory x(bytes), y(bytes);
    cudaStream_t stream = nullptr;
    detail::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");

    DispatcherOptions options;
    options.cache_dir = (dir / "cubins").string();
    Dispatcher dispatcher(db, options);
    std::vector<void*> buffers = {x.get(), y.get()};
    Timing dispatched = time_launches(
        [&] { dispatcher.launch("copy", problem, buffers, stream); }, stream);
    // The same with programmatic launch (cudaLaunchKernelExC with one attribute).
    DispatcherOptions pdl_options = options;
    pdl_options.programmatic_launch = true;
    Dispatcher pdl_dispatcher(db, pdl_options);
    Timing programmatic = time_launches(
        [&] { pdl_dispatcher.launch("copy", problem, buffers, stream); }, stream);

    // The same cubin launched directly.
    Builder builder(BuilderOptions{1, options.cache_dir, {}});
    auto built = builder.build(*copy, problem, config, device);
    if (!built.ok) throw Error(ErrorCode::compile_error, built.log);
    detail::CudaModule module(*built.cubin);
    const void* function = reinterpret_cast<const void*>(module.kernel("ktune_copy"));
    LaunchStep step = copy->launch(problem, config, device).steps.at(0);
    void* yp = y.get();
    void* xp = x.get();
    float alpha = static_cast<float>(step.args.at(2).f);
    long long n = step.args.at(3).i;
    void* args[] = {&yp, &xp, &alpha, &n};
    dim3 grid(step.grid[0], step.grid[1], step.grid[2]), block(step.block[0], step.block[1], step.block[2]);
    Timing direct = time_launches(
        [&] {
          detail::check_cuda(cudaLaunchKernel(function, grid, block, args, step.dynamic_smem, stream),
                             "cudaLaunchKernel");
        },
        stream);

    nlohmann::json out = {
        {"benchmark", "gpu_dispatch_overhead"},
        {"device", device.name},
        {"problem", problem.key()},
        {"config", config.str()},
        {"launches", kLaunches},
        {"dispatcher_launch", to_json(dispatched)},
        {"direct_cudaLaunchKernel", to_json(direct)},
        {"overhead_p50_us", dispatched.p50_us - direct.p50_us},
        {"overhead_mean_us", dispatched.mean_us - direct.mean_us},
        {"dispatcher_programmatic_launch", to_json(programmatic)},
        {"programmatic_overhead_p50_us", programmatic.p50_us - direct.p50_us},
        {"target_us", 2.0},
    };
    bench::write_json(out_path, out);
    std::printf("%s\n", out.dump(2).c_str());
    cudaStreamDestroy(stream);
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_dispatch_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
