// Writing a file whole or not at all: the content goes to a temporary file beside the target,
// which is renamed over it only when every byte was written, so an interrupted or failed write
// leaves the previous version (or nothing), never a truncated file.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ktune::detail {

/// Whose file an atomic write replaces: it decides what happens to a link or a FIFO at the
/// path and how the temporary file is named.
enum class AtomicTarget {
  /// A file the user named (an export, a report): a symbolic link is followed (its target
  /// gets the content, the link stays), an existing file that is not a regular one (a FIFO, a
  /// device) is written to directly, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N
  /// through the descriptor the process holds (a redirect or append stays as it was set up),
  /// and the temporary is `<path>.tmp-<process>-<n>`, in plain sight should a killed write
  /// leave it.
  user_file,
  /// A file the library owns (a cache entry), where a link or a FIFO is damage or a trap: it
  /// is replaced, never followed or written through, and the temporary is hidden,
  /// `.<file name>.<process>.<n>.tmp`, for the owner to sweep.
  library_file,
};

/// The file a write of a user's file to `path` goes to: `path` itself, or where its chain of
/// symbolic links leads, existing or not (so that the link stays a link and its target gets
/// the content); throws Error(io_error) when the links loop.
std::string link_target(const std::string& path);

/// Calls `write` on a stream into a new temporary file beside `path` (its own, so concurrent
/// writers of one path never mix their bytes, and no file of the user's is touched) and renames
/// it to `path`, keeping the permissions of the file it replaces; throws Error(io_error) naming
/// `path` and why (a missing folder, a folder in the way, the system's reason) when it cannot
/// be created, written or moved (the temporary file is removed then). `target` says how links,
/// FIFOs and the temporary's name are handled.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           AtomicTarget target = AtomicTarget::user_file);

}  // namespace ktune::detail
