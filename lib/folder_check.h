// Why a file cannot be created in the folder a path names: the folder, or one on the way to
// it, is missing or is no folder, or this process may not write it. Shared by the tuning
// log's open (SQLite's own message gives no reason) and whole-or-nothing writes.
#pragma once

#include <optional>
#include <string>

namespace ktune::detail {

/// Why no file can be created at `path` because of its folder (named as the user wrote it:
/// "folder 'a/b' does not exist", "'a/b' is not a folder", "folder 'a' refuses that:
/// Permission denied"), or nullopt when the folder exists and this process may write in it.
std::optional<std::string> folder_problem(const std::string& path);

}  // namespace ktune::detail
