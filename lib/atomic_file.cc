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

#include "ktune/error.h"

namespace ktune::detail {

namespace {

/// Why `path` cannot be written, in the user's terms: its folder is missing or not a folder,
/// it is a folder itself, or the system's reason.
std::string reason_for(const std::string& path, int error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::absolute(path, ec).parent_path();
  if (!fs::exists(parent, ec)) return "its folder '" + parent.string() + "' does not exist";
  if (!fs::is_directory(parent, ec)) return "'" + parent.string() + "' is not a folder";
  if (fs::is_directory(path, ec)) return "it is a folder";
  return std::strerror(error);
}

/// Creates a new, empty temporary file beside `path` that no other writer shares (its name
/// carries this process and a counter; created exclusively); returns its name.
std::string create_temporary_beside(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                            std::to_string(counter.fetch_add(1));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return tmp;
    }
    if (errno != EEXIST)
      throw Error(ErrorCode::io_error, "cannot write '" + path + "': " + reason_for(path, errno));
  }
  throw Error(ErrorCode::io_error, "cannot write '" + path + "': no free temporary name beside it");
}

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  if (std::filesystem::is_directory(path))
    throw Error(ErrorCode::io_error, "cannot write '" + path + "': it is a folder");
  const std::string tmp = create_temporary_beside(path);
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) {
      const int error = errno;
      std::remove(tmp.c_str());
      throw Error(ErrorCode::io_error, "cannot write '" + path + "': " + reason_for(path, error));
    }
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
      throw Error(ErrorCode::io_error, "writing '" + path + "' failed: " + std::strerror(error));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    throw Error(ErrorCode::io_error, "cannot replace '" + path + "': " + reason_for(path, error));
  }
}

}  // namespace ktune::detail
