// NVRTC compiles in helper processes. NVRTC runs the compiles of one process mostly one at a
// time: on the 16-core GPU host a Builder peaked at ~50 copy configs/s from 4 threads on
// (benchmarks/results/compile.md), which made tuning compile-bound, while separate processes
// compile independently. `ktune-worker --compile` serves compile requests on the worker
// protocol's frames (serve_compiles); CompileHelper is the client end the Builder keeps one of
// per compile thread. A helper answers only for the same NVRTC version and the same built-in
// headers as the library asking (else it refuses, and the Builder compiles in its own
// process), so a helper's cubin is the one the in-process compile would give.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nvrtc_compile.h"

namespace ktune::worker {

class ChildProcess;
class FrameReader;

/// Serves compile requests on `in_fd` / `out_fd` until the peer closes or sends "quit";
/// returns the process exit status.
int serve_compiles(int in_fd, int out_fd);

/// One helper process (`program --compile`) and its connection.
class CompileHelper {
 public:
  /// Starts the helper and checks that it answers for this library's NVRTC and headers;
  /// throws Error(io_error) naming the program when it cannot start or does not (an older
  /// ktune-worker without --compile, another build).
  explicit CompileHelper(const std::string& program);
  ~CompileHelper();
  CompileHelper(const CompileHelper&) = delete;
  CompileHelper& operator=(const CompileHelper&) = delete;

  /// Compiles `source` with the built-in template headers, as detail::nvrtc_compile would
  /// here (with the PTX too when `keep_ptx`). When the helper dies during the compile, a
  /// failed output naming how it ended (the compile would crash this process too). nullopt
  /// when the helper could not answer otherwise (timed out after `timeout_ms`, refused a
  /// different NVRTC or header set, spoke garbage; `why` says which): the caller compiles in
  /// its own process. Either way the helper is then unusable.
  std::optional<detail::NvrtcOutput> compile(const std::string& source,
                                             const std::string& program_name,
                                             const std::vector<std::string>& options,
                                             bool keep_ptx, double timeout_ms,
                                             std::string* why = nullptr);
  /// False once the helper has failed.
  bool usable() const { return usable_; }
  /// True when the helper died during a compile (the pool tries that source once more in a
  /// fresh helper before calling it a compile failure).
  bool died() const { return died_; }

 private:
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<FrameReader> reader_;
  bool usable_ = true;
  bool died_ = false;
};

/// Up to `max_helpers` helpers shared by the threads of a Builder: a compile takes an idle
/// helper (or starts one), and gives it back after; a helper that dies during a compile is
/// replaced and the compile tried once more, so only a source that kills NVRTC twice fails.
/// Thread-safe.
class CompileHelperPool {
 public:
  /// `program`: the ktune-worker to start (not started until the first compile).
  CompileHelperPool(std::string program, int max_helpers);
  ~CompileHelperPool();

  /// A helper's compile (see CompileHelper::compile), or nullopt when none could answer: every
  /// helper busy, the program does not start, or the helper failed (after two such failures
  /// in a row, or one failed start, the pool answers nullopt from then on).
  std::optional<detail::NvrtcOutput> compile(const std::string& source,
                                             const std::string& program_name,
                                             const std::vector<std::string>& options,
                                             bool keep_ptx = false);
  /// Compiles helpers answered so far.
  std::uint64_t compiles() const;

 private:
  std::string program_;
  int max_helpers_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<CompileHelper>> idle_;
  int started_ = 0;        // helpers alive (idle or busy)
  int failures_ = 0;       // helpers lost in a row without answering
  bool disabled_ = false;  // the program could not start
  std::uint64_t compiles_ = 0;
};

}  // namespace ktune::worker
