// The parent's side of a ktune-worker (see worker_client.h).
#include "worker_client.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "ktune/error.h"

namespace ktune::worker {

namespace {
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string format_ms(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  return buf;
}
}  // namespace

WorkerClient::WorkerClient(WorkerSpec spec) : spec_(std::move(spec)) {}

WorkerClient::~WorkerClient() { stop(); }

void WorkerClient::stop() {
  if (!child_) return;
  if (child_->running()) {
    Frame quit;
    quit.header = {{"type", "quit"}};
    write_frame(child_->fd(), quit);
    child_->reap(2000);
  }
  reader_.reset();
  child_.reset();
}

void WorkerClient::ensure_started() {
  if (running()) return;
  reader_.reset();
  child_.reset();
  std::vector<std::string> argv{spec_.program};
  argv.insert(argv.end(), spec_.args.begin(), spec_.args.end());
  child_ = std::make_unique<ChildProcess>(argv);
  reader_ = std::make_unique<FrameReader>(child_->fd());
  if (starts_++ > 0) ++restarts_;
  Frame setup;
  setup.header = {{"type", "setup"},
                  {"template", spec_.template_name},
                  {"problem", spec_.problem_key},
                  {"device", spec_.device},
                  {"canary_bytes", spec_.canary_bytes},
                  {"reference_cache_dir", spec_.reference_cache_dir}};
  std::string why;
  Frame reply;
  ReadStatus rs = ReadStatus::closed;
  if (write_frame(child_->fd(), setup)) rs = reader_->read(reply, spec_.setup_timeout_ms, &why);
  if (rs == ReadStatus::ok && reply.header.value("type", "") == "ready") {
    spdlog::debug("ktune-worker pid {} ready on device {}", child_->pid(), spec_.device);
    return;
  }
  std::string detail;
  if (rs == ReadStatus::ok)
    detail = reply.header.value("message", reply.header.dump());
  else if (rs == ReadStatus::timeout)
    detail = "no answer within " + format_ms(spec_.setup_timeout_ms);
  else if (rs == ReadStatus::malformed)
    detail = "protocol error: " + why;
  std::string ended = child_->kill_and_reap();
  if (rs == ReadStatus::closed) detail = "the worker " + ended;
  child_.reset();
  reader_.reset();
  ErrorCode code = detail.find("no CUDA") != std::string::npos ? ErrorCode::no_device
                                                               : ErrorCode::cuda_error;
  throw Error(code, "ktune-worker (" + spec_.program + ") could not be set up for template " +
                        spec_.template_name + ", problem " + spec_.problem_key + " on device " +
                        std::to_string(spec_.device) + ": " + detail);
}

WorkerResult WorkerClient::lose_worker(Status status, std::string message) {
  WorkerResult r;
  r.status = status;
  r.context_lost = true;
  std::string ended = child_->kill_and_reap();
  r.message = std::move(message);
  if (status == Status::runtime_error && r.message.empty()) r.message = "the worker " + ended;
  spdlog::debug("ktune-worker lost: {} ({})", r.message, ended);
  reader_.reset();
  child_.reset();
  return r;
}

WorkerResult WorkerClient::measure(const MeasureRequest& request) {
  ensure_started();
  Frame msg;
  msg.header = {{"type", "measure"},
                {"plan", plan_to_json(request.plan)},
                {"seed", request.seed},
                {"timing", timing_to_json(request.timing)},
                {"fake", request.fake}};
  if (request.cubin) msg.payload = *request.cubin;
  if (!write_frame(child_->fd(), msg))
    return lose_worker(Status::runtime_error, "");

  std::string phase = "host";
  double limit_ms = request.host_timeout_ms;
  auto phase_start = Clock::now();
  for (;;) {
    Frame reply;
    std::string why;
    double left = limit_ms - ms_since(phase_start);
    ReadStatus rs = left <= 0 ? ReadStatus::timeout : reader_->read(reply, left, &why);
    if (rs == ReadStatus::timeout) {
      std::string what = phase == "host" ? "host-side verification work" : "the candidate";
      return lose_worker(Status::timeout, what + " did not finish within " + format_ms(limit_ms) +
                                              " (phase " + phase + "; worker killed)");
    }
    if (rs == ReadStatus::closed) {
      std::string ended = child_->reap(1000);
      return lose_worker(Status::runtime_error,
                         "the worker " + ended + " during phase " + phase);
    }
    if (rs == ReadStatus::malformed)
      return lose_worker(Status::runtime_error, "worker protocol error: " + why);
    std::string type = reply.header.value("type", "");
    if (type == "phase") {
      phase = reply.header.value("phase", "host");
      double planned = reply.header.value("planned_ms", 0.0);
      limit_ms = phase == "host"     ? request.host_timeout_ms
                 : phase == "timing" ? request.kernel_timeout_ms + 2 * planned
                                     : request.kernel_timeout_ms;
      phase_start = Clock::now();
      continue;
    }
    if (type == "result") {
      WorkerResult r;
      try {
        r = result_from_json(reply.header);
      } catch (const Error& e) {
        return lose_worker(Status::runtime_error, e.what());
      }
      if (r.context_lost) {
        // The CUDA context is corrupt: the next candidate gets a fresh worker.
        child_->kill_and_reap();
        reader_.reset();
        child_.reset();
      }
      return r;
    }
    if (type == "error")
      return lose_worker(Status::runtime_error,
                         "worker error: " + reply.header.value("message", std::string("?")));
    return lose_worker(Status::runtime_error, "worker protocol error: unexpected message " + type);
  }
}

}  // namespace ktune::worker
