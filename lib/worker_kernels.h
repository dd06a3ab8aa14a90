// Inside the worker: a candidate's cubin loaded (detail::CudaModule of lib/cuda_module.h), its
// kernels resolved, and its launch plan prepared against one or more sets of device buffers,
// so that enqueueing a run is only kernel launches and memsets (or one CUDA graph of several
// runs). CUDA failures are thrown as CandidateFault (a classified, per-candidate failure),
// never ktune::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_module.h"
#include "ktune/template.h"
#include "worker_faults.h"

namespace ktune::worker {

/// A per-candidate failure inside the worker: becomes the trial's status and message.
struct CandidateFault {
  Status status = Status::runtime_error;  ///< classified status
  bool context_lost = false;              ///< the worker must be restarted
  std::string message;                    ///< what happened
};

/// Throws CandidateFault classified from `code` when it is not cudaSuccess.
void check_candidate(cudaError_t code, const std::string& where);

/// One device buffer: where it is and how big (payload only).
struct DeviceBufferRef {
  void* data = nullptr;     ///< first element (after the spec's offset)
  std::size_t bytes = 0;    ///< payload bytes
};

/// A loaded candidate with its plan prepared for several buffer sets.
class LoadedPlan {
 public:
  /// Loads `cubin` and resolves every kernel step (module and symbol failures are
  /// launch_error faults; dynamic shared memory above 48 KiB is opted in per kernel).
  /// `programmatic`: kernel steps marked grid_dependency_wait are enqueued with programmatic
  /// stream serialization (TimingOptions::programmatic_launch).
  LoadedPlan(const std::vector<char>& cubin, const LaunchPlan& plan, bool programmatic = false);
  ~LoadedPlan();
  LoadedPlan(const LoadedPlan&) = delete;
  LoadedPlan& operator=(const LoadedPlan&) = delete;

  /// Prepares the arguments for one buffer set (workload buffers then scratch, as the plan's
  /// indices expect); returns the set's index.
  std::size_t add_buffer_set(const std::vector<DeviceBufferRef>& buffers);
  /// Whether any step is enqueued with programmatic stream serialization (the option is on,
  /// the device can, and some kernel step is marked grid_dependency_wait).
  bool programmatic() const;
  /// Enqueues every step of the plan for buffer set `set` on `stream`; launch failures are
  /// thrown as CandidateFault.
  void enqueue(std::size_t set, cudaStream_t stream) const;

 private:
  struct PreparedStep {
    LaunchStep::Kind kind;
    bool programmatic = false;  // launched with programmatic stream serialization
    dim3 grid, block;
    unsigned smem = 0;
    std::vector<std::uint64_t> values;  // argument storage, 8 bytes per argument
    std::vector<void*> pointers;        // pointers into values
    void* memset_ptr = nullptr;
    std::size_t memset_bytes = 0;
    int memset_byte = 0;
    std::string entry;
  };
  LaunchPlan plan_;
  bool programmatic_ = false;
  std::unique_ptr<detail::CudaModule> module_;
  std::vector<std::vector<PreparedStep>> sets_;     // per buffer set
};

/// Runs of a LoadedPlan captured once into a CUDA graph and launched as a whole, so that the
/// runs of one timed sample follow each other without the stream's per-launch gap.
class RunGraph {
 public:
  /// Captures plan.enqueue(set) for each of `sets`, in order, on `stream` (thread-local
  /// capture mode) and instantiates the graph. Failures are thrown as CandidateFault, with
  /// the capture ended first so that `stream` stays usable.
  RunGraph(const LoadedPlan& plan, const std::vector<std::size_t>& sets, cudaStream_t stream);
  ~RunGraph();
  RunGraph(const RunGraph&) = delete;
  RunGraph& operator=(const RunGraph&) = delete;
  /// Launches the graph on `stream`; a failure is thrown as CandidateFault.
  void launch(cudaStream_t stream) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace ktune::worker
