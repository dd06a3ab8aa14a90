// Variables composed for child processes at spawn time (see child_environment.h).
#include "child_environment.h"

#include <cstdlib>
#include <map>
#include <mutex>

extern char** environ;

namespace ktune::detail {

namespace {

struct Composers {
  std::mutex mutex;
  std::map<std::string, ChildValue> by_name;
};

Composers& composers() {
  static Composers c;
  return c;
}

std::optional<std::string> process_value(const std::string& name) {
  if (const char* v = std::getenv(name.c_str())) return std::string(v);
  return std::nullopt;
}

}  // namespace

void set_child_variable(const std::string& name, ChildValue compose) {
  Composers& c = composers();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.by_name[name] = std::move(compose);
}

std::vector<std::string> child_environment() {
  Composers& c = composers();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    if (!c.by_name.count(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [name, compose] : c.by_name)
    if (const auto value = compose(process_value(name))) env.push_back(name + "=" + *value);
  return env;
}

}  // namespace ktune::detail
