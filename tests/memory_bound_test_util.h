// Test helpers shared by the memory-bound template tests (elementwise, reduction, layernorm):
// NVRTC compile checks of a sample of a space, host buffers run through a workload's
// reference, config construction by overrides, and the [gpu] correctness sweep through the
// GpuMeasurer (poisoned outputs, canaries, CPU reference) with short timing.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "host_dtype.h"
#include "ktune/build.h"
#include "ktune/device.h"
#include "ktune/measure.h"
#include "ktune/template.h"

namespace ktune::test {

/// `base` with some parameters replaced (every name must exist in the space).
inline Config with(const SearchSpace& space, const Config& base,
                   const std::map<std::string, Value>& overrides) {
  std::map<std::string, Value> values;
  for (std::size_t i = 0; i < base.size(); ++i) values[base.names()[i]] = base.values()[i];
  for (const auto& [name, value] : overrides) {
    REQUIRE(values.count(name) == 1);
    values[name] = value;
  }
  return space.make(values);
}

/// Compiles the default config and `random_count` random valid configs of the problem's
/// space for the offline H200 (sm_90): all must compile with registers reported; the default
/// must not spill.
inline void expect_space_compiles(const KernelTemplate& tmpl, const Problem& problem,
                                  int random_count, std::uint64_t seed,
                                  const Device& device = Device::h200()) {
  static Builder builder(BuilderOptions{2, "", {}});
  const SearchSpace space = tmpl.space(problem, device);
  std::vector<Config> configs = {space.default_config()};
  std::mt19937_64 rng(seed);
  for (int i = 0; i < random_count; ++i) configs.push_back(space.random(rng));
  for (const Config& c : configs) {
    INFO(problem.key() << " " << c.str());
    REQUIRE(space.valid(c));
    REQUIRE(tmpl.can_implement(problem, c));
  }
  std::shared_ptr<const KernelTemplate> borrowed(&tmpl, [](const KernelTemplate*) {});
  const auto results = builder.build_all(borrowed, problem, configs, device);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    INFO(problem.key() << " " << configs[i].str() << "\n" << results[i].log);
    REQUIRE(results[i].ok);
    REQUIRE(results[i].resources.registers > 0);
    if (i == 0) CHECK(results[i].resources.spill_stores == 0);
  }
}

/// Host buffers of a problem's workload, zeroed, in workload order.
inline std::vector<HostBuffer> host_buffers(const Workload& workload) {
  std::vector<HostBuffer> buffers;
  for (const BufferSpec& spec : workload.buffers()) buffers.push_back(make_host_buffer(spec));
  return buffers;
}

/// Writes `values` into a buffer (rounded to its dtype).
inline void set_values(HostBuffer& buffer, const std::vector<double>& values) {
  REQUIRE(values.size() == buffer.spec.elements);
  for (std::size_t i = 0; i < values.size(); ++i) write_element(buffer, i, values[i]);
}

/// All elements of a buffer as doubles.
inline std::vector<double> values_of(const HostBuffer& buffer) {
  std::vector<double> out;
  for (std::size_t i = 0; i < buffer.spec.elements; ++i) out.push_back(read_element(buffer, i));
  return out;
}

/// Measures `configs` of a problem on GPU 0 with short timing; every trial must be ok
/// (verified against the CPU reference with poisoned outputs and canaries). The inputs come
/// from `seed`; 0 (the default) draws a fresh one, which a failure prints.
inline void expect_all_correct(const std::string& template_name, const Problem& problem,
                               const std::vector<Config>& configs, std::uint64_t seed = 0) {
  if (seed == 0) {
    std::random_device fresh;
    seed = ((std::uint64_t{fresh()} << 32) | fresh()) | 1;
  }
  INFO("input seed " << seed);
  static Builder builder(BuilderOptions{0, "", {}});
  const auto tmpl = find_template(template_name);
  RunnerOptions options;
  options.timing.min_time_ms = 1;
  options.timing.min_reps = 2;
  options.timing.warmup_ms = 0;
  options.timing.min_warmup = 1;
  options.seed = seed;
  options.seed_pool = 1;
  GpuMeasurer measurer(tmpl, problem, query_device(0), builder, options);
  const auto trials = measurer.measure(configs);
  REQUIRE(trials.size() == configs.size());
  for (const Trial& t : trials) {
    INFO(problem.key() << " " << t.config.str() << ": " << to_string(t.status) << " "
                       << t.message);
    CHECK(t.ok());
  }
}

/// Partial assignments of parameters a test promises to cover: sample_configs() counts, per
/// assignment, the problems it found a config for, and the test requires each found at least
/// once over its problems (a promise that no problem can keep fails instead of being dropped).
struct Cover {
  std::vector<std::map<std::string, Value>> wanted;  ///< the assignments
  std::vector<int> found;                            ///< problems each was found for

  Cover(std::initializer_list<std::map<std::string, Value>> assignments)
      : wanted(assignments), found(wanted.size(), 0) {}
  explicit Cover(std::vector<std::map<std::string, Value>> assignments)
      : wanted(std::move(assignments)), found(wanted.size(), 0) {}

  /// Fails the test for every assignment no problem had a config for.
  void require_all_found() const {
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      std::string text;
      for (const auto& [name, value] : wanted[i])
        text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
      INFO("cover " << text);
      CHECK(found[i] > 0);
    }
  }
};

/// The default config plus `count` distinct random valid configs of the problem's space on
/// GPU 0, plus for each partial assignment in `cover` one random valid config matching it
/// (when one is found; `tally`, when given, counts the finds per assignment); every config
/// returned is one the template can implement.
inline std::vector<Config> sample_configs(
    const KernelTemplate& tmpl, const Problem& problem, int count, std::uint64_t seed,
    const std::vector<std::map<std::string, Value>>& cover = {}, std::vector<int>* tally = nullptr) {
  const SearchSpace space = tmpl.space(problem, query_device(0));
  std::vector<Config> configs = {space.default_config()};
  std::mt19937_64 rng(seed);
  auto add = [&](const Config& c) {
    if (!tmpl.can_implement(problem, c)) return false;
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
    return true;
  };
  for (int tries = 0; tries < 20 * count && static_cast<int>(configs.size()) <= count; ++tries)
    add(space.random(rng));
  for (std::size_t w = 0; w < cover.size(); ++w) {
    for (int tries = 0; tries < 3000; ++tries) {
      const Config c = space.random(rng);
      bool match = true;
      for (const auto& [name, value] : cover[w]) match = match && c[name] == value;
      if (match && add(c)) {
        if (tally) ++(*tally)[w];
        break;
      }
    }
  }
  return configs;
}

/// sample_configs() with `cover`'s assignments, counted in it.
inline std::vector<Config> sample_configs(const KernelTemplate& tmpl, const Problem& problem,
                                          int count, std::uint64_t seed, Cover& cover) {
  return sample_configs(tmpl, problem, count, seed, cover.wanted, &cover.found);
}

}  // namespace ktune::test
