// Typed, checked access to fields of parsed JSON input (JSON lines, T4, Kernel Tuner caches):
// every failure names the origin ("file:line") and the field that is missing or mistyped.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "ktune/error.h"
#include "json_input.h"

namespace ktune::json_fields {

/// Throws Error(parse_error) "<where>: field '<field>': <what>".
[[noreturn]] inline void fail(const std::string& where, const std::string& field,
                              const std::string& what) {
  throw Error(ErrorCode::parse_error, where + ": field '" + field + "': " + what);
}

/// The member `field` (Json is nlohmann::json or ordered_json) of object `j`; throws when absent (or `j` is not an object).
template <class Json>
const Json& member(const Json& j, const std::string& field,
                                    const std::string& where) {
  if (!j.is_object()) fail(where, field, "the enclosing value is not an object");
  auto it = j.find(field);
  if (it == j.end()) fail(where, field, "missing");
  return *it;
}

/// A string member.
template <class Json>
std::string text(const Json& j, const std::string& field,
                        const std::string& where) {
  const auto& v = member(j, field, where);
  if (!v.is_string()) fail(where, field, "expected a string, got " + detail::json_excerpt(v));
  return v.template get<std::string>();
}

/// An integer value (JSON integers only; 1.5 or "1" are rejected) within [lo, hi]: values
/// outside, e.g. 2^64 - 1 for a 64-bit field or 2^32 + 132 for a 32-bit one, are errors
/// rather than wrapped.
template <class Json>
std::int64_t integer_value(const Json& v, const std::string& field, const std::string& where,
                           std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                           std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
  if (!v.is_number_integer()) fail(where, field, "expected an integer, got " + detail::json_excerpt(v));
  const bool above = v.is_number_unsigned()
                         ? v.template get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
                         : v.template get<std::int64_t>() > hi;
  if (above || (!v.is_number_unsigned() && v.template get<std::int64_t>() < lo)) {
    fail(where, field,
         detail::json_excerpt(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v.template get<std::int64_t>();
}

/// An integer member (see integer_value), 64-bit.
template <class Json>
std::int64_t integer(const Json& j, const std::string& field, const std::string& where) {
  return integer_value(member(j, field, where), field, where);
}

/// An integer member that must fit a 32-bit int.
template <class Json>
int int32(const Json& j, const std::string& field, const std::string& where) {
  return static_cast<int>(integer_value(member(j, field, where), field, where,
                                        std::numeric_limits<int>::min(),
                                        std::numeric_limits<int>::max()));
}

/// A string member read through `parse` (e.g. status_from_string): a missing or mistyped member
/// fails as text() does, and an Error from `parse` fails naming the field with its message.
template <class Json, class Parse>
auto parsed_text(const Json& j, const std::string& field, const std::string& where, Parse parse) {
  const std::string value = text(j, field, where);
  try {
    return parse(value);
  } catch (const Error& e) {
    fail(where, field, e.what());
  }
}

/// A number or null (null reads as NaN, the way NaN is written).
template <class Json>
double number_value(const Json& v, const std::string& field,
                           const std::string& where) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) fail(where, field, "expected a number, got " + detail::json_excerpt(v));
  return v.template get<double>();
}

/// A number member (null = NaN).
template <class Json>
double number(const Json& j, const std::string& field, const std::string& where) {
  return number_value(member(j, field, where), field, where);
}

}  // namespace ktune::json_fields
