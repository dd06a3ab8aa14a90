// CPU tests of the reference cache that lets a restarted worker skip a costly host reference:
// a stored seed reads back byte for byte, a missing seed or a size mismatch is a miss, and the
// folder disappears with its measurer.
#include <catch2/catch.hpp>

#include <filesystem>

#include "worker_reference_cache.h"

using namespace ktune;
using namespace ktune::worker;

namespace {
std::vector<HostBuffer> buffers(std::size_t n, std::uint8_t fill) {
  std::vector<HostBuffer> out(2);
  for (auto& b : out) {
    b.spec = BufferSpec{"b", DType::f32, n, Role::input, 0};
    b.bytes.assign(4 * n, fill);
  }
  return out;
}
}  // namespace

TEST_CASE("reference cache: seed data round-trips and mismatches are misses", "[worker]") {
  std::string dir = make_reference_cache_dir();
  REQUIRE(std::filesystem::is_directory(dir));
  ReferenceCache cache(dir);
  auto initial = buffers(100, 1), expected = buffers(100, 2);
  initial[1].bytes[7] = 9;
  cache.store(42, initial, expected);

  auto in2 = buffers(100, 0), ex2 = buffers(100, 0);
  REQUIRE(cache.load(42, in2, ex2));
  CHECK(in2[1].bytes == initial[1].bytes);
  CHECK(ex2[0].bytes == expected[0].bytes);

  auto other_in = buffers(100, 0), other_ex = buffers(100, 0);
  CHECK_FALSE(cache.load(43, other_in, other_ex));
  auto small_in = buffers(50, 0), small_ex = buffers(50, 0);
  CHECK_FALSE(cache.load(42, small_in, small_ex));
  CHECK_FALSE(ReferenceCache().load(42, in2, ex2));

  remove_reference_cache_dir(dir);
  CHECK_FALSE(std::filesystem::exists(dir));
}
