// The Python list expressions T1 documents hold in a parameter's "Values" string when it is
// not a JSON list (the benchmark hub writes "[1, 2, 4] + list(range(32, 1024+1, 32))" and
// "[2**i for i in range(0, 6)]"): list literals, range(...), list(range(...)) and
// comprehensions "[expr for name in range(...)]", joined by '+'. Items and range bounds are
// integer expressions in the constraint syntax (True / False are 1 / 0).
// Internal API of the library (not installed).
#pragma once

#include <string>
#include <vector>

#include "ktune/config.h"

namespace ktune::detail {

/// Most values one "Values" expression may produce (a range past it is refused, not built).
constexpr std::size_t kMaxPythonValues = 1u << 20;

/// The values of `text`, in order. Throws Error(parse_error) saying what part of it is not
/// one of the forms above (a string item, a float, an unknown call, a bad range).
std::vector<Value> python_list_values(const std::string& text);

}  // namespace ktune::detail
