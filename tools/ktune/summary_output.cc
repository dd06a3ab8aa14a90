// summary_stream (see summary_output.h).
#include "summary_output.h"

#include <sys/stat.h>
#include <unistd.h>

namespace ktune::cli {

std::FILE* summary_stream(const std::string& path) {
  struct stat out {}, named {}, null {};
  if (::fstat(STDOUT_FILENO, &out) != 0 || ::stat(path.c_str(), &named) != 0) return stdout;
  if (out.st_dev != named.st_dev || out.st_ino != named.st_ino) return stdout;
  // /dev/null holds no data to spoil: a caller who silenced stdout gets silence.
  if (::stat("/dev/null", &null) == 0 && null.st_dev == named.st_dev && null.st_ino == named.st_ino)
    return stdout;
  return stderr;
}

}  // namespace ktune::cli
