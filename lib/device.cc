// Device descriptions: read from the CUDA runtime (statically linked, so a machine without a
// driver gets a clear "no CUDA device" answer instead of a failed start) or built by hand for
// offline, compile-only targets.
#include "ktune/device.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cctype>
#include <charconv>
#include <map>
#include <string>
#include <string_view>

#include "ktune/error.h"

namespace ktune {

namespace {

constexpr int kKiB = 1024;
constexpr int kMiB = 1024 * 1024;

/// Limits of a representative part of one GPU generation.
Device offline_device(const std::string& name, int major, int minor, int sm_count,
                      std::int64_t memory, int l2, int smem_optin, int smem_per_sm,
                      int threads_per_sm) {
  Device d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sm_count;
  d.global_memory = memory;
  d.l2_bytes = l2;
  d.smem_per_block = 48 * kKiB;
  d.smem_per_block_optin = smem_optin;
  d.smem_per_sm = smem_per_sm;
  d.regs_per_block = 64 * kKiB;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = threads_per_sm;
  d.warp_size = 32;
  return d;
}

/// "no CUDA device (<runtime message>)" for a failed runtime call. Without a driver library
/// the runtime says "driver version is insufficient", which suggests an old driver rather
/// than none: that case says so.
std::string no_device_message(cudaError_t err) {
  if (err == cudaErrorInsufficientDriver) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!driver) driver = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!driver) return "no CUDA device (no NVIDIA driver is installed: libcuda.so.1 not found)";
    dlclose(driver);
  }
  return std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
}

}  // namespace

std::string Device::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + arch_suffix;
}

void Device::check_runs(const std::string& target, const std::string& what) const {
  if (target.empty() || target.back() != 'a') return;
  const std::string portable = target.substr(0, target.size() - 1);
  if (portable != "sm_" + std::to_string(cc_major) + std::to_string(cc_minor))
    throw Error(ErrorCode::unsupported,
                what + " is built for " + target + " (instructions of that architecture only), "
                "which cannot run on " + name + " (" + arch() + ")");
}

std::string Device::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::string Device::key() const {
  // The hardware's identity: an arch-specific compile target (sm_90a) is the same GPU.
  return name + "|sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + "|" +
         std::to_string(sm_count);
}

Device Device::from_key(const std::string& key) {
  // Plain decimal digits only (no sign, no spaces), so that key() gives the key back.
  auto digits = [](std::string_view text, int& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size() &&
           std::isdigit(static_cast<unsigned char>(text[0]));
  };
  const auto a = key.find('|');
  const auto b = a == std::string::npos ? a : key.find('|', a + 1);
  Device d;
  int arch = 0;
  const std::string_view view(key);
  const bool ok = b != std::string::npos && a > 0 && key.compare(a + 1, 3, "sm_") == 0 &&
                  (b - a - 4 == 2 || b - a - 4 == 3) && digits(view.substr(a + 4, b - a - 4), arch) &&
                  digits(view.substr(b + 1), d.sm_count);
  if (!ok)
    throw Error(ErrorCode::parse_error,
                "device key \"" + key + "\": expected \"name|sm_XY|sm_count\", e.g. \"NVIDIA H200|sm_90|132\"");
  d.name = key.substr(0, a);
  d.cc_major = arch / 10;
  d.cc_minor = arch % 10;
  return d;
}

Device Device::h200() {
  // GH100 with 132 SMs enabled, 50 MiB of L2 enabled (the die has 60 MB), 141 GB HBM3e as
  // the runtime reports it (143771 MiB).
  return offline_device("NVIDIA H200", 9, 0, 132, std::int64_t{143771} * kMiB, 50 * kMiB,
                        227 * kKiB, 228 * kKiB, 2048);
}

std::string Device::offline_name(const std::string& arch) { return "offline " + arch; }

Device Device::offline(const std::string& arch) {
  // Representative parts: A100 SXM (sm_80), RTX 3090 (sm_86), L40S (sm_89), H100 SXM (sm_90).
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  if (arch == "sm_80")
    return offline_device(offline_name(arch), 8, 0, 108, 80 * kGiB, 40 * kMiB, 163 * kKiB,
                          164 * kKiB, 2048);
  if (arch == "sm_86")
    return offline_device(offline_name(arch), 8, 6, 82, 24 * kGiB, 6 * kMiB, 99 * kKiB,
                          100 * kKiB, 1536);
  if (arch == "sm_89")
    return offline_device(offline_name(arch), 8, 9, 142, 48 * kGiB, 96 * kMiB, 99 * kKiB,
                          100 * kKiB, 1536);
  if (arch == "sm_90" || arch == "sm_90a") {
    Device d = offline_device(offline_name(arch), 9, 0, 132, 80 * kGiB, 50 * kMiB, 227 * kKiB,
                              228 * kKiB, 2048);
    if (arch == "sm_90a") d.arch_suffix.push_back('a');  // (assigning "a" trips a GCC 12 -Wrestrict false positive)
    return d;
  }
  throw Error(ErrorCode::invalid_argument,
              "unknown offline arch '" + arch +
                  "' (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a)");
}

std::optional<std::string> cuda_unavailable_reason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return no_device_message(err);
  }
  if (count == 0) return std::string("no CUDA device (the driver reports 0 devices)");
  return std::nullopt;
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

Device query_device(int ordinal) {
  if (auto why = cuda_unavailable_reason())
    throw Error(ErrorCode::no_device,
                "cannot query CUDA device " + std::to_string(ordinal) + ": " + *why);
  int count = cuda_device_count();
  if (ordinal < 0 || ordinal >= count)
    throw Error(ErrorCode::no_device, "CUDA device " + std::to_string(ordinal) +
                                          " does not exist (" + std::to_string(count) +
                                          " device(s) present)");
  cudaDeviceProp prop{};
  if (cudaError_t err = cudaGetDeviceProperties(&prop, ordinal); err != cudaSuccess)
    throw Error(ErrorCode::cuda_error, "cudaGetDeviceProperties(" + std::to_string(ordinal) +
                                           ") failed: " + cudaGetErrorString(err));
  auto attribute = [ordinal](cudaDeviceAttr attr, int fallback) {
    int value = 0;
    return cudaDeviceGetAttribute(&value, attr, ordinal) == cudaSuccess ? value : fallback;
  };
  Device d;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.global_memory = static_cast<std::int64_t>(prop.totalGlobalMem);
  d.l2_bytes = prop.l2CacheSize;
  d.smem_per_block = static_cast<int>(prop.sharedMemPerBlock);
  d.smem_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                     static_cast<int>(prop.sharedMemPerBlockOptin));
  d.smem_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                            static_cast<int>(prop.sharedMemPerMultiprocessor));
  d.regs_per_block = prop.regsPerBlock;
  d.max_threads_per_block = prop.maxThreadsPerBlock;
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor,
                                   prop.maxThreadsPerMultiProcessor);
  d.warp_size = prop.warpSize;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  d.ordinal = ordinal;
  return d;
}

}  // namespace ktune
