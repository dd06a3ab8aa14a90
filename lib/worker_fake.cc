// A fake worker backend for tests without a GPU: each measure request carries a directive
// ("hang", "segv", "sticky", ...) that makes the worker misbehave the way a broken candidate
// would, so the parent's deadlines, crash handling and restarts are tested for real.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <cuda_runtime_api.h>

#include "ktune/error.h"
#include "worker_faults.h"
#include "worker_server.h"

namespace ktune::worker {

namespace {

class FakeBackend : public WorkerBackend {
 public:
  explicit FakeBackend(int out_fd) : out_fd_(out_fd) {}

  nlohmann::json setup(const nlohmann::json& request) override {
    if (request.value("problem", "") == "no_device")
      throw Error(ErrorCode::no_device, "no CUDA device (fake worker)");
    return {{"name", "fake"}, {"pid", static_cast<int>(getpid())}};
  }

  WorkerResult measure(const nlohmann::json& request, const std::vector<char>& cubin,
                       const PhaseReporter& report) override {
    std::string directive = request.value("fake", "ok");
    std::string arg;
    if (auto colon = directive.find(':'); colon != std::string::npos) {
      arg = directive.substr(colon + 1);
      directive = directive.substr(0, colon);
    }
    WorkerResult r;
    report("host", 0);
    if (directive == "hang_host") sleep_forever();
    report("kernel", 0);
    if (directive == "hang") sleep_forever();
    if (directive == "segv") {
      signal(SIGSEGV, SIG_DFL);  // die by the signal even where a sanitizer installed a handler
      raise(SIGSEGV);
    }
    if (directive == "abort") std::abort();
    if (directive == "exit") _exit(3);
    if (directive == "garbage") {
      const char junk[] = "this is not a frame";
      (void)!write(out_fd_, junk, sizeof junk);
      sleep_forever();
    }
    if (directive == "error") throw Error(ErrorCode::internal, "fake backend failure");
    if (directive == "sticky" || directive == "launch") {
      auto f = classify_cuda_error(directive == "sticky" ? cudaErrorIllegalAddress
                                                         : cudaErrorLaunchOutOfResources,
                                   "fake kernel");
      r.status = f.status;
      r.context_lost = f.context_lost;
      r.message = f.message;
      return r;
    }
    if (directive == "wrong") {
      r.status = Status::wrong_result;
      r.error_norm = 0.5;
      r.message = "out: relative L2 error 0.5 above tolerance 1e-05";
      return r;
    }
    double ms = arg.empty() ? 0.1 : std::stod(arg);
    if (directive == "slow") std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
    report("timing", ms * 10);
    r.status = Status::ok;
    r.error_norm = 0;
    r.reps = 10;
    r.times_ms.assign(10, ms);
    // Nothing is launched: the form reported is the one the timing options ask for.
    const TimingOptions timing = timing_from_json(request.value("timing", nlohmann::json::object()));
    r.launch = launch_form(timing.graph, timing.programmatic_launch);
    r.message = "cubin bytes " + std::to_string(cubin.size());
    return r;
  }

 private:
  [[noreturn]] static void sleep_forever() {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  int out_fd_;
};

}  // namespace

std::unique_ptr<WorkerBackend> make_fake_backend(int out_fd) {
  return std::make_unique<FakeBackend>(out_fd);
}

}  // namespace ktune::worker
