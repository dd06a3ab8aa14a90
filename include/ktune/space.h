// SearchSpace: named discrete integer parameters and the constraints between them. Immutable
// once built. Points are addressed by a mixed-radix index over the Cartesian product, so a
// space of 10^9 points is never materialized; constraints come as C++ predicates or as
// expression strings in the T1 / Kernel Tuner restriction syntax.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ktune/config.h"

namespace ktune {

/// Mixed-radix index of a point of the Cartesian product (first parameter varies slowest).
using Index = std::uint64_t;

/// One tunable: a name, its allowed values (distinct, in declared order) and a default.
struct Param {
  std::string name;           ///< identifier, also the -D macro name
  std::vector<Value> values;  ///< the domain, in declared order (neighbours follow this order)
  Value default_value = 0;    ///< must be one of `values`
};

/// Which neighbourhood `SearchSpace::neighbours` returns.
enum class Neighbourhood {
  hamming,   ///< change any one parameter to any other value of its domain
  adjacent,  ///< change one parameter to the previous or next value of its domain
};

class Expression;  // a parsed restriction (expression.h)

/// An immutable space of configurations with constraints.
class SearchSpace {
 public:
  /// A constraint written in C++: true when the config is allowed.
  using Predicate = std::function<bool(const Config&)>;

  /// Collects parameters and constraints, then builds the space.
  class Builder {
   public:
    /// Adds a parameter; `default_value` defaults to the first value. Throws on duplicate
    /// names, empty or repeated values, or a default outside the domain.
    Builder& param(std::string name, std::vector<Value> values,
                   std::optional<Value> default_value = std::nullopt);
    /// Adds a restriction in T1 / Kernel Tuner syntax, e.g.
    /// "32 <= block_x*block_y <= 1024 and (use_pad==0 or block_x%32!=0)". Parsed at build().
    Builder& constraint(std::string expression);
    /// Adds a C++ predicate with a description used in error messages.
    Builder& constraint(std::string description, Predicate predicate);
    /// Validates everything and returns the space; throws Error(parse_error / unknown_name).
    SearchSpace build() const;

   private:
    friend class SearchSpace;
    /// A constraint as declared: expression text, or a description with a predicate.
    struct ConstraintSpec {
      std::string text;     ///< expression text, or the predicate's description
      Predicate predicate;  ///< empty for expressions
    };
    std::vector<Param> params_;
    std::vector<ConstraintSpec> constraints_;  // in declaration order
  };

  SearchSpace();  ///< an empty space with one point (no parameters)

  /// Loads a T1 JSON space definition (ConfigurationSpace.TuningParameters / Conditions).
  static SearchSpace from_t1_file(const std::string& path);
  /// Same as from_t1_file, from already parsed JSON text.
  static SearchSpace from_t1_json(const std::string& json_text, const std::string& origin);

  /// The parameters in order.
  const std::vector<Param>& params() const;
  /// Number of parameters.
  std::size_t dims() const;
  /// Position of a parameter by name, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;
  /// Shared name list used by every Config of this space.
  const std::shared_ptr<const std::vector<std::string>>& names() const;
  /// Size of the Cartesian product (valid or not). Throws if it exceeds 2^63.
  Index size() const;
  /// Descriptions of all constraints (expression text or predicate description).
  std::vector<std::string> constraint_descriptions() const;

  /// The config at a Cartesian index (valid or not).
  Config at(Index index) const;
  /// The Cartesian index of a config of this space; throws Error(invalid_argument) for a
  /// value outside its domain or a config with other parameter names.
  Index index_of(const Config& config) const;
  /// Config from per-parameter value positions (positions[i] indexes params()[i].values).
  Config from_positions(const std::vector<std::uint32_t>& positions) const;
  /// Per-parameter value positions of a config.
  std::vector<std::uint32_t> positions(const Config& config) const;

  /// Makes a config from name=value pairs; every parameter must be given, every value must be
  /// in its domain. Throws Error naming the unknown parameter or out-of-domain value.
  Config make(const std::map<std::string, Value>& values) const;
  /// Parses the text form "a=1,b=2" (any order, all parameters). Throws like make().
  Config parse(const std::string& text) const;
  /// The default config with the parameters named in `changes` ("a=1,b=2", any subset, any
  /// order) set to the given values; valid or not (see violated()). Throws like parse().
  Config with_changes(const std::string& changes) const;
  /// with_changes() from name=value pairs: a recorded config whose template has gained
  /// parameters since takes their defaults (which keep the kernel as it was). Throws like make()
  /// for an unknown parameter or an out-of-domain value.
  Config with_changes(const std::map<std::string, Value>& changes) const;
  /// True when the config belongs to this space (names and domains), valid or not.
  bool contains(const Config& config) const;

  /// True when every value is in its domain and every constraint holds. A config with other
  /// parameter names (another space's) is misuse: Error(invalid_argument).
  bool valid(const Config& config) const;
  /// What is outside its domain, else the first constraint the config violates: expression
  /// constraints first, then C++ predicates, each in declaration order; nullopt when valid.
  /// A config with other parameter names is Error(invalid_argument), as in valid().
  std::optional<std::string> violated(const Config& config) const;

  /// The config of all defaults (may be invalid; see valid()).
  Config default_config() const;
  /// A random valid config: uniform by rejection sampling; when valid points are rare, uniform
  /// over the listed valid points of spaces up to 2^26 points, else a bounded random walk over
  /// valid configs from the defaults (or from a config a randomized depth-first search finds
  /// when the defaults are invalid): close to uniform, not exactly. Deterministic for the
  /// generator's state. Throws Error(unsatisfiable) naming the constraints when none exists or
  /// none is found after a bounded effort.
  Config random(std::mt19937_64& rng) const;
  /// Valid configs at distance one under the given neighbourhood, in a deterministic order.
  std::vector<Config> neighbours(const Config& config, Neighbourhood kind) const;
  /// Numeric features for models: per parameter, the value's position scaled to [0, 1].
  std::vector<double> encode(const Config& config) const;

  /// The smallest Cartesian index >= `from` whose config is valid, or nullopt when there is
  /// none: a depth-first walk in index order that skips every subtree a constraint on the
  /// parameters set so far rules out. Throws like size() above 2^63 points.
  std::optional<Index> next_valid(Index from) const;
  /// Counts valid configs by depth-first enumeration with constraint pruning. Parameters no
  /// constraint mentions are counted, not enumerated (unless there are C++ predicates);
  /// throws Error(invalid_argument) when more than `limit` points would need enumerating.
  std::uint64_t count_valid(Index limit = Index{1} << 32) const;
  /// Calls `visit` for every valid config in index order; throws Error(invalid_argument)
  /// when the Cartesian size exceeds `limit`.
  void for_each_valid(const std::function<void(Index, const Config&)>& visit,
                      Index limit = Index{1} << 32) const;

 private:
  struct Impl;
  explicit SearchSpace(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace ktune
