// A small constrained space shared by the SearchSpace tests: 120 Cartesian points (6 x 4 x 5)
// under three expression constraints with Python semantics (chained comparison, %, //).
#pragma once

#include "ktune/space.h"

namespace ktune::test {

/// The small space: a in {1,2,3,4,6,8}, b in {0..3}, c in {-3,-1,0,2,5} (default 0).
inline SearchSpace small_space() {
  return SearchSpace::Builder()
      .param("a", {1, 2, 3, 4, 6, 8})
      .param("b", {0, 1, 2, 3})
      .param("c", {-3, -1, 0, 2, 5}, 0)
      .constraint("8 <= a * (b + 1) <= 24")
      .constraint("b == 0 or a % b == 0")
      .constraint("c // 2 != -1 and not (a == 8 and c > 0)")
      .build();
}

}  // namespace ktune::test
