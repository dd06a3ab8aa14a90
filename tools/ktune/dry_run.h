// `ktune tune --dry-run`: what a tuning run would do, without a GPU or a database: for every
// task of the plan its space (size, valid configs, constraints), the default config with its
// launch geometry, and the workload's buffers and reference.
#pragma once

#include <string>
#include <vector>

#include "ktune/device.h"
#include "tuning_plan.h"

namespace ktune::cli {

/// Prints the dry-run description of every task for `device` to stdout.
void print_dry_run(const std::vector<PlanEntry>& plan, const Device& device);

/// The dry-run description of one task (what print_dry_run prints for it).
std::string describe_task(const PlanEntry& entry, const Device& device);

}  // namespace ktune::cli
