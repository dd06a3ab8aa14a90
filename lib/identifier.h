// C identifiers: the one rule for names that reach generated code or a template's
// expressions (tuning parameters, problem dimensions, kernel and argument names).
// Internal API of the library (not installed).
#pragma once

#include <cctype>
#include <string_view>

namespace ktune::detail {

/// True for a C identifier: a letter or '_' followed by letters, digits and '_'.
inline bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace ktune::detail
