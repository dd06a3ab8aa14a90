// Searcher registry: the catalog of searchers with their documented options, and making one
// by name. Unknown searchers and options are errors that list what is valid; given options
// are merged over the documented defaults before the searcher sees them.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "ktune/error.h"
#include "ktune/searcher.h"
#include "searchers.h"

namespace ktune {

namespace {

struct Entry {
  SearcherInfo info;
  std::function<std::unique_ptr<Searcher>(const SearcherOptions&)> make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = [] {
    std::vector<Entry> v = {
        {search::annealing_info(), search::make_annealing},
        {search::bayesian_info(), search::make_bayesian},
        {search::exhaustive_info(), search::make_exhaustive},
        {search::genetic_info(), search::make_genetic},
        {search::random_info(), search::make_random},
    };
    std::sort(v.begin(), v.end(),
              [](const Entry& a, const Entry& b) { return a.info.name < b.info.name; });
    return v;
  }();
  return all;
}

/// Throws Error(invalid_argument) unless `text` is a value option `o` accepts (see
/// SearcherOption::accepts).
void check_option_value(const std::string& searcher, const SearcherOption& o,
                        const std::string& text) {
  const std::string& spec = o.accepts;
  auto refuse = [&](const std::string& what) {
    throw Error(ErrorCode::invalid_argument, "searcher '" + searcher + "' option " + o.name +
                                                 "='" + text + "': " + what);
  };
  const bool integer = spec.rfind("int ", 0) == 0, real = spec.rfind("real ", 0) == 0;
  if (!integer && !real) {  // "a|b|c"
    std::string word;
    for (std::size_t i = 0; i <= spec.size(); ++i) {
      if (i == spec.size() || spec[i] == '|') {
        if (word == text) return;
        word.clear();
      } else {
        word += spec[i];
      }
    }
    refuse("expected one of " + spec);
  }
  const std::string range = spec.substr(spec.find(' ') + 1);
  const auto dots = range.find("..");
  const double lo = std::strtod(range.substr(0, dots).c_str(), nullptr);
  const double hi = std::strtod(range.substr(dots + 2).c_str(), nullptr);
  SearcherOptions one;  // parsed as the searcher will read it
  one.set(o.name, text);
  double value = 0;
  try {
    value = integer ? static_cast<double>(one.get_int(o.name, 0)) : one.get_double(o.name, 0);
  } catch (const Error&) {
    value = std::nan("");
  }
  if (!std::isfinite(value))
    refuse(std::string("expected a ") + (integer ? "whole" : "finite") + " number in " + range);
  if (value < lo || value > hi) refuse("outside " + range);
}

}  // namespace

std::vector<SearcherInfo> searcher_catalog() {
  std::vector<SearcherInfo> out;
  for (const auto& e : entries()) out.push_back(e.info);
  return out;
}

std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearcherOptions& options) {
  const auto& all = entries();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const Entry& e) { return e.info.name == name; });
  if (it == all.end()) {
    std::string valid;
    for (const auto& e : all) valid += (valid.empty() ? "" : ", ") + e.info.name;
    throw Error(ErrorCode::unknown_name,
                "unknown searcher '" + name + "'; valid searchers: " + valid);
  }
  SearcherOptions complete;
  for (const auto& o : it->info.options) complete.set(o.name, o.default_value);
  for (const auto& [key, value] : options.values()) {
    const bool known = std::any_of(it->info.options.begin(), it->info.options.end(),
                                   [&](const SearcherOption& o) { return o.name == key; });
    if (!known) {
      std::string valid;
      for (const auto& o : it->info.options) valid += (valid.empty() ? "" : ", ") + o.name;
      throw Error(ErrorCode::unknown_name,
                  "searcher '" + name + "' has no option '" + key + "'; valid options: " +
                      (valid.empty() ? std::string("(none)") : valid));
    }
    const auto& option = *std::find_if(it->info.options.begin(), it->info.options.end(),
                                       [&](const SearcherOption& o) { return o.name == key; });
    check_option_value(name, option, value);
    complete.set(key, value);
  }
  return it->make(complete);
}

}  // namespace ktune
