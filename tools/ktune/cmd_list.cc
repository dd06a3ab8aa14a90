// `ktune list`: what can be tuned (templates, their parameters, constraints and example
// problem) and how (searchers with their documented options and defaults).
#include <cstdio>
#include <string>

#include "commands.h"
#include "problem_options.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "ktune/searcher.h"
#include "ktune/template.h"

namespace ktune::cli {

namespace {

void print_template(const KernelTemplate& t, const Device& device, bool verbose) {
  std::printf("%-14s op=%-12s %s\n", t.name().c_str(), t.op().c_str(), t.description().c_str());
  if (!verbose) return;
  Problem example = t.example_problem();
  std::printf("  example problem: %s\n", example.key().c_str());
  // Commands given no --shape or attributes use the example's dimensions with each
  // attribute's default (the first value of its domain), which may differ from the example.
  try {
    const Problem plain = ProblemOptions{}.resolve_problem(t);
    if (plain.key() != example.key())
      std::printf("  with no --shape or attributes: %s\n", plain.key().c_str());
  } catch (const Error&) {
  }
  std::string dims;
  for (const auto& d : t.dim_names()) dims += (dims.empty() ? "" : "x") + d;
  std::printf("  shape: %s\n", dims.c_str());
  for (const auto& [attr, values] : t.attr_domains()) {
    std::string vs;
    for (const auto& v : values) vs += (vs.empty() ? "" : ", ") + v;
    std::printf("  %s: %s (default %s)\n", attr.c_str(), vs.c_str(), values.empty() ? "-" : values.front().c_str());
  }
  SearchSpace space;
  try {
    space = t.space(example, device);
  } catch (const Error& e) {  // e.g. an sm_90a template listed for an sm_80 device
    std::printf("  space: not available on %s (%s)\n", device.arch().c_str(), e.what());
    return;
  }
  std::printf("  space for the example on %s: %zu parameters, %llu points\n",
              device.arch().c_str(), space.dims(),
              static_cast<unsigned long long>(space.size()));
  for (const auto& p : space.params()) {
    std::string vs;
    for (auto v : p.values) vs += (vs.empty() ? "" : ",") + std::to_string(v);
    std::printf("    %-16s [%s] default %lld\n", p.name.c_str(), vs.c_str(),
                static_cast<long long>(p.default_value));
  }
  for (const auto& c : space.constraint_descriptions()) std::printf("    where %s\n", c.c_str());
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List templates (with their spaces) and searchers");
  auto brief = std::make_shared<bool>(false);
  auto arch = std::make_shared<std::string>("sm_90");
  cmd->add_flag("--brief", *brief, "One line per template and searcher, without spaces and options");
  cmd->add_option("--arch", *arch, "Offline target used to build the example spaces");
  cmd->callback([brief, arch] {
    Device device = Device::offline(*arch);
    if (cuda_unavailable_reason() == std::nullopt) device = query_device(0);
    std::printf("Templates:\n");
    for (const auto& t : all_templates()) print_template(*t, device, !*brief);
    std::printf("\nSearchers:\n");
    for (const auto& s : searcher_catalog()) {
      std::printf("%-14s %s\n", s.name.c_str(), s.description.c_str());
      if (*brief) continue;
      for (const auto& o : s.options)
        std::printf("    %-18s default %-8s %s (%s)\n", o.name.c_str(), o.default_value.c_str(),
                    o.help.c_str(), o.accepts.c_str());
    }
  });
}

}  // namespace ktune::cli
