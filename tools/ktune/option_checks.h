// Validators of numeric command-line options with short messages naming the value: counts
// that must be whole numbers in a range (so "-1" is not read as 2^64 - 1) and times that must
// be finite (so "nan" is not read as "no limit").
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace ktune::cli {

/// Most trials a budget or an early stop may name (a run of 10^9 trials is years of GPU time).
constexpr std::int64_t kMaxTrials = 1000000000;
/// Most parallel compile jobs or helper processes.
constexpr std::int64_t kMaxJobs = 4096;

/// A whole number in [lo, hi]: rejects "-1", "2^64", "1.5" and "abc".
CLI::Validator count_in(std::int64_t lo, std::int64_t hi);
/// A seed: a whole number in [0, 2^63 - 1] (so "-1" is not read as 2^64 - 1, and a run's
/// seed + repeat never wraps).
CLI::Validator seed_value();
/// A name given on purpose: not empty (an empty value would silently mean "not given") and
/// without control characters (a newline would split every table that shows it).
CLI::Validator given_name();
/// A finite number >= 0: rejects "-1", "nan" and "inf".
CLI::Validator finite_non_negative();
/// A finite number > 0: rejects "0", "-1", "nan" and "inf".
CLI::Validator finite_positive();

}  // namespace ktune::cli
