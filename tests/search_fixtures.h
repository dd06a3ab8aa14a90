// Helpers shared by the searcher tests: an ok trial of a given time, and a one-parameter
// space x = 0 .. n-1.
#pragma once

#include <vector>

#include "ktune/searcher.h"

namespace ktune::test {

/// An ok trial of `c` taking `ms` milliseconds (one sample).
inline Trial timed(const Config& c, double ms) {
  Trial t;
  t.config = c;
  t.status = Status::ok;
  t.median_ms = ms;
  t.times_ms = {ms};
  return t;
}

/// One parameter x with the values 0 .. n-1 (default 0).
inline SearchSpace line_space(int n) {
  std::vector<Value> xs;
  for (int i = 0; i < n; ++i) xs.push_back(i);
  return SearchSpace::Builder().param("x", xs, 0).build();
}

}  // namespace ktune::test
