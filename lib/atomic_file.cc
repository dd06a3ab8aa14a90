// Whole-or-nothing file writes (see atomic_file.h).
#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <streambuf>

#include "folder_check.h"
#include "ktune/error.h"

namespace ktune::detail {

namespace {

/// Why `path` cannot be written, in the user's terms: its folder is missing or not a folder,
/// it is a folder itself, or the system's reason.
std::string reason_for(const std::string& path, int error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "it is a folder";
  if (const auto problem = folder_problem(path)) return *problem;
  return std::strerror(error);
}

/// Why a stream's write failed: the system's reason when errno still holds one, else what
/// is left to say (a stream may clear errno between the failed write and its check).
std::string write_failure(int error) {
  return error != 0 ? std::strerror(error) : "the write came back short (a full disk or a closed pipe?)";
}

/// Creates a new, empty temporary file beside `path` that no other writer shares (its name
/// carries this process and a counter, as `target` says; created exclusively); returns it.
std::string create_temporary_beside(const std::string& path, AtomicTarget target) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path file(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string pid = std::to_string(::getpid()), n = std::to_string(counter.fetch_add(1));
    const std::string tmp =
        target == AtomicTarget::user_file
            ? path + ".tmp-" + pid + "-" + n
            : (file.parent_path() /
               std::string(".").append(file.filename().string()).append(".").append(pid).append(".").append(n).append(".tmp"))
                  .string();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return tmp;
    }
    if (errno == EACCES || errno == EROFS) {  // the file may be writable, its folder is not
      const int error = errno;
      std::error_code ec;
      const std::string folder = std::filesystem::absolute(path, ec).parent_path().string();
      throw Error(ErrorCode::io_error, "cannot write '" + path + "': a whole-or-nothing write " +
                                           "creates a temporary file beside it, and its folder '" +
                                           folder + "' refuses that: " + std::strerror(error));
    }
    if (errno != EEXIST)
      throw Error(ErrorCode::io_error, "cannot write '" + path + "': " + reason_for(path, errno));
  }
  throw Error(ErrorCode::io_error, "cannot write '" + path + "': no free temporary name beside it");
}

}  // namespace

std::string link_target(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = path;
  for (int hop = 0; fs::is_symlink(p, ec); ++hop) {
    if (hop == 40)  // a loop: replacing the link with a file would break what it was for
      throw Error(ErrorCode::io_error, "cannot write '" + path + "': its symbolic links loop");
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p.string();
}

namespace {

/// The descriptor of this process that `path` names (/dev/stdout, /dev/stderr, /dev/fd/N,
/// /proc/self/fd/N), or -1.
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p = prefix;
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
        path.find_first_not_of("0123456789", p.size()) == std::string::npos && path.size() - p.size() < 9)
      return std::stoi(path.substr(p.size()));
  }
  return -1;
}

/// An output stream buffer over an open descriptor (shared offset and mode: what the shell
/// redirected, appended or piped stays as it set it up).
class DescriptorBuffer : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  ~DescriptorBuffer() override { sync(); }

 protected:
  int overflow(int c) override {
    if (sync() != 0) return traits_type::eof();
    if (c != traits_type::eof()) {
      *pptr() = static_cast<char>(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return -1;
      p += n;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return 0;
  }

 private:
  int fd_;
  char buffer_[1 << 16];
};

/// Streams `write` into descriptor `fd` of this process, after what the process printed so far.
void write_to_descriptor(const std::string& path, int fd, const std::function<void(std::ostream&)>& write) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  auto buffer = std::make_unique<DescriptorBuffer>(fd);
  std::ostream out(buffer.get());
  errno = 0;
  write(out);
  out.flush();
  if (!out)
    throw Error(ErrorCode::io_error, "writing '" + path + "' failed: " + write_failure(errno));
}

/// Streams `write` straight into an existing file that is not a regular one (a FIFO, a device
/// such as /dev/stdout): there is nothing to replace, so nothing to do atomically.
void write_through(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error(ErrorCode::io_error, "cannot write '" + path + "': " + std::strerror(errno));
  errno = 0;
  write(out);
  out.flush();
  if (!out) throw Error(ErrorCode::io_error, "writing '" + path + "' failed: " + write_failure(errno));
}

}  // namespace

void write_file_atomically(const std::string& requested,
                           const std::function<void(std::ostream&)>& write,
                           AtomicTarget target) {
  namespace fs = std::filesystem;
  const bool replace = target == AtomicTarget::library_file;
  std::error_code ec;
  if (!replace) {
    // A descriptor the process holds (/dev/stdout redirected to a file, appended to, a pipe):
    // written through it, never replaced, so what the shell set up stays as it was.
    if (const int fd = named_descriptor(requested); fd >= 0 && ::fcntl(fd, F_GETFD) != -1)
      return write_to_descriptor(requested, fd, write);
    // Another device or a FIFO is opened by the name given (the system follows the links to
    // it): there is nothing to replace.
    const fs::file_status final = fs::status(requested, ec);
    if (fs::exists(final) && !fs::is_regular_file(final) && !fs::is_directory(final))
      return write_through(requested, write);
  }
  const std::string path = replace ? requested : link_target(requested);
  const fs::file_status existing = replace ? fs::symlink_status(path, ec) : fs::status(path, ec);
  if (fs::is_directory(existing))
    throw Error(ErrorCode::io_error, "cannot write '" + requested + "': it is a folder");
  // Renaming over a file needs only its folder's permission: a file this user may not write
  // (another user's, in a shared folder) is refused as a plain write would refuse it.
  if (!replace && fs::is_regular_file(existing) && ::access(path.c_str(), W_OK) != 0)
    throw Error(ErrorCode::io_error, "cannot write '" + path + "': " + std::strerror(errno));
  const std::string tmp = create_temporary_beside(path, target);
  // The replacement keeps the permissions of the file it replaces (a private file stays so).
  if (fs::is_regular_file(existing)) fs::permissions(tmp, existing.permissions(), ec);
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) {
      const int error = errno;
      std::remove(tmp.c_str());
      throw Error(ErrorCode::io_error, "cannot write '" + path + "': " + reason_for(path, error));
    }
    errno = 0;
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (!out) {
      const int error = errno;
      out.close();
      std::remove(tmp.c_str());
      throw Error(ErrorCode::io_error, "writing '" + path + "' failed: " + write_failure(error));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    throw Error(ErrorCode::io_error, "cannot replace '" + path + "': " + reason_for(path, error));
  }
}

}  // namespace ktune::detail
