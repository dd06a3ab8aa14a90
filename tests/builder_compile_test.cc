// Builder compiles: a sample of configs of every registered template to sm_90 cubins with
// resources (no GPU needed), sm_90a targets, f16 headers, and compile errors reported as
// results with the compiler's text (from broken source and from a config value).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <thread>

#include "builtin_templates.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "nvrtc_compile.h"

using namespace ktune;

namespace {

/// A test-only template around an inline source with one parameter BROKEN in {0, 1}.
class InlineTemplate final : public KernelTemplate {
 public:
  explicit InlineTemplate(std::string source) : source_(std::move(source)) {}
  std::string name() const override { return "inline_test"; }
  std::string op() const override { return "inline_test"; }
  std::string description() const override { return "test-only inline source"; }
  const std::string& source() const override { return source_; }
  std::vector<std::string> dim_names() const override { return {"N"}; }
  std::map<std::string, std::vector<std::string>> attr_domains() const override { return {}; }
  Problem example_problem() const override { return Problem{"inline_test", {{"N", 1}}, {}}; }
  SearchSpace space(const Problem&, const Device&) const override {
    return SearchSpace::Builder().param("BROKEN", {0, 1}).build();
  }
  LaunchPlan launch(const Problem&, const Config&, const Device&) const override { return {}; }
  std::unique_ptr<Workload> workload(const Problem&) const override { return nullptr; }

 private:
  std::string source_;
};

/// The default config (when valid and implementable) plus up to `extra` random valid ones.
std::vector<Config> sample_configs(const KernelTemplate& tmpl, const Problem& problem,
                                   const SearchSpace& space, int extra) {
  std::vector<Config> configs;
  Config def = space.default_config();
  if (space.valid(def) && tmpl.can_implement(problem, def)) configs.push_back(def);
  std::mt19937_64 rng(2026);
  for (int attempt = 0; attempt < 20 * extra && static_cast<int>(configs.size()) < extra + 1;
       ++attempt) {
    Config c = space.random(rng);
    if (tmpl.can_implement(problem, c) &&
        std::find(configs.begin(), configs.end(), c) == configs.end())
      configs.push_back(c);
  }
  return configs;
}

}  // namespace

TEST_CASE("every registered template compiles sampled configs to sm_90 cubins", "[builder]") {
  auto templates = all_templates();
  REQUIRE_FALSE(templates.empty());
  CHECK(std::any_of(templates.begin(), templates.end(),
                    [](const auto& t) { return t->name() == "copy"; }));
  Device h200 = Device::h200();
  BuilderOptions options;
  options.threads = 2;
  Builder builder(options);
  for (const auto& tmpl : templates) {
    Problem problem = tmpl->example_problem();
    SearchSpace space = tmpl->space(problem, h200);
    // The "faults" test template breaks on purpose (one MODE is a compile error): only its
    // default, healthy config is expected to compile.
    std::vector<Config> configs = sample_configs(*tmpl, problem, space,
                                                 tmpl->name() == "faults" ? 0 : 3);
    INFO("template " << tmpl->name() << " on " << problem.key());
    REQUIRE(configs.size() >= 1);
    auto results = builder.build_all(tmpl, problem, configs, h200);
    REQUIRE(results.size() == configs.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      const BuildResult& r = results[i];
      INFO("config " << configs[i].str() << "\n" << r.log);
      REQUIRE(r.ok);
      CHECK(r.arch == tmpl->target_arch(h200, configs[i]));
      REQUIRE(r.cubin);
      CHECK(r.cubin->size() > 100);
      CHECK(r.resources.registers > 0);
      CHECK(r.resources.spill_stores >= 0);
      CHECK(r.resources.stack_bytes >= 0);
      CHECK_FALSE(r.kernels.empty());
      CHECK(r.compile_ms > 0);
      CHECK(r.key.size() == 32);
      for (const auto& define : configs[i].defines())
        CHECK(std::find(r.options.begin(), r.options.end(), define) != r.options.end());
    }
  }
}

TEST_CASE("copy compiles for sm_90a and with f16 (CUDA headers found)", "[builder]") {
  auto copy = make_copy_template();
  Builder builder(BuilderOptions{1, "", {}});
  Device sm90a = Device::offline("sm_90a");
  Problem f16 = make_problem(*copy, "1000", {{"dtype", "f16"}});
  Config config = copy->space(f16, sm90a).default_config();
  BuildResult r = builder.build(*copy, f16, config, sm90a);
  INFO(r.log);
  REQUIRE(r.ok);
  CHECK(r.arch == "sm_90a");
  CHECK(std::find(r.options.begin(), r.options.end(), "--gpu-architecture=sm_90a") !=
        r.options.end());
  CHECK(std::find(r.options.begin(), r.options.end(), "-DKT_DTYPE=1") != r.options.end());
  REQUIRE(r.kernels.count("ktune_copy") == 1);
  CHECK(r.resources.registers == r.kernels.at("ktune_copy").registers);
  CHECK(r.log.find("Compiling entry function 'ktune_copy' for 'sm_90a'") != std::string::npos);
}

TEST_CASE("broken source is a failed result with the compiler's error, not an exception",
          "[builder]") {
  auto broken = std::make_shared<InlineTemplate>(
      "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = undefined_name; }\n");
  Problem problem = broken->example_problem();
  Config config = broken->space(problem, Device::h200()).default_config();
  Builder builder(BuilderOptions{1, "", {}});
  BuildResult r;
  REQUIRE_NOTHROW(r = builder.build(*broken, problem, config, Device::h200()));
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.cubin);
  CHECK(r.log.find("undefined_name") != std::string::npos);
  CHECK(r.log.find("error") != std::string::npos);
  CHECK(r.resources.registers == -1);
  CHECK(builder.stats().failures == 1);
  // A repeated request answers from memory with the same failure, without recompiling.
  BuildResult again = builder.build(*broken, problem, config, Device::h200());
  CHECK_FALSE(again.ok);
  CHECK(again.cache == BuildResult::Cache::memory);
  CHECK(builder.stats().compiles == 1);
}

TEST_CASE("a config value that breaks compilation fails only that config", "[builder]") {
  auto tmpl = std::make_shared<InlineTemplate>(
      "#ifndef BROKEN\n#define BROKEN 0\n#endif\n"
      "#if BROKEN\n#error \"BROKEN config rejected\"\n#endif\n"
      "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 2.0f * y[threadIdx.x]; }\n");
  Problem problem = tmpl->example_problem();
  SearchSpace space = tmpl->space(problem, Device::h200());
  Builder builder(BuilderOptions{2, "", {}});
  auto results = builder.build_all(tmpl, problem, {space.make({{"BROKEN", 0}}),
                                                   space.make({{"BROKEN", 1}})},
                                   Device::h200());
  INFO(results[0].log);
  CHECK(results[0].ok);
  CHECK(results[0].resources.registers > 0);
  CHECK_FALSE(results[1].ok);
  CHECK(results[1].log.find("BROKEN config rejected") != std::string::npos);
  CHECK(results[0].key != results[1].key);
}

TEST_CASE("a config of another space is refused, not compiled with the kernel's defaults",
          "[builder]") {
  auto copy = make_copy_template();
  const Problem problem = copy->example_problem();
  Builder builder;
  SearchSpace::Builder other;
  other.param("X", {1});
  for (const Config& foreign : {other.build().default_config(), Config()}) {
    INFO(foreign.str());
    CHECK_THROWS_WITH(builder.build(*copy, problem, foreign, Device::h200()),
                      Catch::Contains("is not a config of copy") && Catch::Contains("VEC"));
  }
  // A value outside its domain, through a space that has it.
  SearchSpace::Builder wide;
  wide.param("VEC", {1, 2, 3, 4}).param("THREADS", {256}).param("ITEMS", {1}).param("GRID_STRIDE", {0});
  CHECK_THROWS_AS(builder.build(*copy, problem, wide.build().parse("VEC=3,THREADS=256,ITEMS=1,GRID_STRIDE=0"),
                                Device::h200()),
                  Error);
}

TEST_CASE("an option NVRTC rejects is a failed result naming it", "[builder]") {
  auto copy = make_copy_template();
  Problem problem = copy->example_problem();
  Config config = copy->space(problem, Device::h200()).default_config();
  Builder builder(BuilderOptions{1, "", {"-O3"}});
  BuildResult r = builder.build(*copy, problem, config, Device::h200());
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.log.empty());
  CHECK(r.log.find("-O3") != std::string::npos);
}

TEST_CASE("Builder version and source hash", "[builder]") {
  CHECK(Builder::nvrtc_version().rfind("13.", 0) == 0);
  CHECK(Builder::source_hash("abc") == Builder::source_hash("abc"));
  CHECK(Builder::source_hash("abc") != Builder::source_hash("abd"));
  CHECK(Builder::source_hash("").size() == 16);
  CHECK(Builder::source_hash("") == "cbf29ce484222325");  // FNV-1a offset basis
}

TEST_CASE("a repeated compile in a fresh builder still reports resources (NVRTC's own cache bypassed)",
          "[builder]") {
  // NVRTC 12.9+ caches programs in the CUDA compute cache, shared by every process of the user;
  // a hit skips ptxas and its -v report, so a config compiled before (by this or an earlier
  // process) came back with registers -1 on the H200 machine. Two builders share no cache of
  // their own, so the second compile reaches NVRTC again.
  auto copy = make_copy_template();
  Problem p = make_problem(*copy, "1000003");
  Config config = copy->space(p, Device::h200()).default_config();
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    Builder builder(BuilderOptions{1, "", {}});
    BuildResult r = builder.build(*copy, p, config, Device::h200());
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK(r.cache == BuildResult::Cache::miss);
    CHECK(r.resources.registers > 0);
    CHECK(r.log.find("Compiling entry function 'ktune_copy'") != std::string::npos);
    const bool bypass = std::find(r.options.begin(), r.options.end(), "--no-cache") != r.options.end();
    CHECK(bypass == detail::nvrtc_caches_programs());
  }
}

TEST_CASE("compile helper count: explicit, none, or one per compile thread", "[builder]") {
  BuilderOptions o;
  CHECK(compile_helper_count(o) == 0);  // the library default compiles in this process
  o.threads = 3;
  o.compile_processes = kHelperPerCompileThread;
  CHECK(compile_helper_count(o) == 3);
  o.compile_processes = 5;
  CHECK(compile_helper_count(o) == 5);
  o.threads = 0;  // one compile thread per hardware thread
  o.compile_processes = kHelperPerCompileThread;
  CHECK(compile_helper_count(o) == std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
}
