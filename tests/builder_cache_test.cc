// Builder cache: memory hits avoid recompiling, a new Builder over the same directory gets
// disk hits, corrupt or truncated files are rebuilt, the key follows every input, and a
// parallel build_all equals serial builds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "builtin_templates.h"
#include "content_hash.h"
#include "cubin_cache.h"
#include "ktune/build.h"
#include "ktune/template.h"

using namespace ktune;
namespace fs = std::filesystem;

namespace {

/// A fresh directory removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() /
           ("ktune_builder_cache_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// The copy template, its example problem and its default config for the H200.
struct CopyCase {
  std::shared_ptr<KernelTemplate> tmpl = make_copy_template();
  Device device = Device::h200();
  Problem problem = tmpl->example_problem();
  SearchSpace space = tmpl->space(problem, device);
  Config config = space.default_config();
};

/// Builder options with one thread and the given cache directory.
BuilderOptions with_cache(const fs::path& dir) { return BuilderOptions{1, dir.string(), {}}; }

}  // namespace

TEST_CASE("second build of a config is a memory hit without recompiling", "[builder][cache]") {
  CopyCase c;
  Builder builder(BuilderOptions{1, "", {}});
  BuildResult first = builder.build(*c.tmpl, c.problem, c.config, c.device);
  REQUIRE(first.ok);
  CHECK(first.cache == BuildResult::Cache::miss);
  CHECK(first.compile_ms > 0);
  BuildResult second = builder.build(*c.tmpl, c.problem, c.config, c.device);
  CHECK(second.cache == BuildResult::Cache::memory);
  CHECK(second.compile_ms == 0);
  CHECK(second.cubin == first.cubin);  // the same shared binary
  CHECK(second.key == first.key);
  CHECK(second.resources.registers == first.resources.registers);
  Builder::Stats s = builder.stats();
  CHECK(s.compiles == 1);
  CHECK(s.memory_hits == 1);
  CHECK(s.disk_hits == 0);
  builder.clear_memory_cache();
  CHECK(builder.build(*c.tmpl, c.problem, c.config, c.device).cache == BuildResult::Cache::miss);
  CHECK(builder.stats().compiles == 2);
}

TEST_CASE("a new Builder over the same cache_dir gets a disk hit", "[builder][cache]") {
  CopyCase c;
  TempDir dir;
  BuildResult compiled;
  {
    Builder writer(with_cache(dir.path));
    compiled = writer.build(*c.tmpl, c.problem, c.config, c.device);
    REQUIRE(compiled.ok);
  }
  CHECK(fs::exists(dir.path / (compiled.key + ".cubin")));
  CHECK(fs::exists(dir.path / (compiled.key + ".json")));
  Builder reader(with_cache(dir.path));
  BuildResult loaded = reader.build(*c.tmpl, c.problem, c.config, c.device);
  REQUIRE(loaded.ok);
  CHECK(loaded.cache == BuildResult::Cache::disk);
  CHECK(loaded.compile_ms == 0);
  CHECK(*loaded.cubin == *compiled.cubin);
  CHECK(loaded.resources.registers == compiled.resources.registers);
  CHECK(loaded.log == compiled.log);
  CHECK(loaded.options == compiled.options);
  CHECK(reader.stats().compiles == 0);
  CHECK(reader.stats().disk_hits == 1);
  // Then it is in memory.
  CHECK(reader.build(*c.tmpl, c.problem, c.config, c.device).cache == BuildResult::Cache::memory);
}

TEST_CASE("corrupt or truncated disk cache entries are rebuilt", "[builder][cache]") {
  CopyCase c;
  TempDir dir;
  std::string key;
  std::vector<char> good;
  {
    Builder writer(with_cache(dir.path));
    BuildResult r = writer.build(*c.tmpl, c.problem, c.config, c.device);
    REQUIRE(r.ok);
    key = r.key;
    good = *r.cubin;
  }
  const fs::path cubin = dir.path / (key + ".cubin");
  const fs::path sidecar = dir.path / (key + ".json");
  bool folder = false;  // an entry that cannot be rewritten either

  SECTION("truncated cubin") {
    fs::resize_file(cubin, good.size() / 2);
  }
  SECTION("same-size cubin with flipped bytes") {
    std::fstream f(cubin, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(good.size() / 2));
    f.write("\x5a\xa5\x5a\xa5", 4);
  }
  SECTION("sidecar that is not JSON") {
    std::ofstream(sidecar, std::ios::trunc) << "{ not json";
  }
  SECTION("missing sidecar") {
    fs::remove(sidecar);
  }
  SECTION("cubin entry that is a folder") {
    fs::remove(cubin);
    fs::create_directory(cubin);
    folder = true;
  }
  SECTION("a consistent entry whose cubin is not an ELF file") {
    const std::string fake = "NOT A CUBIN, but its sidecar agrees with it";
    std::ofstream(cubin, std::ios::binary | std::ios::trunc) << fake;
    std::ifstream in(sidecar);
    auto meta = nlohmann::json::parse(in);
    in.close();
    meta["cubin_bytes"] = fake.size();
    meta["cubin_fnv1a"] = detail::hex64(detail::fnv1a64(fake));
    std::ofstream(sidecar, std::ios::trunc) << meta.dump();
  }

  Builder rebuilder(with_cache(dir.path));
  BuildResult r = rebuilder.build(*c.tmpl, c.problem, c.config, c.device);
  REQUIRE(r.ok);
  CHECK(r.cache == BuildResult::Cache::miss);
  CHECK(rebuilder.stats().compiles == 1);
  CHECK(*r.cubin == good);
  if (folder) return;  // the folder stays: nothing is rewritten, every build compiles
  // The entry was rewritten whole: a third builder reads it back.
  Builder reader(with_cache(dir.path));
  CHECK(reader.build(*c.tmpl, c.problem, c.config, c.device).cache == BuildResult::Cache::disk);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(dir.path))
    CHECK(e.path().extension() != ".tmp");
}

TEST_CASE("the cache key follows config, problem, arch and options", "[builder][cache]") {
  CopyCase c;
  Builder plain(BuilderOptions{1, "", {}});
  Builder lineinfo(BuilderOptions{1, "", {"-lineinfo"}});
  Config other = c.space.make({{"VEC", 2}, {"THREADS", 256}, {"ITEMS", 1}, {"GRID_STRIDE", 0}});
  Problem f16 = make_problem(*c.tmpl, "16777216", {{"dtype", "f16"}});
  const std::string base = plain.build(*c.tmpl, c.problem, c.config, c.device).key;
  CHECK(plain.build(*c.tmpl, c.problem, other, c.device).key != base);
  CHECK(plain.build(*c.tmpl, f16, c.config, c.device).key != base);
  CHECK(plain.build(*c.tmpl, c.problem, c.config, Device::offline("sm_90a")).key != base);
  BuildResult with_lineinfo = lineinfo.build(*c.tmpl, c.problem, c.config, c.device);
  CHECK(with_lineinfo.key != base);
  CHECK(std::find(with_lineinfo.options.begin(), with_lineinfo.options.end(), "-lineinfo") !=
        with_lineinfo.options.end());
  // The problem size is a kernel argument, not a define: same binary for another N.
  Problem bigger = make_problem(*c.tmpl, "1000001", {{"dtype", "f32"}});
  CHECK(plain.build(*c.tmpl, bigger, c.config, c.device).key == base);
}

TEST_CASE("parallel build_all of 8 configs equals serial builds", "[builder][cache]") {
  CopyCase c;
  std::vector<Config> configs;
  std::mt19937_64 rng(7);
  while (configs.size() < 8) {
    Config k = c.space.random(rng);
    if (std::find(configs.begin(), configs.end(), k) == configs.end()) configs.push_back(k);
  }
  Builder parallel(BuilderOptions{2, "", {}});
  auto together = parallel.build_all(c.tmpl, c.problem, configs, c.device);
  Builder serial(BuilderOptions{1, "", {}});
  REQUIRE(together.size() == configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    BuildResult alone = serial.build(*c.tmpl, c.problem, configs[i], c.device);
    INFO(configs[i].str());
    REQUIRE(together[i].ok);
    REQUIRE(alone.ok);
    CHECK(together[i].key == alone.key);
    CHECK(*together[i].cubin == *alone.cubin);
    CHECK(together[i].resources.registers == alone.resources.registers);
    CHECK(together[i].options == alone.options);
  }
  CHECK(parallel.stats().compiles == 8);
  // Futures from submit() of an already built config are memory hits.
  auto again = parallel.submit(c.tmpl, c.problem, configs[3], c.device).get();
  CHECK(again.cache == BuildResult::Cache::memory);
  CHECK(parallel.stats().compiles == 8);
}

TEST_CASE("concurrent requests for one config compile it once", "[builder][cache]") {
  CopyCase c;
  Builder builder(BuilderOptions{2, "", {}});
  auto results = builder.build_all(c.tmpl, c.problem, std::vector<Config>(4, c.config), c.device);
  for (const auto& r : results) CHECK(r.ok);
  CHECK(builder.stats().compiles == 1);
  CHECK(builder.stats().memory_hits == 3);
}
