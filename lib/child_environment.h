// The environment ktune's child processes (ktune-worker, compile helpers) start with: the
// parent's own, with the variables ktune sets for its children (the user templates announced
// by register_user_template) laid over it. ktune never writes its own process environment:
// setenv while another thread reads it (getenv, posix_spawn's copy of environ) is undefined
// behaviour, and two threads announcing at once lost each other's entries.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ktune::detail {

/// Replaces the children's value of `name` with `update(current)` under one lock, where
/// `current` is the value set before by this function or else the process's own value
/// (nullopt when neither exists). Thread-safe; the process environment is not touched.
void update_child_variable(
    const std::string& name,
    const std::function<std::string(const std::optional<std::string>& current)>& update);

/// The children's value of `name`: the one set by update_child_variable, else the process's.
std::optional<std::string> child_variable(const std::string& name);

/// "NAME=value" entries for a child process: the process environment with every variable set
/// by update_child_variable replaced. Thread-safe.
std::vector<std::string> child_environment();

}  // namespace ktune::detail
