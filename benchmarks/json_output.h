// How the benchmark programs write their result files: the parent folders created, then the
// document written whole or not at all (detail::write_file_atomically: a crash or a full disk
// mid-write leaves the previous version, not half a file), and an error naming the path when
// any step fails, instead of a "wrote" line over a file that was never written.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>
#include <string>
#include <system_error>

#include "atomic_file.h"
#include "ktune/error.h"

namespace ktune::bench {

/// Writes `doc` (indented JSON and a newline) to `path`, replacing it atomically; throws
/// Error(io_error), naming the path, when the folder, the write or the rename fails.
inline void write_json(const std::string& path, const nlohmann::json& doc) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw Error(ErrorCode::io_error,
                  "cannot create the folder of '" + path + "': " + ec.message());
  }
  detail::write_file_atomically(path, [&](std::ostream& out) { out << doc.dump(2) << "\n"; });
}

}  // namespace ktune::bench
