// The environment ktune's child processes (ktune-worker, compile helpers) start with: the
// parent's own at the moment of the spawn, with the variables ktune composes for its children
// (the user templates announced by register_user_template) laid over it. ktune never writes
// its own process environment: setenv while another thread reads it (getenv, posix_spawn's
// copy of environ) is undefined behaviour, and two threads announcing at once lost each
// other's entries.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ktune::detail {

/// How a child's value of a variable is made from the process's own value at spawn time
/// (nullopt: the process has none); returning nullopt leaves the child without the variable.
using ChildValue = std::function<std::optional<std::string>(const std::optional<std::string>&)>;

/// Makes every child's value of `name` `compose(the process's value at the spawn)` from now on
/// (replacing an earlier composer of that name). Thread-safe; the process environment is not
/// touched. `compose` runs under this module's lock: it must not call back into it.
void set_child_variable(const std::string& name, ChildValue compose);

/// "NAME=value" entries for a child process: the process environment as it is now, with each
/// variable given to set_child_variable composed. Thread-safe.
std::vector<std::string> child_environment();

}  // namespace ktune::detail
