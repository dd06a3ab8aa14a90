// Measurer: the one place where configs become Trials. The GPU measurer compiles with the
// Builder and runs candidates in an isolated worker process (`ktune-worker`) that verifies
// every candidate against the workload's reference before timing it; the replay measurer
// answers from recorded measurements (a Kernel Tuner cache, or a ktune log's trials; T4 results
// are imported into a log first) so searchers can be tested and benchmarked without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/device.h"
#include "ktune/package.h"
#include "ktune/problem.h"
#include "ktune/space.h"
#include "ktune/trial.h"

namespace ktune {

class Builder;
class KernelTemplate;

/// Turns a batch of configs into trials (one per config, same order).
class Measurer {
 public:
  virtual ~Measurer() = default;
  /// Measures a batch; failures are trial statuses, not exceptions. The Tuner holds the answer
  /// to this contract: another count or order of trials is an Error, and an ok trial whose
  /// median is not a finite time > 0 is taken as a runtime_error.
  virtual std::vector<Trial> measure(const std::vector<Config>& batch) = 0;
};

/// How the L2 cache is kept from helping repeated runs.
enum class L2Policy {
  /// rotate when the buffers fit in twice the L2 size (flush instead when that would take
  /// more than 64 copies), else nothing is needed
  automatic,
  flush,      ///< write a buffer larger than L2 (cudaMemsetAsync) before every timed run
  rotate,     ///< run on copies of the buffers in turn, together larger than twice the L2
  none,       ///< measure warm caches
};

/// How a verified candidate is timed (CUDA events around each run).
struct TimingOptions {
  double min_time_ms = 50;    ///< keep repeating until the timed samples add up to this
  int min_reps = 10;          ///< at least this many timed samples
  int max_reps = 1000;        ///< at most this many timed samples
  double warmup_ms = 5;       ///< untimed warm-up runs up to this much GPU time...
  int min_warmup = 2;         ///< ...but at least this many
  L2Policy l2 = L2Policy::automatic;  ///< cache policy between timed runs
  /// Back-to-back runs per timed sample (one event pair around all of them; the sample is
  /// their mean), at most this many and only while at least min_reps samples remain, and only
  /// when nothing runs between two runs (no L2 flush, no restore of in-place buffers). 1 =
  /// an event between every two runs, which adds about 1.2 us to each sample on an H200
  /// (results/2026-12-01-h200/session8): 3-4 % of a 35 us kernel.
  int runs_per_sample = 10;
  /// Launch each timed sample's back-to-back runs as one CUDA graph (captured once per
  /// candidate, launched for every sample), as a program that replays its kernels through
  /// graphs runs them: without the stream's per-launch gap (about 1.6 us per launch on an
  /// H100 for a 134 MB copy, results/2026-12-06-h100/session33). Applies only where runs are
  /// chained (no L2 flush, no restore of in-place buffers); the trial's message says whether
  /// the runs were graphs. Off by default: times then match kernels launched one by one on a
  /// stream, as the Dispatcher launches them.
  bool graph = false;
  /// Launch the kernels that allow it (LaunchStep::grid_dependency_wait: the memory-bound
  /// templates' kernels) with programmatic stream serialization, as a Dispatcher with
  /// DispatcherOptions::programmatic_launch launches them: each run's blocks may be scheduled
  /// while the previous run drains, and wait (griddepcontrol.wait) for it to complete before
  /// touching memory. Keep it equal to the deployed Dispatcher's setting so that the tuned
  /// times are the deployed ones. The trial's message says when it applied.
  bool programmatic_launch = false;
  /// Before a candidate's timed runs (and inside every L2 flush) the worker returns the L2
  /// lines of its buffers to normal eviction priority: lines an earlier candidate marked
  /// evict_last outlive it and would be hits for this one (lib/l2_priority_reset.h). false
  /// only to measure that effect.
  bool reset_l2_priorities = true;
};

/// Settings of the GPU measurer and its worker process.
struct RunnerOptions {
  std::string worker_path;          ///< ktune-worker executable; "" = find_worker_executable()
  double timeout_ms = 0;            ///< per-trial kernel time limit; 0 = automatic (below)
  double timeout_factor = 20;       ///< automatic limit: factor x the first good median...
  double min_timeout_ms = 1000;     ///< ...but at least this
  double initial_timeout_ms = 10000;  ///< automatic limit before any candidate succeeded
  double host_timeout_ms = 600000;  ///< limit for host-side work (inputs, reference, checks)
  std::uint64_t seed = 1;           ///< first verification seed
  int seed_pool = 3;                ///< seeds used in turn (each reference computed once);
                                    ///< 0 = a new seed for every candidate
  std::size_t canary_bytes = 4096;  ///< guard bytes after every buffer
  TimingOptions timing;             ///< timing settings sent with every candidate
};

/// Finds the ktune-worker executable: `explicit_path` when given, else $KTUNE_WORKER (either
/// one, when not an executable file, is Error(not_found) naming it: no other place is
/// tried), else next to the running executable (or its parent folder, for build trees), else
/// in the libexec folder beside the executable's folder (<prefix>/bin -> <prefix>/libexec),
/// else in the libexec folder of the installed package the program was built against
/// (ktune/package.h), else in the install libexec folder configured at build time. Throws
/// Error(not_found) listing the places tried.
std::string find_worker_executable(const std::string& explicit_path = "");

/// Where a GpuMeasurer's wall time went, summed over the candidates it sent to its worker
/// (overhead reports: everything that is not kernel time is overhead).
struct MeasurerTimeSplit {
  std::size_t candidates = 0;    ///< candidates measured by the worker
  double compile_wait_ms = 0;    ///< waiting for the Builder before a candidate could run
  double round_trip_ms = 0;      ///< request to result, as the measurer saw it
  double worker_prepare_ms = 0;  ///< worker: inputs, reference, module load, buffer setup
  double worker_verify_ms = 0;   ///< worker: verification run and checks
  double worker_timing_ms = 0;   ///< worker: estimate, warm-up and timed runs
  double kernel_ms = 0;          ///< GPU time of the timed runs (samples x runs per sample)
};

/// Compiles candidates with a Builder (compiles of a batch overlap the measurement of earlier
/// candidates) and verifies and times them in a ktune-worker process on the device, restarted
/// automatically after a crash, a hang or a corrupted CUDA context.
class GpuMeasurer : public Measurer {
 public:
  /// A measurer for one template, problem and device (device.ordinal selects the GPU). The
  /// worker starts on the first measurement; throws Error(not_found) without a worker program.
  GpuMeasurer(std::shared_ptr<const KernelTemplate> tmpl, Problem problem, Device device,
              Builder& builder, RunnerOptions options = {});
  ~GpuMeasurer() override;
  GpuMeasurer(const GpuMeasurer&) = delete;
  GpuMeasurer& operator=(const GpuMeasurer&) = delete;

  /// Compiles and measures a batch, one trial per config in order. Throws Error only when
  /// the worker cannot be set up at all (no device, unknown template in the worker).
  std::vector<Trial> measure(const std::vector<Config>& batch) override;
  /// How many times the worker was restarted after a fault.
  int worker_restarts() const;
  /// The per-trial kernel time limit currently applied, in ms.
  double current_timeout_ms() const;
  /// Where the time went so far.
  MeasurerTimeSplit time_split() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
