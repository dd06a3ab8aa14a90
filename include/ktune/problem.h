// Problem: what is being tuned (operator, shape, dtypes, layouts, flags) with a canonical key
// string that is part of every tuning record.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ktune {

/// An operator instance: op name, ordered shape dimensions and string attributes.
/// Canonical key: "op|dim=v,dim=v|attr=v,attr=v" with dims in declared order and attributes
/// sorted by name, e.g. "gemm|M=4096,N=4096,K=4096|dtype=f16,layout=NT".
struct Problem {
  std::string op;                                          ///< operator, e.g. "gemm"
  std::vector<std::pair<std::string, std::int64_t>> dims;  ///< shape, in the op's order
  std::map<std::string, std::string> attrs;                ///< dtype, layout, flags

  /// The canonical key string.
  std::string key() const;
  /// Parses a canonical key; throws Error(parse_error) naming the bad part.
  static Problem from_key(const std::string& key);
  /// Value of a dimension; throws Error(unknown_name) naming it if absent.
  std::int64_t dim(const std::string& name) const;
  /// Value of an attribute, or `fallback`.
  std::string attr(const std::string& name, const std::string& fallback = "") const;
  /// Equal when keys are equal.
  friend bool operator==(const Problem& a, const Problem& b) { return a.key() == b.key(); }
};

/// Parses "4096x4096x4096" into dims named by `names` (sizes must match, each >= 1).
std::vector<std::pair<std::string, std::int64_t>> parse_shape(
    const std::string& text, const std::vector<std::string>& names);

}  // namespace ktune
