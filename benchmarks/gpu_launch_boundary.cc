// How much of a short memory-bound kernel's time is the boundary between two launches, and how
// much of it programmatic dependent launch (PDL, sm_90) takes back: issue 6's last H200 rows
// (LayerNorm / RMSNorm f16 [32768,1024], 134 MB moved in ~36 us) sit under 90 % of the 2 GiB
// copy, as does ktune's copy kernel on the same bytes. A 16-byte-vector copy kernel moves
// 64 MiB (x read + y written = LayerNorm f16 [32768,1024]'s bytes), 10 launches back to back
// per CUDA-event pair on one stream, in five ways:
//   plain        ordinary launches (what the measurer and the Dispatcher do today);
//   pdl_wait     launched with programmatic stream serialization, each kernel waiting
//                (griddepcontrol.wait) before its first memory access: the next launch is
//                scheduled while the previous one drains, memory order kept;
//   pdl_trigger  as pdl_wait, and each block also releases its dependents
//                (griddepcontrol.launch_dependents) at its start, so the next grid's blocks
//                are resident and waiting before the previous grid ends;
//   graph        the 10 plain launches captured into one CUDA graph;
//   graph_pdl    the 10 pdl_trigger launches captured into one graph.
// Each on a persistent grid (4 blocks of 256 threads per SM, grid-stride) and on one block per
// 4 KiB chunk, in 3 alternating rounds with cudaMemcpyAsync of 2 GiB (the suite's reference)
// and the same kernel on 2 GiB; medians over rounds. Reports us per call, % of the 2 GiB copy,
// and the fixed cost per call (time - bytes / the kernel's own 2 GiB rate). Every variant's
// output is checked against its input.
// Usage: gpu_launch_boundary OUT.json
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_bench_support.h"
#include "json_output.h"
#include "ktune/device.h"

using namespace ktune;

namespace {

const char* kSource = R"CUDA(
extern "C" __global__ void kt_copy(const uint4* __restrict__ x, uint4* __restrict__ y,
                                   unsigned long long n, int pdl) {
  if (pdl >= 2) asm volatile("griddepcontrol.launch_dependents;");
  if (pdl >= 1) asm volatile("griddepcontrol.wait;" ::: "memory");
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = x[i], b = x[i + stride], c = x[i + 2 * stride], d = x[i + 3 * stride];
    y[i] = a; y[i + stride] = b; y[i + 2 * stride] = c; y[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) y[i] = x[i];
}
)CUDA";

constexpr int kCallsPerSample = 10;
constexpr int kSamples = 30;
constexpr int kRounds = 3;

struct Variant {
  std::string name;
  int pdl = 0;         // 0 plain, 1 wait, 2 trigger + wait
  bool graph = false;  // the sample's calls as one captured graph
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string out_path =
        bench::output_argument(argc, argv, "usage: gpu_launch_boundary OUT.json");
    if (argc > 2)
      throw Error(ErrorCode::invalid_argument, "usage: gpu_launch_boundary OUT.json (one argument)");
    if (auto why = cuda_unavailable_reason()) {
      std::fprintf(stderr, "gpu_launch_boundary: %s\n", why->c_str());
      return 77;
    }
    detail::check_cuda(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    detail::check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    const std::string arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    if (prop.major < 9)
      throw Error(ErrorCode::invalid_argument, arch + ": PDL needs sm_90 or newer");
    const auto module = detail::load_utility_kernels(kSource, "launch_boundary.cu", arch,
                                                     "the benchmark's copy kernel");
    const void* kernel = reinterpret_cast<const void*>(module->kernel("kt_copy"));

    const std::size_t small = std::size_t{64} << 20, large = std::size_t{2} << 30;
    detail::DeviceMemory x(large), y(large);
    detail::check_cuda(cudaMemset(x.get(), 0x5a, large), "filling x");
    cudaStream_t stream = nullptr;
    detail::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cudaEvent_t e0, e1;
    detail::check_cuda(cudaEventCreate(&e0), "event");
    detail::check_cuda(cudaEventCreate(&e1), "event");

    // One launch of the copy kernel over `bytes` on `grid` blocks of 256.
    auto launch = [&](std::size_t bytes, unsigned grid, int pdl, cudaStream_t s) {
      const void* xp = x.get();
      void* yp = y.get();
      unsigned long long n = bytes / 16;
      void* args[] = {&xp, &yp, &n, &pdl};
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(grid);
      config.blockDim = dim3(256);
      config.stream = s;
      cudaLaunchAttribute attribute{};
      attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attribute.val.programmaticStreamSerializationAllowed = 1;
      if (pdl > 0) {
        config.attrs = &attribute;
        config.numAttrs = 1;
      }
      detail::check_cuda(cudaLaunchKernelExC(&config, kernel, args), "launching kt_copy");
    };
    // Median us per call over kSamples samples of kCallsPerSample calls.
    auto time_variant = [&](const Variant& v, std::size_t bytes, unsigned grid) {
      std::optional<bench::CapturedGraph> graph;
      if (v.graph) {  // a capture that fails is reported as unavailable (-1), not fatal
        graph.emplace(stream, kCallsPerSample,
                      [&](cudaStream_t s) { launch(bytes, grid, v.pdl, s); });
        if (!graph->ok()) {
          std::fprintf(stderr, "%s unavailable: %s\n", v.name.c_str(), graph->why().c_str());
          return -1.0;
        }
      }
      auto sample = [&] {
        if (graph) graph->launch(stream);
        else for (int c = 0; c < kCallsPerSample; ++c) launch(bytes, grid, v.pdl, stream);
      };
      for (int w = 0; w < 3; ++w) sample();
      std::vector<double> us;
      for (int s = 0; s < kSamples; ++s) {
        detail::check_cuda(cudaEventRecord(e0, stream), "event");
        sample();
        detail::check_cuda(cudaEventRecord(e1, stream), "event");
        detail::check_cuda(cudaEventSynchronize(e1), "timing");
        float ms = 0;
        detail::check_cuda(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        us.push_back(1000.0 * ms / kCallsPerSample);
      }
      return bench::median(us);
    };
    auto check_output = [&](std::size_t bytes, const std::string& what) {
      detail::check_cuda(cudaStreamSynchronize(stream), what);
      std::vector<unsigned char> host(bytes);
      detail::check_cuda(cudaMemcpy(host.data(), y.get(), bytes, cudaMemcpyDeviceToHost), "reading y");
      const auto bad = std::find_if(host.begin(), host.end(), [](unsigned char b) { return b != 0x5a; });
      if (bad != host.end())
        throw Error(ErrorCode::internal, what + ": byte " + std::to_string(bad - host.begin()) +
                                             " of y differs from x");
    };

    const std::vector<Variant> variants = {{"plain", 0, false}, {"pdl_wait", 1, false},
                                           {"pdl_trigger", 2, false}, {"graph", 0, true},
                                           {"graph_pdl", 2, true}};
    const unsigned persistent = static_cast<unsigned>(prop.multiProcessorCount * 4);
    const unsigned chunked = static_cast<unsigned>(small / 4096);  // 256 threads x 16 B
    const std::vector<std::pair<std::string, unsigned>> grids = {{"persistent", persistent},
                                                                 {"chunk_4KiB", chunked}};
    for (int w = 0; w < 200; ++w) launch(small, persistent, 0, stream);  // clocks up
    detail::check_cuda(cudaStreamSynchronize(stream), "warm-up");

    std::map<std::string, std::vector<double>> times;  // us per call, one per round
    std::vector<double> memcpy_gbps, kernel_large_us;
    for (int r = 0; r < kRounds; ++r) {
      memcpy_gbps.push_back(bench::copy_bandwidth_gbps(large, kCallsPerSample, 20));
      kernel_large_us.push_back(time_variant(variants[0], large, persistent));
      for (const auto& [grid_name, grid] : grids) {
        for (const Variant& v : variants) {
          detail::check_cuda(cudaMemsetAsync(y.get(), 0, small, stream), "poisoning y");
          const double us = time_variant(v, small, grid);
          times[grid_name + "/" + v.name].push_back(us);
          if (us > 0) check_output(small, grid_name + "/" + v.name);
        }
      }
    }
    const double ref_gbps = bench::median(memcpy_gbps);
    const double kernel_large_gbps = 2.0 * large / (bench::median(kernel_large_us) * 1e3);
    std::printf("%s: cudaMemcpyAsync 2 GiB %.0f GB/s (rounds", prop.name, ref_gbps);
    for (double g : memcpy_gbps) std::printf(" %.0f", g);
    std::printf("); this kernel on 2 GiB %.0f GB/s (%.1f %%)\n", kernel_large_gbps,
                100.0 * kernel_large_gbps / ref_gbps);
    std::printf("64 MiB copied (134 MB moved), %d calls per event pair, medians of %d rounds:\n",
                kCallsPerSample, kRounds);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [grid_name, grid] : grids) {
      for (const Variant& v : variants) {
        const auto& rounds = times[grid_name + "/" + v.name];
        if (std::any_of(rounds.begin(), rounds.end(), [](double t) { return t <= 0; })) {
          std::printf("  %-11s %-12s unavailable\n", grid_name.c_str(), v.name.c_str());
          rows.push_back({{"grid", grid_name}, {"variant", v.name}, {"unavailable", true}});
          continue;
        }
        const double us = bench::median(rounds);
        const double gbps = 2.0 * small / (us * 1e3);
        const double fixed_us = us - 2.0 * small / (kernel_large_gbps * 1e3);
        std::printf("  %-11s %-12s %7.2f us  %6.0f GB/s  %5.1f %% of 2 GiB copy  fixed %5.2f us  (rounds",
                    grid_name.c_str(), v.name.c_str(), us, gbps, 100.0 * gbps / ref_gbps, fixed_us);
        for (double t : rounds) std::printf(" %.2f", t);
        std::printf(")\n");
        rows.push_back({{"grid", grid_name}, {"blocks", grid}, {"variant", v.name}, {"us_per_call", us},
                        {"rounds_us", rounds}, {"gbps", gbps}, {"pct_of_copy", 100.0 * gbps / ref_gbps},
                        {"fixed_us", fixed_us}});
      }
    }
    nlohmann::json doc = {{"device", prop.name},
                          {"bytes_copied", small},
                          {"calls_per_sample", kCallsPerSample},
                          {"samples", kSamples},
                          {"rounds", kRounds},
                          {"memcpy_2gib_gbps", memcpy_gbps},
                          {"kernel_2gib_gbps", kernel_large_gbps},
                          {"rows", rows}};
    bench::write_json(out_path, doc);
    std::printf("wrote %s\n", out_path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_launch_boundary: %s\n", e.what());
    return 1;
  }
  return 0;
}
