// `ktune compile`: compile-only check of a template for an offline target (no GPU needed):
// the default configuration (or the configs named with --config) plus a sample of random valid
// ones, with their resources.
#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>

#include "commands.h"
#include "compile_options.h"
#include "device_reference.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "option_checks.h"
#include "problem_options.h"

namespace ktune::cli {

namespace {

/// The default config with --config's K=V changes; an error names the option's text and the
/// constraint the result breaks.
Config config_from_changes(const SearchSpace& space, const std::string& changes) {
  try {
    const Config c = space.with_changes(changes);
    if (auto why = space.violated(c))
      throw Error(ErrorCode::invalid_argument, "the config breaks a constraint: " + *why);
    return c;
  } catch (const Error& e) {
    throw Error(e.code(), "--config \"" + changes + "\": " + e.what());
  }
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "Compile a template's configs with NVRTC (no GPU needed)");
  auto problem = std::make_shared<ProblemOptions>();
  problem->add_to(*cmd);
  auto arch = std::make_shared<std::string>("sm_90");
  auto samples = std::make_shared<int>(4);
  auto jobs = std::make_shared<int>(0);
  auto processes = std::make_shared<int>(kHelperPerCompileThread);
  auto seed = std::make_shared<std::uint64_t>(1);
  auto named = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--arch", *arch, "Target architecture (sm_80, sm_90, sm_90a, ...)");
  cmd->add_option("--samples", *samples,
                  "Distinct random valid configs the template can implement, compiled besides "
                  "the default (fewer when the space has fewer)")
      ->check(count_in(0, 10000));
  cmd->add_option("-j,--jobs", *jobs, "Parallel compiles (0 = all cores)")
      ->check(count_in(0, kMaxJobs));
  add_compile_processes_option(*cmd, *processes);
  cmd->add_option("--seed", *seed, "Seed of the random sample")->check(seed_value());
  cmd->add_option("--config", *named,
                  "A config to compile instead of the default: K=V,K=V changes of the default "
                  "(repeatable; e.g. --config THREADS=128,VEC=8 --samples 0)");
  cmd->callback([=] {
    auto [tmpl, p] = problem->resolve();
    Device device = Device::offline(*arch);
    SearchSpace space = tmpl->space(p, device);
    std::vector<Config> configs;
    for (const std::string& changes : *named) {  // one compile per distinct config
      Config c = config_from_changes(space, changes);
      if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(std::move(c));
    }
    if (configs.empty()) configs.push_back(space.default_config());
    // A config the template cannot implement for this problem is not compiled (its source
    // would stop at a static_assert), nor is a default that breaks a constraint of the space
    // (tuning never measures it): it is named with the reason and counts as a failure.
    std::vector<std::string> refused;
    for (auto it = configs.begin(); it != configs.end();) {
      std::string why;
      if (auto broken = space.violated(*it)) why = "breaks a constraint: " + *broken;
      if (why.empty() && tmpl->can_implement(p, *it, &why)) {
        ++it;
        continue;
      }
      refused.push_back(it->str() + ": " + why);
      it = configs.erase(it);
    }
    // The sample: distinct valid configs the template can implement, drawn until there are
    // as many as asked or the draws stop finding new ones (a small space).
    const Config default_config = space.default_config();
    std::mt19937_64 rng(*seed);
    const std::size_t max_draws = 64 * static_cast<std::size_t>(*samples) + 64;
    std::size_t sampled = 0;
    for (std::size_t draw = 0; sampled < static_cast<std::size_t>(*samples) && draw < max_draws;
         ++draw) {
      Config c;
      try {
        c = space.random(rng);
      } catch (const Error& e) {  // no valid config at all: say whose space
        if (e.code() != ErrorCode::unsatisfiable) throw;
        const std::string whose = problem->space.empty() ? "template " + tmpl->name()
                                                          : "--space " + problem->space;
        throw Error(e.code(), whose + " on " + p.key() + ": " + e.what());
      }
      if (std::find(configs.begin(), configs.end(), c) != configs.end() ||
          !tmpl->can_implement(p, c, nullptr))
        continue;
      configs.push_back(std::move(c));
      ++sampled;
    }
    if (sampled < static_cast<std::size_t>(*samples))
      std::printf("note: %zu of the %d sampled configs asked for were found (%zu draws gave no "
                  "other distinct config this problem can use)\n",
                  sampled, *samples, max_draws);
    if (configs.empty()) {
      std::string list;
      for (const auto& r : refused) list += "\n  " + r;
      throw Error(ErrorCode::unsupported,
                  tmpl->name() + " cannot implement " + p.key() + " with the config" +
                      (refused.size() == 1 ? "" : "s") + " asked for:" + list);
    }
    BuilderOptions options;
    options.threads = *jobs;
    options.compile_processes = *processes;
    Builder builder(options);
    auto results = builder.build_all(tmpl, p, configs, device);
    std::printf("%s on %s (%s), %zu config%s%s\n", tmpl->name().c_str(), p.key().c_str(),
                device.arch().c_str(), configs.size(), configs.size() == 1 ? "" : "s",
                refused.empty() ? ""
                                : (" compiled, " + std::to_string(refused.size()) +
                                   " asked for and not compiled")
                                      .c_str());
    for (const auto& r : refused) std::printf("  CANNOT IMPLEMENT %s\n", r.c_str());
    std::size_t failed = 0;
    bool reference_failed = false;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const auto& r = results[i];
      if (!r.ok) {
        ++failed;
        std::printf("  FAILED %s\n%s\n", configs[i].str().c_str(), r.log.c_str());
        continue;
      }
      // Shared memory: the kernel's static bytes (ptxas) plus the launch's dynamic bytes.
      unsigned dynamic = 0;
      try {
        for (const auto& step : tmpl->launch(p, configs[i], device).steps)
          dynamic = std::max(dynamic, step.dynamic_smem);
      } catch (const Error&) {  // a config this problem cannot launch: static bytes only
      }
      std::printf("  ok  regs %3d  smem %6d + %6u dyn  spills %d/%d  %7.0f ms  %s%s\n",
                  r.resources.registers, r.resources.shared_bytes, dynamic,
                  r.resources.spill_stores, r.resources.spill_loads, r.compile_ms,
                  configs[i].str().c_str(), configs[i] == default_config ? "  (default)" : "");
      // A user kernel's compiler messages (warnings) under the line; ptxas's resource report
      // is the line itself. (The built-in templates' messages are ktune's own business.)
      if (!problem->space.empty()) {
        std::istringstream log(r.log);
        for (std::string line; std::getline(log, line);)
          if (!line.empty() && line.rfind("ptxas", 0) != 0) std::printf("      %s\n", line.c_str());
      }
    }
    // The GPU reference of the workload (a user template's reference kernel) compiles too.
    if (auto ref = tmpl->workload(p)->device_reference()) {
      const auto built = detail::compile_device_reference(*ref, device.arch());
      if (built.ok) {
        std::printf("  ok  GPU reference (%.0f ms)\n", built.compile_ms);
      } else {
        reference_failed = true;
        std::printf("  FAILED GPU reference\n%s\n", built.log.c_str());
      }
    }
    // Each kind of failure counted as what it is: a config refused before compiling (it
    // breaks a constraint or cannot implement the problem) did not fail to compile.
    std::string failures;
    auto add = [&](const std::string& part) { failures += (failures.empty() ? "" : "; ") + part; };
    if (!refused.empty())
      add(std::to_string(refused.size()) + " of the configs asked for " +
          (refused.size() == 1 ? "breaks a constraint or cannot" : "break a constraint or cannot") +
          " implement the problem (not compiled)");
    if (failed)
      add(std::to_string(failed) + " of " + std::to_string(configs.size()) + " configs failed to compile");
    if (reference_failed) add("the GPU reference failed to compile");
    if (!failures.empty())
      throw Error(failed || reference_failed ? ErrorCode::compile_error : ErrorCode::unsupported,
                  tmpl->name() + " on " + p.key() + ": " + failures);
  });
}

}  // namespace ktune::cli
