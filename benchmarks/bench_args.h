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

/// Throws Error(invalid_argument) when a tuning would never end: `--budget=0` gives the tuner
/// no trial limit, so without a wall-time cap (`seconds` 0) it would measure every config of
/// each shape's space. `cap_option` names the program's time-cap option, if it has one.
inline void check_budget_ends(std::size_t budget, double seconds, const std::string& cap_option = "") {
  if (budget > 0 || seconds > 0) return;
  throw Error(ErrorCode::invalid_argument,
              "--budget=0 sets no trial limit" +
                  (cap_option.empty() ? std::string() : " and no " + cap_option + " cap is set") +
                  ", so every config of each shape's space would be measured; give --budget=N "
                  "(--budget=1 measures the default config alone)" +
                  (cap_option.empty() ? std::string() : " or " + cap_option + "=S"));
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
