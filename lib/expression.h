// Constraint expressions in the T1 / Kernel Tuner restriction syntax, e.g.
// "32 <= block_x*block_y <= 1024 and (use_pad==0 or block_x%32!=0)". Text is parsed once into
// flat bytecode whose parameter references are positions into a value array, so evaluation
// does no string work: search spaces evaluate constraints millions of times.
// Internal API of the library (not installed); SearchSpace is its main user.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/config.h"

namespace ktune {

/// A parsed, compiled expression over integer parameters with Python-like semantics:
/// integer + - * // % ** (floor division and modulo follow Python's sign rules), true
/// division / in double precision, comparisons (chained: `a < b <= c`), `and` `or` `not`
/// (also `&&` `||` `!`), min() max() abs(), True/False. Division by zero makes the
/// expression false (evaluate() returns 0) instead of failing.
class Expression {
 public:
  /// Parses `text` over the parameters `names` (a name's position in `names` is its index
  /// into the value array given to evaluate()). Throws Error(parse_error) with the 1-based
  /// column and the offending token, or Error(unknown_name) naming the name and listing
  /// `names`.
  static Expression parse(std::string_view text, std::span<const std::string> names);

  /// The expression's value as an integer: integer results as computed, booleans 0/1,
  /// real results rounded toward negative infinity; 0 when a division by zero occurs.
  /// `values` is indexed by parameter position and must cover every referenced position.
  Value evaluate(std::span<const Value> values) const;
  /// evaluate()'s value where it is exact: nullopt where evaluate() would clamp (a value past
  /// 64 bits) or give 0 for a division by zero or a NaN.
  std::optional<Value> evaluate_checked(std::span<const Value> values) const;
  /// The expression's value as a double (`rows / 3` keeps its fraction): integer results
  /// converted, booleans 0/1; NaN when a division by zero occurs.
  double evaluate_real(std::span<const Value> values) const;
  /// Python truthiness of the result; false when a division by zero occurs.
  bool test(std::span<const Value> values) const;

  /// The source text as given.
  const std::string& text() const { return text_; }
  /// Positions of the parameters the expression references, sorted, without repeats.
  const std::vector<std::size_t>& params() const { return params_; }
  /// Number of bytecode instructions (a rough evaluation cost).
  std::size_t cost() const { return code_.size(); }

  /// One bytecode instruction (public only so the compiler in expression.cc can build it).
  struct Instruction {
    std::uint8_t op = 0;      ///< operation code (see expression.cc)
    std::uint8_t operand = 0; ///< binary operators: right operand from stack, literal or param
    std::int32_t arg = 0;     ///< parameter position, relative jump or argument count
    std::int64_t number = 0;  ///< integer literal, or index of a real literal in reals_
  };

 private:
  struct Outcome;
  Outcome run(std::span<const Value> values) const;

  std::string text_;
  std::vector<Instruction> code_;
  std::vector<double> reals_;         // real literals
  std::vector<std::size_t> params_;   // referenced parameter positions
  std::size_t min_values_ = 0;        // values.size() evaluate() needs
  std::size_t max_stack_ = 0;         // deepest operand stack the code reaches
};

}  // namespace ktune
