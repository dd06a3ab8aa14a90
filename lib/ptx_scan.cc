// PTX scans for programmatic launch (see ptx_scan.h).
#include "ptx_scan.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace ktune::detail {

namespace {

bool starts(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

/// Whether an instruction with `opcode` may touch global memory (see first_global_memory_access):
/// an instruction that reads or writes memory (by the part of its opcode before the first '.')
/// and names the global state space, or no state space (a generic address may be a global one),
/// or one only of the spaces another grid's kernel cannot write (the CTA's or cluster's shared
/// memory, the thread's local memory, kernel parameters, constant memory).
bool touches_global_memory(const std::string& opcode) {
  static const std::set<std::string> memory_roots = {
      "ld",   "ldu",  "st",   "atom", "red",  "cp",   "prefetch", "prefetchu", "multimem",
      "tex",  "tld4", "suld", "sust", "sured", "discard", "applypriority", "tensormap"};
  const std::string root = opcode.substr(0, opcode.find('.'));
  const bool wmma_memory = root == "wmma" && (starts(opcode, "wmma.load.") ||
                                              starts(opcode, "wmma.store."));
  if (!memory_roots.count(root) && !wmma_memory) return false;
  if (opcode.find(".global") != std::string::npos) return true;
  for (const char* space : {".shared", ".local", ".param", ".const"})
    if (opcode.find(space) != std::string::npos) return false;
  return true;
}

std::string trimmed(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  const auto last = line.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : line.substr(first, last - first + 1);
}

/// The PTX body of `entry` (from its ".entry NAME(" line to the next entry or the end); ""
/// when `ptx` has no such entry.
std::string ptx_entry_body(const std::string& ptx, const std::string& entry) {
  const std::size_t at = ptx.find(".entry " + entry + "(");
  if (at == std::string::npos) return "";
  const std::size_t next = ptx.find(".entry ", at + 1);
  return ptx.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

/// One PTX statement or label, as the scans read it.
struct Item {
  std::string label;     // a label, or "" for an instruction
  std::string opcode;    // past the guard
  bool guarded = false;  // @%p or @!%p
  std::string operands;  // the rest, trimmed
  std::string text;      // the instruction as written, for messages
};

/// The instructions and labels of PTX `code_text`, in order: comments dropped, a line split into
/// its statements (inline assembly puts several on one line), directives skipped. Labels are
/// indexed in `label_at` when given.
std::vector<Item> ptx_items(const std::string& code_text,
                            std::map<std::string, std::size_t>* label_at = nullptr) {
  std::vector<Item> items;
  std::istringstream lines(code_text);
  for (std::string line; std::getline(lines, line);) {
    std::string code = line.substr(0, line.find("//"));
    // A label starts the line: a name of letters, digits, '_' and '$' and one ':'
    // ("$L__BB0_2:"), not an opcode with a state space ("cp.async.bulk.shared::cluster").
    const std::string head = trimmed(code);
    const auto colon = head.find(':');
    const bool labelled =
        colon != std::string::npos && colon > 0 && head.compare(colon, 2, "::") != 0 &&
        head.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$") ==
            colon;
    if (labelled) {
      if (label_at) (*label_at)[head.substr(0, colon)] = items.size();
      items.push_back({head.substr(0, colon), "", false, "", ""});
      code = head.substr(colon + 1);
    }
    std::istringstream statements(code);
    for (std::string statement; std::getline(statements, statement, ';');) {
      // Scope braces before an instruction ("{ ld.global.f32 %f1, [%rd1]" from a braced
      // inline asm block, "} griddepcontrol.wait" after one) open or close a block around it:
      // they are dropped and the instruction kept (a vector operand's braces stay).
      const auto start = statement.find_first_not_of(" \t\r\n{}");
      statement.erase(0, start == std::string::npos ? statement.size() : start);
      std::istringstream words(statement);
      Item item;
      std::string word;
      if (!(words >> word)) continue;
      if (word[0] == '@') {
        item.guarded = true;
        if (!(words >> word)) continue;
      }
      if (word[0] == '.') continue;  // a directive
      item.opcode = word;
      std::getline(words, item.operands);
      item.operands = trimmed(item.operands);
      item.text = trimmed(statement);
      items.push_back(std::move(item));
    }
  }
  return items;
}

}  // namespace

std::string first_global_memory_access(const std::string& body) {
  for (const Item& item : ptx_items(body))
    if (item.label.empty() && touches_global_memory(item.opcode)) return item.text;
  return "";
}

std::string grid_dependency_wait_problem(const std::string& ptx, const std::string& entry) {
  const std::string body = ptx_entry_body(ptx, entry);
  if (body.empty()) return "kernel " + entry + " is not in the compiled PTX";
  // The body's instructions and labels in order (after the opening brace: the parameter list
  // holds only directives).
  std::map<std::string, std::size_t> label_at;
  const std::vector<Item> items =
      ptx_items(body.substr(std::min(body.find('{'), body.size())), &label_at);
  const bool has_wait = std::any_of(items.begin(), items.end(), [](const Item& item) {
    return item.opcode == "griddepcontrol.wait";
  });
  if (!has_wait) return "kernel " + entry + " holds no griddepcontrol.wait";
  // Every path from the entry: a thread that reaches a global memory access (or a call, or an
  // indirect branch, which cannot be followed) before an unguarded wait has not waited.
  const std::string before = " before griddepcontrol.wait on some path";
  std::vector<std::size_t> work{0};
  std::set<std::size_t> seen;
  while (!work.empty()) {
    std::size_t at = work.back();
    work.pop_back();
    for (std::size_t next; at < items.size(); at = next) {
      next = at + 1;
      if (!seen.insert(at).second) break;  // this path was followed from here already
      const Item& item = items[at];
      if (!item.label.empty()) continue;
      const std::string& op = item.opcode;
      if (op == "griddepcontrol.wait" && !item.guarded) break;  // waited: the path is safe
      if (touches_global_memory(op))
        return "kernel " + entry + " touches global memory (`" + item.text + "`)" + before;
      if (op == "call" || starts(op, "call.") || starts(op, "brx."))
        return "kernel " + entry + " leaves the straight line (`" + item.text + "`)" + before +
               " (a call or an indirect branch is not followed)";
      if ((op == "ret" || starts(op, "ret.") || op == "exit") && !item.guarded) break;
      if (op == "bra" || starts(op, "bra.")) {
        const auto target = label_at.find(item.operands);
        if (target == label_at.end())
          return "kernel " + entry + " branches to a label not in its body (`" + item.text + "`)";
        if (item.guarded)
          work.push_back(target->second);  // and on past it
        else
          next = target->second;
      }
    }
  }
  return "";
}

}  // namespace ktune::detail
