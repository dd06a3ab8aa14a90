// summary_stream (see summary_output.h).
#include "summary_output.h"

#include <sys/stat.h>
#include <unistd.h>

namespace ktune::cli {

std::FILE* summary_stream(const std::string& path) {
  struct stat out {}, named {};
  if (::fstat(STDOUT_FILENO, &out) == 0 && ::stat(path.c_str(), &named) == 0 &&
      out.st_dev == named.st_dev && out.st_ino == named.st_ino)
    return stderr;
  return stdout;
}

}  // namespace ktune::cli
