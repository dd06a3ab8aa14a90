// How the benchmark programs write their result files: the parent folders created, the
// document written to a temporary file beside the target and renamed over it (a crash or a
// full disk mid-write leaves the previous version, not half a file), and an error naming the
// path when any step fails, instead of a "wrote" line over a file that was never written.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ktune::bench {

/// Writes `doc` (indented JSON and a newline) to `path`, replacing it atomically; throws
/// std::runtime_error naming the path when the folder, the write or the rename fails.
inline void write_json(const std::string& path, const nlohmann::json& doc) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw std::runtime_error("cannot create the folder of '" + path + "': " + ec.message());
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out || !(out << doc.dump(2) << "\n") || !out.flush())
      throw std::runtime_error("cannot write '" + tmp + "'");
  }
  fs::rename(tmp, target, ec);
  if (ec) throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
}

}  // namespace ktune::bench
