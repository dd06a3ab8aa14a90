// The nesting-depth and key checks of JSON input (json_input.h).
#include "json_input.h"

#include <cctype>

#include <spdlog/spdlog.h>

#include "ktune/error.h"

namespace ktune::detail {

void require_json_depth(std::string_view text, const std::string& origin) {
  // Compressed bytes would be scanned as brackets ("nested deeper than 64 levels").
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
      static_cast<unsigned char>(text[1]) == 0x8b)
    throw Error(ErrorCode::parse_error,
                origin + ": gzip-compressed data, not JSON text (decompress it with gunzip, or "
                         "give it where .json.gz files are read, such as replay --data)");
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw Error(ErrorCode::parse_error,
                    origin + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels (at byte " + std::to_string(i + 1) + ")");
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
}

bool resembles_key(const std::string& key, const std::string& known) {
  auto lower = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  const std::string a = lower(key), b = lower(known);
  if (a == b) return true;
  if (a.size() >= 4 && (b.rfind(a, 0) == 0 || a.rfind(b, 0) == 0)) return true;
  // Two edits for longer keys, one for short ones ("Note" is no misspelt "Name").
  const std::size_t n = a.size(), m = b.size();
  const std::size_t most = std::min(n, m) <= 5 ? 1 : 2;
  if ((n > m ? n - m : m - n) > most) return false;
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m] <= most;
}

void check_known_keys(const nlohmann::json& object, const std::string& origin,
                      const std::string& field, std::initializer_list<const char*> known,
                      OtherKeys others) {
  if (!object.is_object()) return;
  std::string list;
  for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
  const std::string at = origin + ": " + (field.empty() ? "" : field + ".");
  // Keys of the T1 schema that ktune does not use: accepted as they are.
  static const char* const kSchemaKeysIgnored[] = {"Stream", "TypeSize", "DataSource", "RandomSeed",
                                                    "ReferenceArguments", "Device", "Profiling",
                                                    "SimulationInput"};
  auto is = [](const std::string& key) { return [&key](const char* k) { return key == k; }; };
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::any_of(known.begin(), known.end(), is(key))) continue;
    if (others != OtherKeys::refuse &&
        std::any_of(std::begin(kSchemaKeysIgnored), std::end(kSchemaKeysIgnored), is(key)))
      continue;
    for (const char* k : known)
      if (resembles_key(key, k))
        throw Error(ErrorCode::parse_error,
                    at + key + ": unknown key; did you mean " + k + "?");
    if (others == OtherKeys::refuse)
      throw Error(ErrorCode::parse_error, at + key + ": unknown key (expected " + list + ")");
    if (others == OtherKeys::warn)
      spdlog::warn("{}{}: not a key ktune reads (it reads {}); ignored", at, key, list);
  }
}

}  // namespace ktune::detail
