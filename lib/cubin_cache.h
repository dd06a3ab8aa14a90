// Content-addressed cache of compiled kernels: an in-memory map that also joins concurrent
// requests for the same key (one compile, many waiters), backed by an optional directory of
// <key>.cubin files with a <key>.json sidecar (log, options, arch, checksum). Files are
// written atomically (temp file + rename); unreadable, truncated or mismatching entries are
// treated as misses and rewritten.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::detail {

/// True when `bytes` can be a cubin: an ELF file (magic 0x7f 'E' 'L' 'F', a full header). A
/// cache entry or a compile helper's answer that is not is never used.
bool looks_like_cubin(const std::vector<char>& bytes);

/// What a compile produced, as cached (derived values such as resources are recomputed).
struct CompiledKernel {
  bool ok = false;                                 ///< a cubin was produced
  std::string log;                                 ///< compiler log
  std::shared_ptr<const std::vector<char>> cubin;  ///< the binary (ok only)
  std::string arch;                                ///< target architecture
  std::vector<std::string> options;                ///< NVRTC options used
  double compile_ms = 0;                           ///< time of the original compile
};

/// Where a lookup was answered.
enum class CacheSource { miss, memory, disk };

/// Counters of a cache.
struct CacheStats {
  std::uint64_t compiles = 0;     ///< compile functions run (misses)
  std::uint64_t memory_hits = 0;  ///< answered from memory (incl. joined in-flight compiles)
  std::uint64_t disk_hits = 0;    ///< answered from the directory
  std::uint64_t failures = 0;     ///< compiles that produced no cubin
};

/// Thread-safe two-level cache of CompiledKernel by hex key.
class CubinCache {
 public:
  /// `directory` = "" keeps the cache in memory only; otherwise it is created if needed
  /// (throws Error(io_error) naming it when that fails).
  explicit CubinCache(std::string directory);

  /// Returns the cached entry for `key`, or runs `compile` once (even when many threads ask
  /// at the same time), stores and returns its result. Successful compiles go to disk;
  /// failures stay in memory only.
  std::pair<CompiledKernel, CacheSource> get_or_compile(
      const std::string& key, const std::function<CompiledKernel()>& compile);

  /// Counters so far.
  CacheStats stats() const;
  /// Forgets the in-memory entries (the directory is kept).
  void clear_memory();
  /// The directory ("" when none).
  const std::string& directory() const { return directory_; }

  /// Path of the cubin file of a key (for tests and tools).
  std::string cubin_path(const std::string& key) const;
  /// Path of the JSON sidecar of a key.
  std::string sidecar_path(const std::string& key) const;

 private:
  std::optional<CompiledKernel> load_from_disk(const std::string& key) const;
  void store_to_disk(const std::string& key, const CompiledKernel& entry) const;

  std::string directory_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<CompiledKernel>> memory_;
  CacheStats stats_;
  mutable std::once_flag swept_;  ///< stale temporary files removed (after the first write)
};

}  // namespace ktune::detail
