// The task descriptions of `ktune tune --dry-run` (see dry_run.h).
#include "dry_run.h"

#include <cstdio>
#include <optional>
#include <random>

#include "ktune/error.h"

namespace ktune::cli {

namespace {

/// "grid 128x512x1 block 32x8x1, 0 B dynamic shared memory, entry k" for each step.
std::string describe_plan(const LaunchPlan& plan) {
  std::string out;
  for (const auto& s : plan.steps) {
    if (s.kind == LaunchStep::Kind::memset) {
      out += "    memset of buffer " + std::to_string(s.memset_buffer) + "\n";
      continue;
    }
    out += "    " + s.entry + "<<<" + std::to_string(s.grid[0]) + "x" + std::to_string(s.grid[1]) +
           "x" + std::to_string(s.grid[2]) + ", " + std::to_string(s.block[0]) + "x" +
           std::to_string(s.block[1]) + "x" + std::to_string(s.block[2]) + ", " +
           std::to_string(s.dynamic_smem) + " B>>> (" + std::to_string(s.args.size()) + " arguments" +
           (s.grid_dependency_wait ? "; waits for the previous grid: programmatic launch allowed" : "") +
           ")\n";
  }
  return out;
}

const char* role_name(Role role) {
  switch (role) {
    case Role::input: return "input";
    case Role::output: return "output";
    case Role::inout: return "inout";
    case Role::scratch: return "scratch";
  }
  return "?";
}

/// Whether any of 256 sampled valid configs can implement `problem`: a launch no config can
/// make (a zero or negative size, a grid that does not depend on the tunables, a shape the
/// template refuses whatever its config) would tune to nothing but invalid trials. Returns
/// nullopt when some can; else the line that says why none can (no valid config at all, or
/// the first sample's reason).
std::optional<std::string> no_launchable_config(const KernelTemplate& tmpl, const Problem& problem,
                                                const SearchSpace& space) {
  std::mt19937_64 rng(1);
  std::string first_reason;
  for (int i = 0; i < 256; ++i) {
    Config c;
    try {
      c = space.random(rng);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::unsatisfiable) throw;
      return "no valid config: " + std::string(e.what());
    }
    std::string why;
    if (tmpl.can_implement(problem, c, &why)) return std::nullopt;
    if (first_reason.empty()) first_reason = why;
  }
  return "none of 256 sampled valid configs can implement the problem (" + first_reason + ")";
}

}  // namespace

std::string describe_task(const PlanEntry& entry, const Device& device, bool* unsatisfiable) {
  const KernelTemplate& tmpl = *entry.tmpl;
  const SearchSpace space = tmpl.space(entry.problem, device);
  std::string out = entry.origin + ": " + tmpl.name() + " " + entry.problem.key() + " on " +
                    device.key() + "\n";
  std::string valid;
  bool counted = false;
  try {
    const std::uint64_t count = space.count_valid(Index{1} << 24);
    valid = std::to_string(count);
    counted = true;
    if (unsatisfiable) *unsatisfiable = count == 0;
  } catch (const Error&) {
    valid = "too many to count";
  }
  std::string points;
  try {
    points = std::to_string(space.size());
  } catch (const Error&) {  // above 2^63: no indices, but sampling and tuning still work
    points = "more than 2^63";
  }
  out += "  space: " + std::to_string(space.dims()) + " parameters, " + points + " points, " +
         valid + " valid\n";
  for (const auto& p : space.params()) {
    out += "    " + p.name + " in {";
    for (std::size_t i = 0; i < p.values.size(); ++i)
      out += (i ? ", " : "") + std::to_string(p.values[i]);
    out += "} default " + std::to_string(p.default_value) + "\n";
  }
  for (const auto& c : space.constraint_descriptions()) out += "    constraint: " + c + "\n";
  const Config def = space.default_config();
  std::string why;
  const std::optional<std::string> broken = space.violated(def);
  if (broken || !tmpl.can_implement(entry.problem, def, &why)) {
    out += "  default " + def.str() + (broken ? ": INVALID (" + *broken + ")\n"
                                              : ": cannot implement the problem (" + why + ")\n");
    // Without a usable default, whether any config can launch the problem, a sample tells
    // (when counting found none, that is already known).
    if (!(counted && unsatisfiable && *unsatisfiable))
      if (auto none = no_launchable_config(tmpl, entry.problem, space)) {
        out += "  " + *none + "\n";
        if (unsatisfiable) *unsatisfiable = true;
      }
  } else {
    out += "  default " + def.str() + ":\n" + describe_plan(tmpl.launch(entry.problem, def, device));
  }
  auto workload = tmpl.workload(entry.problem);
  out += "  buffers:";
  for (const auto& b : workload->buffers())
    out += std::string(" ") + b.name + " (" + to_string(b.dtype) + " x " + std::to_string(b.elements) +
           ", " + role_name(b.role) + ")";
  out += "\n";
  if (auto ref = workload->device_reference())
    out += "  reference: GPU kernel\n" + describe_plan(ref->plan);
  else
    out += "  reference: on the host (the workload's reference(): computed, or recorded files)\n";
  return out;
}

void print_dry_run(const std::vector<PlanEntry>& plan, const std::vector<Device>& devices,
                   const std::vector<std::string>& notes) {
  std::string empty;  // tasks no config of which satisfies the constraints and can launch
  for (std::size_t i = 0; i < plan.size(); ++i) {
    bool unsatisfiable = false;
    std::printf("%s", describe_task(plan[i], devices.at(i), &unsatisfiable).c_str());
    if (i < notes.size()) std::printf("%s\n", notes[i].c_str());
    if (unsatisfiable) empty += (empty.empty() ? "" : ", ") + plan[i].origin;
  }
  if (!empty.empty())
    throw Error(ErrorCode::unsatisfiable,
                "dry run: no config satisfies the constraints of " + empty +
                    " and can launch its problem (see above); a tuning run would measure "
                    "nothing but invalid configs");
  std::printf("dry run: %zu task(s) checked; nothing was measured or recorded\n", plan.size());
}

}  // namespace ktune::cli
