// Log-scale shape distance between comparable problems (see shape_distance.h).
#include "shape_distance.h"

#include <algorithm>
#include <cmath>

namespace ktune {

std::optional<double> shape_distance(const Problem& a, const Problem& b) {
  if (a.op != b.op || a.attrs != b.attrs || a.dims.size() != b.dims.size()) return std::nullopt;
  double sum = 0;
  for (std::size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].first != b.dims[i].first) return std::nullopt;
    double x = std::log2(static_cast<double>(std::max<std::int64_t>(1, a.dims[i].second)));
    double y = std::log2(static_cast<double>(std::max<std::int64_t>(1, b.dims[i].second)));
    sum += (x - y) * (x - y);
  }
  // Rounded to 1e-9: equal ratios (log2 of 2x up and of 2x down) compare equal despite floating
  // point, so that the dispatcher's and the warm start's ties go to the problem key.
  return std::round(std::sqrt(sum) * 1e9) / 1e9;
}

}  // namespace ktune
