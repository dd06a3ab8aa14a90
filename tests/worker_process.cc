// CPU tests of worker isolation with the real ktune-worker program in its --fake mode: a
// candidate that hangs is killed at its deadline (timeout), one that crashes is a
// runtime_error naming the signal, a sticky CUDA error restarts the worker, protocol garbage
// is survived, and the next candidate after each of these is measured normally. Also its
// --compile mode: the Builder's compile helpers give the in-process cubins, a missing helper
// program leaves the compiles in-process, and a helper refuses another NVRTC or header set.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>
#include <random>

#include <nlohmann/json.hpp>

#include "builtin_templates.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/template.h"
#include "worker_client.h"
#include "worker_process.h"
#include "worker_fixtures.h"
#include "worker_protocol.h"
#include "skip.h"

using namespace ktune;
using namespace ktune::worker;

namespace {

using test::worker_program;

WorkerSpec fake_spec(const std::string& problem = "fake|N=1|") {
  WorkerSpec s;
  s.program = worker_program();
  s.args = {"--fake"};
  s.template_name = "copy";
  s.problem_key = problem;
  s.setup_timeout_ms = 10000;
  return s;
}

MeasureRequest fake(const std::string& directive, double kernel_timeout_ms = 300) {
  MeasureRequest r;
  r.fake = directive;
  r.kernel_timeout_ms = kernel_timeout_ms;
  r.host_timeout_ms = 300;
  r.cubin = std::make_shared<std::vector<char>>(std::vector<char>{'c', 'u', 'b'});
  return r;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("worker: a good fake candidate returns its samples and the cubin arrives", "[worker]") {
  WorkerClient client(fake_spec());
  auto r = client.measure(fake("ok:0.5"));
  CHECK(r.status == Status::ok);
  CHECK(r.times_ms == std::vector<double>(10, 0.5));
  CHECK(r.message == "cubin bytes 3");
  CHECK(r.launch == LaunchForm::stream);
  CHECK(client.running());
  CHECK(client.restarts() == 0);
  // The launch form the timing options ask for comes back through the worker process.
  auto request = fake("ok:0.5");
  request.timing.programmatic_launch = true;
  CHECK(client.measure(request).launch == LaunchForm::programmatic);
  request.timing.graph = true;
  CHECK(client.measure(request).launch == LaunchForm::programmatic_graph);
}

TEST_CASE("worker: a hanging candidate is killed at its deadline and the next one runs", "[worker]") {
  WorkerClient client(fake_spec());
  REQUIRE(client.measure(fake("ok")).status == Status::ok);
  auto t0 = std::chrono::steady_clock::now();
  auto r = client.measure(fake("hang", 300));
  double took = ms_since(t0);
  CHECK(r.status == Status::timeout);
  CHECK(r.message.find("300 ms") != std::string::npos);
  CHECK(r.message.find("phase kernel") != std::string::npos);
  CHECK(took >= 290);
  CHECK(took < 3000);
  CHECK_FALSE(client.running());
  CHECK(client.measure(fake("ok")).status == Status::ok);
  CHECK(client.restarts() == 1);
}

TEST_CASE("worker: host-side work has its own deadline", "[worker]") {
  WorkerClient client(fake_spec());
  auto r = client.measure(fake("hang_host"));
  CHECK(r.status == Status::timeout);
  CHECK(r.message.find("host-side") != std::string::npos);
}

TEST_CASE("worker: a crash is a runtime_error naming the signal", "[worker]") {
  WorkerClient client(fake_spec());
  auto segv = client.measure(fake("segv"));
  CHECK(segv.status == Status::runtime_error);
  CHECK(segv.message.find("SIGSEGV") != std::string::npos);
  CHECK(segv.message.find("phase kernel") != std::string::npos);
  auto abrt = client.measure(fake("abort"));
  CHECK(abrt.status == Status::runtime_error);
  CHECK(abrt.message.find("SIGABRT") != std::string::npos);
  auto exited = client.measure(fake("exit"));
  CHECK(exited.status == Status::runtime_error);
  CHECK(exited.message.find("exited with status 3") != std::string::npos);
  CHECK(client.measure(fake("ok")).status == Status::ok);
  CHECK(client.restarts() == 3);
}

TEST_CASE("worker: a sticky CUDA error restarts the worker, a launch error does not", "[worker]") {
  WorkerClient client(fake_spec());
  auto launch = client.measure(fake("launch"));
  CHECK(launch.status == Status::launch_error);
  CHECK(launch.message.find("cudaErrorLaunchOutOfResources") != std::string::npos);
  CHECK(client.running());
  auto sticky = client.measure(fake("sticky"));
  CHECK(sticky.status == Status::runtime_error);
  CHECK(sticky.message.find("cudaErrorIllegalAddress") != std::string::npos);
  CHECK(sticky.context_lost);
  CHECK_FALSE(client.running());
  CHECK(client.measure(fake("ok")).status == Status::ok);
  CHECK(client.restarts() == 1);
}

TEST_CASE("worker: protocol garbage and backend errors cost one trial", "[worker]") {
  WorkerClient client(fake_spec());
  auto garbage = client.measure(fake("garbage"));
  CHECK(garbage.status == Status::runtime_error);
  CHECK(garbage.message.find("protocol error") != std::string::npos);
  auto error = client.measure(fake("error"));
  CHECK(error.status == Status::runtime_error);
  CHECK(error.message.find("fake backend failure") != std::string::npos);
  auto wrong = client.measure(fake("wrong"));
  CHECK(wrong.status == Status::wrong_result);
  CHECK(wrong.error_norm == 0.5);
  CHECK(client.measure(fake("ok")).status == Status::ok);
}

TEST_CASE("worker: a worker that cannot be set up is an Error naming the reason", "[worker]") {
  WorkerClient client(fake_spec("no_device"));
  try {
    client.measure(fake("ok"));
    FAIL("expected ktune::Error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::no_device);
    CHECK(std::string(e.what()).find("no CUDA device") != std::string::npos);
  }
  WorkerSpec missing = fake_spec();
  missing.program = "/nonexistent/ktune-worker";
  WorkerClient nowhere(missing);
  CHECK_THROWS_AS(nowhere.measure(fake("ok")), Error);
}

TEST_CASE("worker: the program is found from an explicit path or KTUNE_WORKER", "[worker]") {
  CHECK(find_worker_executable(worker_program()) == worker_program());
  CHECK_THROWS_AS(find_worker_executable("/nonexistent/ktune-worker"), Error);
  setenv("KTUNE_WORKER", worker_program().c_str(), 1);
  CHECK(find_worker_executable() == worker_program());
  unsetenv("KTUNE_WORKER");
  // tests/ktune_tests sits one folder below ktune-worker in the build tree
  CHECK(find_worker_executable() == std::string(KTUNE_BINARY_DIR) + "/ktune-worker");
}

TEST_CASE("worker: --help prints the usage and succeeds, an unknown argument fails", "[worker]") {
  auto run = [](const std::string& args) {
    const std::string out = std::filesystem::temp_directory_path() / ("ktune-worker-help-" + std::to_string(getpid()));
    const int raw = std::system(("'" + worker_program() + "' " + args + " > " + out + " 2>&1").c_str());
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(out);
    return std::make_pair(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, text);
  };
  const auto [help_status, help] = run("--help");
  CHECK(help_status == 0);
  CHECK_THAT(help, Catch::Contains("usage: ktune-worker") && !Catch::Contains("unknown argument"));
  const auto [bad_status, bad] = run("--bogus");
  CHECK(bad_status == 2);
  CHECK_THAT(bad, Catch::Contains("unknown argument: --bogus"));
}

TEST_CASE("compile helpers: the Builder's helper processes give the in-process cubins", "[worker][builder]") {
  auto copy = make_copy_template();
  Problem p = make_problem(*copy, "1000003", {{"dtype", "f16"}});
  SearchSpace space = copy->space(p, Device::h200());
  std::vector<Config> configs{space.default_config()};
  std::mt19937_64 rng(11);
  while (configs.size() < 7) {
    Config c = space.random(rng);
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  BuilderOptions helped_options{2, "", {}};
  helped_options.compile_processes = 2;
  helped_options.helper_program = worker_program();
  Builder helped(helped_options);
  Builder local(BuilderOptions{1, "", {}});
  auto a = helped.build_all(copy, p, configs, Device::h200());
  auto b = local.build_all(copy, p, configs, Device::h200());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    INFO(configs[i].str() << "\n" << a[i].log);
    REQUIRE(a[i].ok);
    REQUIRE(b[i].ok);
    CHECK(*a[i].cubin == *b[i].cubin);  // NVRTC is deterministic: the same binary
    CHECK(a[i].resources.registers == b[i].resources.registers);
    CHECK(a[i].resources.registers > 0);
  }
  // Every compile went through a helper (two threads, two helpers), none through this process.
  CHECK(helped.stats().helper_compiles == configs.size());
  CHECK(local.stats().helper_compiles == 0);
}

TEST_CASE("compile helpers: a compile error comes back with its log, a missing program compiles here",
          "[worker][builder]") {
  auto copy = make_copy_template();
  Problem p = make_problem(*copy, "4096");
  Config config = copy->space(p, Device::h200()).default_config();
  {
    BuilderOptions o{1, "", {"-DVEC=3"}};  // a redefinition NVRTC rejects: a compile error
    o.compile_processes = 1;
    o.helper_program = worker_program();
    Builder b(o);
    BuildResult r = b.build(*copy, p, config, Device::h200());
    CHECK_FALSE(r.ok);
    CHECK(r.log.find("VEC") != std::string::npos);
    CHECK(b.stats().helper_compiles == 1);  // the helper answered, with the failure
  }
  // No such program; a program that exits at once (an older ktune-worker without --compile
  // does); one that echoes (answers, but not as a helper of this build; /bin/cat itself would
  // refuse the --compile option and exit): each compile runs in this process instead, none fails.
  const std::string echo = std::filesystem::temp_directory_path() /
                           ("ktune-echo-helper-" + std::to_string(getpid()) + ".sh");
  std::ofstream(echo) << "#!/bin/sh\nexec cat\n";
  std::filesystem::permissions(echo, std::filesystem::perms::owner_all);
  for (const std::string program : {std::string("/nonexistent/ktune-worker"), std::string("/bin/true"), echo}) {
    INFO(program);
    BuilderOptions o{1, "", {}};
    o.compile_processes = 2;
    o.helper_program = program;
    Builder b(o);
    BuildResult r = b.build(*copy, p, config, Device::h200());
    INFO(r.log);
    CHECK(r.ok);
    CHECK(r.resources.registers > 0);
    CHECK(b.stats().helper_compiles == 0);
  }
}

TEST_CASE("compile helpers: a helper refuses a request for another NVRTC or header set", "[worker]") {
  ChildProcess helper({worker_program(), "--compile"});
  Frame request;
  request.header = {{"type", "compile"},
                    {"identity", {{"nvrtc", "0.0"}, {"headers", "not-these"}}},
                    {"name", "x.cu"},
                    {"options", std::vector<std::string>{"--gpu-architecture=sm_90"}}};
  const std::string source = "extern \"C\" __global__ void k() {}";
  request.payload.assign(source.begin(), source.end());
  REQUIRE(write_frame(helper.fd(), request));
  FrameReader reader(helper.fd());
  Frame reply;
  REQUIRE(reader.read(reply, 60000) == ReadStatus::ok);
  CHECK(reply.header.value("type", "") == "error");
  CHECK(reply.header.value("message", std::string()).find("0.0") != std::string::npos);
  CHECK(reply.payload.empty());
}

TEST_CASE("compile helpers: wrong answers and deaths never fail or poison a config",
          "[worker][builder]") {
  if (std::system("command -v python3 > /dev/null 2>&1") != 0) {
    KTUNE_SKIP("python3 is not installed (the misbehaving helper is a Python script)");
  }
  auto copy = make_copy_template();
  Problem p = make_problem(*copy, "4096");
  const SearchSpace space = copy->space(p, Device::h200());
  std::vector<Config> configs{space.default_config()};
  std::mt19937_64 rng(3);
  while (configs.size() < 3) {
    Config c = space.random(rng);
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  ::setenv("KTUNE_REAL_WORKER", worker_program().c_str(), 1);
  for (const char* mode : {"badcubin", "nonobject", "first_then_die"}) {
    INFO(mode);
    ::setenv("FAKE_MODE", mode, 1);
    BuilderOptions o{1, "", {}};
    o.compile_processes = 1;
    o.helper_program = std::string(KTUNE_SOURCE_DIR) + "/tests/fake_compile_helper.py";
    Builder b(o);
    for (const auto& config : configs) {
      BuildResult r = b.build(*copy, p, config, Device::h200());
      INFO(config.str() << "\n" << r.log);
      REQUIRE(r.ok);  // compiled here, or by a fresh helper after a death
      REQUIRE(r.cubin->size() > 64);
      CHECK(std::string(r.cubin->data() + 1, 3) == "ELF");
      CHECK(r.resources.registers > 0);
    }
  }
  ::unsetenv("FAKE_MODE");
}

// From a mutation audit of the helpers and the protocol.

TEST_CASE("worker protocol: an oversize attachment is malformed", "[worker]") {
  FrameReader big(-1);
  Frame out;
  std::string why;
  char prefix[16] = {'K', 'T', 'W', '1'};
  std::uint32_t hlen = 2;
  std::uint64_t plen = kMaxPayloadBytes + 1;
  std::memcpy(prefix + 4, &hlen, 4);
  std::memcpy(prefix + 8, &plen, 8);
  big.feed(prefix, 16);
  CHECK(big.parse_buffered(out, &why) == ReadStatus::malformed);
  CHECK_THAT(why, Catch::Contains("too large"));
}

TEST_CASE("worker protocol: results keep NaN, defaults and flags, unknown argument kinds are refused",
          "[worker]") {
  WorkerResult r;
  r.status = Status::wrong_result;
  r.error_norm = std::numeric_limits<double>::quiet_NaN();
  r.context_lost = true;
  const auto back = result_from_json(nlohmann::json::parse(result_to_json(r).dump()));
  CHECK(std::isnan(back.error_norm));
  CHECK(back.context_lost);
  CHECK(result_from_json({{"status", "ok"}}).error_norm == -1);  // not reported
  CHECK(result_from_json({{"status", "ok"}}).launch == LaunchForm::unknown);
  CHECK_THROWS_WITH(result_from_json({{"status", "ok"}, {"launch", "warp"}}),
                    Catch::Contains("unknown launch form \"warp\""));
  CHECK(timing_from_json(nlohmann::json::object()).l2 == TimingOptions{}.l2);
  nlohmann::json plan = plan_to_json(LaunchPlan{});
  plan["steps"] = nlohmann::json::array({{{"kind", "kernel"}, {"entry", "k"}, {"grid", {1, 1, 1}},
                                          {"block", {1, 1, 1}}, {"smem", 0},
                                          {"args", {{{"kind", "u16"}, {"buffer", 0}, {"i", 0}, {"f", 0}}}},
                                          {"memset_buffer", 0}, {"memset_byte", 0}}});
  CHECK_THROWS_AS(plan_from_json(plan), Error);
}

TEST_CASE("compile helper: an unknown message gets an error naming it, quit ends the helper",
          "[worker]") {
  {
    ChildProcess helper({worker_program(), "--compile"});
    Frame request;
    request.header = {{"type", "bogus"}};
    REQUIRE(write_frame(helper.fd(), request));
    FrameReader reader(helper.fd());
    Frame reply;
    REQUIRE(reader.read(reply, 60000) == ReadStatus::ok);
    CHECK(reply.header.value("type", "") == "error");
    CHECK_THAT(reply.header.value("message", std::string()), Catch::Contains("unknown message type"));
  }
  ChildProcess helper({worker_program(), "--compile"});
  Frame quit;
  quit.header = {{"type", "quit"}};
  REQUIRE(write_frame(helper.fd(), quit));
  CHECK_THAT(helper.reap(10000), Catch::Contains("status 0"));
}

TEST_CASE("compile helper: a helper's build reports its compile time", "[worker][builder]") {
  auto copy = find_template("copy");
  const Problem p = copy->example_problem();
  BuilderOptions o{1, "", {}};
  o.compile_processes = 1;
  o.helper_program = worker_program();
  Builder b(o);
  const BuildResult r = b.build(*copy, p, copy->space(p, Device::h200()).default_config(), Device::h200());
  REQUIRE(r.ok);
  CHECK(b.stats().helper_compiles == 1);
  CHECK(r.compile_ms > 0);
}

TEST_CASE("builder: a Hopper-only template is not built for another GPU", "[builder]") {
  auto t = find_template("gemm_wgmma");
  const Problem p = t->example_problem();
  const Config c = t->space(p, Device::h200()).default_config();
  Builder b(BuilderOptions{1, "", {}});
  CHECK_THROWS_AS(b.build(*t, p, c, Device::offline("sm_80")), Error);
}
