// The ktune-worker's side of the protocol: the message loop that answers setup / measure /
// quit frames through a backend (the real GPU backend, or a fake one for tests of hangs,
// crashes and protocol faults without a GPU), and the worker program's main().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "worker_protocol.h"

namespace ktune::worker {

/// Reports the start of a phase to the parent ("host", "kernel", "timing"), which applies the
/// matching deadline; `planned_ms` is the expected GPU time of the timing phase.
using PhaseReporter = std::function<void(const std::string& phase, double planned_ms)>;

/// What the worker loop delegates to.
class WorkerBackend {
 public:
  virtual ~WorkerBackend() = default;
  /// Handles a setup message; returns a device description; throws Error on failure.
  virtual nlohmann::json setup(const nlohmann::json& request) = 0;
  /// Verifies and times one candidate.
  virtual WorkerResult measure(const nlohmann::json& request, const std::vector<char>& cubin,
                               const PhaseReporter& report) = 0;
};

/// The real backend: CUDA device, workload buffers, verification and timing.
std::unique_ptr<WorkerBackend> make_gpu_backend();
/// A backend that obeys the request's "fake" directive (ok, ok:<ms>, slow:<ms>, hang,
/// hang_host, segv, abort, exit, sticky, launch, wrong, garbage, error); tests only.
std::unique_ptr<WorkerBackend> make_fake_backend(int out_fd);

/// Answers one request frame; nullopt ends the loop (a "quit"). An exception becomes an
/// "error" frame carrying its message.
using FrameHandler = std::function<std::optional<Frame>(const Frame& request)>;

/// The message loop of both worker modes: reads frames from `in_fd` and writes each answer to
/// `out_fd` until the handler ends it or the peer closes (0), or bytes that are not frames
/// arrive (2, after naming the problem on stderr with `who`).
int serve_frames(int in_fd, int out_fd, const char* who, const FrameHandler& handle);

/// Serves frames from `in_fd`, answering on `out_fd`, until quit or end of input. Returns the
/// process exit status.
int serve(int in_fd, int out_fd, WorkerBackend& backend);

/// main() of the ktune-worker program: `ktune-worker [--fake | --compile]`; protocol on
/// stdin/stdout.
int worker_main(int argc, char** argv);

}  // namespace ktune::worker
