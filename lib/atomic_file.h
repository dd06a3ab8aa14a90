// Writing a file whole or not at all: the content goes to a temporary file beside the target,
// which is renamed over it only when every byte was written, so an interrupted or failed write
// leaves the previous version (or nothing), never a truncated file.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ktune::detail {

/// Calls `write` on a stream into `path`.tmp and renames that file to `path`; throws
/// Error(io_error) naming the file when it cannot be opened, written or moved (the temporary
/// file is removed then). The folder of `path` must exist.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace ktune::detail
