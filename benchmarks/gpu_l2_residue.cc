// Whether L2 lines that one kernel marks evict_last outlive it and speed up a later kernel's
// reads of the same buffer (how one tuning candidate can inflate the timings of the candidates
// measured after it on the same buffers), and which reset clears them. A buffer of 8 MiB (under
// the persisting L2 limit; read after a 2 x L2 memset, as the flush policy times small
// problems) or 128 MiB (over twice the L2, as the timing plan leaves large ones: read back to
// back, "chained", and after a memset, "flushed") is read by a streaming kernel (evict-first
// loads), timed with CUDA events after a warm-up: cold, then after one
// launch that marked the buffer's lines (prefetch.global.L2 with normal or evict_last priority,
// or loads under a createpolicy evict_last policy), after each reset (none,
// cudaCtxResetPersistingL2Cache, the worker's demotion of the buffer's lines (L2PriorityReset), both,
// or displacing them with a 2 x L2 buffer's own evict_last lines and demoting those). Every
// condition starts from a state cleared by both resets and a long read.
// Usage: gpu_l2_residue OUT.json
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_args.h"
#include "cuda_module.h"
#include "json_output.h"
#include "l2_priority_reset.h"
#include "ktune/device.h"
#include "ktune/error.h"

using namespace ktune;

namespace {

const char* kSource = R"CUDA(
extern "C" __global__ void kt_read(const uint4* x, unsigned long long n, unsigned* sink) {
  unsigned acc = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = __ldcs(x + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}
extern "C" __global__ void kt_mark_prefetch(const char* x, unsigned long long bytes, int last) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x * 128;
  for (unsigned long long o = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) * 128; o < bytes; o += stride) {
    if (last) asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(x + o));
    else asm volatile("prefetch.global.L2 [%0];" ::"l"(x + o));
  }
}
extern "C" __global__ void kt_mark_policy(const uint4* x, unsigned long long n, unsigned* sink) {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  unsigned acc = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned a, b, c, d;
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(x + i), "l"(policy));
    acc ^= a ^ b ^ c ^ d;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}
)CUDA";

constexpr std::size_t kBytes = std::size_t{128} << 20;
constexpr int kSamples = 15;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string out_path = bench::output_argument(argc, argv, "usage: gpu_l2_residue OUT.json");
    if (argc > 2) throw Error(ErrorCode::invalid_argument, "usage: gpu_l2_residue OUT.json (one argument)");
    if (auto why = cuda_unavailable_reason()) {
      std::fprintf(stderr, "gpu_l2_residue: %s\n", why->c_str());
      return 77;
    }
    int dev = 0;
    detail::check_cuda(cudaSetDevice(dev), "cudaSetDevice");
    cudaDeviceProp prop{};
    detail::check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    const std::string arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    const auto module = detail::load_utility_kernels(kSource, "l2_residue.cu", arch, "the benchmark's kernels");
    detail::DeviceMemory x(kBytes), sink(64);
    const std::size_t flush_bytes = 2 * static_cast<std::size_t>(prop.l2CacheSize);
    detail::DeviceMemory flush(flush_bytes);
    detail::check_cuda(cudaMemset(x.get(), 1, kBytes), "filling x");
    cudaStream_t stream = nullptr;
    cudaEvent_t e0, e1;
    detail::check_cuda(cudaEventCreate(&e0), "event");
    detail::check_cuda(cudaEventCreate(&e1), "event");
    void* xp = x.get();
    void* sp = sink.get();
    const dim3 grid(static_cast<unsigned>(prop.multiProcessorCount * 8)), block(256);
    auto launch = [&](const char* entry, void** args) {
      auto st = module->launch(entry, grid, block, 0, args, stream);
      detail::check_cuda(st.error, entry);
    };
    // Each helper below acts on the first `bytes` of x, the size being measured.
    auto read = [&](std::size_t bytes) {
      unsigned long long n16 = bytes / 16;
      void* args[] = {&xp, &n16, &sp};
      launch("kt_read", args);
    };
    // The worker's own demotion (lib/l2_priority_reset.h).
    worker::L2PriorityReset priorities(arch);
    auto demote = [&](void* p, std::size_t bytes) {
      detail::check_cuda(priorities.demote({worker::DeviceBufferRef{p, bytes}}, stream), "demoting");
    };
    auto clear = [&] {  // over the whole 128 MiB, whatever size is being measured
      detail::check_cuda(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
      demote(xp, kBytes);
      for (int i = 0; i < 4; ++i) read(kBytes);
      detail::check_cuda(cudaMemsetAsync(flush.get(), 0, flush_bytes, stream), "flush");
      detail::check_cuda(cudaStreamSynchronize(stream), "clearing");
    };
    auto mark = [&](const std::string& how, std::size_t bytes) {
      if (how == "none") return;
      unsigned long long n16 = bytes / 16, nbytes = bytes;
      if (how == "policy_last") {
        void* args[] = {&xp, &n16, &sp};
        launch("kt_mark_policy", args);
        return;
      }
      int last = how == "prefetch_last" ? 1 : 0;
      void* args[] = {&xp, &nbytes, &last};
      launch("kt_mark_prefetch", args);
    };
    auto reset = [&](const std::string& how, std::size_t bytes) {
      if (how == "ctx" || how == "both")
        detail::check_cuda(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
      if (how == "demote" || how == "both") demote(xp, bytes);
      if (how == "displace") {  // the flush buffer's own evict_last lines, then those demoted
        void* fp = flush.get();
        unsigned long long fb = flush_bytes;
        int last = 1;
        void* margs[] = {&fp, &fb, &last};
        launch("kt_mark_prefetch", margs);
        demote(fp, fb);
      }
    };
    // Median and first sample (us) of kSamples reads, chained or each after a flush.
    auto time_reads = [&](bool flushed, std::size_t bytes) {
      std::vector<double> us;
      for (int s = 0; s < kSamples; ++s) {
        if (flushed) detail::check_cuda(cudaMemsetAsync(flush.get(), s & 0xFF, flush_bytes, stream), "flush");
        detail::check_cuda(cudaEventRecord(e0, stream), "event");
        read(bytes);
        detail::check_cuda(cudaEventRecord(e1, stream), "event");
        detail::check_cuda(cudaEventSynchronize(e1), "reading");
        float ms = 0;
        detail::check_cuda(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        us.push_back(1000.0 * ms);
      }
      return std::make_pair(median(us), us.front());
    };
    for (int i = 0; i < 2000; ++i) read(kBytes);  // clocks up before the first figure
    detail::check_cuda(cudaStreamSynchronize(stream), "warm-up");
    size_t persist_limit = 0;
    cudaDeviceGetLimit(&persist_limit, cudaLimitPersistingL2CacheSize);
    std::printf("%s: L2 %d B, max persisting L2 %d B, persisting limit %zu B; buffer %zu MiB\n",
                prop.name, prop.l2CacheSize, prop.persistingL2CacheMaxSize, persist_limit, kBytes >> 20);
    nlohmann::json rows = nlohmann::json::array();
    const std::pair<std::size_t, bool> cases[] = {
        {std::size_t{8} << 20, true}, {kBytes, false}, {kBytes, true}};
    for (const auto& [bytes, flushed] : cases) {
      for (const std::string m : {"none", "prefetch_normal", "prefetch_last", "policy_last"}) {
        for (const std::string r : {"none", "ctx", "demote", "both", "displace"}) {
          if (m == "none" && r != "none") continue;
          clear();
          mark(m, bytes);
          reset(r, bytes);
          const auto [med, first] = time_reads(flushed, bytes);
          const double gbps = static_cast<double>(bytes) / (med * 1e3);
          std::printf("  %3zu MiB %-8s mark %-16s reset %-8s median %7.2f us (%6.0f GB/s)  first %7.2f us\n",
                      bytes >> 20, flushed ? "flushed" : "chained", m.c_str(), r.c_str(), med, gbps, first);
          rows.push_back({{"buffer_bytes", bytes}, {"reads", flushed ? "flushed" : "chained"}, {"mark", m}, {"reset", r},
                          {"median_us", med}, {"first_us", first}, {"read_gbps", gbps}});
        }
      }
    }
    nlohmann::json doc = {{"device", prop.name}, {"l2_bytes", prop.l2CacheSize},
                          {"max_persisting_l2_bytes", prop.persistingL2CacheMaxSize},
                          {"persisting_limit_bytes", persist_limit},
                          {"samples", kSamples}, {"rows", rows}};
    bench::write_json(out_path, doc);
    std::printf("wrote %s\n", out_path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_l2_residue: %s\n", e.what());
    return 1;
  }
  return 0;
}
