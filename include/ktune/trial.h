// Trial: the outcome of measuring one configuration. Failure is a status value with a message,
// never an exception: failed trials are data that searchers learn from and the log keeps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ktune/config.h"

namespace ktune {

/// How a trial ended.
enum class Status {
  ok,             ///< verified correct and timed
  invalid,        ///< rejected before compiling (constraint, can_implement, launch limits)
  compile_error,  ///< NVRTC failed
  launch_error,   ///< the launch itself failed (too many resources, bad geometry)
  runtime_error,  ///< the kernel faulted (illegal address, trap, worker crash)
  timeout,        ///< the kernel did not finish within the trial's time limit
  wrong_result,   ///< output differs from the reference (incl. NaN, unwritten, out of bounds)
};

/// Stable lower-case name ("compile_error").
const char* to_string(Status status);
/// Parses a status name; throws Error(parse_error) naming the text.
Status status_from_string(const std::string& text);
/// Every status, in declaration order.
std::span<const Status> all_statuses();

/// How a trial's timed runs were launched: what its times are the times of. A deployed
/// Dispatcher launches on a stream, programmatically when DispatcherOptions::programmatic_launch
/// is on; graphs are what a program that replays its kernels through CUDA graphs sees.
enum class LaunchForm {
  unknown,             ///< not timed, or measured before ktune recorded it (or imported)
  stream,              ///< one after another on a stream
  graph,               ///< each sample's runs replayed as one CUDA graph
  programmatic,        ///< on a stream, with programmatic stream serialization
  programmatic_graph,  ///< as one CUDA graph of programmatically serialized launches
};

/// Stable lower-case name ("programmatic_graph").
const char* to_string(LaunchForm launch);
/// Parses a launch form name; throws Error(parse_error) naming the text and the names expected.
LaunchForm launch_form_from_string(const std::string& text);
/// The form a timing made of `graph` and `programmatic` launches is.
LaunchForm launch_form(bool graph, bool programmatic);
/// Whether `launch` is one of the programmatic forms (programmatic, programmatic_graph). A
/// task's configs are ranked by trials of one side only (trials_ranked_for_launch in
/// ktune/log.h); unknown counts as a plain launch, as the trials ktune measured before it
/// recorded launch forms and imported measurements were.
bool programmatic_form(LaunchForm launch);

/// Resources of a compiled kernel, from ptxas verbose output; -1 when unknown.
struct Resources {
  int registers = -1;       ///< registers per thread
  int shared_bytes = -1;    ///< static shared memory per block
  int spill_stores = -1;    ///< bytes of spill stores
  int spill_loads = -1;     ///< bytes of spill loads
  int stack_bytes = -1;     ///< stack frame per thread
  int const_bytes = -1;     ///< constant bank bytes (cmem[0])
};

/// One measured (or failed) configuration.
struct Trial {
  Config config;                   ///< what was measured
  Status status = Status::invalid; ///< outcome
  std::string message;             ///< compiler log excerpt, CUDA error, signal, error norm...
  std::vector<double> times_ms;    ///< every timed sample, in order
  double median_ms = 0;            ///< median of times_ms (the objective)
  double min_ms = 0;               ///< minimum sample
  double spread = 0;               ///< relative spread: (p90 - p10) / median
  double error_norm = -1;          ///< ||out - ref|| / ||ref||, -1 when not checked
  Resources resources;             ///< of the (first) kernel
  double compile_ms = 0;           ///< NVRTC time (0 on a cache hit)
  double wall_ms = 0;              ///< wall time spent on the trial (compile excluded)
  int sm_clock_mhz = -1;           ///< SM clock during timing (NVML), -1 unknown
  int temperature_c = -1;          ///< GPU temperature (NVML), -1 unknown
  std::int64_t timestamp_us = 0;   ///< Unix time in microseconds when the trial ended
  LaunchForm launch = LaunchForm::unknown;  ///< how the timed runs were launched

  /// True when the trial has a usable time.
  bool ok() const { return status == Status::ok; }
};

/// Fills median_ms, min_ms and spread from times_ms (no-op when empty).
void summarize_times(Trial& trial);

/// The current Unix time in microseconds, as Trial::timestamp_us records it.
std::int64_t unix_time_us();

/// True for a time (ms) a measurement can give: finite and above 0. An ok trial's median must
/// be one; anything else would become the best config.
bool is_possible_time(double ms);
/// True for an ok trial whose median is not a possible time (a log row edited outside ktune,
/// a misbehaving measurer): it never counts as a result, and is read as a failure.
bool ok_without_time(const Trial& trial);

}  // namespace ktune
