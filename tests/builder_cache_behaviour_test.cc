// The on-disk cubin cache and the Builder's key at their edges (from a mutation audit): entries
// of another key or sidecar format, failed and throwing compiles, a file or FIFO where the cache
// expects a folder or a cubin, entries that cannot be cubins, a key that follows the kernel
// source, the default C++ standard, and resources of the planned kernel.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>
#include <sys/stat.h>
#include <future>

#include <nlohmann/json.hpp>

#include "content_hash.h"
#include "cubin_cache.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/template.h"
#include "ktune/user_template.h"
#include "cli_fixtures.h"

using namespace ktune;
namespace fs = std::filesystem;

namespace {
using test::TempDir;
/// A successful compile of a 64-byte "ELF" binary.
detail::CompiledKernel fake_compile() {
  std::vector<char> elf(64, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F';
  detail::CompiledKernel k;
  k.ok = true;
  k.cubin = std::make_shared<const std::vector<char>>(elf);
  k.arch = "sm_90";
  k.log = "log";
  return k;
}
nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(std::ifstream(p)); }
void write_json(const fs::path& p, const nlohmann::json& j) { std::ofstream(p, std::ios::trunc) << j.dump(); }
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("cubin cache: a disk entry written for another key or sidecar format is a miss", "[builder][cache]") {
  TempDir dir;
  {
    detail::CubinCache writer(dir.path.string());
    REQUIRE(writer.get_or_compile("aaaa", fake_compile).second == detail::CacheSource::miss);
  }
  // The same files under another key (a copied or renamed entry).
  fs::copy_file(dir.path / "aaaa.cubin", dir.path / "bbbb.cubin");
  fs::copy_file(dir.path / "aaaa.json", dir.path / "bbbb.json");
  // A sidecar of a future layout.
  auto meta = read_json(dir.path / "aaaa.json");
  meta["format"] = 2;
  write_json(dir.path / "aaaa.json", meta);
  detail::CubinCache reader(dir.path.string());
  CHECK(reader.get_or_compile("bbbb", fake_compile).second == detail::CacheSource::miss);
  CHECK(reader.get_or_compile("aaaa", fake_compile).second == detail::CacheSource::miss);
  CHECK(reader.stats().compiles == 2);
  CHECK(reader.stats().disk_hits == 0);
}

TEST_CASE("cubin cache: failed compiles are counted and stay out of the directory", "[builder][cache]") {
  TempDir dir;
  detail::CubinCache cache(dir.path.string());
  auto failing = [] {
    detail::CompiledKernel k;
    k.log = "error: nope";
    return k;
  };
  CHECK_FALSE(cache.get_or_compile("cccc", failing).first.ok);
  CHECK(cache.stats().failures == 1);
  CHECK_FALSE(fs::exists(dir.path / "cccc.cubin"));
  CHECK_FALSE(cache.get_or_compile("cccc", failing).first.ok);  // remembered in memory
  CHECK(cache.stats().compiles == 1);
}

TEST_CASE("cubin cache: a compile that throws is not remembered", "[builder][cache]") {
  detail::CubinCache cache("");
  CHECK_THROWS(cache.get_or_compile("dddd", []() -> detail::CompiledKernel { throw std::runtime_error("boom"); }));
  auto [entry, source] = cache.get_or_compile("dddd", fake_compile);  // tried again, not the old exception
  CHECK(entry.ok);
  CHECK(source == detail::CacheSource::miss);
}

TEST_CASE("cubin cache: a cache directory that is a file is an io_error naming it", "[builder][cache]") {
  TempDir dir;
  const fs::path file = dir.path / "plain_file";
  std::ofstream(file) << "x";
  try {
    detail::CubinCache cache(file.string());
    FAIL("accepted a file as the cache directory");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::io_error);
    CHECK_THAT(e.what(), Catch::Contains("plain_file"));
  }
}

TEST_CASE("cubin cache: the build cache key follows the kernel source", "[builder][cache]") {
  const std::string d = test::source_path("examples/custom_template") + "/";
  const std::string doc = read_file(d + "transpose.T1.json");
  auto a = make_user_template(doc, read_file(d + "transpose.cu"), read_file(d + "transpose_reference.cu"), d + "transpose.T1.json");
  auto b = make_user_template(doc, read_file(d + "transpose.cu") + "\n#define EDITED 1\n",
                              read_file(d + "transpose_reference.cu"), d + "transpose.T1.json");
  const Problem p = make_problem(*a, "256x256");
  const Config c = a->space(p, Device::h200()).default_config();
  TempDir dir;
  std::string key;
  {
    Builder first(BuilderOptions{1, dir.path.string(), {}});
    const BuildResult r = first.build(*a, p, c, Device::h200());
    REQUIRE(r.ok);
    key = r.key;
  }
  // An edited kernel in a new process (a new Builder over the same directory) is compiled again.
  Builder second(BuilderOptions{1, dir.path.string(), {}});
  const BuildResult edited = second.build(*b, p, c, Device::h200());
  CHECK(edited.key != key);
  CHECK(edited.cache == BuildResult::Cache::miss);
}

TEST_CASE("cubin cache: a user kernel without -std is compiled as C++20", "[builder][nvrtc]") {
  const std::string d = test::source_path("examples/custom_template") + "/";
  auto doc = nlohmann::json::parse(read_file(d + "transpose.T1.json"));
  doc["KernelSpecification"].erase("CompilerOptions");
  auto t = make_user_template(doc.dump(),
                              read_file(d + "transpose.cu") + "\nstatic_assert(__cplusplus == 202002L, \"C++20\");\n",
                              read_file(d + "transpose_reference.cu"), d + "transpose.T1.json");
  const Problem p = make_problem(*t, "256x256");
  Builder builder(BuilderOptions{1, "", {}});
  const BuildResult r = builder.build(*t, p, t->space(p, Device::h200()).default_config(), Device::h200());
  INFO(r.log);
  CHECK(r.ok);
  CHECK(std::find(r.options.begin(), r.options.end(), "-std=c++20") != r.options.end());
}

TEST_CASE("cubin cache: consistent entries that cannot be cubins are misses", "[builder][cache]") {
  TempDir dir;
  {
    detail::CubinCache writer(dir.path.string());
    writer.get_or_compile("eeee", fake_compile);
    writer.get_or_compile("ffff", fake_compile);
  }
  auto replace = [&](const std::string& key, const std::string& bytes) {
    std::ofstream(dir.path / (key + ".cubin"), std::ios::binary | std::ios::trunc) << bytes;
    auto meta = read_json(dir.path / (key + ".json"));
    meta["cubin_bytes"] = bytes.size();
    meta["cubin_fnv1a"] = detail::hex64(detail::fnv1a64(bytes));
    write_json(dir.path / (key + ".json"), meta);
  };
  replace("eeee", std::string(100, 'X'));                 // long enough, not ELF
  replace("ffff", std::string("\x7f" "ELF") + std::string(12, '\0'));  // ELF magic, no full header
  detail::CubinCache reader(dir.path.string());
  CHECK(reader.get_or_compile("eeee", fake_compile).second == detail::CacheSource::miss);
  CHECK(reader.get_or_compile("ffff", fake_compile).second == detail::CacheSource::miss);
}

TEST_CASE("cubin cache: a FIFO in place of a cubin is no entry (and does not block)", "[builder][cache]") {
  TempDir dir;
  {
    detail::CubinCache writer(dir.path.string());
    writer.get_or_compile("gggg", fake_compile);
  }
  const fs::path cubin = dir.path / "gggg.cubin";
  fs::remove(cubin);
  REQUIRE(::mkfifo(cubin.c_str(), 0600) == 0);
  detail::CubinCache reader(dir.path.string());
  auto fut = std::async(std::launch::async, [&] { return reader.get_or_compile("gggg", fake_compile).second; });
  const bool done = fut.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!done) std::ofstream(cubin) << "x";  // let the blocked reader go
  CHECK(done);
  CHECK(fut.get() == detail::CacheSource::miss);
}

TEST_CASE("cubin cache: a link planted at an entry's name is replaced, its target untouched", "[builder][cache]") {
  TempDir dir;
  const fs::path outside = dir.path / "precious.txt";
  std::ofstream(outside) << "someone else's file\n";
  fs::create_symlink(outside, dir.path / "hhhh.cubin");
  fs::create_symlink(outside, dir.path / "hhhh.json");
  detail::CubinCache cache(dir.path.string());
  CHECK(cache.get_or_compile("hhhh", fake_compile).second == detail::CacheSource::miss);
  std::ifstream in(outside);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "someone else's file\n");
  CHECK_FALSE(fs::is_symlink(dir.path / "hhhh.cubin"));
  detail::CubinCache reader(dir.path.string());
  CHECK(reader.get_or_compile("hhhh", fake_compile).second == detail::CacheSource::disk);
}

TEST_CASE("cubin cache: resources are the planned kernel's, not another kernel's of the source", "[builder][nvrtc]") {
  const std::string d = test::source_path("examples/custom_template") + "/";
  const std::string helper =
      "extern \"C\" __global__ void zz_helper(float* x) { __shared__ float s[4096]; s[threadIdx.x] = x[threadIdx.x];"
      " __syncthreads(); x[threadIdx.x] = s[4095 - threadIdx.x]; }\n";
  for (const bool before : {true, false}) {
    const std::string kernel = read_file(d + "transpose.cu");
    auto t = make_user_template(read_file(d + "transpose.T1.json"), before ? helper + kernel : kernel + "\n" + helper,
                                read_file(d + "transpose_reference.cu"), d + "transpose.T1.json");
    const Problem p = make_problem(*t, "256x256");
    Builder builder(BuilderOptions{1, "", {}});
    const BuildResult r = builder.build(*t, p, t->space(p, Device::h200()).default_config(), Device::h200());  // use_shared=0
    INFO(r.log);
    REQUIRE(r.ok);
    REQUIRE(r.kernels.count("zz_helper"));
    CHECK(r.kernels.at("zz_helper").shared_bytes == 16384);
    CHECK(r.resources.shared_bytes == 0);
  }
}

TEST_CASE("builder: a plan's resources are its peak, not those of a pre-pass that runs first",
          "[builder][nvrtc]") {
  // conv2d_mma with SMALL_C=1 packs the 3 input channels in a first kernel, then runs the
  // convolution (and a split-K reduction): the config's registers and spills are the heaviest
  // kernel's.
  auto t = find_template("conv2d_mma");
  const Problem p = make_problem(*t, "32x56x56x3x64x7x7", {{"dtype", "f16"}, {"stride", "2"}, {"pad", "3"}});
  const SearchSpace space = t->space(p, Device::h200());
  const Config c = space.with_changes("SMALL_C=1,ITER=0");
  Builder builder(BuilderOptions{1, "", {}});
  const BuildResult r = builder.build(*t, p, c, Device::h200());
  INFO(r.log);
  REQUIRE(r.ok);
  std::vector<Resources> steps;
  for (const LaunchStep& step : t->launch(p, c, Device::h200()).steps)
    if (step.kind == LaunchStep::Kind::kernel) steps.push_back(r.kernels.at(step.entry));
  REQUIRE(steps.size() >= 2);
  Resources peak = steps.front();
  for (const Resources& s : steps) {
    peak.registers = std::max(peak.registers, s.registers);
    peak.spill_stores = std::max(peak.spill_stores, s.spill_stores);
    peak.shared_bytes = std::max(peak.shared_bytes, s.shared_bytes);
  }
  CHECK(steps.front().registers < peak.registers);  // the pre-pass is not the heaviest
  CHECK(r.resources.registers == peak.registers);
  CHECK(r.resources.spill_stores == peak.spill_stores);
  CHECK(r.resources.shared_bytes == peak.shared_bytes);
}

TEST_CASE("cubin cache: temporary files of writers killed before their rename are removed once "
          "a cache writes", "[builder][cache]") {
  TempDir dir;
  auto leave = [&](const std::string& name, std::chrono::minutes age) {
    std::ofstream(dir.path / name) << "partial";
    fs::last_write_time(dir.path / name, fs::file_time_type::clock::now() - age);
  };
  leave(".eeee.cubin.4242.7.0.tmp", std::chrono::minutes(60));  // killed an hour ago
  leave(".ffff.json.4242.7.1.tmp", std::chrono::minutes(60));   // another entry's
  leave(".eeee.cubin.4243.7.0.tmp", std::chrono::minutes(0));   // a writer still at work
  leave(".notes.tmp", std::chrono::minutes(60));                // not a cache temporary
  detail::CubinCache cache(dir.path.string());
  REQUIRE(cache.get_or_compile("eeee", fake_compile).second == detail::CacheSource::miss);
  CHECK(fs::exists(dir.path / "eeee.cubin"));
  CHECK_FALSE(fs::exists(dir.path / ".eeee.cubin.4242.7.0.tmp"));
  CHECK_FALSE(fs::exists(dir.path / ".ffff.json.4242.7.1.tmp"));
  CHECK(fs::exists(dir.path / ".eeee.cubin.4243.7.0.tmp"));
  CHECK(fs::exists(dir.path / ".notes.tmp"));
  // Once per cache object: a later stale file waits for the next process's cache.
  leave(".gggg.cubin.4242.7.3.tmp", std::chrono::minutes(60));
  REQUIRE(cache.get_or_compile("hhhh", fake_compile).second == detail::CacheSource::miss);
  CHECK(fs::exists(dir.path / ".gggg.cubin.4242.7.3.tmp"));
}
