// The searchers of search/, each defined in its own file, as the registry sees them: a
// catalog entry (name, description, documented options with defaults) and a factory that
// receives the options with every default filled in. Internal to search/.
#pragma once

#include <memory>

#include "ktune/searcher.h"

namespace ktune::search {

/// Catalog entry of `random`.
SearcherInfo random_info();
/// Makes `random` from complete options.
std::unique_ptr<Searcher> make_random(const SearcherOptions& options);
/// Catalog entry of `exhaustive`.
SearcherInfo exhaustive_info();
/// Makes `exhaustive` from complete options.
std::unique_ptr<Searcher> make_exhaustive(const SearcherOptions& options);
/// Catalog entry of `genetic`.
SearcherInfo genetic_info();
/// Makes `genetic` from complete options.
std::unique_ptr<Searcher> make_genetic(const SearcherOptions& options);
/// Catalog entry of `annealing`.
SearcherInfo annealing_info();
/// Makes `annealing` from complete options.
std::unique_ptr<Searcher> make_annealing(const SearcherOptions& options);
/// Catalog entry of `bayesian`.
SearcherInfo bayesian_info();
/// Makes `bayesian` from complete options.
std::unique_ptr<Searcher> make_bayesian(const SearcherOptions& options);

}  // namespace ktune::search
