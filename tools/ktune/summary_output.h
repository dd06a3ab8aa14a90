// Where a command's one-line summary of a file it wrote goes: never into the data when the file
// is standard output's own (/dev/stdout, /dev/fd/1 or the file stdout is redirected to).
#pragma once

#include <cstdio>
#include <string>

namespace ktune::cli {

/// stderr when `path` names the file standard output writes to, else stdout. Ask before the
/// file is written (an atomic replacement gives the path a new file).
std::FILE* summary_stream(const std::string& path);

}  // namespace ktune::cli
