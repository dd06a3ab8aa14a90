// The folder of a file about to be created (see folder_check.h).
#include "folder_check.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ktune::detail {

std::optional<std::string> folder_problem(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  const fs::path folder = parent.empty() ? fs::path(".") : parent;
  // Each step as the system resolves it: "missing/.." is unreachable, though it reads as ".".
  fs::path reached;
  for (const fs::path& part : folder) {
    reached /= part;
    std::error_code ec;
    const fs::file_status status = fs::status(reached, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)  // a folder on the way may not be searched
      return std::string("folder '").append(reached.string()).append("' cannot be reached: ").append(ec.message());
    if (!fs::exists(status)) return std::string("folder '").append(reached.string()).append("' does not exist");
    if (!fs::is_directory(status)) return std::string("'").append(reached.string()).append("' is not a folder");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    const std::string reason = std::strerror(errno);
    return std::string("folder '").append(folder.string()).append("' refuses that: ").append(reason);
  }
  return std::nullopt;
}

}  // namespace ktune::detail
