// The Python list expressions of T1 "Values" strings (see python_values.h).
#include "python_values.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>

#include "expression.h"
#include "ktune/error.h"

namespace ktune::detail {

namespace {

[[noreturn]] void refuse(const std::string& what) { throw Error(ErrorCode::parse_error, what); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// `text` cut at each `separator` outside brackets, parentheses and quotes.
std::vector<std::string_view> split_top(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == separator && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

/// Where the word `word` stands alone outside brackets in `text`, or npos.
std::size_t find_word_top(std::string_view text, std::string_view word) {
  int depth = 0;
  for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth != 0 || text.compare(i, word.size(), word) != 0) continue;
    const bool before = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_');
    const std::size_t end = i + word.size();
    const bool after = end == text.size() ||
                       !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
    if (before && after) return i;
  }
  return std::string_view::npos;
}

/// An item or bound parsed once: an expression over `names`.
Expression parsed(std::string_view text, const std::vector<std::string>& names) {
  const std::string_view t = trim(text);
  if (t.empty()) refuse("an empty item");
  if (t.front() == '\'' || t.front() == '"')
    refuse(std::string(t) + " is a string (ktune parameters are integers)");
  try {
    return Expression::parse(t, names);
  } catch (const Error& err) {
    refuse("\"" + std::string(t) + "\": " + err.what());
  }
}

/// The integer value of `e` at `values`; an error names what it is instead.
Value integer_of(const Expression& e, const std::vector<Value>& values) {
  const double real = e.evaluate_real(values);
  const std::optional<Value> exact = e.evaluate_checked(values);
  if (exact && static_cast<double>(*exact) == real) return *exact;
  const std::string shown = "\"" + e.text() + "\"";
  if (std::isnan(real)) refuse(shown + " divides by zero");
  if (std::fabs(real) >= 0x1p63) refuse(shown + " is past 64 bits");
  refuse(shown + " is not an integer (ktune parameters are integers)");
}

/// An integer constant item or bound.
Value constant_of(std::string_view text) { return integer_of(parsed(text, {}), {}); }

/// `text` cut at top-level commas, without the empty part a trailing comma leaves.
std::vector<std::string_view> items_of(std::string_view text) {
  auto parts = split_top(text, ',');
  if (parts.size() > 1 && trim(parts.back()).empty()) parts.pop_back();
  return parts;
}

/// The values of "range(a)", "range(a, b)" or "range(a, b, c)" (the text inside the call).
std::vector<Value> range_values(std::string_view args) {
  const auto parts = items_of(args);
  if (parts.size() > 3 || trim(parts[0]).empty()) refuse("range() takes 1 to 3 integers");
  std::vector<Value> bounds;
  for (const auto& p : parts) bounds.push_back(constant_of(p));
  const Value start = bounds.size() == 1 ? 0 : bounds[0];
  const Value stop = bounds.size() == 1 ? bounds[0] : bounds[1];
  const Value step = bounds.size() == 3 ? bounds[2] : 1;
  if (step == 0) refuse("range() step must not be zero");
  std::vector<Value> out;
  for (Value v = start; step > 0 ? v < stop : v > stop;) {
    if (out.size() == kMaxPythonValues)
      refuse("range(" + std::string(trim(args)) + ") has more than " + std::to_string(kMaxPythonValues) + " values");
    out.push_back(v);
    if (__builtin_add_overflow(v, step, &v)) break;  // past 64 bits: past any stop too
  }
  return out;
}

/// The text inside `name(...)` when `term` is exactly such a call, else nullopt.
std::optional<std::string_view> call_args(std::string_view term, std::string_view name) {
  if (term.size() < name.size() + 2 || term.compare(0, name.size(), name) != 0) return std::nullopt;
  const std::string_view rest = trim(term.substr(name.size()));
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return std::nullopt;
  // The '(' must close at the end ("f(a) + f(b)" is no single call).
  int depth = 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '(' || rest[i] == '[') ++depth;
    if ((rest[i] == ')' || rest[i] == ']') && --depth == 0 && i + 1 != rest.size()) return std::nullopt;
  }
  return rest.substr(1, rest.size() - 2);
}

std::vector<Value> term_values(std::string_view term) {
  term = trim(term);
  if (auto inner = call_args(term, "list")) {
    const auto args = items_of(*inner);  // list(range(3),) is list(range(3))
    if (args.size() == 1)
      if (auto r = call_args(trim(args[0]), "range")) return range_values(*r);
    refuse("list(" + std::string(*inner) + "): only list(range(...)) is read");
  }
  if (auto r = call_args(term, "range")) return range_values(*r);
  if (term.size() < 2 || term.front() != '[' || term.back() != ']')
    refuse("\"" + std::string(term) + "\" is not a list, range(...) or list(range(...))");
  const std::string_view inner = term.substr(1, term.size() - 2);
  if (const std::size_t at = find_word_top(inner, "for"); at != std::string_view::npos) {
    // [expr for name in range(...)]
    const std::string_view expr = trim(inner.substr(0, at));
    const std::string_view loop = trim(inner.substr(at + 3));
    const std::size_t in = find_word_top(loop, "in");
    if (in == std::string_view::npos) refuse("\"" + std::string(term) + "\": expected 'for NAME in range(...)'");
    const std::string name(trim(loop.substr(0, in)));
    const auto over = call_args(trim(loop.substr(in + 2)), "range");
    if (!over) refuse("\"" + std::string(term) + "\": a comprehension must run over range(...)");
    const Expression element = parsed(expr, {name});  // parsed once, evaluated per value
    std::vector<Value> out;
    for (Value v : range_values(*over)) out.push_back(integer_of(element, {v}));
    return out;
  }
  std::vector<Value> out;
  if (trim(inner).empty()) return out;
  for (const auto& item : items_of(inner)) out.push_back(constant_of(item));
  return out;
}

}  // namespace

std::vector<Value> python_list_values(const std::string& text) {
  std::vector<Value> out;
  for (const auto& term : split_top(text, '+')) {
    const auto values = term_values(term);
    out.insert(out.end(), values.begin(), values.end());
    if (out.size() > kMaxPythonValues)
      refuse("more than " + std::to_string(kMaxPythonValues) + " values");
  }
  return out;
}

}  // namespace ktune::detail
