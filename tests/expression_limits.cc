// Tests of constraint expressions at their edges: 64-bit limits (INT64_MIN, 2^63, exact powers),
// integer / real comparisons, real modulo and powers of zero, literal forms, the nesting and
// operand-stack limits, and how evaluate() maps reals and NaN to integers.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "expression.h"
#include "ktune/error.h"

using ktune::Error;
using ktune::Expression;
using ktune::Value;

namespace {

const std::vector<std::string> kNames = {"a", "b", "c"};
constexpr Value kMin = std::numeric_limits<Value>::min();

/// Whether `text` holds for a, b, c.
bool holds(const std::string& text, Value a = 0, Value b = 0, Value c = 0) {
  const std::vector<Value> v = {a, b, c};
  return Expression::parse(text, kNames).test(v);
}

/// evaluate() of `text` for a, b, c.
Value value_of(const std::string& text, Value a = 0, Value b = 0, Value c = 0) {
  const std::vector<Value> v = {a, b, c};
  return Expression::parse(text, kNames).evaluate(v);
}

}  // namespace

TEST_CASE("expression limits: INT64_MIN divided, reduced and negated as Python does", "[expression]") {
  CHECK(holds("a // b > 0", kMin, -1));  // 2^63: continues in double precision, no SIGFPE
  CHECK(holds("a % b == 0", kMin, -1));
  CHECK(holds("abs(a) > 0", kMin));
  CHECK(holds("a == -2**63", kMin));
}

TEST_CASE("expression limits: powers stay exact up to 2^63", "[expression]") {
  CHECK(holds("3**39 == 4052555153018976267"));
  CHECK_FALSE(holds("0.0 ** -1 > 0"));  // division by zero: false, as for integers
}

TEST_CASE("expression limits: integers compare exactly with reals", "[expression]") {
  CHECK(holds("3 < 3.5"));
  CHECK(holds("a/b > 2", 9, 4));
  CHECK_FALSE(holds("a/b < 2", 9, 4));
  CHECK(holds("1e309 - 1e309 != 1"));  // NaN differs from everything
  CHECK(holds("min(3, 3.0) + 2**60 == 1152921504606846979"));  // min keeps the first of equals
}

TEST_CASE("expression limits: real modulo, abs, min and max", "[expression]") {
  CHECK(holds("6 % -3.0 == 0"));
  CHECK(holds("abs(a / 2) == 1.5", -3));
  CHECK(value_of("min(a, b)", 7, 5) == 5);
  CHECK(value_of("max(a, b)", 5, 7) == 7);
}

TEST_CASE("expression limits: literal forms and double negation", "[expression]") {
  CHECK(holds("a * .5 == 2", 4));
  CHECK(holds("1e-3 < 0.01"));
  CHECK(holds("1e+3 == 1000"));
  CHECK(value_of("not not a", 3) == 1);
  CHECK(value_of("! !a", 0) == 0);
}

TEST_CASE("expression limits: 100 nested parentheses, 128 operands, long and-chains", "[expression]") {
  CHECK(value_of(std::string(100, '(') + "a" + std::string(100, ')'), 7) == 7);
  CHECK_THROWS_AS(value_of(std::string(101, '(') + "a" + std::string(101, ')'), 7), Error);
  std::string args = "min(a";
  for (int i = 1; i < 128; ++i) args += ", a";
  CHECK(value_of(args + ")", 4) == 4);
  CHECK_THROWS_AS(value_of(args + ", a)", 4), Error);
  std::string chain = "a > 0";
  for (int i = 1; i < 200; ++i) chain += " and a > 0";
  CHECK(holds(chain, 1));
}

TEST_CASE("expression limits: evaluate() keeps reals below 2^63 and maps NaN to 0", "[expression]") {
  CHECK(value_of("9.1e18") == 9100000000000000000LL);
  CHECK(value_of("9.21e18") == 9210000000000000000LL);  // was clamped to INT64_MAX above 9.2e18
  CHECK(value_of("2.0**63") == std::numeric_limits<Value>::max());
  CHECK(value_of("-2.0**63") == kMin);
  CHECK(value_of("1e309 - 1e309") == 0);
}

TEST_CASE("expression limits: errors quote a short expression whole", "[expression]") {
  const std::string text = "block_a + block_b * (a + b + c)) > 1";
  const std::vector<std::string> names = {"a", "b", "c", "block_a", "block_b"};
  try {
    Expression::parse(text, names);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("\"" + text + "\""));
  }
}
