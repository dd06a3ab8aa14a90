// CPU tests of the worker protocol: frames cut from partial input, malformed bytes, and the
// JSON forms of launch plans, timing options and results round-tripping.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <cstring>
#include <unistd.h>

#include "ktune/error.h"
#include "device_checks.h"
#include "l2_priority_reset.h"
#include "nvrtc_compile.h"
#include "worker_protocol.h"

using namespace ktune;
using namespace ktune::worker;

TEST_CASE("worker protocol: a frame fed one byte at a time is cut out whole", "[worker]") {
  Frame f;
  f.header = {{"type", "measure"}, {"seed", 7}};
  f.payload = {'c', 'u', 'b', '\0', 'n'};
  auto bytes = encode_frame(f);
  FrameReader reader(-1);
  Frame out;
  std::string why;
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    reader.feed(&bytes[i], 1);
    REQUIRE(reader.parse_buffered(out, &why) == ReadStatus::timeout);
  }
  reader.feed(&bytes.back(), 1);
  REQUIRE(reader.parse_buffered(out, &why) == ReadStatus::ok);
  CHECK(out.header["seed"] == 7);
  CHECK(out.payload == f.payload);
}

TEST_CASE("worker protocol: bad magic and oversize frames are malformed", "[worker]") {
  FrameReader reader(-1);
  Frame out;
  std::string why;
  const char junk[] = "this is not a frame at all";
  reader.feed(junk, sizeof junk);
  CHECK(reader.parse_buffered(out, &why) == ReadStatus::malformed);
  CHECK(why.find("magic") != std::string::npos);

  FrameReader big(-1);
  char prefix[16] = {'K', 'T', 'W', '1'};
  std::uint32_t hlen = kMaxHeaderBytes + 1;
  std::memcpy(prefix + 4, &hlen, 4);
  big.feed(prefix, 16);
  CHECK(big.parse_buffered(out, &why) == ReadStatus::malformed);
  CHECK(why.find("too large") != std::string::npos);
}

TEST_CASE("worker protocol: frames travel over a socket and a closed peer is reported", "[worker]") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Frame f;
  f.header = {{"type", "phase"}, {"phase", "kernel"}};
  REQUIRE(write_frame(sv[0], f));
  FrameReader reader(sv[1]);
  Frame out;
  CHECK(reader.read(out, 1000) == ReadStatus::ok);
  CHECK(out.header["phase"] == "kernel");
  CHECK(reader.read(out, 50) == ReadStatus::timeout);
  close(sv[0]);
  CHECK(reader.read(out, 1000) == ReadStatus::closed);
  CHECK_FALSE(write_frame(sv[1], f));  // peer gone: false, no SIGPIPE
  close(sv[1]);
}

TEST_CASE("worker protocol: launch plans, timing and results round-trip through JSON", "[worker]") {
  LaunchPlan plan;
  LaunchStep memset;
  memset.kind = LaunchStep::Kind::memset;
  memset.memset_buffer = 2;
  memset.memset_byte = 0;
  LaunchStep k;
  k.entry = "kern";
  k.grid[0] = 100;
  k.grid[2] = 3;
  k.block[0] = 256;
  k.dynamic_smem = 65536;
  k.args = {KernelArg::buf(1), KernelArg::i32(-5), KernelArg::i64(1ll << 40), KernelArg::f32(0.5),
            KernelArg::f64(-1.25)};
  plan.steps = {memset, k};
  plan.scratch = {BufferSpec{"ws", DType::f16, 12345, Role::scratch, 16}};
  LaunchPlan back = plan_from_json(nlohmann::json::parse(plan_to_json(plan).dump()));
  REQUIRE(back.steps.size() == 2);
  CHECK(back.steps[0].kind == LaunchStep::Kind::memset);
  CHECK(back.steps[0].memset_buffer == 2);
  CHECK(back.steps[1].entry == "kern");
  CHECK(back.steps[1].grid[2] == 3);
  CHECK(back.steps[1].dynamic_smem == 65536);
  REQUIRE(back.steps[1].args.size() == 5);
  CHECK(back.steps[1].args[2].i == (1ll << 40));
  CHECK(back.steps[1].args[4].f == -1.25);
  CHECK(back.steps[1].args[4].kind == KernelArg::Kind::f64);
  CHECK(back.scratch.at(0).dtype == DType::f16);
  CHECK(back.scratch.at(0).offset_bytes == 16);

  TimingOptions t;
  t.min_time_ms = 12;
  t.l2 = L2Policy::flush;
  t.runs_per_sample = 7;
  t.reset_l2_priorities = false;
  t.graph = true;
  auto tb = timing_from_json(timing_to_json(t));
  CHECK(tb.graph);
  CHECK_FALSE(timing_from_json(nlohmann::json::object()).graph);  // stream launches unless asked
  CHECK(tb.min_time_ms == 12);
  CHECK(tb.l2 == L2Policy::flush);
  CHECK(tb.runs_per_sample == 7);
  CHECK_FALSE(tb.reset_l2_priorities);
  CHECK(timing_from_json(nlohmann::json::object()).reset_l2_priorities);  // on unless asked

  WorkerResult r;
  r.status = Status::wrong_result;
  r.message = "wrote past the end of y";
  r.error_norm = 0.25;
  r.times_ms = {1, 2};
  r.prepare_ms = 3.5;
  r.verify_ms = 0.75;
  r.timing_ms = 51;
  r.runs_per_sample = 10;
  r.launch = LaunchForm::programmatic_graph;
  auto rb = result_from_json(result_to_json(r));
  CHECK(rb.status == Status::wrong_result);
  CHECK(rb.message == r.message);
  CHECK(rb.error_norm == 0.25);
  CHECK(rb.times_ms == r.times_ms);
  CHECK(rb.prepare_ms == 3.5);
  CHECK(rb.verify_ms == 0.75);
  CHECK(rb.timing_ms == 51);
  CHECK(rb.runs_per_sample == 10);
  CHECK(rb.launch == LaunchForm::programmatic_graph);

  CHECK_THROWS_AS(plan_from_json(nlohmann::json{{"steps", 3}}), Error);
  auto bad_role = plan_to_json(plan);
  bad_role["scratch"][0]["role"] = 9;  // not a Role: named, never cast
  CHECK_THROWS_WITH(plan_from_json(bad_role), Catch::Contains("\"ws\" has role 9"));
  for (L2Policy p : {L2Policy::automatic, L2Policy::flush, L2Policy::rotate, L2Policy::none})
    CHECK(l2_policy_from_string(to_string(p)) == p);
  CHECK_THROWS_WITH(l2_policy_from_string("warm"),
                    Catch::Equals("unknown L2 policy \"warm\" (expected automatic, flush, rotate or none)"));
}

TEST_CASE("worker verification kernels compile with NVRTC for sm_90 and export every entry",
          "[worker][nvrtc]") {
  const auto out = detail::nvrtc_compile(device_checks_source(), "ktune_device_checks.cu", {},
                                         {"--gpu-architecture=sm_90"});
  INFO(out.log);
  REQUIRE(out.ok);
  REQUIRE_FALSE(out.cubin.empty());
  const std::string cubin(out.cubin.begin(), out.cubin.end());
  for (const char* entry : {"kt_bytes_equal_value", "kt_bytes_equal", "kt_compare"}) {
    INFO(entry);
    CHECK(cubin.find(entry) != std::string::npos);  // extern "C": the symbol name is unmangled
  }
}

TEST_CASE("worker L2 priority reset compiles with NVRTC for sm_80 and sm_90, refuses older GPUs",
          "[worker][nvrtc]") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    INFO(arch);
    const auto out = detail::nvrtc_compile(l2_priority_reset_source(), "ktune_l2_priority_reset.cu",
                                           {}, {std::string("--gpu-architecture=") + arch});
    INFO(out.log);
    REQUIRE(out.ok);
    const std::string cubin(out.cubin.begin(), out.cubin.end());
    CHECK(cubin.find("kt_l2_demote") != std::string::npos);
  }
  // applypriority is sm_80 and later: an older GPU gets a named refusal, never a bad kernel.
  try {
    L2PriorityReset old("sm_75");
    FAIL("sm_75 accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::unsupported);
    CHECK(std::string(e.what()).find("sm_75") != std::string::npos);
  }
}
