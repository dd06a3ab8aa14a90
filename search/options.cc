// SearcherOptions: "name=value" option text from the command line, with typed getters that
// name the offending option when its text does not parse.
#include <charconv>
#include <cstdlib>

#include "ktune/error.h"
#include "ktune/searcher.h"

namespace ktune {

namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace

SearcherOptions SearcherOptions::parse(const std::string& text) {
  SearcherOptions out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty()) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw Error(ErrorCode::parse_error, "searcher option '" + item +
                                                "' is not of the form name=value (in '" + text +
                                                "')");
      }
      if (trim(item.substr(eq + 1)).empty())  // "population=": the value is what is missing
        throw Error(ErrorCode::parse_error, "searcher option '" + trim(item.substr(0, eq)) +
                                                     "' has an empty value (in '" + text +
                                                     "'; `ktune list` shows each option's values)");
      const std::string name = trim(item.substr(0, eq));
      if (out.values().count(name))
        throw Error(ErrorCode::parse_error, "searcher option '" + name + "' is given twice (in '" +
                                                text + "')");
      out.set(name, trim(item.substr(eq + 1)));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::int64_t SearcherOptions::get_int(const std::string& name, std::int64_t fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  std::int64_t value = 0;
  const char* end = it->second.data() + it->second.size();
  const auto [ptr, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    throw Error(ErrorCode::parse_error, "searcher option " + name + "='" + it->second +
                                            "' is not an integer");
  }
  return value;
}

double SearcherOptions::get_double(const std::string& name, double fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  // Plain decimal notation, as get_int reads integers: no hex ("0x1p-1") and no sign "+".
  double value = 0;
  const char* end = it->second.data() + it->second.size();
  const auto [ptr, ec] = std::from_chars(it->second.data(), end, value, std::chars_format::general);
  if (it->second.empty() || ec != std::errc() || ptr != end) {
    throw Error(ErrorCode::parse_error, "searcher option " + name + "='" + it->second +
                                            "' is not a number");
  }
  return value;
}

std::string SearcherOptions::get_string(const std::string& name,
                                        const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

}  // namespace ktune
