// Searcher: ask/tell optimizers over a SearchSpace. A searcher never touches the GPU: it
// proposes batches of configs and observes the resulting Trials (failures included). Made by
// name through a registry with documented options; deterministic for a seed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktune/space.h"
#include "ktune/trial.h"

namespace ktune {

/// Searcher options as text (from the CLI "name=value"); typed getters check names.
class SearcherOptions {
 public:
  SearcherOptions() = default;
  /// From a map of name -> value text.
  explicit SearcherOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  /// Parses "a=1,b=0.5"; throws Error(parse_error) naming the bad item.
  static SearcherOptions parse(const std::string& text);
  /// Sets one option.
  void set(const std::string& name, const std::string& value) { values_[name] = value; }
  /// Integer option or default; throws Error(parse_error) naming the option on bad text.
  std::int64_t get_int(const std::string& name, std::int64_t fallback) const;
  /// Real option or default.
  double get_double(const std::string& name, double fallback) const;
  /// Text option or default.
  std::string get_string(const std::string& name, const std::string& fallback) const;
  /// All options given.
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// The ask/tell interface.
class Searcher {
 public:
  virtual ~Searcher() = default;
  /// Registry name.
  virtual std::string name() const = 0;
  /// Starts over on a space with a seed (all state cleared).
  virtual void reset(const SearchSpace& space, std::uint64_t seed) = 0;
  /// Up to `max_batch` valid configs never proposed before; empty when the searcher is done
  /// (space exhausted or converged with nothing left to try).
  virtual std::vector<Config> propose(std::size_t max_batch) = 0;
  /// Results for proposed configs, in any order, failures included (they count as spent).
  /// The tuner also passes trials it measured on its own before the first proposal (the
  /// default config, trials resumed from a log): those configs count as proposed, and a
  /// config proposed again is only answered from the tuner's memory. The built-in searchers
  /// ignore trials whose config is not of the space they were reset on.
  virtual void observe(const std::vector<Trial>& trials) = 0;
};

/// One documented option of a searcher.
struct SearcherOption {
  std::string name;          ///< option name
  std::string default_value; ///< default as text
  std::string help;          ///< what it does
  /// The values make_searcher accepts: "int LO..HI" (whole numbers), "real LO..HI" (finite
  /// numbers), or "a|b|c" (one of these words).
  std::string accepts;
};

/// Catalog entry of a searcher.
struct SearcherInfo {
  std::string name;                     ///< registry name
  std::string description;              ///< one line
  std::vector<SearcherOption> options;  ///< documented options with defaults
};

/// Every registered searcher, sorted by name.
std::vector<SearcherInfo> searcher_catalog();
/// Makes a searcher by name; throws Error(unknown_name) for an unknown searcher or option and
/// Error(invalid_argument) for a value outside what the option accepts.
std::unique_ptr<Searcher> make_searcher(const std::string& name,
                                        const SearcherOptions& options = {});

}  // namespace ktune
