// The parent's side of one ktune-worker: starts it, sets it up for a template and problem,
// sends candidates, applies the per-phase deadlines, and turns every way a worker can fail
// (hang, crash, corrupted CUDA context, protocol garbage) into a classified result. The worker
// is restarted lazily on the next request after it was lost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ktune/measure.h"
#include "ktune/template.h"
#include "worker_process.h"
#include "worker_protocol.h"

namespace ktune::worker {

/// What a worker is started for.
struct WorkerSpec {
  std::string program;                ///< path of the ktune-worker executable
  std::vector<std::string> args;      ///< extra arguments (e.g. "--fake" in tests)
  std::string template_name;          ///< template created in the worker
  std::string problem_key;            ///< problem, canonical key
  int device = 0;                     ///< CUDA ordinal
  std::size_t canary_bytes = 4096;    ///< guard bytes after buffers
  std::string reference_cache_dir;    ///< where costly seed data survives restarts ("" = none)
  double setup_timeout_ms = 600000;   ///< limit for starting and setting up
};

/// One candidate to measure.
struct MeasureRequest {
  std::shared_ptr<const std::vector<char>> cubin;  ///< compiled module
  LaunchPlan plan;                    ///< how to run it
  std::uint64_t seed = 1;             ///< verification inputs seed
  TimingOptions timing;               ///< timing settings
  double kernel_timeout_ms = 10000;   ///< limit while candidate kernels run
  double host_timeout_ms = 600000;    ///< limit for host-side phases
  std::string fake;                   ///< fake-worker directive (tests only)
};

/// Client of one worker process.
class WorkerClient {
 public:
  /// Does not start anything yet.
  explicit WorkerClient(WorkerSpec spec);
  ~WorkerClient();

  /// Measures one candidate. Failures of the candidate are statuses in the result; throws
  /// Error only when the worker cannot be set up (no device, unknown template, bad program).
  WorkerResult measure(const MeasureRequest& request);
  /// Starts and sets up the worker if it is not running (throws like measure()).
  void ensure_started();
  /// Asks the worker to quit and reaps it.
  void stop();
  /// Times the worker was started again after being lost.
  int restarts() const { return restarts_; }
  /// Whether a worker process is currently running.
  bool running() const { return child_ && child_->running(); }

 private:
  WorkerResult lose_worker(Status status, std::string message);

  WorkerSpec spec_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<FrameReader> reader_;
  int starts_ = 0;
  int restarts_ = 0;
};

}  // namespace ktune::worker
