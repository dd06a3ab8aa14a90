// Distance between two problem shapes, used by the Dispatcher to pick the nearest tuned shape:
// Euclidean distance over log2 of every shape dimension. Problems are comparable only when
// they have the same operator, the same dimension names in the same order and exactly the
// same attributes (dtype, layout, flags).
#pragma once

#include <optional>

#include "ktune/problem.h"

namespace ktune {

/// sqrt(sum_i (log2 a_i - log2 b_i)^2) rounded to 1e-9 (so that equal ratios up and down
/// tie exactly), or nullopt when the problems are not comparable. Dimensions below 1 count
/// as 1. Zero exactly when the shapes are equal.
std::optional<double> shape_distance(const Problem& a, const Problem& b);

}  // namespace ktune
