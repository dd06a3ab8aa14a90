// Problem keys: the canonical "op|dims|attrs" string that identifies a tuning task in every
// record, its parser, and the "AxBxC" shape syntax of the command line.
#include "ktune/problem.h"

#include <cctype>
#include <charconv>

#include "ktune/error.h"

namespace ktune {

namespace {

/// Splits on a separator, keeping empty parts.
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

/// A name of letters, digits and '_' (no separators that would make keys ambiguous).
bool is_plain_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

/// Attribute values may also hold '.', '-' and '+'.
bool is_attr_value(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-' &&
        c != '+')
      return false;
  return true;
}

std::int64_t parse_int(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range && ptr == text.data() + text.size())
    throw Error(ErrorCode::parse_error,
                what + ": \"" + text + "\" is out of range (at most 2^63 - 1)");
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw Error(ErrorCode::parse_error, what + ": \"" + text + "\" is not an integer");
  return v;
}

}  // namespace

std::string Problem::key() const {
  std::string k = op + "|";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) k += ",";
    k += dims[i].first + "=" + std::to_string(dims[i].second);
  }
  k += "|";
  bool first = true;
  for (const auto& [name, value] : attrs) {
    if (!first) k += ",";
    first = false;
    k += name + "=" + value;
  }
  return k;
}

Problem Problem::from_key(const std::string& key) {
  auto sections = split(key, '|');
  if (sections.size() != 3)
    throw Error(ErrorCode::parse_error, "problem key \"" + key +
                                            "\": expected three '|'-separated sections "
                                            "op|dims|attrs");
  Problem p;
  p.op = sections[0];
  if (!is_plain_name(p.op))
    throw Error(ErrorCode::parse_error, "problem key \"" + key + "\": bad operator name \"" +
                                            p.op + "\"");
  auto parse_pairs = [&](const std::string& section, auto&& on_pair) {
    if (section.empty()) return;
    for (const auto& item : split(section, ',')) {
      auto eq = item.find('=');
      if (eq == std::string::npos)
        throw Error(ErrorCode::parse_error,
                    "problem key \"" + key + "\": \"" + item + "\" is not name=value");
      std::string name = item.substr(0, eq);
      if (!is_plain_name(name))
        throw Error(ErrorCode::parse_error,
                    "problem key \"" + key + "\": bad name \"" + name + "\"");
      on_pair(name, item.substr(eq + 1));
    }
  };
  parse_pairs(sections[1], [&](const std::string& name, const std::string& value) {
    const std::int64_t extent = parse_int(value, "problem key \"" + key + "\" dimension " + name);
    if (extent < 1)
      throw Error(ErrorCode::parse_error, "problem key \"" + key + "\": dimension " + name +
                                              " = " + value + " (expected >= 1)");
    for (const auto& [seen, unused] : p.dims)
      if (seen == name)
        throw Error(ErrorCode::parse_error,
                    "problem key \"" + key + "\": dimension " + name + " is given twice");
    p.dims.emplace_back(name, extent);
  });
  parse_pairs(sections[2], [&](const std::string& name, const std::string& value) {
    if (!is_attr_value(value))
      throw Error(ErrorCode::parse_error, "problem key \"" + key + "\": attribute " + name +
                                              " has a bad value \"" + value + "\"");
    if (!p.attrs.emplace(name, value).second)
      throw Error(ErrorCode::parse_error,
                  "problem key \"" + key + "\": attribute " + name + " is given twice");
  });
  // A key names one problem one way: attributes sorted by name, as key() writes them.
  if (p.key() != key)
    throw Error(ErrorCode::parse_error, "problem key \"" + key + "\" is not canonical (expected \"" +
                                            p.key() + "\": attributes sorted by name)");
  return p;
}

std::int64_t Problem::dim(const std::string& name) const {
  for (const auto& [n, v] : dims)
    if (n == name) return v;
  throw Error(ErrorCode::unknown_name, "problem " + key() + " has no dimension " + name);
}

std::string Problem::attr(const std::string& name, const std::string& fallback) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : it->second;
}

std::vector<std::pair<std::string, std::int64_t>> parse_shape(
    const std::string& text, const std::vector<std::string>& names) {
  auto parts = split(text, 'x');
  if (parts.size() != names.size()) {
    std::string expected;
    for (std::size_t i = 0; i < names.size(); ++i) expected += (i ? "x" : "") + names[i];
    throw Error(ErrorCode::invalid_argument, "shape \"" + text + "\": expected " +
                                                 std::to_string(names.size()) +
                                                 (names.size() == 1 ? " dimension " : " dimensions ") +
                                                 expected);
  }
  std::vector<std::pair<std::string, std::int64_t>> dims;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::int64_t v = parse_int(parts[i], "shape \"" + text + "\" dimension " + names[i]);
    if (v < 1)
      throw Error(ErrorCode::invalid_argument, "shape \"" + text + "\": dimension " + names[i] +
                                                   " must be >= 1, got " + parts[i]);
    dims.emplace_back(names[i], v);
  }
  return dims;
}

}  // namespace ktune
