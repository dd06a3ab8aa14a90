// Trial status and launch form names, the summary statistics (median, min, relative spread)
// of samples, and which times a measurement can give.
#include "ktune/trial.h"

#include <chrono>
#include <cmath>

#include "enum_names.h"
#include "stats.h"

namespace ktune {

namespace {
constexpr Status kAllStatuses[] = {Status::ok,           Status::invalid,       Status::compile_error,
                                   Status::launch_error, Status::runtime_error, Status::timeout,
                                   Status::wrong_result};

constexpr LaunchForm kAllLaunchForms[] = {LaunchForm::unknown, LaunchForm::stream, LaunchForm::graph,
                                          LaunchForm::programmatic, LaunchForm::programmatic_graph};

}  // namespace

const char* to_string(LaunchForm launch) {
  switch (launch) {
    case LaunchForm::unknown: return "unknown";
    case LaunchForm::stream: return "stream";
    case LaunchForm::graph: return "graph";
    case LaunchForm::programmatic: return "programmatic";
    case LaunchForm::programmatic_graph: return "programmatic_graph";
  }
  return "unknown";
}

LaunchForm launch_form_from_string(const std::string& text) {
  return detail::enum_from_name(text, kAllLaunchForms, "launch form", to_string);
}

LaunchForm launch_form(bool graph, bool programmatic) {
  if (graph) return programmatic ? LaunchForm::programmatic_graph : LaunchForm::graph;
  return programmatic ? LaunchForm::programmatic : LaunchForm::stream;
}

bool programmatic_form(LaunchForm launch) {
  return launch == LaunchForm::programmatic || launch == LaunchForm::programmatic_graph;
}

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
  return detail::enum_from_name(text, kAllStatuses, "trial status", to_string);
}

std::span<const Status> all_statuses() { return kAllStatuses; }

bool is_possible_time(double ms) { return std::isfinite(ms) && ms > 0; }

bool ok_without_time(const Trial& trial) { return trial.ok() && !is_possible_time(trial.median_ms); }

std::int64_t unix_time_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void summarize_times(Trial& trial) {
  if (trial.times_ms.empty()) return;
  trial.median_ms = stats::median(trial.times_ms);
  trial.min_ms = stats::minimum(trial.times_ms);
  trial.spread = stats::relative_spread(trial.times_ms);
}

}  // namespace ktune
