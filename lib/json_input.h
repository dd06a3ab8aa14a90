// Limits on JSON read from files a user hands to ktune (logs, caches, T1 documents, plans,
// vendor files): nesting depth is checked before parsing, since nlohmann::json copies and
// dumps values recursively and a document nested 100000 levels deep would overflow the
// stack; values quoted in error messages are shortened; and a document's keys are checked
// against those ktune reads, so that a misspelt one is named instead of ignored.
#pragma once

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ktune/error.h"

namespace ktune::detail {

/// Deepest nesting of arrays and objects accepted in JSON input (real inputs use under 10).
constexpr int kMaxJsonDepth = 64;

/// Throws Error(parse_error) naming `origin` when `text` nests arrays / objects deeper than
/// kMaxJsonDepth (brackets inside strings do not count), and when `text` is gzip-compressed
/// data. Malformed text otherwise passes, for the parser to report.
void require_json_depth(std::string_view text, const std::string& origin);

/// At most this many characters of a value are quoted in an error message.
constexpr std::size_t kJsonExcerptChars = 120;

/// A JSON parser's message without the library's tag, with its quote of the text ("last read:
/// '...'") cut to kJsonExcerptChars characters: an unterminated string of 200 MB is not
/// repeated whole.
inline std::string json_parse_message(const std::exception& e) {
  std::string message = e.what();
  // The parser's own tag ("[json.exception.parse_error.101] parse error at ") names its
  // library, not the input: the position and the reason stay.
  if (message.rfind("[json.exception.", 0) == 0) {
    const std::size_t close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
    for (const char* lead : {"parse error at ", "parse error: "})
      if (message.rfind(lead, 0) == 0) message.erase(0, std::string(lead).size());
  }
  const std::string marker = "last read: '";
  const std::size_t at = message.find(marker);
  if (at == std::string::npos) return message;
  const std::size_t start = at + marker.size();
  // The quote closes before "; expected ..." when the parser adds that, else at the end (the
  // quoted text may hold quotes itself).
  std::size_t end = message.rfind("'; expected ");
  if (end == std::string::npos || end < start)
    end = !message.empty() && message.back() == '\'' ? message.size() - 1 : std::string::npos;
  const std::size_t quoted = end != std::string::npos && end >= start ? end - start : message.size() - start;
  if (quoted <= kJsonExcerptChars) return message;
  return message.substr(0, start + kJsonExcerptChars) + "...' (" + std::to_string(quoted) + " characters)" +
         (end != std::string::npos && end >= start ? message.substr(end + 1) : std::string());
}

/// `text` parsed as one JSON document (Json: nlohmann::json or ordered_json) after
/// require_json_depth; malformed text throws Error(parse_error) "<origin>: not valid JSON: ...".
/// With `unique_keys` (documents a person writes: T1, T4, plans) a key given twice in one
/// object is refused by name, where the parser would keep the last one silently; JSON lines
/// records, written by ktune and read by the million, skip that check.
template <class Json = nlohmann::json>
Json parse_json_document(std::string_view text, const std::string& origin, bool unique_keys = true) {
  require_json_depth(text, origin);
  std::vector<std::vector<std::string>> keys;  // of each open object
  std::string duplicate;
  typename Json::parser_callback_t check = [&](int, typename Json::parse_event_t event, Json& parsed) {
    using Event = typename Json::parse_event_t;
    if (event == Event::object_start) {
      keys.emplace_back();
    } else if (event == Event::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == Event::key && !keys.empty() && duplicate.empty()) {
      const std::string key = parsed.template get<std::string>();
      auto& seen = keys.back();
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) duplicate = key;
      else seen.push_back(key);
    }
    return true;
  };
  Json doc;
  try {
    doc = unique_keys ? Json::parse(text, check) : Json::parse(text);
  } catch (const typename Json::exception& e) {  // syntax, and numbers beyond a double (1e400)
    throw Error(ErrorCode::parse_error, origin + ": not valid JSON: " + json_parse_message(e));
  }
  if (!duplicate.empty())
    throw Error(ErrorCode::parse_error,
                origin + ": the key \"" + duplicate + "\" is given twice in one object (which one is meant?)");
  return doc;
}

/// `v` as JSON text for an error message: invalid UTF-8 replaced, cut to kJsonExcerptChars
/// characters with the full length noted.
template <class Json>
std::string json_excerpt(const Json& v) {
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() <= kJsonExcerptChars) return text;
  const std::size_t full = text.size();
  text.resize(kJsonExcerptChars);
  return text + "... (" + std::to_string(full) + " characters)";
}

/// What check_known_keys() does with a key that is neither known nor a likely misspelling of a
/// known one.
enum class OtherKeys {
  refuse,  ///< an error (ktune's own sections)
  warn,    ///< a warning that it is ignored (sections of the T1 schema other tools may read)
  accept,  ///< nothing (the document's top level, where the schema has keys ktune skips)
};

/// True when `key` looks like a misspelling of `known`: the same in another case, at most two
/// edits apart (insertions, deletions, substitutions, adjacent swaps; one when either has five
/// letters or fewer), or one a prefix of the other with four letters or more.
bool resembles_key(const std::string& key, const std::string& known);

/// Checks the keys of `object` (at `field` of the document `origin`) against `known`, those
/// ktune reads there. A key that resembles one of them (resembles_key) is refused with
/// Error(parse_error) "<origin>: <field>.<key>: unknown key; did you mean <known>?": a
/// misspelt key would otherwise change what is measured or checked without a word. Other
/// unknown keys are handled as `others` says; keys of the T1 schema that ktune does not use
/// (Stream, TypeSize, ...) pass unless `others` is refuse. Does nothing when `object` is not
/// an object.
void check_known_keys(const nlohmann::json& object, const std::string& origin,
                      const std::string& field, std::initializer_list<const char*> known,
                      OtherKeys others);

}  // namespace ktune::detail
