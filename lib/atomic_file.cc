// Whole-or-nothing file writes (see atomic_file.h).
#include "atomic_file.h"

#include <cstdio>
#include <fstream>

#include "ktune/error.h"

namespace ktune::detail {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw Error(ErrorCode::io_error, "cannot open '" + tmp + "' for writing");
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw Error(ErrorCode::io_error, "writing '" + tmp + "' failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(ErrorCode::io_error, "cannot move '" + tmp + "' to '" + path + "'");
  }
}

}  // namespace ktune::detail
