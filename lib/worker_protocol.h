// The parent <-> ktune-worker protocol: frames on a local stream socket, each a JSON header
// plus an optional binary attachment (the cubin), and the JSON forms of the values that travel
// in them (launch plans, timing options, measurement results).
//
// Frame layout (native byte order, both ends are the same machine):
//   "KTW1" | u32 header bytes | u64 attachment bytes | header (JSON text) | attachment
// Messages (header "type"):
//   parent -> worker: setup {template, problem, device, canary_bytes, fake}
//                     measure {plan, seed, timing, fake} + cubin attachment
//                     quit
//   worker -> parent: ready {device}, phase {phase: host|kernel|timing, planned_ms},
//                     result {...WorkerResult}, error {message}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ktune/measure.h"
#include "ktune/template.h"
#include "ktune/trial.h"

namespace ktune::worker {

/// One message.
struct Frame {
  nlohmann::json header;      ///< the message (has a "type")
  std::vector<char> payload;  ///< optional binary attachment
};

/// Largest header and attachment accepted (a peer that sends more is broken).
constexpr std::uint32_t kMaxHeaderBytes = 64u << 20;
/// Largest attachment accepted.
constexpr std::uint64_t kMaxPayloadBytes = 1ull << 31;

/// Outcome of reading a frame.
enum class ReadStatus {
  ok,         ///< a frame was read
  timeout,    ///< the deadline passed before a whole frame arrived
  closed,     ///< the peer closed the connection (or died)
  malformed,  ///< bytes that are not a frame (bad magic, oversize, bad JSON)
};

/// Serializes a frame into bytes.
std::vector<char> encode_frame(const Frame& frame);

/// Writes a whole frame to a socket or pipe; false when the peer is gone. Never raises SIGPIPE
/// on sockets.
bool write_frame(int fd, const Frame& frame);

/// Incremental reader: buffers bytes from a descriptor and cuts them into frames.
class FrameReader {
 public:
  /// Reads from `fd` (not owned).
  explicit FrameReader(int fd) : fd_(fd) {}
  /// Reads the next frame, waiting at most `timeout_ms` (< 0 waits forever). On malformed
  /// input `error` says what was wrong.
  ReadStatus read(Frame& out, double timeout_ms, std::string* error = nullptr);
  /// Feeds bytes directly (tests) and tries to cut one frame from the buffer.
  ReadStatus parse_buffered(Frame& out, std::string* error);
  /// Appends raw bytes to the buffer (tests).
  void feed(const char* data, std::size_t size) { buffer_.insert(buffer_.end(), data, data + size); }

 private:
  int fd_;
  std::vector<char> buffer_;
};

/// Measurement result as the worker reports it.
struct WorkerResult {
  Status status = Status::runtime_error;  ///< classified outcome
  std::string message;                    ///< CUDA error string, verification failure, ...
  bool context_lost = false;              ///< the CUDA context is unusable: restart the worker
  std::vector<double> times_ms;           ///< timed samples
  double error_norm = -1;                 ///< largest relative L2 error over outputs
  int sm_clock_mhz = -1;                  ///< NVML SM clock after timing
  int temperature_c = -1;                 ///< NVML temperature after timing
  int reps = 0;                           ///< timed samples taken
  int runs_per_sample = 1;                ///< back-to-back runs each sample is the mean of
  LaunchForm launch = LaunchForm::unknown;  ///< how the timed runs were launched
  double prepare_ms = 0;  ///< worker time before the verification run (inputs, reference, loading)
  double verify_ms = 0;   ///< verification run and checks
  double timing_ms = 0;   ///< estimate, timed runs and reading the events
};

/// JSON of a launch plan.
nlohmann::json plan_to_json(const LaunchPlan& plan);
/// Launch plan from JSON; throws Error(parse_error) on malformed input.
LaunchPlan plan_from_json(const nlohmann::json& j);
/// JSON of timing options.
nlohmann::json timing_to_json(const TimingOptions& t);
/// Timing options from JSON (missing fields keep defaults).
TimingOptions timing_from_json(const nlohmann::json& j);
/// JSON of a worker result (a "result" message).
nlohmann::json result_to_json(const WorkerResult& r);
/// Worker result from a "result" message; throws Error(parse_error) on malformed input.
WorkerResult result_from_json(const nlohmann::json& j);
/// Name of an L2 policy ("automatic", "flush", "rotate", "none").
const char* to_string(L2Policy policy);
/// Parses an L2 policy name; throws Error(parse_error) naming the text.
L2Policy l2_policy_from_string(const std::string& text);

}  // namespace ktune::worker
