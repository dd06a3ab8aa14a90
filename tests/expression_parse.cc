// Tests of constraint expressions: precedence, Python integer semantics, chained comparisons,
// short-circuit logic, division by zero, precise errors for malformed text, and the edges:
// 64-bit limits, integer / real comparisons, literal forms, nesting and operand-stack limits.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "expression.h"
#include "ktune/error.h"

using ktune::Error;
using ktune::ErrorCode;
using ktune::Expression;
using ktune::Value;

namespace {

const std::vector<std::string> kNames = {"a", "b", "c"};
constexpr Value kInt64Min = std::numeric_limits<Value>::min();

/// Value of `text` with a, b, c bound to the given values.
Value eval(const std::string& text, Value a = 0, Value b = 0, Value c = 0) {
  const std::vector<Value> values = {a, b, c};
  return Expression::parse(text, kNames).evaluate(values);
}

bool holds(const std::string& text, Value a = 0, Value b = 0, Value c = 0) {
  const std::vector<Value> values = {a, b, c};
  return Expression::parse(text, kNames).test(values);
}

/// Python's // and % on integers, written out for reference.
Value floor_div(Value x, Value y) { return x / y - ((x % y != 0) && ((x < 0) != (y < 0))); }
Value python_mod(Value x, Value y) { return x - floor_div(x, y) * y; }

/// The Error thrown when parsing `text`.
Error parse_failure(const std::string& text) {
  try {
    Expression::parse(text, kNames);
  } catch (const Error& e) {
    return e;
  }
  FAIL("expression \"" << text << "\" parsed without error");
  return Error(ErrorCode::internal, "unreachable");
}

}  // namespace

TEST_CASE("expression: operator precedence follows Python", "[expression]") {
  CHECK(eval("2+3*4") == 14);
  CHECK(eval("(2+3)*4") == 20);
  CHECK(eval("10-4-3") == 3);
  CHECK(eval("2*3%4") == 2);
  CHECK(eval("100//10//3") == 3);
  CHECK(eval("-2**2") == -4);
  CHECK(eval("2**3**2") == 512);
  CHECK(eval("2**-1*4") == 2);
  CHECK(eval("- -3") == 3);
  CHECK(eval("+3") == 3);
  CHECK(eval("1 + 2 == 3") == 1);
  CHECK(eval("not 1 == 2") == 1);
  CHECK(eval("1 or 0 and 0") == 1);
  CHECK(eval("(1 or 0) and 0") == 0);
  CHECK(eval("not a and b", 0, 1) == 1);
  CHECK(eval("a*b+c", 3, 4, 5) == 17);
  CHECK(eval("a*(b+c)", 3, 4, 5) == 27);
}

TEST_CASE("expression: floor division and modulo with negatives follow Python", "[expression]") {
  CHECK(eval("7 // 2") == 3);
  CHECK(eval("-7 // 2") == -4);
  CHECK(eval("7 // -2") == -4);
  CHECK(eval("-7 // -2") == 3);
  CHECK(eval("-7 % 3") == 2);
  CHECK(eval("7 % -3") == -2);
  CHECK(eval("-7 % -3") == -1);
  CHECK(eval("6 % 3") == 0);
  CHECK(eval("a // b", -9, 4) == -3);
  CHECK(eval("a % b", -9, 4) == 3);
  // Real operands keep Python's rules: // is the quotient % belongs to (Python: 1 // 0.1 is
  // 9.0 and 1 % 0.1 is 0.09999..., where floor(1 / 0.1) would give 10).
  CHECK(holds("-7.5 // 2 == -4"));
  CHECK(holds("-7.5 % 2 == 0.5"));
  CHECK(holds("1 // 0.1 == 9"));
  CHECK(holds("32 // 0.4 == 79"));
  CHECK(holds("-1 // 0.1 == -10"));
  CHECK(holds("7 // -2.5 == -3"));
  for (Value a : {1, 7, 32, 100, -3})
    CHECK(holds("(a // 0.4) * 0.4 + a % 0.4 == a", a));
}

TEST_CASE("expression: true division is real", "[expression]") {
  CHECK(holds("7/2 == 3.5"));
  CHECK(holds("a/b == 2", 8, 4));
  CHECK_FALSE(holds("a/b == 2", 9, 4));
  CHECK(eval("7/2") == 3);    // evaluate() floors real results
  CHECK(eval("-7/2") == -4);
  CHECK(holds("a/b", 1, 4));  // 0.25 is truthy
  CHECK(holds("1e3 == 1000"));
}

TEST_CASE("expression: chained comparisons mean every link holds", "[expression]") {
  CHECK(holds("1 < 2 < 3"));
  CHECK_FALSE(holds("1 < 3 < 2"));
  CHECK(holds("3 > 2 > 1"));
  CHECK_FALSE(holds("3 > 2 > 2"));
  CHECK(holds("1 < 2 <= 2 == 2 != 5"));
  for (Value a : {1, 4, 8, 16, 32, 64}) {
    for (Value b : {1, 2, 8, 16, 32, 64}) {
      const bool expected = 32 <= a * b && a * b <= 1024;
      CHECK(holds("32 <= a*b <= 1024", a, b) == expected);
    }
  }
  for (Value a = -2; a <= 2; ++a) {
    for (Value b = -2; b <= 2; ++b) {
      for (Value c = -2; c <= 2; ++c) {
        INFO(a << " " << b << " " << c);
        CHECK(holds("a < b < c", a, b, c) == (a < b && b < c));
        CHECK(holds("a <= b > c != a", a, b, c) == (a <= b && b > c && c != a));
        CHECK(eval("(a < b < c) + 1", a, b, c) == (a < b && b < c) + 1);
        CHECK(holds("a - b*c == a - (b*c)", a, b, c));
        CHECK(eval("a // (b - 3) + c % 3 * a", a, b, c) ==
              floor_div(a, b - 3) + python_mod(c, 3) * a);
      }
    }
  }
}

TEST_CASE("expression: integer overflow continues in double precision", "[expression]") {
  CHECK(holds("a * b > 0", 4000000000LL, 4000000000LL));
  CHECK(holds("a + b > a", 9223372036854775807LL, 1));
  CHECK(holds("2 ** 70 > 2 ** 69"));
  CHECK(holds("-a > 0", -9223372036854775807LL - 1));
}

TEST_CASE("expression: and/or short-circuit and return an operand", "[expression]") {
  CHECK(eval("0 or 5") == 5);
  CHECK(eval("3 and 4") == 4);
  CHECK(eval("0 and 4") == 0);
  CHECK(eval("not 5") == 0);
  CHECK(holds("b == 0 or a // b > 1", 7, 0));  // right side never divides by zero
  CHECK_FALSE(holds("b != 0 and a // b > 1", 7, 0));
  CHECK(holds("a > 1 && b < 2", 2, 1));
  CHECK(holds("a > 5 || b < 2", 2, 1));
  CHECK(holds("!(a > 5)", 2));
  CHECK(holds("! a", 0));
}

TEST_CASE("expression: division by zero makes the expression false", "[expression]") {
  CHECK_FALSE(holds("a / b > 0", 1, 0));
  CHECK_FALSE(holds("a // b == 0", 1, 0));
  CHECK_FALSE(holds("a % b == 0", 1, 0));
  CHECK_FALSE(holds("not (a % b)", 1, 0));
  CHECK_FALSE(holds("0 ** -1 == 0"));
  CHECK(eval("a // b", 1, 0) == 0);
}

TEST_CASE("expression: functions and literals", "[expression]") {
  CHECK(eval("min(a, b, 3)", 7, 5) == 3);
  CHECK(eval("max(a, b)", 7, 5) == 7);
  CHECK(eval("abs(a - b)", 2, 9) == 7);
  CHECK(eval("True + True") == 2);
  CHECK(eval("False") == 0);
  CHECK(eval("9223372036854775807") == 9223372036854775807LL);
  // Past 64 bits a literal is a double, as overflowing arithmetic is: Python's
  // -9223372036854775808 (the unary minus of 2^63) is the smallest 64-bit integer.
  CHECK(holds("a == -9223372036854775808", -9223372036854775807LL - 1));
  CHECK(holds("a > -9223372036854775808", -9223372036854775807LL));
  CHECK_FALSE(holds("a > -9223372036854775808", -9223372036854775807LL - 1));
  CHECK(holds("99999999999999999999 > a", 9223372036854775807LL));
}

TEST_CASE("expression: referenced parameters are positions, sorted", "[expression]") {
  auto e = Expression::parse("c * a + c > 2", kNames);
  CHECK(e.params() == std::vector<std::size_t>{0, 2});
  CHECK(e.text() == "c * a + c > 2");
  CHECK(Expression::parse("12 * 1024 > 3", kNames).params().empty());
  // Constant sub-expressions are folded into one literal.
  CHECK(Expression::parse("a < 12 * 1024 + 7", kNames).cost() == 2);
}

TEST_CASE("expression: malformed text reports the column and the token", "[expression]") {
  const Error e = parse_failure("a*(b+");
  CHECK(e.code() == ErrorCode::parse_error);
  CHECK(std::string(e.what()) ==
        "expression \"a*(b+\": column 6: expected an operand, found end of input");

  struct Case {
    std::string text;
    int column;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"(a+b", 5, "expected ')' to close '(' at column 1, found end of input"},
      {"a+b)", 4, "unexpected ')'"},
      {"a +", 4, "expected an operand, found end of input"},
      {"a + * b", 5, "expected an operand, found '*'"},
      {"", 1, "expected an operand, found end of input"},
      {"   ", 4, "found end of input"},
      {"a $ b", 3, "unexpected character '$'"},
      {"a = b", 3, "did you mean '=='"},
      {"a & b", 3, "bitwise '&' is not supported"},
      {"a b", 3, "found name 'b'"},
      {"a and", 6, "expected an operand"},
      {"and a", 1, "found name 'and'"},
      {"12abc", 3, "in number"},
      {"1" + std::string(400, '0'), 1, "too large"},
      {"min(a)", 1, "at least two arguments"},
      {"max(a, b", 9, "expected ',' or ')'"},
      {"a < < b", 5, "found '<'"},
      {"()", 2, "found ')'"},
  };
  for (const auto& c : cases) {
    INFO("expression: " << c.text);
    const Error err = parse_failure(c.text);
    CHECK(err.code() == ErrorCode::parse_error);
    const std::string message = err.what();
    CHECK_THAT(message, Catch::Contains("column " + std::to_string(c.column) + ": "));
    CHECK_THAT(message, Catch::Contains(c.fragment));
  }
}

TEST_CASE("expression: unknown names are named with the known parameters", "[expression]") {
  const Error e = parse_failure("a + block_x");
  CHECK(e.code() == ErrorCode::unknown_name);
  CHECK_THAT(std::string(e.what()), Catch::Contains("column 5"));
  CHECK_THAT(std::string(e.what()), Catch::Contains("'block_x'"));
  CHECK_THAT(std::string(e.what()), Catch::Contains("known parameters: a, b, c"));

  const Error f = parse_failure("log2(a)");
  CHECK(f.code() == ErrorCode::unknown_name);
  CHECK_THAT(std::string(f.what()), Catch::Contains("unknown function 'log2'"));
}

TEST_CASE("expression: deep nesting is an error, not a crash", "[expression]") {
  const std::string deep = std::string(500, '(') + "a" + std::string(500, ')');
  CHECK(parse_failure(deep).code() == ErrorCode::parse_error);
  const std::string negations(500, '-');
  CHECK(parse_failure(negations + "a").code() == ErrorCode::parse_error);
  // Moderate nesting works.
  CHECK(eval(std::string(50, '(') + "a" + std::string(50, ')'), 7) == 7);
}

TEST_CASE("expression: very long flat chains are an error, not a stack overflow", "[expression]") {
  // 60000-term chains built left-leaning trees as deep as they were long and crashed the
  // process; nesting alone did not count them.
  for (const std::string join : {"+", " or ", " and "}) {
    std::string chain = "a";
    for (int i = 1; i < 60000; ++i) chain += join + "a";
    const Error e = parse_failure(chain);
    CHECK(e.code() == ErrorCode::parse_error);
    CHECK_THAT(e.what(), Catch::Contains("too long"));
    CHECK(std::string(e.what()).size() < 400);  // the message quotes the start, not 300 KB
  }
  std::string sum = "a";  // a long but sensible chain still works
  for (int i = 1; i < 1000; ++i) sum += "+a";
  CHECK(eval(sum, 2) == 2000);
}

TEST_CASE("expression: too few values is misuse", "[expression]") {
  auto e = Expression::parse("c > 1", kNames);
  const std::vector<Value> two = {1, 2};
  CHECK_THROWS_AS(e.test(two), Error);
}

TEST_CASE("expression limits: INT64_MIN divided, reduced and negated as Python does", "[expression]") {
  CHECK(holds("a // b > 0", kInt64Min, -1));  // 2^63: continues in double precision, no SIGFPE
  CHECK(holds("a % b == 0", kInt64Min, -1));
  CHECK(holds("abs(a) > 0", kInt64Min));
  CHECK(holds("a == -2**63", kInt64Min));
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
  CHECK(eval("min(a, b)", 7, 5) == 5);
  CHECK(eval("max(a, b)", 5, 7) == 7);
}

TEST_CASE("expression limits: literal forms and double negation", "[expression]") {
  CHECK(holds("a * .5 == 2", 4));
  CHECK(holds("1e-3 < 0.01"));
  CHECK(holds("1e+3 == 1000"));
  CHECK(eval("not not a", 3) == 1);
  CHECK(eval("! !a", 0) == 0);
}

TEST_CASE("expression limits: 100 nested parentheses, 128 operands, long and-chains", "[expression]") {
  CHECK(eval(std::string(100, '(') + "a" + std::string(100, ')'), 7) == 7);
  CHECK_THROWS_AS(eval(std::string(101, '(') + "a" + std::string(101, ')'), 7), Error);
  std::string args = "min(a";
  for (int i = 1; i < 128; ++i) args += ", a";
  CHECK(eval(args + ")", 4) == 4);
  CHECK_THROWS_AS(eval(args + ", a)", 4), Error);
  std::string chain = "a > 0";
  for (int i = 1; i < 200; ++i) chain += " and a > 0";
  CHECK(holds(chain, 1));
}

TEST_CASE("expression limits: evaluate() keeps reals below 2^63 and maps NaN to 0", "[expression]") {
  CHECK(eval("9.1e18") == 9100000000000000000LL);
  CHECK(eval("9.21e18") == 9210000000000000000LL);  // was clamped to INT64_MAX above 9.2e18
  CHECK(eval("2.0**63") == std::numeric_limits<Value>::max());
  CHECK(eval("-2.0**63") == kInt64Min);
  CHECK(eval("1e309 - 1e309") == 0);
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
