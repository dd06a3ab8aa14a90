// The nesting-depth check of JSON input (json_input.h).
#include "json_input.h"

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

}  // namespace ktune::detail
