// Measurer: the one place where configs become Trials. The GPU measurer compiles with the
// Builder and runs candidates in an isolated worker process; the replay measurer answers from
// recorded measurements (Kernel Tuner cache, T4 results, a ktune database) so searchers can
// be tested and benchmarked without a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/space.h"
#include "ktune/trial.h"

namespace ktune {

/// Turns a batch of configs into trials (one per config, same order).
class Measurer {
 public:
  virtual ~Measurer() = default;
  /// Measures a batch; failures are trial statuses, not exceptions.
  virtual std::vector<Trial> measure(const std::vector<Config>& batch) = 0;
};

}  // namespace ktune
