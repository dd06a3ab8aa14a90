// The ktune JSON-lines format: a header line {"format":"ktune-trials","version":1,...}, then
// one self-contained trial record per line. Human readable and a lossless image of the
// database rows (doubles are written with round-trip precision; NaN as null).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ktune/log.h"

namespace ktune::jsonl {

/// Format name in the header line.
inline constexpr const char* kFormatName = "ktune-trials";
/// Format version this build writes and the newest it reads.
inline constexpr int kFormatVersion = 1;

/// The header object.
nlohmann::json header();
/// One record as a JSON object.
nlohmann::json to_json(const TrialRecord& record);
/// How a record's config text that does not parse strictly is treated.
enum class ConfigText {
  strict,    ///< Error(parse_error) naming the line and field: malformed input (imports)
  verbatim,  ///< kept as text with an empty Trial::config, for a reader that validates each
             ///< config itself and names the records it refuses (the dispatcher)
};

/// One record from a JSON object; `where` ("file:line") names errors with the field.
TrialRecord from_json(const nlohmann::json& object, const std::string& where,
                      ConfigText config = ConfigText::strict);

/// Writes the header line.
void write_header(std::ostream& out);
/// Writes one record line.
void write_record(std::ostream& out, const TrialRecord& record);
/// Reads a stream record by record (header first), handing each to `visit` without holding
/// the others; each record's id is its line number. Throws Error(parse_error) naming origin,
/// line and field.
void for_each(std::istream& in, const std::string& origin,
              const std::function<void(const TrialRecord&)>& visit,
              ConfigText config = ConfigText::strict);
/// for_each over a file, plain or gzip-compressed; throws Error(not_found) when it cannot be
/// opened.
void for_each_in_file(const std::string& path, const std::function<void(const TrialRecord&)>& visit,
                      ConfigText config = ConfigText::strict);
/// Reads a whole stream (header first); each record's id is its line number. Throws
/// Error(parse_error) naming origin, line and field.
std::vector<TrialRecord> read(std::istream& in, const std::string& origin);
/// Reads a file, plain or gzip-compressed; throws Error(not_found) when it cannot be opened.
std::vector<TrialRecord> read_file(const std::string& path);

}  // namespace ktune::jsonl
