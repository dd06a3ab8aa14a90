// Parser of the ptxas verbose report. A report looks like
//   ptxas info    : Compiling entry function 'scale' for 'sm_90'
//   ptxas info    : Function properties for scale
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
// Properties of non-inlined device functions appear under their own "Function properties"
// header and are not attributed to the entry.
#include "ptxas_report.h"

#include <cctype>
#include <sstream>

namespace ktune::detail {

namespace {

/// The integer written just before `suffix` in `line` (e.g. "24 bytes smem"), or -1.
int number_before(const std::string& line, const std::string& suffix) {
  std::size_t at = line.find(suffix);
  if (at == std::string::npos) return -1;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return -1;
  return std::stoi(line.substr(begin, end - begin));
}

/// The text between the first pair of single quotes after `marker`, or "".
std::string quoted_after(const std::string& line, const std::string& marker) {
  std::size_t at = line.find(marker);
  if (at == std::string::npos) return "";
  std::size_t open = line.find('\'', at + marker.size());
  if (open == std::string::npos) return "";
  std::size_t close = line.find('\'', open + 1);
  if (close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

/// Trims spaces and carriage returns at both ends.
std::string trimmed(const std::string& text) {
  std::size_t begin = text.find_first_not_of(" \r\t");
  if (begin == std::string::npos) return "";
  std::size_t end = text.find_last_not_of(" \r\t");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

std::vector<std::pair<std::string, Resources>> parse_ptxas_report(const std::string& log) {
  std::vector<std::pair<std::string, Resources>> kernels;
  Resources* entry = nullptr;        // entry being reported
  bool properties_of_entry = false;  // the last "Function properties" header names it
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("ptxas", 0) != 0) continue;
    if (line.find("Compiling entry function") != std::string::npos) {
      std::string name = quoted_after(line, "Compiling entry function");
      kernels.emplace_back(name, Resources{});
      entry = &kernels.back().second;
      properties_of_entry = false;
      continue;
    }
    if (entry == nullptr) continue;
    const std::string& entry_name = kernels.back().first;
    if (std::size_t at = line.find("Function properties for"); at != std::string::npos) {
      properties_of_entry =
          trimmed(line.substr(at + std::string("Function properties for").size())) ==
          entry_name;
      continue;
    }
    if (line.find("Used ") != std::string::npos && line.find("registers") != std::string::npos) {
      entry->registers = number_before(line, "registers");
      int smem = number_before(line, "bytes smem");
      entry->shared_bytes = smem < 0 ? 0 : smem;  // ptxas omits smem when there is none
      entry->const_bytes = number_before(line, "bytes cmem[0]");
      continue;
    }
    if (line.find("bytes stack frame") != std::string::npos) {
      if (!properties_of_entry) continue;
      entry->stack_bytes = number_before(line, "bytes stack frame");
      entry->spill_stores = number_before(line, "bytes spill stores");
      entry->spill_loads = number_before(line, "bytes spill loads");
      continue;
    }
  }
  return kernels;
}

}  // namespace ktune::detail
