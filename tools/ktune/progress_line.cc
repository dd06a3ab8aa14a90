// Progress display of `ktune tune` (see progress_line.h).
#include "progress_line.h"

#include <unistd.h>

#include <cmath>

namespace ktune::cli {

std::string format_duration(double seconds) {
  if (seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return buf;
}

std::string format_time_ms(double ms) {
  char buf[32];
  if (ms <= 0)
    return "-";
  else if (ms < 1)
    std::snprintf(buf, sizeof buf, "%.1f us", ms * 1e3);
  else if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1e3);
  return buf;
}

std::string progress_text(const TuneProgress& p) {
  // done / budget; a run resumed past its budget says so instead of "3000/100".
  std::string count = p.budget == 0          ? std::to_string(p.done) + "/?"
                      : p.done <= p.budget ? std::to_string(p.done) + "/" + std::to_string(p.budget)
                                           : std::to_string(p.done) + " (budget " + std::to_string(p.budget) + ")";
  std::string text = count + " trials, " +
                     format_duration(p.elapsed_s) + " elapsed, ETA " + format_duration(p.eta_s) +
                     ", " + std::to_string(p.failures) + " failed, best " +
                     format_time_ms(p.best_ms);
  if (p.speedup > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%.2fx default)", p.speedup);
    text += buf;
  }
  return text;
}

ProgressLine::ProgressLine(std::string label, std::FILE* stream, int live)
    : label_(std::move(label)),
      stream_(stream),
      live_(live < 0 ? isatty(fileno(stream)) != 0 : live != 0) {}

void ProgressLine::update(const TuneProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  const std::string text = label_ + ": " + progress_text(p);
  last_text_ = text;
  if (live_) {
    std::fprintf(stream_, "\r\033[K%s", text.c_str());
    std::fflush(stream_);
    open_line_ = true;
    return;
  }
  const bool improved = p.best_ms > 0 && (last_best_ == 0 || p.best_ms < last_best_);
  const bool due = now - last_print_ >= std::chrono::seconds(5);
  const bool finished = p.budget > 0 && p.done >= p.budget && p.done != last_done_;
  if (!improved && !due && !finished) return;
  last_done_ = p.done;
  last_best_ = p.best_ms > 0 ? p.best_ms : last_best_;
  last_print_ = now;
  printed_text_ = text;
  std::fprintf(stream_, "%s\n", text.c_str());
  std::fflush(stream_);
}

void ProgressLine::finish() {
  // Plain lines end with the final state, whatever stopped the task (time, patience,
  // exhaustion, Ctrl-C), not only a spent trial budget.
  if (!live_ && !last_text_.empty() && last_text_ != printed_text_) {
    std::fprintf(stream_, "%s\n", last_text_.c_str());
    printed_text_ = last_text_;
  }
  if (live_ && open_line_) std::fprintf(stream_, "\n");
  open_line_ = false;
  std::fflush(stream_);
}

}  // namespace ktune::cli
