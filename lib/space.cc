// SearchSpace: parameter domains, compiled constraints, the mixed-radix index <-> Config
// bijection, validity, random sampling, neighbourhoods, features and enumeration. Nothing is
// materialized: enumeration walks depth first and checks each constraint as soon as all of
// its parameters are assigned, so that invalid branches are cut early.
#include "ktune/space.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <mutex>
#include <numeric>

#include "expression.h"
#include "identifier.h"
#include "ktune/error.h"

namespace ktune {
namespace space_detail {

/// Most Cartesian points whose valid points random() may list once and sample exactly. It
/// lists only after kRejectionTries uniform draws found nothing valid, so the list stays
/// short; the walk takes seconds at this size, once per space, where the depth-first
/// fallback could take as long for every single draw.
constexpr Index kSmallSpace = Index{1} << 26;
/// Uniform draws random() tries before a smarter method (each draw stops at the first
/// violated constraint, so a failed draw is cheap).
constexpr int kRejectionTries = 4096;
/// Seed of the generator that decides, once per space, whether random() tries uniform draws.
constexpr std::uint64_t kRejectionProbeSeed = 0x6b74756e65ULL;
/// Partial assignments random()'s depth-first fallback may visit before giving up.
constexpr std::uint64_t kSearchNodeLimit = std::uint64_t{1} << 24;
/// Proposed moves per parameter of random()'s walk over valid configs (one parameter set to
/// a uniform value of its domain, kept when the config stays valid).
constexpr int kWalkMovesPerParam = 64;

/// A uniform integer in [0, n) from one 64-bit draw (portable, unlike std distributions).
std::uint32_t uniform_below(std::mt19937_64& rng, std::uint32_t n) {
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

std::string domain_text(const std::vector<Value>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == 12 && values.size() > 14) {
      out += ", ... (" + std::to_string(values.size()) + " values)";
      break;
    }
    out += (i ? ", " : "") + std::to_string(values[i]);
  }
  return out + "}";
}

using detail::is_identifier;

/// Value -> position of one domain: a dense table when the values span a small range, else a
/// sorted list searched by bisection.
struct DomainIndex {
  Value min = 0;
  std::vector<std::int32_t> dense;                      // value - min -> position, or -1
  std::vector<std::pair<Value, std::uint32_t>> sorted;  // used when dense is empty

  explicit DomainIndex(const std::vector<Value>& values) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const auto span = static_cast<unsigned __int128>(static_cast<__int128>(*hi) - *lo) + 1;
    if (span <= std::max<std::size_t>(256, 16 * values.size())) {
      min = *lo;
      dense.assign(static_cast<std::size_t>(span), -1);
      for (std::size_t k = 0; k < values.size(); ++k) {
        dense[static_cast<std::uint64_t>(values[k]) - static_cast<std::uint64_t>(min)] =
            static_cast<std::int32_t>(k);
      }
      return;
    }
    for (std::uint32_t k = 0; k < values.size(); ++k) sorted.emplace_back(values[k], k);
    std::sort(sorted.begin(), sorted.end());
  }

  std::optional<std::uint32_t> find(Value v) const {
    if (!dense.empty()) {
      const std::uint64_t offset = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(min);
      if (offset >= dense.size() || dense[offset] < 0) return std::nullopt;
      return static_cast<std::uint32_t>(dense[offset]);
    }
    auto it = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(v, std::uint32_t{0}));
    if (it == sorted.end() || it->first != v) return std::nullopt;
    return it->second;
  }
};

/// One compiled constraint.
struct Constraint {
  std::string description;                // expression text or predicate description
  std::optional<Expression> expression;   // set for expression constraints
  SearchSpace::Predicate predicate;       // set for C++ predicates
  std::vector<std::size_t> params;        // referenced parameter positions
  std::size_t cost = 0;                   // rough evaluation cost, for ordering checks
};

/// The fewest combinations of the parameters between a constraint's last two that make
/// looking ahead to the last one worthwhile (see WalkPlan::lookaheads).
constexpr Index kLookaheadMinGap = 64;

/// An order in which a depth-first walk assigns parameters, and which constraints become
/// checkable after each step: checks[k] holds the constraints whose parameters are all among
/// order[0..k).
struct WalkPlan {
  std::vector<std::size_t> order;
  std::vector<std::vector<std::size_t>> checks;
  /// Per level, (constraint, parameter) pairs: an expression all of whose parameters but
  /// `parameter` are assigned at this level, and `parameter` further down, past parameters of
  /// at least kLookaheadMinGap combinations.
  /// The walk descends only if some value of `parameter` satisfies it (forward checking), so a
  /// prefix that no completion can satisfy is cut at once instead of under every combination
  /// of the parameters in between.
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> lookaheads;
  Index points = 1;         // product of the walked domain sizes (saturating)
  Index multiplier = 1;     // product of the domain sizes left out of the walk (saturating)
};

/// Mutable state of one depth-first walk.
struct WalkState {
  std::vector<Value> values;
  std::vector<std::uint32_t> positions;
  std::vector<std::vector<std::uint32_t>> shuffled;  // per level, for random walks
  std::mt19937_64* rng = nullptr;
  std::uint64_t nodes = 0;
  std::uint64_t node_limit = ~std::uint64_t{0};
};

Index saturating_mul(Index a, Index b) {
  Index r;
  return __builtin_mul_overflow(a, b, &r) ? ~Index{0} : r;
}

}  // namespace space_detail

using namespace space_detail;

struct SearchSpace::Impl {
  std::vector<Param> params;
  std::shared_ptr<const std::vector<std::string>> names;
  std::vector<DomainIndex> lookup;  // value -> position, per parameter
  std::vector<Index> strides;
  Index size = 1;
  bool too_large = false;  // Cartesian size above 2^63
  std::vector<Constraint> constraints;       // declaration order
  std::vector<std::size_t> check_order;      // cheap expressions first, predicates last
  std::vector<std::vector<std::size_t>> by_param;  // constraints referencing each parameter
  bool has_predicates = false;
  WalkPlan full_plan;   // declared order, every parameter
  WalkPlan count_plan;  // only constrained parameters (unless there are predicates)
  // Built on first use under their own locks (not std::call_once: a predicate that throws
  // must leave the next call free to try again, which call_once does not do everywhere).
  mutable std::mutex valid_list_mutex;
  mutable bool valid_list_built = false;
  mutable std::vector<Index> valid_list;  // valid indices of small spaces, built on demand
  mutable std::mutex rejection_probe_mutex;
  mutable std::optional<bool> rejection_fails;  // set by rejection_hopeless()

  // ---- lookups -----------------------------------------------------------------------------

  std::optional<std::uint32_t> position_of(std::size_t param, Value v) const {
    return lookup[param].find(v);
  }

  std::string known_parameters() const {
    return params.empty() ? "the space has no parameters"
                          : "known parameters: " + join(*names, ", ");
  }

  /// Throws unless the config has this space's parameter names in this space's order.
  void require_same_names(const Config& config) const {
    if (config.size() == params.size() && (config.names().data() == names->data() ||
                                           config.names() == *names)) {
      return;
    }
    throw Error(ErrorCode::invalid_argument,
                "config {" + config.str() + "} does not belong to this space (parameters: " +
                    join(*names, ", ") + ")");
  }

  /// The first parameter whose value is outside its domain, or nullopt.
  std::optional<std::size_t> out_of_domain(const Config& config) const {
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!position_of(i, config.values()[i])) return i;
    }
    return std::nullopt;
  }

  std::string out_of_domain_message(std::size_t i, Value v) const {
    return "value " + std::to_string(v) + " of parameter '" + params[i].name +
           "' is not in its domain " + domain_text(params[i].values);
  }

  void require_indexable() const {
    if (too_large) {
      throw Error(ErrorCode::invalid_argument,
                  "the space has more than 2^63 Cartesian points; indices are not available");
    }
  }

  // ---- constraints -------------------------------------------------------------------------

  bool check(const Constraint& c, const std::vector<Value>& values) const {
    if (c.expression) return c.expression->test(values);
    return c.predicate(Config(names, values));
  }

  bool satisfied(const std::vector<Value>& values) const { return all_hold(check_order, values); }

  /// Whether `c` holds for some value of parameter `q`, the others as in `values` (which is
  /// left as it was).
  bool some_value_satisfies(const Constraint& c, std::size_t q, std::vector<Value>& values) const {
    const Value kept = values[q];
    bool found = false;
    for (const Value v : params[q].values) {
      values[q] = v;
      if (check(c, values)) {
        found = true;
        break;
      }
    }
    values[q] = kept;
    return found;
  }

  bool all_hold(const std::vector<std::size_t>& which, const std::vector<Value>& values) const {
    for (std::size_t k : which) {
      if (!check(constraints[k], values)) return false;
    }
    return true;
  }

  /// Uniform rejection sampling that draws parameters in the walk order and abandons a draw
  /// at the first violated constraint (same distribution as checking complete draws).
  std::optional<Config> random_by_rejection(std::mt19937_64& rng) const {
    const WalkPlan& plan = full_plan;
    if (!all_hold(plan.checks[0], {})) return std::nullopt;  // a constant constraint fails
    std::vector<Value> values(params.size());
    for (int attempt = 0; attempt < kRejectionTries; ++attempt) {
      bool ok = true;
      for (std::size_t level = 0; level < plan.order.size() && ok; ++level) {
        const auto& domain = params[plan.order[level]].values;
        values[plan.order[level]] =
            domain[uniform_below(rng, static_cast<std::uint32_t>(domain.size()))];
        ok = all_hold(plan.checks[level + 1], values);
      }
      if (ok) return Config(names, std::move(values));
    }
    return std::nullopt;
  }

  std::string constraint_list() const {
    std::vector<std::string> quoted;
    for (const auto& c : constraints) quoted.push_back("\"" + c.description + "\"");
    return join(quoted, ", ");
  }

  // ---- depth-first walk --------------------------------------------------------------------

  WalkPlan make_plan(std::vector<std::size_t> order, bool with_predicates) const {
    WalkPlan plan;
    std::vector<std::size_t> rank(params.size(), params.size() + 1);
    for (std::size_t k = 0; k < order.size(); ++k) rank[order[k]] = k;
    plan.checks.resize(order.size() + 1);
    plan.lookaheads.resize(order.size() + 1);
    for (std::size_t c = 0; c < constraints.size(); ++c) {
      if (constraints[c].predicate && !with_predicates) continue;
      std::size_t ready = 0;
      for (std::size_t p : constraints[c].params) ready = std::max(ready, rank[p] + 1);
      plan.checks[ready].push_back(c);
      // The last parameter and the level where every other one is assigned.
      if (!constraints[c].expression || constraints[c].params.size() < 2 || ready > order.size())
        continue;
      std::size_t last = constraints[c].params[0], before = 0;
      for (std::size_t p : constraints[c].params)
        if (rank[p] > rank[last]) last = p;
      for (std::size_t p : constraints[c].params)
        if (p != last) before = std::max(before, rank[p] + 1);
      // Worth a look only over a wide gap: the look costs up to one evaluation per value of
      // `last` at every node of its level, and saves the gap's subtrees when the prefix fails.
      Index gap = 1;
      for (std::size_t level = before; level < rank[last]; ++level)
        gap = saturating_mul(gap, params[order[level]].values.size());
      if (rank[last] > before && gap >= kLookaheadMinGap) plan.lookaheads[before].emplace_back(c, last);
    }
    for (auto& level : plan.checks) {
      std::stable_sort(level.begin(), level.end(), [&](std::size_t a, std::size_t b) {
        return constraints[a].cost < constraints[b].cost;
      });
    }
    std::vector<bool> walked(params.size(), false);
    for (std::size_t p : order) {
      walked[p] = true;
      plan.points = saturating_mul(plan.points, params[p].values.size());
    }
    for (std::size_t p = 0; p < params.size(); ++p) {
      if (!walked[p]) plan.multiplier = saturating_mul(plan.multiplier, params[p].values.size());
    }
    plan.order = std::move(order);
    return plan;
  }

  WalkState start_walk() const {
    WalkState s;
    s.values.resize(params.size());
    s.positions.resize(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) s.values[i] = params[i].default_value;
    return s;
  }

  /// Walks the subtree below `level`; `leaf(state)` returns true to stop the whole walk. With
  /// `from` (per-parameter positions; not with a random order), the walk starts there: each
  /// level starts at from's position while every level above is still at its own.
  template <class Leaf>
  bool walk(const WalkPlan& plan, WalkState& s, std::size_t level, Leaf& leaf,
            const std::vector<std::uint32_t>* from = nullptr) const {
    for (std::size_t c : plan.checks[level]) {
      if (!check(constraints[c], s.values)) return false;
    }
    for (const auto& [c, q] : plan.lookaheads[level]) {
      if (!some_value_satisfies(constraints[c], q, s.values)) return false;
    }
    if (level == plan.order.size()) return leaf(s);
    const std::size_t p = plan.order[level];
    const auto& domain = params[p].values;
    const std::uint32_t n = static_cast<std::uint32_t>(domain.size());
    if (s.rng) {
      auto& perm = s.shuffled[level];
      perm.resize(n);
      std::iota(perm.begin(), perm.end(), 0u);
      for (std::uint32_t k = n; k > 1; --k) std::swap(perm[k - 1], perm[uniform_below(*s.rng, k)]);
    }
    const std::uint32_t first = from ? (*from)[p] : 0;
    for (std::uint32_t k = first; k < n; ++k) {
      const std::uint32_t pos = s.rng ? s.shuffled[level][k] : k;
      s.positions[p] = pos;
      s.values[p] = domain[pos];
      if (++s.nodes > s.node_limit) return true;
      if (walk(plan, s, level + 1, leaf, k == first ? from : nullptr)) return true;
    }
    return false;
  }

  Index index_from_positions(const std::vector<std::uint32_t>& positions) const {
    Index index = 0;
    for (std::size_t i = 0; i < positions.size(); ++i) index += positions[i] * strides[i];
    return index;
  }

  const std::vector<Index>& valid_indices() const {
    std::lock_guard<std::mutex> lock(valid_list_mutex);
    if (!valid_list_built) {
      // Built aside and moved in: a predicate that throws half-way leaves nothing behind for
      // the next call's retry to append to.
      std::vector<Index> listed;
      WalkState s = start_walk();
      auto leaf = [&](WalkState& st) {
        listed.push_back(index_from_positions(st.positions));
        return false;
      };
      walk(full_plan, s, 0, leaf);
      valid_list = std::move(listed);
      valid_list_built = true;
    }
    return valid_list;  // never changes once built
  }

  /// Whether uniform draws are hopeless for this space: kRejectionTries draws from a generator
  /// of fixed seed found no valid config. Decided once, from the space alone, so that
  /// random(rng) depends only on the state of rng, never on earlier calls.
  bool rejection_hopeless() const {
    std::lock_guard<std::mutex> lock(rejection_probe_mutex);
    if (!rejection_fails) {
      std::mt19937_64 probe(kRejectionProbeSeed);
      rejection_fails = !random_by_rejection(probe).has_value();
    }
    return *rejection_fails;
  }

  [[noreturn]] void throw_unsatisfiable(const std::string& why) const {
    throw Error(ErrorCode::unsatisfiable, why + "; constraints: " + constraint_list());
  }

  /// A valid config found by a depth-first search in random value order, or nullopt with
  /// `exhausted` telling whether the whole space was walked (none exists) or the node limit hit.
  std::optional<std::vector<Value>> search_valid(std::mt19937_64& rng, bool& exhausted) const {
    WalkState s = start_walk();
    s.rng = &rng;
    s.shuffled.resize(params.size() + 1);
    s.node_limit = kSearchNodeLimit;
    bool found = false;
    auto leaf = [&](WalkState&) { return found = true; };
    walk(full_plan, s, 0, leaf);
    exhausted = !found && s.nodes <= s.node_limit;
    if (found) return std::move(s.values);
    return std::nullopt;
  }

  /// For spaces whose valid points are too rare to draw and too many to list: a random walk
  /// over valid configs from a valid start (the defaults when they are valid, else the first
  /// config a randomized depth-first search finds). Each move sets one uniformly chosen
  /// parameter to a uniform value of its domain and is kept when every constraint still
  /// holds: a symmetric proposal, so the walk's stationary distribution is uniform over the
  /// valid configs it can reach; a bounded walk is close to it, not exactly uniform.
  Config random_by_walk(std::mt19937_64& rng) const {
    std::vector<Value> values;
    for (const auto& p : params) values.push_back(p.default_value);
    if (!satisfied(values)) {
      bool exhausted = false;
      auto found = search_valid(rng, exhausted);
      if (!found && exhausted) throw_unsatisfiable("no configuration satisfies every constraint");
      if (!found) {
        throw_unsatisfiable("the defaults are invalid and no valid configuration was found after "
                            "visiting " + std::to_string(kSearchNodeLimit) + " partial assignments "
                            "(valid ones may still exist: defaults that satisfy every constraint "
                            "give sampling its start)");
      }
      values = std::move(*found);
    }
    const auto dims = static_cast<std::uint32_t>(params.size());
    const std::int64_t moves = std::int64_t{kWalkMovesPerParam} * dims;
    for (std::int64_t m = 0; m < moves; ++m) {
      const std::uint32_t p = uniform_below(rng, dims);
      const auto& domain = params[p].values;
      const Value before = values[p];
      values[p] = domain[uniform_below(rng, static_cast<std::uint32_t>(domain.size()))];
      if (!satisfied(values)) values[p] = before;
    }
    return Config(names, std::move(values));
  }
};

// ---- Builder ---------------------------------------------------------------------------------

SearchSpace::Builder& SearchSpace::Builder::param(std::string name, std::vector<Value> values,
                                                  std::optional<Value> default_value) {
  static const char* const reserved[] = {"and", "or", "not", "True", "False"};
  if (!is_identifier(name) || std::find(std::begin(reserved), std::end(reserved), name) !=
                                  std::end(reserved)) {
    throw Error(ErrorCode::invalid_argument,
                "parameter name '" + name + "' is not an identifier usable as a macro and in "
                "expressions (letters, digits, '_', not starting with a digit, not a keyword)");
  }
  for (const auto& p : params_) {
    if (p.name == name) {
      throw Error(ErrorCode::invalid_argument, "parameter '" + name + "' is declared twice");
    }
  }
  if (values.empty()) {
    throw Error(ErrorCode::invalid_argument, "parameter '" + name + "' has no values");
  }
  if (values.size() >= (std::size_t{1} << 32)) {
    throw Error(ErrorCode::invalid_argument, "parameter '" + name + "' has too many values");
  }
  std::vector<Value> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeat != sorted.end()) {
    throw Error(ErrorCode::invalid_argument, "parameter '" + name + "' lists the value " +
                                                 std::to_string(*repeat) + " twice in " +
                                                 domain_text(values));
  }
  const Value chosen = default_value.value_or(values.front());
  if (!std::binary_search(sorted.begin(), sorted.end(), chosen)) {
    throw Error(ErrorCode::invalid_argument, "default " + std::to_string(chosen) +
                                                 " of parameter '" + name +
                                                 "' is not in its domain " + domain_text(values));
  }
  params_.push_back(Param{std::move(name), std::move(values), chosen});
  return *this;
}

SearchSpace::Builder& SearchSpace::Builder::constraint(std::string expression) {
  constraints_.push_back({std::move(expression), nullptr});
  return *this;
}

SearchSpace::Builder& SearchSpace::Builder::constraint(std::string description,
                                                       Predicate predicate) {
  if (!predicate) {
    throw Error(ErrorCode::invalid_argument,
                "constraint '" + description + "' has an empty predicate");
  }
  constraints_.push_back({std::move(description), std::move(predicate)});
  return *this;
}

SearchSpace SearchSpace::Builder::build() const {
  auto impl = std::make_shared<Impl>();
  impl->params = params_;
  std::vector<std::string> names;
  for (const auto& p : params_) names.push_back(p.name);
  impl->names = std::make_shared<const std::vector<std::string>>(std::move(names));

  const std::size_t dims = params_.size();
  for (const auto& p : params_) impl->lookup.emplace_back(p.values);

  // Mixed radix, first parameter slowest.
  impl->strides.assign(dims, 1);
  Index size = 1;
  for (std::size_t i = dims; i-- > 0;) {
    impl->strides[i] = size;
    if (__builtin_mul_overflow(size, Index{params_[i].values.size()}, &size) ||
        size > (Index{1} << 63)) {
      impl->too_large = true;
    }
  }
  impl->size = impl->too_large ? 0 : size;

  for (const auto& spec : constraints_) {
    Constraint c;
    c.description = spec.text;
    if (spec.predicate) {
      c.predicate = spec.predicate;
      c.params.resize(dims);
      std::iota(c.params.begin(), c.params.end(), std::size_t{0});
      c.cost = ~std::size_t{0};
      impl->has_predicates = true;
    } else {
      c.expression = Expression::parse(spec.text, *impl->names);
      c.params = c.expression->params();
      c.cost = c.expression->cost();
    }
    impl->constraints.push_back(std::move(c));
  }
  impl->check_order.resize(impl->constraints.size());
  std::iota(impl->check_order.begin(), impl->check_order.end(), std::size_t{0});
  std::stable_sort(impl->check_order.begin(), impl->check_order.end(),
                   [&](std::size_t a, std::size_t b) {
                     return impl->constraints[a].cost < impl->constraints[b].cost;
                   });

  impl->by_param.resize(dims);
  for (std::size_t k : impl->check_order) {
    for (std::size_t p : impl->constraints[k].params) impl->by_param[p].push_back(k);
  }

  std::vector<std::size_t> all(dims);
  std::iota(all.begin(), all.end(), std::size_t{0});
  impl->full_plan = impl->make_plan(all, true);
  if (impl->has_predicates) {
    impl->count_plan = impl->full_plan;
  } else {
    std::vector<bool> constrained(dims, false);
    for (const auto& c : impl->constraints) {
      for (std::size_t p : c.params) constrained[p] = true;
    }
    std::vector<std::size_t> order;
    for (std::size_t p = 0; p < dims; ++p) {
      if (constrained[p]) order.push_back(p);
    }
    impl->count_plan = impl->make_plan(order, false);
  }

  return SearchSpace(std::move(impl));
}

// ---- SearchSpace -----------------------------------------------------------------------------

SearchSpace::SearchSpace() {
  static const std::shared_ptr<const Impl> empty = [] {
    SearchSpace::Builder b;
    return b.build().impl_;
  }();
  impl_ = empty;
}

const std::vector<Param>& SearchSpace::params() const { return impl_->params; }

std::size_t SearchSpace::dims() const { return impl_->params.size(); }

std::optional<std::size_t> SearchSpace::find(std::string_view name) const {
  const auto& n = *impl_->names;
  auto it = std::find(n.begin(), n.end(), name);
  if (it == n.end()) return std::nullopt;
  return static_cast<std::size_t>(it - n.begin());
}

const std::shared_ptr<const std::vector<std::string>>& SearchSpace::names() const {
  return impl_->names;
}

Index SearchSpace::size() const {
  impl_->require_indexable();
  return impl_->size;
}

std::vector<std::string> SearchSpace::constraint_descriptions() const {
  std::vector<std::string> out;
  for (const auto& c : impl_->constraints) out.push_back(c.description);
  return out;
}

Config SearchSpace::at(Index index) const {
  impl_->require_indexable();
  if (index >= impl_->size) {
    throw Error(ErrorCode::invalid_argument, "index " + std::to_string(index) +
                                                 " is outside the space of " +
                                                 std::to_string(impl_->size) + " points");
  }
  const auto& params = impl_->params;
  std::vector<Value> values(params.size());
  for (std::size_t i = params.size(); i-- > 0;) {
    const Index n = params[i].values.size();
    values[i] = params[i].values[index % n];
    index /= n;
  }
  return Config(impl_->names, std::move(values));
}

Index SearchSpace::index_of(const Config& config) const {
  impl_->require_indexable();
  impl_->require_same_names(config);
  Index index = 0;
  for (std::size_t i = 0; i < config.size(); ++i) {
    const Value v = config.values()[i];
    auto pos = impl_->position_of(i, v);
    if (!pos) throw Error(ErrorCode::invalid_argument, impl_->out_of_domain_message(i, v));
    index += *pos * impl_->strides[i];
  }
  return index;
}

Config SearchSpace::from_positions(const std::vector<std::uint32_t>& positions) const {
  const auto& params = impl_->params;
  if (positions.size() != params.size()) {
    throw Error(ErrorCode::invalid_argument, "expected " + std::to_string(params.size()) +
                                                 " positions, got " +
                                                 std::to_string(positions.size()));
  }
  std::vector<Value> values(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (positions[i] >= params[i].values.size()) {
      throw Error(ErrorCode::invalid_argument,
                  "position " + std::to_string(positions[i]) + " of parameter '" +
                      params[i].name + "' is outside its " +
                      std::to_string(params[i].values.size()) + " values");
    }
    values[i] = params[i].values[positions[i]];
  }
  return Config(impl_->names, std::move(values));
}

std::vector<std::uint32_t> SearchSpace::positions(const Config& config) const {
  impl_->require_same_names(config);
  std::vector<std::uint32_t> out(config.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto pos = impl_->position_of(i, config.values()[i]);
    if (!pos) {
      throw Error(ErrorCode::invalid_argument,
                  impl_->out_of_domain_message(i, config.values()[i]));
    }
    out[i] = *pos;
  }
  return out;
}

Config SearchSpace::make(const std::map<std::string, Value>& values) const {
  const auto& params = impl_->params;
  std::vector<Value> out(params.size());
  std::vector<bool> given(params.size(), false);
  for (const auto& [name, value] : values) {
    auto i = find(name);
    if (!i) {
      throw Error(ErrorCode::unknown_name,
                  "unknown parameter '" + name + "'; " + impl_->known_parameters());
    }
    if (!impl_->position_of(*i, value)) {
      throw Error(ErrorCode::invalid_argument, impl_->out_of_domain_message(*i, value));
    }
    out[*i] = value;
    given[*i] = true;
  }
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!given[i]) missing.push_back(params[i].name);
  }
  if (!missing.empty()) {
    throw Error(ErrorCode::invalid_argument,
                "missing value for parameter(s) " + join(missing, ", "));
  }
  return Config(impl_->names, std::move(out));
}

namespace {

/// The name=integer pairs of a config's text form "a=1,b=2" (any order; no name twice).
std::map<std::string, Value> parse_pairs(const std::string& text) {
  std::map<std::string, Value> values;
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  std::string_view rest = trim(text);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    const std::string_view name = trim(item.substr(0, eq));
    const std::string_view number =
        eq == std::string_view::npos ? std::string_view{} : trim(item.substr(eq + 1));
    Value v = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (name.empty() || number.empty() || ec != std::errc() ||
        ptr != number.data() + number.size()) {
      throw Error(ErrorCode::parse_error, "config \"" + text + "\": item \"" +
                                              std::string(item) +
                                              "\" is not of the form name=integer");
    }
    if (!values.emplace(std::string(name), v).second) {
      throw Error(ErrorCode::invalid_argument, "config \"" + text + "\" gives parameter '" +
                                                   std::string(name) + "' twice");
    }
    if (comma != std::string_view::npos && trim(rest).empty()) {
      throw Error(ErrorCode::parse_error, "config \"" + text + "\" ends with ','");
    }
  }
  return values;
}

}  // namespace

Config SearchSpace::parse(const std::string& text) const { return make(parse_pairs(text)); }

Config SearchSpace::with_changes(const std::string& changes) const {
  return with_changes(parse_pairs(changes));
}

Config SearchSpace::with_changes(const std::map<std::string, Value>& changes) const {
  std::map<std::string, Value> values = default_config().values_by_name();
  for (const auto& [name, value] : changes) {
    if (!find(name)) {
      throw Error(ErrorCode::unknown_name,
                  "unknown parameter '" + name + "'; " + impl_->known_parameters());
    }
    values[name] = value;
  }
  return make(values);
}

bool SearchSpace::contains(const Config& config) const {
  if (config.size() != dims()) return false;
  if (config.names().data() != impl_->names->data() && config.names() != *impl_->names) {
    return false;
  }
  return !impl_->out_of_domain(config);
}

bool SearchSpace::valid(const Config& config) const {
  impl_->require_same_names(config);
  if (impl_->out_of_domain(config)) return false;
  return impl_->satisfied(config.values());
}

std::optional<std::string> SearchSpace::violated(const Config& config) const {
  impl_->require_same_names(config);
  if (auto i = impl_->out_of_domain(config)) {
    return impl_->out_of_domain_message(*i, config.values()[*i]);
  }
  // Expressions first, in declaration order; predicates only once every expression holds
  // (a predicate may rely on them, e.g. divide by a parameter an expression keeps non-zero).
  for (bool predicates : {false, true}) {
    for (const auto& c : impl_->constraints) {
      if (static_cast<bool>(c.predicate) == predicates && !impl_->check(c, config.values()))
        return c.description;
    }
  }
  return std::nullopt;
}

Config SearchSpace::default_config() const {
  std::vector<Value> values;
  for (const auto& p : impl_->params) values.push_back(p.default_value);
  return Config(impl_->names, std::move(values));
}

Config SearchSpace::random(std::mt19937_64& rng) const {
  // Spaces where uniform draws are hopeless (decided once by a fixed-seed probe) skip them,
  // instead of failing kRejectionTries draws on every call: both ways are uniform, and the
  // choice does not depend on earlier calls.
  if (!impl_->rejection_hopeless()) {
    if (auto c = impl_->random_by_rejection(rng)) return *std::move(c);
  }
  // Few valid points: sample exactly from the list of valid points of a small space, or
  // walk over the valid configs of a large one.
  if (!impl_->too_large && impl_->size <= kSmallSpace) {
    const auto& valid = impl_->valid_indices();
    if (valid.empty()) impl_->throw_unsatisfiable("no configuration satisfies every constraint");
    const Index pick = (static_cast<unsigned __int128>(rng()) * valid.size()) >> 64;
    return at(valid[pick]);
  }
  return impl_->random_by_walk(rng);
}

std::vector<Config> SearchSpace::neighbours(const Config& config, Neighbourhood kind) const {
  const std::vector<std::uint32_t> pos = positions(config);
  const auto& params = impl_->params;
  const auto& constraints = impl_->constraints;
  std::vector<Config> out;
  std::vector<Value> values = config.values();
  // A neighbour that changes parameter i keeps the outcome of every constraint not
  // referencing i, so only constraints referencing i are evaluated again.
  // Predicates (which reference every parameter, checked last) run only on a config whose
  // expressions all hold; otherwise they count as failing, which skips no neighbour that
  // could be valid, since every neighbour re-checks them.
  std::vector<bool> holds(constraints.size());
  std::size_t failing = 0;
  for (std::size_t c : impl_->check_order) {
    holds[c] = (constraints[c].predicate && failing > 0) ? false : impl_->check(constraints[c], values);
    failing += !holds[c];
  }
  auto try_position = [&](std::size_t i, std::uint32_t k) {
    values[i] = params[i].values[k];
    if (impl_->all_hold(impl_->by_param[i], values)) out.emplace_back(impl_->names, values);
  };
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::size_t failing_here = 0;
    for (std::size_t c : impl_->by_param[i]) failing_here += !holds[c];
    if (failing_here < failing) continue;  // a constraint without i fails for every neighbour
    const auto n = static_cast<std::uint32_t>(params[i].values.size());
    if (kind == Neighbourhood::hamming) {
      for (std::uint32_t k = 0; k < n; ++k) {
        if (k != pos[i]) try_position(i, k);
      }
    } else {
      if (pos[i] > 0) try_position(i, pos[i] - 1);
      if (pos[i] + 1 < n) try_position(i, pos[i] + 1);
    }
    values[i] = config.values()[i];
  }
  return out;
}

std::vector<double> SearchSpace::encode(const Config& config) const {
  const std::vector<std::uint32_t> pos = positions(config);
  std::vector<double> out(pos.size());
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const std::size_t n = impl_->params[i].values.size();
    out[i] = n > 1 ? static_cast<double>(pos[i]) / static_cast<double>(n - 1) : 0.0;
  }
  return out;
}

std::uint64_t SearchSpace::count_valid(Index limit) const {
  const WalkPlan& plan = impl_->count_plan;
  if (plan.points > limit) {
    throw Error(ErrorCode::invalid_argument,
                "counting would enumerate " + std::to_string(plan.points) +
                    " points, above the limit of " + std::to_string(limit));
  }
  WalkState s = impl_->start_walk();
  std::uint64_t count = 0;
  auto leaf = [&](WalkState&) {
    ++count;
    return false;
  };
  impl_->walk(plan, s, 0, leaf);
  Index total;
  if (count > 0 && (plan.multiplier == ~Index{0} ||
                    __builtin_mul_overflow(count, plan.multiplier, &total))) {
    throw Error(ErrorCode::invalid_argument, "the number of valid configs exceeds 2^64");
  }
  return count * plan.multiplier;
}

std::optional<Index> SearchSpace::next_valid(Index from) const {
  const Index total = size();  // throws above 2^63 points
  if (from >= total) return std::nullopt;
  std::vector<std::uint32_t> start(impl_->params.size());
  for (std::size_t i = 0; i < start.size(); ++i)
    start[i] = static_cast<std::uint32_t>((from / impl_->strides[i]) % impl_->params[i].values.size());
  WalkState s = impl_->start_walk();
  std::optional<Index> found;
  auto leaf = [&](WalkState& st) {
    found = impl_->index_from_positions(st.positions);
    return true;
  };
  impl_->walk(impl_->full_plan, s, 0, leaf, &start);
  return found;
}

void SearchSpace::for_each_valid(const std::function<void(Index, const Config&)>& visit,
                                 Index limit) const {
  if (impl_->too_large || impl_->size > limit) {
    throw Error(ErrorCode::invalid_argument,
                "enumerating would visit more than the limit of " + std::to_string(limit) +
                    " points");
  }
  WalkState s = impl_->start_walk();
  auto leaf = [&](WalkState& st) {
    visit(impl_->index_from_positions(st.positions), Config(impl_->names, st.values));
    return false;
  };
  impl_->walk(impl_->full_plan, s, 0, leaf);
}

}  // namespace ktune
