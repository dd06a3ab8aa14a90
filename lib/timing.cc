// Timing plans (see timing.h).
#include "timing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ktune::timing {

void resolve_l2(TimingPlan& plan, L2Policy requested, std::size_t footprint_bytes,
                std::size_t l2_bytes) {
  plan.buffer_sets = 1;
  std::size_t target = 2 * l2_bytes;
  std::size_t footprint = std::max<std::size_t>(footprint_bytes, 1);
  auto sets_needed = static_cast<int>(std::min<std::size_t>(
      (target + footprint - 1) / footprint + 1, static_cast<std::size_t>(kMaxBufferSets) + 1));
  switch (requested) {
    case L2Policy::none:
    case L2Policy::flush:
      plan.l2 = requested;
      return;
    case L2Policy::rotate:
      plan.l2 = L2Policy::rotate;
      plan.buffer_sets = std::clamp(sets_needed, 1, kMaxBufferSets);
      return;
    case L2Policy::automatic:
      if (l2_bytes == 0 || footprint >= target) {
        plan.l2 = L2Policy::none;
      } else if (sets_needed <= kMaxBufferSets) {
        plan.l2 = L2Policy::rotate;
        plan.buffer_sets = sets_needed;
      } else {
        plan.l2 = L2Policy::flush;
      }
      return;
  }
}

void plan_repetitions(TimingPlan& plan, const TimingOptions& options, double estimate_ms) {
  // A NaN estimate or option time gives the lower bound: the counts are cast to int, and a
  // NaN (or a value beyond int) cast is undefined.
  auto bounded = [](double x, double lo, double hi) { return std::isnan(x) ? lo : std::clamp(x, lo, hi); };
  const double est = bounded(estimate_ms, 1e-4, std::numeric_limits<double>::max());
  int max_reps = std::max(1, options.max_reps);
  int min_reps = std::clamp(options.min_reps, 1, max_reps);
  double wanted = std::ceil(options.min_time_ms / est);
  const int runs = static_cast<int>(bounded(wanted, min_reps, max_reps));
  plan.runs_per_sample = std::clamp(runs / min_reps, 1, std::max(1, options.runs_per_sample));
  plan.reps = runs / plan.runs_per_sample;
  double warm = std::ceil(options.warmup_ms / est);
  plan.warmup = static_cast<int>(bounded(warm, std::max(0, options.min_warmup),
                                         std::max(static_cast<double>(options.min_warmup), 1000.0)));
  plan.planned_ms = est * (plan.reps * plan.runs_per_sample + plan.warmup);
}

void one_run_per_sample(TimingPlan& plan) {
  plan.reps *= plan.runs_per_sample;
  plan.runs_per_sample = 1;
}

TimingPlan make_plan(const TimingOptions& options, double estimate_ms, std::size_t footprint_bytes,
                     std::size_t l2_bytes) {
  TimingPlan plan;
  resolve_l2(plan, options.l2, footprint_bytes, l2_bytes);
  plan_repetitions(plan, options, estimate_ms);
  return plan;
}

}  // namespace ktune::timing
