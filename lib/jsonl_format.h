// The ktune JSON-lines format: a header line {"format":"ktune-trials","version":1,...}, then
// one self-contained trial record per line. Human readable and a lossless image of the
// database rows (doubles are written with round-trip precision; NaN as null).
#pragma once

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
/// One record from a JSON object; `where` ("file:line") names errors with the field.
TrialRecord from_json(const nlohmann::json& object, const std::string& where);

/// Writes the header line.
void write_header(std::ostream& out);
/// Writes one record line.
void write_record(std::ostream& out, const TrialRecord& record);
/// Reads a whole stream (header first); each record's id is its line number. Throws
/// Error(parse_error) naming origin, line and field.
std::vector<TrialRecord> read(std::istream& in, const std::string& origin);
/// Reads a file; throws Error(not_found) when it cannot be opened.
std::vector<TrialRecord> read_file(const std::string& path);

}  // namespace ktune::jsonl
