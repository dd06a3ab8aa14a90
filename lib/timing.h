// Timing plans: how many warm-up and timed repetitions a candidate gets from an estimate of its
// run time, and how the L2 cache is kept cold between repetitions (flush, rotation over copies
// of the buffers, or nothing when the buffers are much larger than L2). Pure arithmetic, so it
// is tested without a GPU; the worker executes the plan with CUDA events.
#pragma once

#include <cstddef>

#include "ktune/measure.h"

namespace ktune::timing {

/// What the worker does for one candidate.
struct TimingPlan {
  int warmup = 2;             ///< untimed runs
  int reps = 10;              ///< timed samples
  int runs_per_sample = 1;    ///< back-to-back runs in each timed sample (resolved)
  L2Policy l2 = L2Policy::none;  ///< resolved policy (never automatic)
  int buffer_sets = 1;        ///< copies of the workload buffers rotated through (rotate)
  double planned_ms = 0;      ///< expected GPU time of warm-up + timed runs
};

/// Largest number of buffer copies rotation may use before the plan falls back to flushing.
constexpr int kMaxBufferSets = 64;

/// Resolves the L2 policy and the number of buffer sets for buffers of `footprint_bytes` on a
/// GPU with `l2_bytes` of L2 (automatic: nothing when footprint >= 2*L2, rotation when at most
/// kMaxBufferSets copies reach 2*L2, else flush).
void resolve_l2(TimingPlan& plan, L2Policy requested, std::size_t footprint_bytes,
                std::size_t l2_bytes);

/// Repetition counts from an estimated run time `estimate_ms` (> 0) of one run: the timed runs
/// wanted (min_time_ms over the estimate, within [min_reps, max_reps]) grouped into samples of
/// up to options.runs_per_sample runs, keeping at least min_reps samples.
void plan_repetitions(TimingPlan& plan, const TimingOptions& options, double estimate_ms);

/// The same timed runs, each a sample of its own (for loops with work between runs: an L2
/// flush or a restore of in-place buffers, which a sample's events must not include).
void one_run_per_sample(TimingPlan& plan);

/// Resolves everything at once.
TimingPlan make_plan(const TimingOptions& options, double estimate_ms,
                     std::size_t footprint_bytes, std::size_t l2_bytes);

}  // namespace ktune::timing
