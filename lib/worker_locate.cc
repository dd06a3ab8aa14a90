// Finding the ktune-worker program: explicit path, $KTUNE_WORKER, next to the running
// executable (or one folder up, as in a build tree where tests live in a subfolder), the
// libexec folder beside the executable's bin folder (an installed ktune), the libexec folder of
// the package a program was built against (ktune/package.h), or the configured install folder.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/package.h"

#ifndef KTUNE_INSTALL_LIBEXECDIR
#define KTUNE_INSTALL_LIBEXECDIR "/usr/local/libexec"
#endif

namespace ktune {

namespace {
bool executable(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

/// The folder register_package_libexec_dir recorded ("" when none).
std::string& package_libexec_dir() {
  static std::string dir;
  return dir;
}
std::mutex& package_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

namespace detail {
bool register_package_libexec_dir(const char* dir) {
  std::lock_guard lock(package_mutex());
  if (package_libexec_dir().empty() && dir) package_libexec_dir() = dir;
  return true;
}
}  // namespace detail

std::string find_worker_executable(const std::string& explicit_path) {
  const std::string name = "ktune-worker";
  if (!explicit_path.empty()) {
    if (executable(explicit_path)) return explicit_path;
    throw Error(ErrorCode::not_found,
                "worker program " + explicit_path + " does not exist or is not executable");
  }
  std::vector<std::string> tried;
  if (const char* env = std::getenv("KTUNE_WORKER"); env && *env) {
    if (executable(env)) return env;
    throw Error(ErrorCode::not_found, std::string("KTUNE_WORKER=") + env +
                                          " does not name an executable ktune-worker");
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto dir = self.parent_path();
    for (const auto& candidate : {dir / name, dir.parent_path() / name,
                                  dir.parent_path() / "libexec" / name}) {
      tried.push_back(candidate.string());
      if (executable(candidate.string())) return candidate.string();
    }
  }
  std::string package;
  {
    std::lock_guard lock(package_mutex());
    package = package_libexec_dir();
  }
  if (!package.empty()) {
    const std::string candidate = package + "/" + name;
    tried.push_back(candidate);
    if (executable(candidate)) return candidate;
  }
  std::string installed = std::string(KTUNE_INSTALL_LIBEXECDIR) + "/" + name;
  tried.push_back(installed);
  if (executable(installed)) return installed;
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw Error(ErrorCode::not_found,
              "cannot find the ktune-worker program (set KTUNE_WORKER or RunnerOptions::worker_path; "
              "tried " + list + ")");
}

}  // namespace ktune
