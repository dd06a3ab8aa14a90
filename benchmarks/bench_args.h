// The benchmark programs' shared argument rules: the output path in first place (never an
// option or "--help" taken for a file name) and option values checked against their choices
// before any GPU work, so a typo is named instead of reported as "no CUDA device".
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "ktune/error.h"
#include "ktune/searcher.h"
#include "ktune/space.h"

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

/// An option "--key=value" split at its first '=' into {"--key", "value"}; "--key" alone
/// gives an empty value.
inline std::pair<std::string, std::string> option_parts(const std::string& arg) {
  const auto eq = arg.find('=');
  return {arg.substr(0, eq), eq == std::string::npos ? "" : arg.substr(eq + 1)};
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

/// Throws Error naming `option` and the registered searchers when `name` is not one of them
/// (checked before any GPU work, instead of failing every row of the run later).
inline void check_searcher(const std::string& option, const std::string& name) {
  for (const auto& info : searcher_catalog())
    if (info.name == name) return;
  std::string list;
  for (const auto& info : searcher_catalog()) list += (list.empty() ? "" : ", ") + info.name;
  throw Error(ErrorCode::invalid_argument, option + " takes " + list + ", not " + name);
}

/// Throws Error naming `option`, each of `requested` that is not in `available` and the
/// available ones (a shape list that matches nothing must not shrink the run silently).
inline void check_subset(const std::string& option, const std::vector<std::string>& requested,
                         const std::vector<std::string>& available) {
  std::string missing, list;
  for (const auto& r : requested)
    if (std::find(available.begin(), available.end(), r) == available.end())
      missing += (missing.empty() ? "" : ", ") + r;
  if (missing.empty()) return;
  for (const auto& a : available) list += (list.empty() ? "" : ", ") + a;
  throw Error(ErrorCode::invalid_argument,
              option + ": " + missing + " not in the chosen suite (" +
                  (list.empty() ? std::string("empty") : list) + ")");
}

/// Throws Error(invalid_argument) naming `option` and the override when one of `variants`
/// ("K=V,K=V") is not a list of name=integer items, names a parameter twice, or names one that
/// none of `spaces` (one per template and problem of the run, built for an offline device)
/// has: checked before any GPU work. Whether the values are valid is not judged here: a
/// variant is measured wherever they are. Without spaces (no template of the run takes its
/// selection) there is nothing to check against, and the run itself reports why.
inline void check_variant_names(const std::string& option, const std::vector<std::string>& variants,
                                const std::vector<SearchSpace>& spaces) {
  if (spaces.empty()) return;
  for (const auto& v : variants) {
    auto refuse = [&](const std::string& why) {
      throw Error(ErrorCode::invalid_argument, option + " '" + v + "': " + why);
    };
    std::vector<std::string> seen;
    std::size_t pos = 0;
    while (pos <= v.size()) {
      const std::size_t comma = std::min(v.find(',', pos), v.size());
      const std::string item = v.substr(pos, comma - pos);
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos) refuse("item '" + item + "' is not name=value");
      const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
      char* end = nullptr;
      errno = 0;
      (void)std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE)
        refuse("value '" + value + "' of " + name + " is not an integer");
      if (std::find(seen.begin(), seen.end(), name) != seen.end())
        refuse("parameter '" + name + "' is given twice");
      seen.push_back(name);
      if (std::none_of(spaces.begin(), spaces.end(), [&](const SearchSpace& s) { return s.find(name).has_value(); })) {
        std::string known;
        for (const auto& p : spaces.front().params()) known += (known.empty() ? "" : ", ") + p.name;
        refuse("unknown parameter '" + name + "' (the first template's: " + known + ")");
      }
      pos = comma + 1;
    }
  }
}

/// The exit status of a benchmark run: 1 (after saying so on stderr) when any of its rows
/// failed, `failure` saying what a failed row is and where it shows, or when it measured no
/// row at all, so that a script running it sees the failure; the JSON keeps every row either
/// way.
inline int exit_status(const char* program, std::size_t failed_rows, std::size_t rows,
                       const char* failure) {
  if (failed_rows == 0 && rows > 0) return 0;
  if (rows == 0)
    std::fprintf(stderr, "%s: no rows measured\n", program);
  else
    std::fprintf(stderr, "%s: %zu of %zu rows failed: %s\n", program, failed_rows, rows, failure);
  return 1;
}

}  // namespace ktune::bench
