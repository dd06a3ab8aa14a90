// End-to-end dispatch on a GPU: this process measures a few configs of the "copy" template for
// two shapes into a tuning log; a separate process (this test binary re-invoked) opens the log
// with a Dispatcher, selects for a third shape (nearest tuned shape), compiles, launches and
// checks the output, and a restarted dispatcher finds the cubin in the disk cache; launches
// are captured into CUDA graphs, and chained with programmatic launch they stay in order.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "cuda_module.h"
#include "gpu_guard.h"
#include "ktune/build.h"
#include "ktune/dispatch.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"
#include "log_fixtures.h"

using namespace ktune;

namespace {

constexpr const char* kChildDbVariable = "KTUNE_DISPATCH_CHILD_DB";
constexpr const char* kChildCacheVariable = "KTUNE_DISPATCH_CHILD_CACHE";

// Times one config of `copy` on `problem` with CUDA events (3 warm-ups, 10 samples).
Trial measure_copy(Builder& builder, const KernelTemplate& copy, const Problem& problem,
                   const Config& config, const Device& device, void* x, void* y) {
  Trial t;
  t.config = config;
  auto built = builder.build(copy, problem, config, device);
  REQUIRE(built.ok);
  detail::CudaModule module(*built.cubin);
  auto plan = copy.launch(problem, config, device);
  const std::size_t bytes = static_cast<std::size_t>(problem.dim("N")) * sizeof(float);
  std::vector<detail::DeviceBuffer> buffers = {{x, bytes}, {y, bytes}};
  cudaEvent_t start, stop;
  detail::check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  detail::check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 13; ++i) {
    detail::check_cuda(cudaEventRecord(start, nullptr), "cudaEventRecord");
    REQUIRE(detail::run_launch_plan(module, plan, buffers, nullptr).ok());
    detail::check_cuda(cudaEventRecord(stop, nullptr), "cudaEventRecord");
    detail::check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    detail::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (i >= 3) t.times_ms.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  t.status = Status::ok;
  t.compile_ms = built.compile_ms;
  t.resources = built.resources;
  summarize_times(t);
  t.timestamp_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  return t;
}

}  // namespace

TEST_CASE("A separate process dispatches a third copy shape from a tuned log", "[gpu][dispatch]") {
  KTUNE_REQUIRE_GPU();
  test::TempDir dir;
  const std::string db = dir.file("copy.db");
  const Device device = query_device(0);
  auto copy = find_template("copy");
  {
    TuningLog log(db);
    Builder builder;
    const std::string run = new_run_id();
    for (const char* shape : {"1048576", "16777216"}) {
      Problem problem = make_problem(*copy, shape, {{"dtype", "f32"}});
      const std::size_t bytes = static_cast<std::size_t>(problem.dim("N")) * sizeof(float);
      detail::DeviceMemory x(bytes), y(bytes);
      SearchSpace space = copy->space(problem, device);
      for (Value vec : {1, 4}) {
        for (Value threads : {128, 256}) {
          Config c = space.make({{"VEC", vec}, {"THREADS", threads}, {"ITEMS", 1}, {"GRID_STRIDE", 0}});
          Trial t = measure_copy(builder, *copy, problem, c, device, x.get(), y.get());
          log.append(TrialRecord::make(*copy, problem, device, t, run));
        }
      }
    }
    REQUIRE(log.count() == 8);
  }

  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // exec right away: CUDA state must not cross a fork
    setenv(kChildDbVariable, db.c_str(), 1);
    setenv(kChildCacheVariable, dir.file("cubins").c_str(), 1);
    execl("/proc/self/exe", "ktune_tests", "dispatch child: copy from a tuned log", "--warn", "NoTests",
          nullptr);
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// Runs only when re-invoked by the test above (hidden tag [.]).
TEST_CASE("dispatch child: copy from a tuned log", "[.][dispatch_child]") {
  const char* db = std::getenv(kChildDbVariable);
  const char* cache = std::getenv(kChildCacheVariable);
  REQUIRE(db != nullptr);
  REQUIRE(cache != nullptr);
  const Device device = query_device(0);
  auto copy = find_template("copy");
  Problem third = make_problem(*copy, "3000000", {{"dtype", "f32"}});
  const std::size_t n = 3000000, bytes = n * sizeof(float);

  std::vector<float> host_x(n), host_y(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) host_x[i] = 0.5f + static_cast<float>(i % 1000) / 250.0f;
  detail::DeviceMemory x(bytes), y(bytes);
  detail::check_cuda(cudaMemcpy(x.get(), host_x.data(), bytes, cudaMemcpyHostToDevice), "copy x");
  detail::check_cuda(cudaMemset(y.get(), 0xff, bytes), "poison y");

  DispatcherOptions options;
  options.cache_dir = cache;
  {
    Dispatcher dispatcher(db, options);
    Selection s = dispatcher.select("copy", third, device);
    CHECK(s.reason == SelectionReason::nearest_shape);
    CHECK(s.source_problem == make_problem(*copy, "1048576", {{"dtype", "f32"}}).key());
    dispatcher.launch("copy", third, {x.get(), y.get()});
    dispatcher.launch("copy", third, {x.get(), y.get()});
    detail::check_cuda(cudaDeviceSynchronize(), "synchronize");
    CHECK(dispatcher.compiles() == 1);  // compiled once, launched twice
    CHECK(dispatcher.prepared_launches() == 1);
    // Released after a synchronize, then prepared again from the memory cache: not compiled
    // again, and the output below is this launch's (y poisoned before it).
    CHECK(dispatcher.release_launches() == 1);
    CHECK(dispatcher.prepared_launches() == 0);
    detail::check_cuda(cudaMemset(y.get(), 0xff, bytes), "poison y");
    dispatcher.launch("copy", third, {x.get(), y.get()});
    detail::check_cuda(cudaDeviceSynchronize(), "synchronize");
    CHECK(dispatcher.prepared_launches() == 1);
    CHECK(dispatcher.compiles() == 1);
  }
  detail::check_cuda(cudaMemcpy(host_y.data(), y.get(), bytes, cudaMemcpyDeviceToHost), "copy y");
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (host_y[i] != static_cast<float>(-1.75 * static_cast<double>(host_x[i]))) ++wrong;
  CHECK(wrong == 0);

  Dispatcher restarted(db, options);  // a restarted program: the cubin comes from disk
  restarted.launch("copy", third, {x.get(), y.get()});
  detail::check_cuda(cudaDeviceSynchronize(), "synchronize");
  CHECK(restarted.compiles() == 0);
  CHECK_THROWS_AS(restarted.launch("copy", third, {x.get()}), Error);
  // A misaligned or null pointer is refused before anything is launched, so the context
  // stays usable: the next launch below still runs and checks correct.
  CHECK_THROWS_WITH(restarted.launch("copy", third, {x.get(), static_cast<char*>(y.get()) + 4}),
                    Catch::Contains("not 16-byte aligned"));
  CHECK_THROWS_WITH(restarted.launch("copy", third, {nullptr, y.get()}),
                    Catch::Contains("null pointer"));
  detail::check_cuda(cudaDeviceSynchronize(), "synchronize after the refused launches");

  // CUDA graphs: a problem's first launch during a capture is refused before it touches the
  // stream (the capture ends cleanly); once launched, its launches are captured and the graph
  // replays them.
  {
    cudaStream_t stream = nullptr;
    detail::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    Dispatcher graphs(db, options);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    CHECK_THROWS_WITH(graphs.launch("copy", third, {x.get(), y.get()}, stream),
                      Catch::Contains("launch it once before capturing"));
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    cudaGraphDestroy(graph);
    CHECK(graphs.prepared_launches() == 0);
    graphs.launch("copy", third, {x.get(), y.get()}, stream);  // warm
    detail::check_cuda(cudaMemsetAsync(y.get(), 0xff, bytes, stream), "poison y");
    detail::check_cuda(cudaStreamSynchronize(stream), "synchronize");
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    graphs.launch("copy", third, {x.get(), y.get()}, stream);
    graphs.launch("copy", third, {x.get(), y.get()}, stream);
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    std::size_t nodes = 0;
    REQUIRE(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
    CHECK(nodes == 2);  // one kernel per captured launch; nothing ran yet
    detail::check_cuda(cudaStreamSynchronize(stream), "synchronize");
    detail::check_cuda(cudaMemcpy(host_y.data(), y.get(), sizeof(float), cudaMemcpyDeviceToHost), "copy y");
    CHECK(std::isnan(host_y[0]));  // still the poison: capturing launched nothing
    REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
    detail::check_cuda(cudaStreamSynchronize(stream), "synchronize the graph");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    detail::check_cuda(cudaMemcpy(host_y.data(), y.get(), bytes, cudaMemcpyDeviceToHost), "copy y");
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (host_y[i] != static_cast<float>(-1.75 * static_cast<double>(host_x[i]))) ++wrong;
    CHECK(wrong == 0);
    CHECK(graphs.compiles() == 0);  // from the disk cache, as `restarted`
  }

  // Programmatic launch: a chain of launches, each reading what the one before it wrote
  // (x -> y -> x ...) and allowed to start while that one drains; its griddepcontrol.wait
  // must still hold it until the previous output is complete. Then the chain captured and
  // replayed as a graph (programmatic edges between its kernels).
  {
    DispatcherOptions pdl = options;
    pdl.programmatic_launch = true;
    Dispatcher chained(db, pdl);
    std::vector<float> expect = host_x;
    auto advance = [&](int launches) {  // the chain's effect, computed as the kernel does
      for (int k = 0; k < launches; ++k)
        for (float& v : expect) v = -1.75f * v;
    };
    auto launch_chain = [&](int launches, cudaStream_t stream) {
      for (int k = 0; k < launches; ++k) {
        if (k % 2 == 0) chained.launch("copy", third, {x.get(), y.get()}, stream);
        else chained.launch("copy", third, {y.get(), x.get()}, stream);
      }
    };
    auto wrong_in_x = [&] {
      detail::check_cuda(cudaMemcpy(host_y.data(), x.get(), bytes, cudaMemcpyDeviceToHost), "copy x");
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) bad += host_y[i] != expect[i];
      return bad;
    };
    launch_chain(16, nullptr);
    detail::check_cuda(cudaDeviceSynchronize(), "synchronize the programmatic chain");
    advance(16);
    CHECK(wrong_in_x() == 0);

    cudaStream_t stream = nullptr;
    detail::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    launch_chain(8, stream);
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int replay = 0; replay < 2; ++replay) REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
    detail::check_cuda(cudaStreamSynchronize(stream), "synchronize the programmatic graph");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    advance(16);
    CHECK(wrong_in_x() == 0);
    detail::check_cuda(cudaMemcpy(x.get(), host_x.data(), bytes, cudaMemcpyHostToDevice), "restore x");
  }

  // The default cache folder cannot be created (HOME in /proc): a warning, a launch anyway.
  unsetenv("KTUNE_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/proc/self/no-such-home", 1);
  detail::check_cuda(cudaMemset(y.get(), 0xff, bytes), "poison y");
  Dispatcher homeless(db);
  homeless.launch("copy", third, {x.get(), y.get()});
  detail::check_cuda(cudaDeviceSynchronize(), "synchronize");
  CHECK(homeless.compiles() == 1);
  detail::check_cuda(cudaMemcpy(host_y.data(), y.get(), bytes, cudaMemcpyDeviceToHost), "copy y");
  wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (host_y[i] != static_cast<float>(-1.75 * static_cast<double>(host_x[i]))) ++wrong;
  CHECK(wrong == 0);
}
