// Ctrl-C during `ktune tune` (see tune_interrupt.h).
#include "tune_interrupt.h"

#include <atomic>

namespace ktune::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) {
  g_stop.store(true);
  ::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the program at once
}

}  // namespace

bool stop_requested() { return g_stop.load(); }

StopOnSigint::StopOnSigint() {
  g_stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &previous_);
}

StopOnSigint::~StopOnSigint() { ::sigaction(SIGINT, &previous_, nullptr); }

}  // namespace ktune::cli
