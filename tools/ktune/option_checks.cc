// Validators of numeric command-line options (see option_checks.h).
#include "option_checks.h"

#include "ktune/log.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace ktune::cli {

CLI::Validator count_in(std::int64_t lo, std::int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        std::int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == end &&
                                                      (value < lo || value > hi)))
          return "'" + text + "' is outside " + range;
        if (ec != std::errc() || ptr != end) return "'" + text + "' is not a whole number";
        return {};
      },
      "INT in " + range);
}

CLI::Validator seed_value() {
  return count_in(0, std::numeric_limits<std::int64_t>::max());
}

CLI::Validator given_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "an empty value (leave the option out instead)";
        if (has_control_character(text)) return "'" + text + "' holds a control character";
        return {};
      },
      "NAME");
}

namespace {

/// A finite number at least (strict: above) 0.
CLI::Validator finite_number(bool strict) {
  return CLI::Validator(
      [strict](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size())
          return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
        if (strict ? value <= 0 : value < 0)
          return "'" + text + "' must be " + (strict ? "above 0" : "0 or more");
        return {};
      },
      strict ? "NUMBER > 0" : "NUMBER >= 0");
}

}  // namespace

CLI::Validator finite_non_negative() { return finite_number(false); }
CLI::Validator finite_positive() { return finite_number(true); }

}  // namespace ktune::cli
