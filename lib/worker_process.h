// A child process connected by a local stream socket on its stdin and stdout: started with
// posix_spawn (safe in a multi-threaded parent), killed with SIGKILL, and reaped with a
// description of how it ended ("killed by signal SIGSEGV (Segmentation fault)").
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ktune::worker {

/// Human-readable account of a wait status: "exited with status 3", "killed by signal SIGSEGV
/// (Segmentation fault)".
std::string describe_wait_status(int status);
/// Short signal name, e.g. "SIGSEGV" for 11 ("signal 64" when unknown).
std::string signal_name(int signal);

/// One running child process; the destructor kills and reaps it.
class ChildProcess {
 public:
  /// Starts `argv[0]` (a path) with `argv` as arguments; the child's stdin and stdout are one
  /// end of a socket pair, its stderr is the parent's. Throws Error(io_error) naming the
  /// program when it cannot be started.
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The parent's end of the socket.
  int fd() const { return fd_; }
  /// Process id.
  pid_t pid() const { return pid_; }
  /// True until the child has been reaped.
  bool running() const { return pid_ > 0; }
  /// Sends SIGKILL (if still running) and reaps; returns how it ended.
  std::string kill_and_reap();
  /// Waits up to `timeout_ms` for the child to end on its own; then kills it. Returns how it
  /// ended.
  std::string reap(double timeout_ms);

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string ended_;
};

}  // namespace ktune::worker
