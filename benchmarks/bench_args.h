// The benchmark programs' shared argument rules: the output path in first place (never an
// option or "--help" taken for a file name) and option values checked against their choices
// before any GPU work, so a typo is named instead of reported as "no CUDA device".
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ktune/error.h"

namespace ktune::bench {

/// The output path a benchmark takes as its first argument. `-h` / `--help` prints `usage`
/// and exits 0; a missing path, or an option where the path belongs, throws Error carrying
/// `usage` (so that "--help" never becomes a file name).
inline std::string output_argument(int argc, char** argv, const std::string& usage) {
  if (argc >= 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help")) {
    std::printf("%s\n", usage.c_str());
    std::exit(0);
  }
  if (argc < 2 || argv[1][0] == '-') throw Error(ErrorCode::invalid_argument, usage);
  return argv[1];
}

/// Throws Error(invalid_argument) naming `option`, the value and the accepted ones when a value
/// is not one of `allowed` (checked before any GPU work, so a typo is not "no CUDA device").
inline void check_choices(const std::string& option, const std::vector<std::string>& values,
                          const std::vector<std::string>& allowed) {
  for (const auto& v : values)
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw Error(ErrorCode::invalid_argument, option + " takes " + list + ", not " + v);
    }
}

}  // namespace ktune::bench
