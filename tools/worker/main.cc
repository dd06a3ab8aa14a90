// ktune-worker: the measuring process the ktune library starts per GPU. It speaks the framed
// protocol of lib/worker_protocol.h on stdin/stdout, so that a candidate that crashes, hangs
// or corrupts its CUDA context takes down only this process. `--fake` is for tests.
#include <csignal>

#include "worker_server.h"

int main(int argc, char** argv) {
  // A terminal Ctrl-C reaches the whole process group: the worker finishes the candidate in
  // flight and the parent, which handles SIGINT, decides when to stop it.
  std::signal(SIGINT, SIG_IGN);
  return ktune::worker::worker_main(argc, argv);
}
