// Trial status names and the summary statistics (median, min, relative spread) of samples.
#include "ktune/trial.h"

#include <algorithm>
#include <cmath>

#include "ktune/error.h"

namespace ktune {

namespace {
constexpr Status kAllStatuses[] = {Status::ok,           Status::invalid,       Status::compile_error,
                                   Status::launch_error, Status::runtime_error, Status::timeout,
                                   Status::wrong_result};

/// Linear-interpolated quantile of sorted samples, q in [0, 1].
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted[0];
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] * (1 - frac) + sorted[hi] * frac;
}
}  // namespace

const char* to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::invalid: return "invalid";
    case Status::compile_error: return "compile_error";
    case Status::launch_error: return "launch_error";
    case Status::runtime_error: return "runtime_error";
    case Status::timeout: return "timeout";
    case Status::wrong_result: return "wrong_result";
  }
  return "unknown";
}

Status status_from_string(const std::string& text) {
  for (Status s : kAllStatuses)
    if (text == to_string(s)) return s;
  throw Error(ErrorCode::parse_error,
              "unknown trial status \"" + text +
                  "\" (expected ok, invalid, compile_error, launch_error, runtime_error, "
                  "timeout or wrong_result)");
}

void summarize_times(Trial& trial) {
  if (trial.times_ms.empty()) return;
  std::vector<double> sorted = trial.times_ms;
  std::sort(sorted.begin(), sorted.end());
  trial.median_ms = quantile(sorted, 0.5);
  trial.min_ms = sorted.front();
  trial.spread = trial.median_ms > 0
                     ? (quantile(sorted, 0.9) - quantile(sorted, 0.1)) / trial.median_ms
                     : 0.0;
}

}  // namespace ktune
