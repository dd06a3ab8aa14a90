// Turns --template/--op/--shape/--dtype/--layout/--attr into a template and a checked Problem,
// with errors that name the bad option value.
#include "problem_options.h"

#include <optional>
#include <set>

#include "ktune/error.h"
#include "ktune/user_template.h"

namespace ktune::cli {

void ProblemOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--template", template_name, "Template name (see `ktune list`)");
  cmd.add_option("--op", op, "Operator (gemm, reduction, ...): its first template that accepts the problem is used");
  cmd.add_option("--shape", shape, "Problem shape, e.g. 4096x4096x4096 (default: example)")
      ->check(CLI::Validator(
          [](std::string& text) {
            return text.empty() ? std::string("the shape is empty; leave --shape out for the "
                                              "template's example shape")
                                : std::string();
          },
          "SHAPE"));
  cmd.add_option("--dtype", dtype, "Element type attribute (f32, f16, bf16)");
  cmd.add_option("--layout", layout, "Layout attribute (e.g. NT for GEMM)");
  cmd.add_option("--attr", attrs, "Other attribute name=value (repeatable)");
  cmd.add_option("--space", space,
                 "A user template: T1 JSON with ConfigurationSpace, KernelSpecification and "
                 "KtuneExtensions (docs/custom_templates.md)");
  cmd.add_option("--kernel", kernel, "The user template's kernel .cu (default: its KernelFile)");
}

std::string ProblemOptions::named(const char* field) const {
  return from_plan ? "\"" + std::string(field) + "\"" : "--" + std::string(field);
}

std::shared_ptr<const KernelTemplate> ProblemOptions::resolve_template() const {
  if (!kernel.empty() && space.empty())
    throw Error(ErrorCode::invalid_argument, named("kernel") + " " + kernel + " needs " + named("space") +
                                                 " SPEC.T1.json (its space, geometry and arguments)");
  if (!space.empty()) {
    if (!op.empty())
      throw Error(ErrorCode::invalid_argument, "give either " + named("space") + " (a user template) or " +
                                                   named("op") + ", not both");
    auto tmpl = register_user_template({space, kernel});
    if (!template_name.empty() && template_name != tmpl->name())
      throw Error(ErrorCode::invalid_argument, named("template") + " " + template_name + " does not match the "
                  "user template \"" + tmpl->name() + "\" of " + space);
    return tmpl;
  }
  if (!template_name.empty()) {
    auto tmpl = find_template(template_name);
    if (!op.empty() && tmpl->op() != op)
      throw Error(ErrorCode::invalid_argument, named("template") + " " + template_name + " implements op \"" +
                                                   tmpl->op() + "\", not " + named("op") + " " + op);
    return tmpl;
  }
  if (op.empty())
    throw Error(ErrorCode::invalid_argument, "name a template with " + named("template") + " or an op with " +
                                                 named("op"));
  std::set<std::string> ops;  // each op once, sorted
  for (const auto& t : all_templates()) {
    if (t->op() == op) return t;
    ops.insert(t->op());
  }
  std::string known;
  for (const auto& o : ops) known += (known.empty() ? "" : ", ") + o;
  throw Error(ErrorCode::unknown_name, "unknown op \"" + op + "\" (known: " + known + ")");
}

bool ProblemOptions::given() const {
  return !template_name.empty() || !op.empty() || !shape.empty() || !dtype.empty() ||
         !layout.empty() || !attrs.empty() || !space.empty() || !kernel.empty();
}

Problem ProblemOptions::resolve_problem(const KernelTemplate& tmpl) const {
  std::map<std::string, std::string> given;
  for (const auto& a : attrs) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(ErrorCode::parse_error, "--attr \"" + a + "\": expected name=value");
    const std::string name = a.substr(0, eq), value = a.substr(eq + 1);
    if (auto [it, fresh] = given.emplace(name, value); !fresh && it->second != value)
      throw Error(ErrorCode::invalid_argument, "--attr " + name + " is given twice (" +
                                                   it->second + " and " + value + ")");
  }
  // --dtype / --layout and an --attr of the same name must agree.
  for (const auto& [name, value] : {std::pair{std::string("dtype"), dtype},
                                    std::pair{std::string("layout"), layout}}) {
    if (value.empty()) continue;
    if (auto [it, fresh] = given.emplace(name, value); !fresh && it->second != value)
      throw Error(ErrorCode::invalid_argument, "--" + name + " " + value + " and --attr " + name +
                                                   "=" + it->second + " disagree");
  }
  // Without --shape the example's dimensions, with the same attribute defaults as with one:
  // the same problem whether or not its shape is written out.
  std::string dims = shape;
  if (dims.empty())
    for (const auto& [name, extent] : tmpl.example_problem().dims)
      dims += (dims.empty() ? "" : "x") + std::to_string(extent);
  return make_problem(tmpl, dims, given);
}

std::pair<std::shared_ptr<const KernelTemplate>, Problem> ProblemOptions::resolve() const {
  auto first = resolve_template();  // throws for an unknown op, listing the known ones
  if (!template_name.empty() || op.empty() || !space.empty()) return {first, resolve_problem(*first)};
  std::optional<ErrorCode> first_code;
  std::string reasons;  // every template's own reason: the first one's may not be the point
  std::set<std::string> distinct;
  for (const auto& t : all_templates()) {
    if (t->op() != op) continue;
    try {
      return {t, resolve_problem(*t)};
    } catch (const Error& e) {
      if (!first_code) first_code = e.code();
      reasons += "\n  " + t->name() + ": " + e.what();
      distinct.insert(e.what());
    }
  }
  // One reason shared by every template (a malformed --attr or --shape) is the input's fault,
  // not the templates': said once.
  if (distinct.size() == 1) throw Error(*first_code, *distinct.begin());
  throw Error(*first_code, "no template of op \"" + op + "\" accepts the problem:" + reasons);
}

}  // namespace ktune::cli
