// Writing a file whole or not at all: the content goes to a temporary file beside the target,
// which is renamed over it only when every byte was written, so an interrupted or failed write
// leaves the previous version (or nothing), never a truncated file.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ktune::detail {

/// Calls `write` on a stream into a new temporary file beside `path` (its own, hidden:
/// `.<file name>.<process>.<counter>.tmp`, so concurrent writers of one path never mix their
/// bytes, and no file of the user's is touched) and renames
/// it to `path`, keeping the permissions of the file it replaces; throws Error(io_error) naming
/// `path` and why (a missing folder, a folder in the way, the system's reason) when it cannot
/// be created, written or moved (the temporary file is removed then). A symbolic link is
/// followed (its target gets the content, the link stays); an existing file that is not a
/// regular one (a FIFO, /dev/stdout) is written to directly. With NonRegularTarget::replace
/// (files the library owns, such as cache entries, where a FIFO or a link is damage or a trap)
/// whatever sits at `path`, link or FIFO, is replaced by the new regular file instead.
enum class NonRegularTarget { write_through, replace };
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           NonRegularTarget non_regular = NonRegularTarget::write_through);

}  // namespace ktune::detail
