// Device: the GPU a kernel is built for and measured on. Read from the CUDA runtime when a GPU
// is present, or built by hand for an offline target (compile-only on a machine without GPU).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ktune {

/// Facts about a GPU that templates, the builder and the log need.
struct Device {
  std::string name;                       ///< e.g. "NVIDIA H200"
  int cc_major = 0;                       ///< compute capability major
  int cc_minor = 0;                       ///< compute capability minor
  int sm_count = 0;                       ///< multiprocessors
  std::int64_t global_memory = 0;         ///< bytes
  int l2_bytes = 0;                       ///< L2 cache size
  int smem_per_block = 0;                 ///< default static limit (48 KiB)
  int smem_per_block_optin = 0;           ///< opt-in dynamic limit per block
  int smem_per_sm = 0;                    ///< shared memory per multiprocessor
  int regs_per_block = 0;                 ///< 32-bit registers per block
  int max_threads_per_block = 0;          ///< usually 1024
  int max_threads_per_sm = 0;             ///< resident threads per multiprocessor (2048 on sm_90)
  int warp_size = 32;                     ///< threads per warp
  int driver_version = 0;                 ///< cudaDriverGetVersion, 0 when offline
  int runtime_version = 0;                ///< cudaRuntimeGetVersion
  int ordinal = -1;                       ///< CUDA device index, -1 for an offline target
  std::string arch_suffix;                ///< "a" for an arch-specific target (sm_90a), else ""

  /// "sm_90" for compute capability 9.0 ("sm_90a" with arch_suffix "a").
  std::string arch() const;
  /// "9.0".
  std::string compute_capability() const;
  /// Short identity used in tuning records: "NVIDIA H200|sm_90|132" (the compute capability
  /// without an arch-specific suffix: an sm_90a target is the same GPU).
  std::string key() const;
  /// The identity a key names: name, compute capability and SM count (sm_00 and 0 = unknown,
  /// as imports of foreign results record them). Its limits are unknown (0), so it is no
  /// description to build spaces for: use query_device() or offline() for that. Throws
  /// Error(parse_error) naming the key unless it reads "name|sm_XY|count" in plain digits.
  static Device from_key(const std::string& key);
  /// An offline description of the NVIDIA H200 (sm_90, 132 SMs), for compile-only work.
  static Device h200();
  /// An offline description for an arch string: sm_80, sm_86, sm_89, sm_90 or sm_90a (limits
  /// of a typical part of that generation, name "offline sm_XX"); throws
  /// Error(invalid_argument) for an unknown arch.
  static Device offline(const std::string& arch);
  /// "offline <arch>": the name offline() gives its parts, and the name of a device known only
  /// by its arch (any sm_XY, as imported records with no device name get).
  static std::string offline_name(const std::string& arch);
  /// Throws Error(unsupported) naming `what` when code built for `target` ("sm_90a", an
  /// architecture-specific target) cannot run here: such code runs only on exactly that
  /// compute capability. Portable targets ("sm_80") pass.
  void check_runs(const std::string& target, const std::string& what) const;
};

/// Why there is no usable GPU, or nullopt when there is one. Never throws, never aborts:
/// on a machine without a driver the answer is "no CUDA device (...)".
std::optional<std::string> cuda_unavailable_reason();
/// Number of CUDA devices (0 without a driver).
int cuda_device_count();
/// Reads the device with CUDA index `ordinal`; throws Error(no_device) with the reason.
Device query_device(int ordinal);

}  // namespace ktune
