// Reading an enum back from its name: one lookup over the enum's values and their names, whose
// error lists every accepted name, so the list in the message cannot drift from the names.
#pragma once

#include <string>

#include "ktune/error.h"

namespace ktune::detail {

/// The value among `all` whose `name` is `text`. Throws Error(parse_error) naming `text` and
/// `what` ("trial status") and listing every name in `all`: "unknown trial status \"x\"
/// (expected ok, invalid or timeout)".
template <class Enum, std::size_t N>
Enum enum_from_name(const std::string& text, const Enum (&all)[N], const char* what,
                    const char* (*name)(Enum)) {
  for (Enum value : all)
    if (text == name(value)) return value;
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) expected += i + 1 == N ? " or " : ", ";
    expected += name(all[i]);
  }
  throw Error(ErrorCode::parse_error,
              std::string("unknown ") + what + " \"" + text + "\" (expected " + expected + ")");
}

}  // namespace ktune::detail
