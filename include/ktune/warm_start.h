// Warm start from a tuning log: the configs that won on the nearest shapes already tuned for
// a template on a device, as first candidates of a new problem's search (a neighbour's winner
// is often close to the new optimum, and is what a Dispatcher would deploy without tuning).
#pragma once

#include <cstddef>
#include <vector>

#include "ktune/device.h"
#include "ktune/log.h"
#include "ktune/space.h"
#include "ktune/template.h"

namespace ktune {

/// How many of the nearest tuned problems nearest_shape_configs asks per config wanted.
inline constexpr std::size_t kNeighboursAskedPerConfig = 8;

/// Up to `count` configs: the best config of each other problem of `tmpl` tuned on `device` in
/// `log`, nearest first (shape_distance as the Dispatcher measures it: same operator,
/// dimension names and attributes; ties by problem key). A neighbour's best is judged by
/// typical trials, `tmpl`'s current source first (TuningLog::best), among its configs that
/// are valid in `space` and that `tmpl` can implement for `problem` (parameters a record lacks
/// at their defaults); a neighbour without one, or whose config is listed already, is passed
/// over. Only the kNeighboursAskedPerConfig * `count` nearest problems are asked, so fewer
/// than `count` configs come back when their winners coincide. Empty when the log holds no
/// comparable problem. Neighbours are ranked by their trials timed the way the new run times
/// (`programmatic_launch`, trials_ranked_for_launch).
std::vector<Config> nearest_shape_configs(const TuningLog& log, const KernelTemplate& tmpl,
                                          const Problem& problem, const Device& device,
                                          const SearchSpace& space, std::size_t count,
                                          bool programmatic_launch = false);

}  // namespace ktune
