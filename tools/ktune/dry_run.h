// `ktune tune --dry-run`: what a tuning run would do, without a GPU or a database: for every
// task of the plan its space (size, valid configs, constraints), the default config with its
// launch geometry, and the workload's buffers and reference.
#pragma once

#include <string>
#include <vector>

#include "ktune/device.h"
#include "tuning_plan.h"

namespace ktune::cli {

/// Prints the dry-run description of every task to stdout, `plan[i]` for `devices[i]`, each
/// followed by `notes[i]` when given (what a --replay run would replay for it); then throws
/// Error(unsatisfiable) naming the tasks whose constraints leave no valid config, or whose
/// default and 256 sampled configs all fail can_implement (no launch possible).
void print_dry_run(const std::vector<PlanEntry>& plan, const std::vector<Device>& devices,
                   const std::vector<std::string>& notes = {});

/// The dry-run description of one task (what print_dry_run prints for it); sets
/// `*unsatisfiable` (when given) to whether no config of its space can run it.
std::string describe_task(const PlanEntry& entry, const Device& device,
                          bool* unsatisfiable = nullptr);

}  // namespace ktune::cli
