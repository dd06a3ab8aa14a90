// Problem keys: Problem::from_key reads exactly what Problem::key() writes, and refuses every
// other text by name (a repeated dimension or attribute, an extent below 1, attributes out of
// order), so that one problem never has two keys in a log.
#include <catch2/catch.hpp>

#include "ktune/error.h"
#include "ktune/problem.h"

using namespace ktune;

TEST_CASE("problem keys round-trip and malformed ones are refused by name", "[problem]") {
  const Problem p{"gemm", {{"M", 4096}, {"N", 1024}, {"K", 8}}, {{"layout", "NT"}, {"dtype", "f16"}}};
  CHECK(Problem::from_key(p.key()) == p);
  CHECK(Problem::from_key(p.key()).key() == p.key());
  CHECK(Problem::from_key("copy|N=16|").dim("N") == 16);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"gemm|M=1,M=2|", "given twice"},
      {"gemm|M=1|a=1,a=2", "given twice"},
      {"gemm|M=0|", "expected >= 1"},
      {"gemm|M=-5|", "expected >= 1"},
      {"gemm|M=1|b=1,a=2", "not canonical"},
      {"gemm|M=01|", "not canonical"},
      {"gemm|M=abc|", "not an integer"},
      {"gemm|M=1|a=1|", "three"},
  };
  for (const auto& [key, needle] : refused) {
    INFO(key);
    try {
      Problem::from_key(key);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::parse_error);
      CHECK_THAT(e.what(), Catch::Contains(needle) && Catch::Contains(key));
    }
  }
}
