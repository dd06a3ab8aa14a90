// Builder: NVRTC compilation of (template, problem, config, device) to a cubin, many at once
// on a thread pool, with a content-addressed cache in memory and on disk (key: source hash,
// options, arch, NVRTC version) and the ptxas resource report. Compile failures are results
// with the compiler log, never exceptions.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/device.h"
#include "ktune/package.h"
#include "ktune/problem.h"
#include "ktune/template.h"
#include "ktune/trial.h"

namespace ktune {

/// Result of compiling one config.
struct BuildResult {
  bool ok = false;                                 ///< cubin produced
  std::string log;                                 ///< NVRTC log (errors, warnings, ptxas -v report)
  std::shared_ptr<const std::vector<char>> cubin;  ///< the binary (ok only)
  std::string arch;                                ///< e.g. "sm_90"
  std::string key;                                 ///< cache key (hex)
  std::vector<std::string> options;                ///< NVRTC options used
  /// The most any kernel of the launch plan uses, field by field (so a pre-pass that runs
  /// first hides no register count or spill of the main kernel); without a plan, the report's
  /// first kernel.
  Resources resources;
  std::map<std::string, Resources> kernels;        ///< per kernel entry name
  double compile_ms = 0;                           ///< 0 for cache hits
  enum class Cache { miss, memory, disk } cache = Cache::miss;  ///< where it came from
};

/// Builder settings.
struct BuilderOptions {
  int threads = 0;                 ///< parallel compiles; 0 = hardware concurrency
  std::string cache_dir;           ///< on-disk cubin cache; "" = none
  std::vector<std::string> extra;  ///< extra NVRTC options (e.g. "-lineinfo")
  /// Compile in up to this many helper processes (`ktune-worker --compile`, found as the
  /// measurer finds the worker) instead of this process: NVRTC barely runs one process's
  /// compiles in parallel (lib/compile_helper.h). 0 = in this process;
  /// kHelperPerCompileThread = one per compile thread (what `ktune tune` uses). A helper that
  /// cannot start or answer is replaced by an in-process compile of the same config.
  int compile_processes = 0;
  std::string helper_program;      ///< ktune-worker for the helpers; "" = find_worker_executable()
};

/// BuilderOptions::compile_processes: one helper process per compile thread.
inline constexpr int kHelperPerCompileThread = -1;

/// Helper processes a Builder with `options` compiles in: compile_processes, or, for
/// kHelperPerCompileThread, its compile threads (BuilderOptions::threads, 0: one per hardware
/// thread, at least 1).
int compile_helper_count(const BuilderOptions& options);

/// Compiles kernels with NVRTC; thread-safe.
class Builder {
 public:
  /// Creates a builder and its thread pool.
  explicit Builder(BuilderOptions options = {});
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  /// Compiles one config now (or returns it from the cache). A compile error is a failed
  /// result; a config that is not one of the template's space for the problem (other
  /// parameters, a value outside a domain) throws Error(invalid_argument).
  BuildResult build(const KernelTemplate& tmpl, const Problem& problem, const Config& config,
                    const Device& device);
  /// Queues a compile on the pool (the task holds the template, so it may be released first).
  std::future<BuildResult> submit(std::shared_ptr<const KernelTemplate> tmpl, Problem problem,
                                  Config config, Device device);
  /// Compiles many configs in parallel; results in input order.
  std::vector<BuildResult> build_all(std::shared_ptr<const KernelTemplate> tmpl,
                                     const Problem& problem, const std::vector<Config>& configs,
                                     const Device& device);
  /// Cache statistics.
  struct Stats {
    std::uint64_t compiles = 0, memory_hits = 0, disk_hits = 0, failures = 0;
    /// Compiles a helper process ran (compile_processes not 0: a count, or one per compile
    /// thread).
    std::uint64_t helper_compiles = 0;
  };
  /// Current statistics.
  Stats stats() const;
  /// Drops the in-memory cache (the disk cache stays).
  void clear_memory_cache();

  /// NVRTC version as "13.0".
  static std::string nvrtc_version();
  /// Hex hash (64-bit FNV-1a) of a source text; part of every record.
  static std::string source_hash(const std::string& source);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
