// Progress of a tuning run for a person watching: one live, rewritten line on a terminal
// (trials done / budget, elapsed, ETA, failures, best time and its speed-up over the default),
// plain log lines (on improvement and every few seconds) when the output is a file or pipe.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "ktune/tuner.h"

namespace ktune::cli {

/// Formats seconds as "42s", "3m05s" or "1h02m".
std::string format_duration(double seconds);
/// Formats a time in ms with a readable unit ("812 us", "3.41 ms", "1.20 s").
std::string format_time_ms(double ms);
/// The one-line summary of a progress snapshot (no terminal control characters).
std::string progress_text(const TuneProgress& p);

/// Writes progress snapshots of one task to a stream (stderr by default).
class ProgressLine {
 public:
  /// `label` names the task; `live` selects the rewritten line (default: stream is a TTY).
  explicit ProgressLine(std::string label, std::FILE* stream = stderr, int live = -1);
  /// Shows a snapshot (the Tuner's progress callback).
  void update(const TuneProgress& p);
  /// Ends the live line (newline) so that later output starts on a fresh line.
  void finish();

 private:
  std::string label_;
  std::FILE* stream_;
  bool live_;
  bool open_line_ = false;
  double last_best_ = 0;
  std::size_t last_done_ = static_cast<std::size_t>(-1);
  std::chrono::steady_clock::time_point last_print_{};
  std::string last_text_;     // the latest update's line
  std::string printed_text_;  // the latest line printed (plain mode)
};

}  // namespace ktune::cli
