// Child process management for the measuring worker (see worker_process.h).
#include "worker_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "child_environment.h"
#include "ktune/error.h"

namespace ktune::worker {

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    default: return "signal " + std::to_string(signal);
  }
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* text = strsignal(sig);
    return "killed by signal " + signal_name(sig) + (text ? std::string(" (") + text + ")" : "");
  }
  return "ended (wait status " + std::to_string(status) + ")";
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error(ErrorCode::invalid_argument, "ChildProcess: empty command");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(ErrorCode::io_error, std::string("socketpair failed: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the copies; the originals close at exec.
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The parent's environment plus what ktune announces to its children (user templates).
  const std::vector<std::string> env_entries = detail::child_environment();
  std::vector<char*> env;
  for (const auto& e : env_entries) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    throw Error(ErrorCode::io_error,
                "cannot start worker program " + argv[0] + ": " + std::strerror(rc));
  }
  pid_ = pid;
  fd_ = sv[0];
}

ChildProcess::~ChildProcess() {
  if (running()) kill_and_reap();
  if (fd_ >= 0) ::close(fd_);
}

std::string ChildProcess::kill_and_reap() {
  if (!running()) return ended_;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  ended_ = describe_wait_status(status);
  return ended_;
}

std::string ChildProcess::reap(double timeout_ms) {
  if (!running()) return ended_;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::microseconds(static_cast<std::int64_t>(timeout_ms * 1000));
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      ended_ = describe_wait_status(status);
      return ended_;
    }
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      ended_ = "ended (not waitable)";
      return ended_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return kill_and_reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace ktune::worker
