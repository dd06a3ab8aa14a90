// The ptxas verbose report parser: entries in report order, device-function properties kept
// apart, optional fields, unrelated log lines.
#include <catch2/catch.hpp>

#include "ptxas_report.h"

using ktune::detail::parse_ptxas_report;

TEST_CASE("ptxas report: entries with smem, cmem, spills and a device function", "[builder]") {
  const std::string log =
      "copy.cu(12): warning #177-D: variable \"unused\" was declared but never referenced\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'second' for 'sm_90'\n"
      "ptxas info    : Function properties for helper_fn\n"
      "ptxas         .     40 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Function properties for second\n"
      "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, "
      "380 bytes "
      "cmem[0]\n"
      "ptxas info    : Compile time = 4.2 ms\n"
      "ptxas info    : Compiling entry function 'first' for 'sm_90'\n"
      "ptxas info    : Function properties for first\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n";
  auto kernels = parse_ptxas_report(log);
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].first == "second");
  const auto& s = kernels[0].second;
  CHECK(s.registers == 255);
  CHECK(s.shared_bytes == 4096);
  CHECK(s.const_bytes == 380);
  CHECK(s.stack_bytes == 16);  // not helper_fn's 40
  CHECK(s.spill_stores == 12);
  CHECK(s.spill_loads == 4);
  CHECK(kernels[1].first == "first");
  const auto& f = kernels[1].second;
  CHECK(f.registers == 10);
  CHECK(f.shared_bytes == 0);  // absent from the report means none
  CHECK(f.const_bytes == -1);  // not reported
  CHECK(f.stack_bytes == 0);
  CHECK(f.spill_stores == 0);
  CHECK(f.spill_loads == 0);
}

TEST_CASE("ptxas report: logs without a report give no entries", "[builder]") {
  CHECK(parse_ptxas_report("").empty());
  CHECK(parse_ptxas_report("x.cu(3): error: identifier \"foo\" is undefined\n").empty());
  CHECK(parse_ptxas_report("ptxas info    : Used 3 registers\n").empty());  // no entry header
}

TEST_CASE("ptxas report: Windows line endings and mangled names", "[builder]") {
  auto kernels = parse_ptxas_report(
      "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_80'\r\n"
      "ptxas info    : Function properties for _Z3fooPf\r\n"
      "ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
      "ptxas info    : Used 32 registers, 1024 bytes smem, 360 bytes cmem[0]\r\n");
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].first == "_Z3fooPf");
  CHECK(kernels[0].second.stack_bytes == 8);
  CHECK(kernels[0].second.registers == 32);
  CHECK(kernels[0].second.shared_bytes == 1024);
  CHECK(kernels[0].second.const_bytes == 360);
}
