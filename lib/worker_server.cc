// The ktune-worker message loop and program entry (see worker_server.h).
#include "worker_server.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "compile_helper.h"
#include "ktune/error.h"

namespace ktune::worker {

int serve_frames(int in_fd, int out_fd, const char* who, const FrameHandler& handle) {
  FrameReader reader(in_fd);
  for (;;) {
    Frame request;
    std::string why;
    ReadStatus rs = reader.read(request, -1, &why);
    if (rs == ReadStatus::closed) return 0;
    if (rs != ReadStatus::ok) {
      std::fprintf(stderr, "%s: protocol error: %s\n", who, why.c_str());
      return 2;
    }
    Frame reply;
    try {
      std::optional<Frame> answer = handle(request);
      if (!answer) return 0;
      reply = std::move(*answer);
    } catch (const std::exception& e) {
      reply.header = {{"type", "error"}, {"message", e.what()}};
    }
    if (!write_frame(out_fd, reply)) return 0;
  }
}

int serve(int in_fd, int out_fd, WorkerBackend& backend) {
  bool ready = false;
  return serve_frames(in_fd, out_fd, "ktune-worker", [&](const Frame& request) -> std::optional<Frame> {
    const std::string type = request.header.value("type", "");
    if (type == "quit") return std::nullopt;
    Frame reply;
    if (type == "setup") {
      reply.header = {{"type", "ready"}, {"device", backend.setup(request.header)}};
      ready = true;
    } else if (type == "measure") {
      if (!ready) throw Error(ErrorCode::invalid_argument, "measure before setup");
      PhaseReporter report = [out_fd](const std::string& phase, double planned_ms) {
        Frame f;
        f.header = {{"type", "phase"}, {"phase", phase}, {"planned_ms", planned_ms}};
        write_frame(out_fd, f);
      };
      reply.header = result_to_json(backend.measure(request.header, request.payload, report));
    } else {
      throw Error(ErrorCode::invalid_argument, "unknown message type \"" + type + "\"");
    }
    return reply;
  });
}

int worker_main(int argc, char** argv) {
  bool fake = false, compile = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fake") == 0) {
      fake = true;
    } else if (std::strcmp(argv[i], "--compile") == 0) {
      compile = true;
    } else {
      const bool help = std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
      std::fprintf(help ? stdout : stderr,
                   "usage: ktune-worker [--fake | --compile]\n"
                   "Measuring (or, with --compile, NVRTC compiling) process started by the ktune "
                   "library; speaks a framed protocol on stdin/stdout.\n");
      if (help) return 0;
      std::fprintf(stderr, "unknown argument: %s\n", argv[i]);
      return 2;
    }
  }
  // A crashing candidate must not write a core file the size of the GPU context.
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // The protocol owns the original stdout; anything else printing to stdout goes to stderr.
  int out_fd = dup(1);
  dup2(2, 1);
  if (out_fd < 0) return 2;
  if (compile) return serve_compiles(0, out_fd);  // NVRTC only: no CUDA context
  try {
    auto backend = fake ? make_fake_backend(out_fd) : make_gpu_backend();
    return serve(0, out_fd, *backend);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ktune-worker: %s\n", e.what());
    return 2;
  }
}

}  // namespace ktune::worker
