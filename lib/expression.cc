// Parser, compiler and evaluator of constraint expressions (see expression.h). Text is lexed
// into tokens with 1-based columns, parsed by recursive descent into a small tree, then
// compiled into stack bytecode with constant folding; jumps are relative so that any
// sub-sequence of code can run on its own (which is how constant folding evaluates it).
#include "expression.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include "ktune/error.h"

namespace ktune {
namespace {

// ---- lexer ---------------------------------------------------------------------------------

enum class TokenKind { integer, real, name, symbol, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;     // as written
  std::size_t column;   // 1-based
  Value integer = 0;
  double real = 0;
};

/// Human description of a token for "found ..." messages.
std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::end: return "end of input";
    case TokenKind::integer:
    case TokenKind::real: return "number " + t.text;
    case TokenKind::name: return "name '" + t.text + "'";
    case TokenKind::symbol: return "'" + t.text + "'";
  }
  return t.text;
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// ---- syntax tree ---------------------------------------------------------------------------

enum class NodeKind { integer, real, param, negate, logical_not, binary, compare, logical_and,
                      logical_or, call };

struct Node {
  NodeKind kind = NodeKind::integer;
  Value integer = 0;                 // integer literal
  double real = 0;                   // real literal
  std::size_t param = 0;             // parameter position
  std::uint8_t op = 0;               // binary operator or function
  std::vector<std::uint8_t> ops;     // comparison operators of a chain
  std::vector<std::unique_ptr<Node>> kids;
};

using NodePtr = std::unique_ptr<Node>;

// ---- bytecode ------------------------------------------------------------------------------

enum Op : std::uint8_t {
  op_push_int, op_push_real, op_load, op_negate, op_not, op_add, op_sub, op_mul, op_true_div,
  op_floor_div, op_mod, op_pow, op_eq, op_ne, op_lt, op_le, op_gt, op_ge,
  op_jump_if_false_or_pop, op_jump_if_true_or_pop, op_min, op_max, op_abs
};

/// A runtime number: an exact integer or a double (after true division or overflow).
struct Number {
  Value i;
  double f;
  bool real;
};

Number make_int(Value v) { return {v, 0.0, false}; }
Number make_real(double v) { return {0, v, true}; }
double as_double(const Number& n) { return n.real ? n.f : static_cast<double>(n.i); }
bool truthy(const Number& n) { return n.real ? n.f != 0.0 : n.i != 0; }

/// Python's floor-division/modulo adjustment for doubles.
double python_fmod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// Python's float floor division (b != 0): the quotient that python_fmod's remainder belongs
/// to, (a - mod) / b rounded, so that (a // b) * b + a % b == a as in Python (1 // 0.1 is 9,
/// where floor(1 / 0.1) would give 10).
double python_floordiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  const double floored = std::floor(div);
  return div - floored > 0.5 ? floored + 1.0 : floored;
}

/// Integer power with overflow detection; nullopt on overflow.
std::optional<Value> int_pow(Value base, Value exp) {
  Value result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) return std::nullopt;
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return std::nullopt;
  }
  return result;
}

/// Where a binary instruction takes its right operand from (Instruction::operand).
enum Operand : std::uint8_t { operand_stack, operand_literal, operand_param };

/// Three-way comparison of an integer with a double, exact like Python's (no rounding of the
/// integer); nullopt when the double is NaN.
std::optional<int> order_int_real(Value i, double d) {
  if (std::isnan(d)) return std::nullopt;
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  const double whole = std::trunc(d);
  const auto w = static_cast<Value>(whole);
  if (i != w) return i < w ? -1 : 1;
  return d > whole ? -1 : d < whole ? 1 : 0;
}

template <class T>
bool apply_order(std::uint8_t op, T a, T b) {
  switch (op) {
    case op_eq: return a == b;
    case op_ne: return a != b;
    case op_lt: return a < b;
    case op_le: return a <= b;
    case op_gt: return a > b;
    default: return a >= b;
  }
}

bool compare(std::uint8_t op, const Number& a, const Number& b) {
  if (!a.real && !b.real) return apply_order(op, a.i, b.i);
  if (a.real && b.real) return apply_order(op, a.f, b.f);
  auto order = a.real ? order_int_real(b.i, a.f) : order_int_real(a.i, b.f);
  if (!order) return op == op_ne;  // NaN compares unequal to everything
  return apply_order(op, a.real ? -*order : *order, 0);
}

/// Applies an arithmetic binary operator; returns false on division by zero.
bool arithmetic(std::uint8_t op, const Number& a, const Number& b, Number& out) {
  if (!a.real && !b.real) {
    const Value x = a.i, y = b.i;
    Value r;
    switch (op) {
      case op_add:
        if (!__builtin_add_overflow(x, y, &r)) { out = make_int(r); return true; }
        break;
      case op_sub:
        if (!__builtin_sub_overflow(x, y, &r)) { out = make_int(r); return true; }
        break;
      case op_mul:
        if (!__builtin_mul_overflow(x, y, &r)) { out = make_int(r); return true; }
        break;
      case op_true_div:
        if (y == 0) return false;
        out = make_real(static_cast<double>(x) / static_cast<double>(y));
        return true;
      case op_floor_div:
        if (y == 0) return false;
        if (x == std::numeric_limits<Value>::min() && y == -1) break;
        r = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
        out = make_int(r);
        return true;
      case op_mod:
        if (y == 0) return false;
        if (y == -1) { out = make_int(0); return true; }
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        out = make_int(r);
        return true;
      case op_pow:
        if (y >= 0) {
          if (auto p = int_pow(x, y)) { out = make_int(*p); return true; }
        } else if (x == 0) {
          return false;  // 0 ** negative: ZeroDivisionError in Python
        }
        break;
      default: break;
    }
    // Integer overflow or negative power: continue in double precision.
  }
  const double x = as_double(a), y = as_double(b);
  switch (op) {
    case op_add: out = make_real(x + y); return true;
    case op_sub: out = make_real(x - y); return true;
    case op_mul: out = make_real(x * y); return true;
    case op_true_div:
      if (y == 0.0) return false;
      out = make_real(x / y);
      return true;
    case op_floor_div:
      if (y == 0.0) return false;
      out = make_real(python_floordiv(x, y));
      return true;
    case op_mod:
      if (y == 0.0) return false;
      out = make_real(python_fmod(x, y));
      return true;
    case op_pow:
      if (x == 0.0 && y < 0) return false;
      out = make_real(std::pow(x, y));
      return true;
    default: return false;
  }
}

constexpr std::size_t kMaxStack = 128;
constexpr int kMaxNesting = 100;
/// Most nodes (operands and operations) of one expression: long flat chains ("a or b or ...")
/// build deep left-leaning trees that nesting does not count, and that compiling and freeing
/// walk recursively.
constexpr std::size_t kMaxNodes = 4096;

/// Result of running code: the value left on the stack, or a division by zero.
struct RunResult {
  Number value;
  bool division_by_zero;
};

RunResult run_code(const Expression::Instruction* code, std::size_t length, const double* reals,
                   const Value* values) {
  Number stack[kMaxStack];
  std::size_t top = 0;  // number of values on the stack
  for (std::size_t pc = 0; pc < length; ++pc) {
    const auto& in = code[pc];
    if (in.op >= op_add && in.op <= op_ge) {
      // Binary operator: the right operand comes inline or from the stack.
      Number y;
      if (in.operand == operand_literal) y = make_int(in.number);
      else if (in.operand == operand_param) y = make_int(values[in.number]);
      else y = stack[--top];
      Number& x = stack[top - 1];
      if (in.op >= op_eq) {
        const bool holds = compare(in.op, x, y);
        if (in.arg == 0) {
          x = make_int(holds ? 1 : 0);
        } else if (holds) {
          x = y;  // inner link of a chain: the right operand is the next left operand
        } else {
          x = make_int(0);
          pc += in.arg;
        }
        continue;
      }
      // Integer fast paths; reals, overflow, zero and negative operands take arithmetic().
      if (!x.real && !y.real) {
        Value r;
        switch (in.op) {
          case op_add:
            if (!__builtin_add_overflow(x.i, y.i, &r)) { x.i = r; continue; }
            break;
          case op_sub:
            if (!__builtin_sub_overflow(x.i, y.i, &r)) { x.i = r; continue; }
            break;
          case op_mul:
            if (!__builtin_mul_overflow(x.i, y.i, &r)) { x.i = r; continue; }
            break;
          case op_floor_div:
            if (y.i > 0 && x.i >= 0) { x.i /= y.i; continue; }
            break;
          case op_mod:
            if (y.i > 0 && x.i >= 0) { x.i %= y.i; continue; }
            break;
          default: break;
        }
      }
      if (!arithmetic(in.op, x, y, x)) return {make_int(0), true};
      continue;
    }
    switch (in.op) {
      case op_push_int: stack[top++] = make_int(in.number); break;
      case op_push_real: stack[top++] = make_real(reals[in.number]); break;
      case op_load: stack[top++] = make_int(values[in.arg]); break;
      case op_negate: {
        Number& n = stack[top - 1];
        if (n.real) n.f = -n.f;
        else if (n.i == std::numeric_limits<Value>::min()) n = make_real(-static_cast<double>(n.i));
        else n.i = -n.i;
        break;
      }
      case op_not: stack[top - 1] = make_int(truthy(stack[top - 1]) ? 0 : 1); break;
      case op_abs: {
        Number& n = stack[top - 1];
        if (n.real) n.f = std::fabs(n.f);
        else if (n.i == std::numeric_limits<Value>::min()) n = make_real(-static_cast<double>(n.i));
        else if (n.i < 0) n.i = -n.i;
        break;
      }
      case op_jump_if_false_or_pop:
        if (!truthy(stack[top - 1])) pc += in.arg;
        else --top;
        break;
      case op_jump_if_true_or_pop:
        if (truthy(stack[top - 1])) pc += in.arg;
        else --top;
        break;
      case op_min: case op_max: {
        const std::size_t first = top - in.arg;
        Number best = stack[first];
        for (std::size_t k = first + 1; k < top; ++k) {
          const bool better = in.op == op_min ? compare(op_lt, stack[k], best)
                                              : compare(op_gt, stack[k], best);
          if (better) best = stack[k];
        }
        top = first;
        stack[top++] = best;
        break;
      }
      default: break;
    }
  }
  return {stack[0], false};
}

// ---- parser --------------------------------------------------------------------------------

/// Lexes, parses and compiles one expression into an Expression.
struct ExpressionCompiler {
  std::string_view text;
  std::span<const std::string> names;
  std::vector<Token> tokens;
  std::size_t next = 0;
  int nesting = 0;
  std::size_t nodes = 0;
  std::vector<std::size_t> referenced;

  /// The expression as messages quote it: whole, or its start when it is long.
  std::string quoted() const {
    constexpr std::size_t kShown = 160;
    return text.size() <= kShown ? std::string(text)
                                 : std::string(text.substr(0, kShown)) + "... (" +
                                       std::to_string(text.size()) + " characters)";
  }

  [[noreturn]] void fail(std::size_t column, const std::string& message) const {
    throw Error(ErrorCode::parse_error, "expression \"" + quoted() + "\": column " +
                                            std::to_string(column) + ": " + message);
  }

  [[noreturn]] void fail_unknown(const Token& t, const std::string& what,
                                 const std::string& known) const {
    throw Error(ErrorCode::unknown_name, "expression \"" + quoted() + "\": column " +
                                             std::to_string(t.column) + ": unknown " + what +
                                             " '" + t.text + "'; " + known);
  }

  std::string known_parameters() const {
    if (names.empty()) return "the space has no parameters";
    std::string list = "known parameters: ";
    for (std::size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
    return list;
  }

  void lex() {
    std::size_t pos = 0;
    while (pos < text.size()) {
      const char c = text[pos];
      if (std::isspace(static_cast<unsigned char>(c))) { ++pos; continue; }
      Token t;
      t.column = pos + 1;
      const std::size_t start = pos;
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && pos + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[pos + 1])))) {
        bool real = false;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        if (pos < text.size() && text[pos] == '.') {
          real = true;
          ++pos;
          while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        }
        if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
          std::size_t p = pos + 1;
          if (p < text.size() && (text[p] == '+' || text[p] == '-')) ++p;
          if (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
            real = true;
            pos = p;
            while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
          }
        }
        if (pos < text.size() && is_name_start(text[pos])) {
          fail(pos + 1, "unexpected character '" + std::string(1, text[pos]) + "' in number");
        }
        t.text = std::string(text.substr(start, pos - start));
        if (real) {
          t.kind = TokenKind::real;
          t.real = std::strtod(t.text.c_str(), nullptr);
        } else {
          t.kind = TokenKind::integer;
          auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.integer);
          if (ec != std::errc()) {
            // Past 64 bits, as arithmetic that overflows: a double (so -9223372036854775808,
            // the unary minus of 2^63, is -2^63 as in Python).
            t.kind = TokenKind::real;
            t.real = std::strtod(t.text.c_str(), nullptr);
            if (!std::isfinite(t.real)) fail(t.column, "integer literal " + t.text + " is too large");
          }
        }
      } else if (is_name_start(c)) {
        while (pos < text.size() && is_name_char(text[pos])) ++pos;
        t.kind = TokenKind::name;
        t.text = std::string(text.substr(start, pos - start));
      } else {
        static constexpr std::array<std::string_view, 10> two = {
            "==", "!=", "<=", ">=", "//", "**", "&&", "||", "<>", "=>"};
        t.kind = TokenKind::symbol;
        const std::string_view pair = text.substr(pos, 2);
        if (pair.size() == 2 && std::find(two.begin(), two.end(), pair) != two.end()) {
          if (pair == "<>" || pair == "=>") fail(t.column, "unexpected '" + std::string(pair) + "'");
          t.text = std::string(pair);
          pos += 2;
        } else if (std::string_view("+-*/%<>()!,").find(c) != std::string_view::npos) {
          t.text = std::string(1, c);
          ++pos;
        } else if (c == '=') {
          fail(t.column, "unexpected character '=' (did you mean '=='?)");
        } else if (c == '&' || c == '|') {
          // Bitwise operators are not supported; "&&" would be another condition, not the same.
          fail(t.column, std::string("unexpected character '") + c + "': bitwise '" + c +
                             "' is not supported (for a logical " + (c == '&' ? "and" : "or") +
                             " write '" + (c == '&' ? "and" : "or") + "' or '" + c + c +
                             "'; a power-of-two test is x % 2**k == 0 or a list of values)");
        } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          fail(t.column, std::string("unexpected character '") + hex + "'");
        } else {
          fail(t.column, std::string("unexpected character '") + c + "'");
        }
      }
      tokens.push_back(std::move(t));
    }
    Token end;
    end.column = text.size() + 1;
    tokens.push_back(end);
  }

  const Token& peek() const { return tokens[next]; }
  bool at_symbol(std::string_view s) const {
    return peek().kind == TokenKind::symbol && peek().text == s;
  }
  bool at_name(std::string_view s) const {
    return peek().kind == TokenKind::name && peek().text == s;
  }

  NodePtr make(NodeKind kind) {
    if (++nodes > kMaxNodes)
      fail(peek().column, "expression too long (more than " + std::to_string(kMaxNodes) +
                              " operands and operations)");
    auto n = std::make_unique<Node>();
    n->kind = kind;
    return n;
  }

  void enter(const Token& t) {
    if (++nesting > kMaxNesting) fail(t.column, "expression nested too deeply");
  }

  /// A left-associative chain of `operand`s joined by the keyword `word` or `symbol`.
  NodePtr parse_logical(NodeKind kind, std::string_view word, std::string_view symbol,
                        NodePtr (ExpressionCompiler::*operand)()) {
    NodePtr left = (this->*operand)();
    while (at_name(word) || at_symbol(symbol)) {
      ++next;
      auto n = make(kind);
      n->kids.push_back(std::move(left));
      n->kids.push_back((this->*operand)());
      left = std::move(n);
    }
    return left;
  }

  // or_expr := and_expr (("or" | "||") and_expr)*
  NodePtr parse_or() {
    return parse_logical(NodeKind::logical_or, "or", "||", &ExpressionCompiler::parse_and);
  }

  // and_expr := not_expr (("and" | "&&") not_expr)*
  NodePtr parse_and() {
    return parse_logical(NodeKind::logical_and, "and", "&&", &ExpressionCompiler::parse_not);
  }

  // not_expr := ("not" | "!") not_expr | comparison
  NodePtr parse_not() {
    if (at_name("not") || at_symbol("!")) {
      enter(peek());
      ++next;
      auto n = make(NodeKind::logical_not);
      n->kids.push_back(parse_not());
      --nesting;
      return n;
    }
    return parse_comparison();
  }

  std::optional<std::uint8_t> comparison_op() const {
    if (peek().kind != TokenKind::symbol) return std::nullopt;
    const std::string& s = peek().text;
    if (s == "==") return op_eq;
    if (s == "!=") return op_ne;
    if (s == "<") return op_lt;
    if (s == "<=") return op_le;
    if (s == ">") return op_gt;
    if (s == ">=") return op_ge;
    return std::nullopt;
  }

  // comparison := sum (cmp_op sum)*
  NodePtr parse_comparison() {
    NodePtr first = parse_sum();
    auto op = comparison_op();
    if (!op) return first;
    auto n = make(NodeKind::compare);
    n->kids.push_back(std::move(first));
    while (op) {
      ++next;
      n->ops.push_back(*op);
      n->kids.push_back(parse_sum());
      op = comparison_op();
    }
    return n;
  }

  NodePtr binary(std::uint8_t op, NodePtr left, NodePtr right) {
    auto n = make(NodeKind::binary);
    n->op = op;
    n->kids.push_back(std::move(left));
    n->kids.push_back(std::move(right));
    return n;
  }

  // sum := term (("+" | "-") term)*
  NodePtr parse_sum() {
    NodePtr left = parse_term();
    while (at_symbol("+") || at_symbol("-")) {
      const std::uint8_t op = peek().text == "+" ? op_add : op_sub;
      ++next;
      left = binary(op, std::move(left), parse_term());
    }
    return left;
  }

  // term := unary (("*" | "/" | "//" | "%") unary)*
  NodePtr parse_term() {
    NodePtr left = parse_unary();
    while (at_symbol("*") || at_symbol("/") || at_symbol("//") || at_symbol("%")) {
      const std::string& s = peek().text;
      const std::uint8_t op = s == "*" ? op_mul : s == "/" ? op_true_div : s == "//" ? op_floor_div
                                                                                      : op_mod;
      ++next;
      left = binary(op, std::move(left), parse_unary());
    }
    return left;
  }

  // unary := ("-" | "+") unary | power
  NodePtr parse_unary() {
    if (at_symbol("-") || at_symbol("+")) {
      const bool negate = peek().text == "-";
      enter(peek());
      ++next;
      NodePtr operand = parse_unary();
      --nesting;
      if (!negate) return operand;
      auto n = make(NodeKind::negate);
      n->kids.push_back(std::move(operand));
      return n;
    }
    return parse_power();
  }

  // power := primary ("**" unary)?
  NodePtr parse_power() {
    NodePtr base = parse_primary();
    if (!at_symbol("**")) return base;
    enter(peek());
    ++next;
    NodePtr exponent = parse_unary();
    --nesting;
    return binary(op_pow, std::move(base), std::move(exponent));
  }

  // primary := number | name | function "(" or_expr ("," or_expr)* ")" | "(" or_expr ")"
  NodePtr parse_primary() {
    const Token& t = peek();
    if (t.kind == TokenKind::integer || t.kind == TokenKind::real) {
      ++next;
      auto n = make(t.kind == TokenKind::integer ? NodeKind::integer : NodeKind::real);
      n->integer = t.integer;
      n->real = t.real;
      return n;
    }
    if (t.kind == TokenKind::name && t.text != "and" && t.text != "or" && t.text != "not") {
      ++next;
      if (at_symbol("(")) return parse_call(t);
      if (t.text == "True" || t.text == "False") {
        auto n = make(NodeKind::integer);
        n->integer = t.text == "True" ? 1 : 0;
        return n;
      }
      auto it = std::find(names.begin(), names.end(), t.text);
      if (it == names.end()) fail_unknown(t, "name", known_parameters());
      auto n = make(NodeKind::param);
      n->param = static_cast<std::size_t>(it - names.begin());
      referenced.push_back(n->param);
      return n;
    }
    if (at_symbol("(")) {
      const Token open = t;
      enter(open);
      ++next;
      NodePtr inner = parse_or();
      if (!at_symbol(")")) {
        fail(peek().column, "expected ')' to close '(' at column " + std::to_string(open.column) +
                                ", found " + describe(peek()));
      }
      ++next;
      --nesting;
      return inner;
    }
    fail(t.column, "expected an operand, found " + describe(t));
  }

  NodePtr parse_call(const Token& function) {
    std::uint8_t op;
    if (function.text == "min") op = op_min;
    else if (function.text == "max") op = op_max;
    else if (function.text == "abs") op = op_abs;
    else fail_unknown(function, "function", "known functions: min, max, abs");
    const Token open = peek();
    enter(open);
    ++next;  // '('
    auto n = make(NodeKind::call);
    n->op = op;
    n->kids.push_back(parse_or());
    while (at_symbol(",")) {
      ++next;
      n->kids.push_back(parse_or());
    }
    if (!at_symbol(")")) {
      fail(peek().column, "expected ',' or ')' to close '" + function.text + "(' at column " +
                              std::to_string(open.column) + ", found " + describe(peek()));
    }
    ++next;
    --nesting;
    const std::size_t count = n->kids.size();
    if (op == op_abs && count != 1) {
      fail(function.column, "abs() takes one argument, got " + std::to_string(count));
    }
    if (op != op_abs && count < 2) {
      fail(function.column, function.text + "() takes at least two arguments, got " +
                                std::to_string(count));
    }
    return n;
  }

  NodePtr parse_all() {
    lex();
    NodePtr root = parse_or();
    const Token& t = peek();
    if (t.kind != TokenKind::end) {
      if (t.kind == TokenKind::symbol && t.text == ")") fail(t.column, "unexpected ')' without a matching '('");
      fail(t.column, "expected an operator or end of input, found " + describe(t));
    }
    return root;
  }

  // ---- code generation ---------------------------------------------------------------------

  std::vector<Expression::Instruction> code;
  std::vector<double> reals;
  std::size_t depth = 0, max_depth = 0;

  void push_depth(std::size_t by = 1) {
    depth += by;
    max_depth = std::max(max_depth, depth);
    if (max_depth > kMaxStack) fail(1, "expression too complex (operand stack deeper than " +
                                           std::to_string(kMaxStack) + ")");
  }

  void emit(std::uint8_t op, std::int32_t arg = 0, std::int64_t number = 0) {
    code.push_back({op, operand_stack, arg, number});
  }

  /// Emits code leaving the node's value on the stack, then folds it to a literal when it
  /// reads no parameter and does not divide by zero.
  void compile(const Node& n) {
    const std::size_t start = code.size();
    switch (n.kind) {
      case NodeKind::integer: emit(op_push_int, 0, n.integer); push_depth(); break;
      case NodeKind::real:
        reals.push_back(n.real);
        emit(op_push_real, 0, static_cast<std::int64_t>(reals.size() - 1));
        push_depth();
        break;
      case NodeKind::param: emit(op_load, static_cast<std::int32_t>(n.param)); push_depth(); break;
      case NodeKind::negate: compile(*n.kids[0]); emit(op_negate); break;
      case NodeKind::logical_not: compile(*n.kids[0]); emit(op_not); break;
      case NodeKind::binary:
        compile(*n.kids[0]);
        emit_binary(n.op, *n.kids[1]);
        break;
      case NodeKind::compare: {
        // a < b < c: every link but the last keeps b as the next left operand when it holds,
        // and jumps to the end leaving False when it fails (b is computed once).
        std::vector<std::size_t> links;
        compile(*n.kids[0]);
        for (std::size_t k = 0; k < n.ops.size(); ++k) {
          emit_binary(n.ops[k], *n.kids[k + 1]);
          if (k + 1 < n.ops.size()) links.push_back(code.size() - 1);
        }
        for (std::size_t j : links) code[j].arg = static_cast<std::int32_t>(code.size() - 1 - j);
        break;
      }
      case NodeKind::logical_and:
      case NodeKind::logical_or: {
        compile(*n.kids[0]);
        const std::size_t jump = code.size();
        emit(n.kind == NodeKind::logical_and ? op_jump_if_false_or_pop : op_jump_if_true_or_pop);
        --depth;
        compile(*n.kids[1]);
        code[jump].arg = static_cast<std::int32_t>(code.size() - 1 - jump);
        break;
      }
      case NodeKind::call:
        for (const auto& kid : n.kids) compile(*kid);
        emit(n.op, static_cast<std::int32_t>(n.kids.size()));
        depth -= n.kids.size() - 1;
        break;
    }
    fold(start);
  }

  /// Emits `op` with `right` as its right operand: inline when it is one literal or parameter,
  /// else from the stack.
  void emit_binary(std::uint8_t op, const Node& right) {
    const std::size_t start = code.size();
    compile(right);
    const auto last = code.back();
    if (code.size() == start + 1 && (last.op == op_push_int || last.op == op_load)) {
      code.pop_back();
      --depth;
      emit(op, 0, last.op == op_push_int ? last.number : last.arg);
      code.back().operand = last.op == op_push_int ? operand_literal : operand_param;
    } else {
      emit(op);
      --depth;
    }
  }

  void fold(std::size_t start) {
    const std::size_t length = code.size() - start;
    if (length <= 1) return;
    for (std::size_t k = start; k < code.size(); ++k) {
      if (code[k].op == op_load || code[k].operand == operand_param) return;
    }
    const RunResult r = run_code(code.data() + start, length, reals.data(), nullptr);
    if (r.division_by_zero) return;
    code.resize(start);
    if (r.value.real) {
      reals.push_back(r.value.f);
      emit(op_push_real, 0, static_cast<std::int64_t>(reals.size() - 1));
    } else {
      emit(op_push_int, 0, r.value.i);
    }
  }
};

}  // namespace

// ---- Expression ----------------------------------------------------------------------------

struct Expression::Outcome {
  RunResult result;
};

Expression Expression::parse(std::string_view text, std::span<const std::string> names) {
  ExpressionCompiler c{text, names, {}, 0, 0, 0, {}, {}, {}, 0, 0};
  NodePtr root = c.parse_all();
  c.compile(*root);
  Expression e;
  e.text_ = std::string(text);
  e.code_ = std::move(c.code);
  e.reals_ = std::move(c.reals);
  std::sort(c.referenced.begin(), c.referenced.end());
  c.referenced.erase(std::unique(c.referenced.begin(), c.referenced.end()), c.referenced.end());
  e.params_ = std::move(c.referenced);
  e.min_values_ = e.params_.empty() ? 0 : e.params_.back() + 1;
  e.max_stack_ = c.max_depth;
  return e;
}

Expression::Outcome Expression::run(std::span<const Value> values) const {
  if (values.size() < min_values_) {
    throw Error(ErrorCode::invalid_argument,
                "expression \"" + text_ + "\" needs " + std::to_string(min_values_) +
                    " parameter values, got " + std::to_string(values.size()));
  }
  return {run_code(code_.data(), code_.size(), reals_.data(), values.data())};
}

Value Expression::evaluate(std::span<const Value> values) const {
  const RunResult r = run(values).result;
  if (r.division_by_zero) return 0;
  if (!r.value.real) return r.value.i;
  const double f = std::floor(r.value.f);
  if (!(f >= -0x1p63 && f < 0x1p63)) {  // out of range of a 64-bit integer, or NaN
    return std::isnan(f) ? 0 : (f > 0 ? std::numeric_limits<Value>::max()
                                      : std::numeric_limits<Value>::min());
  }
  return static_cast<Value>(f);
}

std::optional<Value> Expression::evaluate_checked(std::span<const Value> values) const {
  const RunResult r = run(values).result;
  if (r.division_by_zero) return std::nullopt;
  if (!r.value.real) return r.value.i;
  const double f = std::floor(r.value.f);
  if (!(f >= -0x1p63 && f < 0x1p63)) return std::nullopt;  // past 64 bits, or NaN
  return static_cast<Value>(f);
}

double Expression::evaluate_real(std::span<const Value> values) const {
  const RunResult r = run(values).result;
  return r.division_by_zero ? std::numeric_limits<double>::quiet_NaN() : as_double(r.value);
}

bool Expression::test(std::span<const Value> values) const {
  const RunResult r = run(values).result;
  return !r.division_by_zero && truthy(r.value);
}

}  // namespace ktune
