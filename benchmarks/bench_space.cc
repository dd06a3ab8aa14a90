// CPU cost of SearchSpace operations on a GEMM-like space of 2.4 * 10^9 Cartesian points with
// eight constraints: index <-> config, validity, random valid configs, neighbourhoods,
// constraint evaluation, and counting the shared T1 spaces.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "expression.h"
#include "ktune/space.h"

namespace {

using ktune::Config;
using ktune::Index;
using ktune::SearchSpace;

/// The benchmark space: tile sizes, warp tiles, thread tiles, pipelining and layout knobs.
const SearchSpace& gemm_like_space() {
  static const SearchSpace space =
      SearchSpace::Builder()
          .param("BM", {16, 32, 64, 128, 256}, 64)
          .param("BN", {16, 32, 64, 128, 256}, 64)
          .param("BK", {8, 16, 32, 64}, 16)
          .param("WM", {16, 32, 64, 128}, 32)
          .param("WN", {16, 32, 64, 128}, 32)
          .param("TM", {1, 2, 4, 8}, 4)
          .param("TN", {1, 2, 4, 8}, 4)
          .param("STAGES", {1, 2, 3, 4})
          .param("VEC", {1, 2, 4, 8})
          .param("SPLIT_K", {1, 2, 4, 8, 16})
          .param("SWIZZLE", {0, 1})
          .param("UNROLL", {0, 1})
          .param("PAD", {0, 4, 8})
          .param("LDG_A", {1, 2, 4, 8})
          .param("LDG_B", {1, 2, 4, 8})
          .param("RASTER", {0, 1, 2})
          .param("DB", {0, 1})
          .constraint("BM % WM == 0 and BN % WN == 0")
          .constraint("32 <= (BM // WM) * (BN // WN) * 32 <= 1024")
          .constraint("WM % TM == 0 and WN % TN == 0")
          .constraint("(WM // TM) * (WN // TN) == 32")
          .constraint("((BM + BN) * (BK + PAD)) * STAGES * 4 <= 48 * 1024")
          .constraint("BK % VEC == 0 and LDG_A <= VEC and LDG_B <= VEC")
          .constraint("SPLIT_K == 1 or BK >= 16")
          .constraint("DB == 0 or STAGES >= 2")
          .build();
  return space;
}

std::vector<Index> random_indices(std::size_t n) {
  std::mt19937_64 rng(12345);
  std::vector<Index> out(n);
  for (auto& i : out) i = rng() % gemm_like_space().size();
  return out;
}

/// Configs at random Cartesian indices, valid or not.
std::vector<Config> cartesian_configs(std::size_t n) {
  std::vector<Config> out;
  for (Index i : random_indices(n)) out.push_back(gemm_like_space().at(i));
  return out;
}

std::vector<Config> random_valid_configs(std::size_t n) {
  std::mt19937_64 rng(777);
  std::vector<Config> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(gemm_like_space().random(rng));
  return out;
}

void BM_At(benchmark::State& state) {
  const auto& space = gemm_like_space();
  const auto indices = random_indices(4096);
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(space.at(indices[k++ & 4095]));
  }
  state.counters["cartesian_points"] = static_cast<double>(space.size());
}
BENCHMARK(BM_At);

void BM_IndexOf(benchmark::State& state) {
  const auto& space = gemm_like_space();
  const auto configs = cartesian_configs(4096);
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(space.index_of(configs[k++ & 4095]));
  }
}
BENCHMARK(BM_IndexOf);

void BM_Valid(benchmark::State& state) {
  const auto& space = gemm_like_space();
  const auto configs = cartesian_configs(4096);
  std::size_t k = 0, accepted = 0;
  for (auto _ : state) {
    accepted += space.valid(configs[k++ & 4095]);
  }
  state.counters["acceptance"] = static_cast<double>(accepted) / static_cast<double>(k);
}
BENCHMARK(BM_Valid);

void BM_Random(benchmark::State& state) {
  const auto& space = gemm_like_space();
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(space.random(rng));
  }
}
BENCHMARK(BM_Random);

void BM_Neighbours(benchmark::State& state) {
  const auto& space = gemm_like_space();
  const auto kind = state.range(0) == 0 ? ktune::Neighbourhood::hamming
                                        : ktune::Neighbourhood::adjacent;
  const auto configs = random_valid_configs(256);
  std::size_t k = 0, found = 0;
  for (auto _ : state) {
    found += space.neighbours(configs[k++ & 255], kind).size();
  }
  state.counters["neighbours"] = static_cast<double>(found) / static_cast<double>(k);
}
BENCHMARK(BM_Neighbours)->Arg(0)->Arg(1)->ArgName("adjacent");

void BM_Encode(benchmark::State& state) {
  const auto& space = gemm_like_space();
  const auto configs = random_valid_configs(256);
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(space.encode(configs[k++ & 255]));
  }
}
BENCHMARK(BM_Encode);

void BM_ExpressionTest(benchmark::State& state) {
  const auto& space = gemm_like_space();
  const auto expression = ktune::Expression::parse(
      "32 <= (BM // WM) * (BN // WN) * 32 <= 1024", *space.names());
  const auto configs = cartesian_configs(4096);
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(expression.test(configs[k++ & 4095].values()));
  }
}
BENCHMARK(BM_ExpressionTest);

void BM_ExpressionParse(benchmark::State& state) {
  const auto& names = *gemm_like_space().names();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        ktune::Expression::parse("((BM + BN) * (BK + PAD)) * STAGES * 4 <= 48 * 1024", names));
  }
}
BENCHMARK(BM_ExpressionParse);

void BM_CountValidGemmLike(benchmark::State& state) {
  const auto& space = gemm_like_space();
  std::uint64_t count = 0;
  for (auto _ : state) {
    count = space.count_valid();
  }
  state.counters["valid_configs"] = static_cast<double>(count);
}
BENCHMARK(BM_CountValidGemmLike)->Unit(benchmark::kMillisecond);

void BM_CountValidT1(benchmark::State& state, const std::string& file) {
  const std::string path = std::string(KTUNE_DATASETS_DIR) + "/" + file;
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("dataset absent: " + path).c_str());
    return;
  }
  const SearchSpace space = SearchSpace::from_t1_file(path);
  std::uint64_t count = 0;
  for (auto _ : state) {
    count = space.count_valid();
  }
  state.counters["valid_configs"] = static_cast<double>(count);
}
BENCHMARK_CAPTURE(BM_CountValidT1, convolution_milo, std::string("convolution_milo.T1.json"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CountValidT1, dedispersion_milo, std::string("dedispersion_milo.T1.json"))
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
