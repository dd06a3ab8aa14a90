// Config: one point of a search space, as parameter values in the space's order, with a
// stable text form ("BM=128,BN=64"), NVRTC defines ("-DBM=128") and a hash.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

/// A parameter value. All tunables are integers (booleans are 0/1, enums are indices).
using Value = std::int64_t;

/// One configuration: a value per parameter, in the order of the space's parameters.
/// Configs made by the same SearchSpace share one list of names.
class Config {
 public:
  Config() = default;
  /// Builds a config from shared parameter names and matching values.
  Config(std::shared_ptr<const std::vector<std::string>> names, std::vector<Value> values);

  /// Number of parameters.
  std::size_t size() const { return values_.size(); }
  /// Values in parameter order.
  const std::vector<Value>& values() const { return values_; }
  /// Parameter names in order.
  const std::vector<std::string>& names() const;
  /// Value of the named parameter; throws Error(unknown_name) naming it if absent.
  Value operator[](std::string_view name) const;
  /// Value of the named parameter, or `fallback` when the config has no such parameter.
  Value get_or(std::string_view name, Value fallback) const;
  /// True when the config has a parameter of that name.
  bool has(std::string_view name) const;
  /// name -> value of every parameter (the form SearchSpace::make / with_changes take).
  std::map<std::string, Value> values_by_name() const;
  /// Stable text form "a=1,b=2" in parameter order.
  std::string str() const;
  /// NVRTC options "-Da=1", one per parameter.
  std::vector<std::string> defines() const;
  /// 64-bit FNV-1a hash of the text form (stable across runs and machines).
  std::uint64_t hash() const;
  /// Equal when names and values are equal.
  friend bool operator==(const Config& a, const Config& b);

 private:
  std::shared_ptr<const std::vector<std::string>> names_;
  std::vector<Value> values_;
};

}  // namespace ktune

/// std::hash support so Configs can key unordered containers.
template <>
struct std::hash<ktune::Config> {
  std::size_t operator()(const ktune::Config& c) const noexcept { return c.hash(); }
};
