// Searcher registry: the catalog of searchers with their documented options, and making one
// by name. Unknown searchers and options are errors that list what is valid; given options
// are merged over the documented defaults before the searcher sees them.
#include <algorithm>
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
    complete.set(key, value);
  }
  return it->make(complete);
}

}  // namespace ktune
