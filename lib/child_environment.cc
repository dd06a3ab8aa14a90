// Variables for child processes, kept beside the process environment (see child_environment.h).
#include "child_environment.h"

#include <cstdlib>
#include <map>
#include <mutex>

extern char** environ;

namespace ktune::detail {

namespace {

struct Overrides {
  std::mutex mutex;
  std::map<std::string, std::string> values;  // name -> value for children
};

Overrides& overrides() {
  static Overrides o;
  return o;
}

std::optional<std::string> process_value(const std::string& name) {
  if (const char* v = std::getenv(name.c_str())) return std::string(v);
  return std::nullopt;
}

}  // namespace

void update_child_variable(
    const std::string& name,
    const std::function<std::string(const std::optional<std::string>& current)>& update) {
  Overrides& o = overrides();
  std::lock_guard<std::mutex> lock(o.mutex);
  auto it = o.values.find(name);
  const std::optional<std::string> current =
      it != o.values.end() ? std::optional<std::string>(it->second) : process_value(name);
  o.values[name] = update(current);
}

std::optional<std::string> child_variable(const std::string& name) {
  Overrides& o = overrides();
  std::lock_guard<std::mutex> lock(o.mutex);
  auto it = o.values.find(name);
  return it != o.values.end() ? std::optional<std::string>(it->second) : process_value(name);
}

std::vector<std::string> child_environment() {
  Overrides& o = overrides();
  std::lock_guard<std::mutex> lock(o.mutex);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (!o.values.count(name)) env.push_back(entry);
  }
  for (const auto& [name, value] : o.values) env.push_back(name + "=" + value);
  return env;
}

}  // namespace ktune::detail
