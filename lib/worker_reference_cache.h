// A per-measurer folder where the worker keeps each seed's host inputs and expected outputs
// when the reference was costly, so a worker restarted after a crashing candidate reads them
// back instead of recomputing (a large GEMM reference takes minutes on the host). The folder
// lives as long as the GpuMeasurer that made it, so a changed template never sees stale data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ktune/template.h"

namespace ktune::worker {

/// Reads and writes seed data files in one folder ("" disables the cache).
class ReferenceCache {
 public:
  /// A cache in `dir` ("" = disabled).
  explicit ReferenceCache(std::string dir = "") : dir_(std::move(dir)) {}
  /// Fills `initial` and `expected` (already sized from their specs) from the file of `seed`;
  /// false when absent or not matching the sizes.
  bool load(std::uint64_t seed, std::vector<HostBuffer>& initial,
            std::vector<HostBuffer>& expected) const;
  /// Writes the file of `seed` (atomically: temporary file, then rename); errors are ignored.
  void store(std::uint64_t seed, const std::vector<HostBuffer>& initial,
             const std::vector<HostBuffer>& expected) const;
  /// True when a folder is set.
  bool enabled() const { return !dir_.empty(); }

 private:
  std::string path(std::uint64_t seed) const;
  std::string dir_;
};

/// A fresh private folder under $TMPDIR (or /tmp) for one measurer; throws Error(io_error).
std::string make_reference_cache_dir();
/// Removes such a folder and its files (errors ignored).
void remove_reference_cache_dir(const std::string& dir);

}  // namespace ktune::worker
