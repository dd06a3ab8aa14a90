// CompileHelperPool on its own: it never runs more helpers than it may (threads beyond that
// compile in their own process), counts the compiles its helpers answer, and stops starting
// helpers after a program that cannot start, instead of paying a failed start per compile.
// The helper program is a counting wrapper script around the real ktune-worker.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "compile_helper.h"
#include "worker_fixtures.h"

using namespace ktune;
using namespace ktune::worker;

namespace {


/// A helper program that appends a line to `starts` each time it is started, then runs
/// `then` (a shell command line; "$@" holds the helper's arguments).
struct CountingHelper {
  std::filesystem::path dir, script, starts;
  explicit CountingHelper(const std::string& then) {
    static std::atomic<int> counter{0};
    dir = std::filesystem::temp_directory_path() /
          ("ktune-pool-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    script = dir / "helper.sh";
    starts = dir / "starts";
    std::ofstream(script) << "#!/bin/sh\necho started >> '" << starts.string() << "'\n" << then << "\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  }
  ~CountingHelper() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  int started() const {
    std::ifstream in(starts);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
};

const std::vector<std::string> kOptions = {"--gpu-architecture=sm_90"};

std::string kernel_source(int k) {
  return "extern \"C\" __global__ void k" + std::to_string(k) +
         "(float* x) { x[threadIdx.x] = " + std::to_string(k) + ".0f; }\n";
}

}  // namespace

TEST_CASE("compile helper pool: never more helpers than allowed, busy threads compile here",
          "[worker][builder]") {
  CountingHelper helper("exec '" + test::worker_program() + "' \"$@\"");
  CompileHelperPool pool(helper.script.string(), 2);
  constexpr int kThreads = 4, kEach = 3;
  std::atomic<int> answered{0}, declined{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto out = pool.compile(kernel_source(t * kEach + i), "k.cu", kOptions);
        if (!out) {
          ++declined;
        } else if (out->ok && out->cubin.size() > 64) {
          ++answered;
        } else {
          ++failed;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failed == 0);
  CHECK(answered + declined == kThreads * kEach);
  CHECK(answered >= 1);
  CHECK(pool.compiles() == static_cast<std::uint64_t>(answered.load()));
  CHECK(helper.started() >= 1);
  CHECK(helper.started() <= 2);  // the pool's limit, whatever the threads asked for
  // Idle helpers are reused: a later compile starts no new process.
  const int before = helper.started();
  auto again = pool.compile(kernel_source(99), "k.cu", kOptions);
  REQUIRE(again);
  CHECK(again->ok);
  CHECK(helper.started() == before);
}

TEST_CASE("compile helper pool: a program that cannot start is tried once, not per compile",
          "[worker][builder]") {
  CountingHelper helper("exit 1");  // as an older ktune-worker without --compile
  CompileHelperPool pool(helper.script.string(), 2);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(pool.compile(kernel_source(i), "k.cu", kOptions));
  CHECK(helper.started() == 1);
  CHECK(pool.compiles() == 0);
}
