// The template registry (built-ins registered lazily on first access), dtype helpers, the
// default implementations of KernelTemplate's optional methods, and problem construction
// from command-line text.
#include "ktune/template.h"

#include <algorithm>
#include <mutex>

#include "builtin_templates.h"
#include "embedded_sources.h"
#include "ktune/error.h"

namespace ktune {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const KernelTemplate>> templates;
  bool builtins_loaded = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

/// Loads built-ins once. Called with the registry mutex NOT held (registration locks it).
/// True on the thread that is registering the built-in templates.
thread_local bool registering_builtins = false;

/// Registers the built-in templates once, before any lookup or user registration (so that a
/// user's template of the same name replaces the built-in, whenever it is registered).
void ensure_builtins() {
  if (registering_builtins) return;  // register_template called from the built-ins' loader
  static std::once_flag once;
  std::call_once(once, [] {
    struct Flag {
      Flag() { registering_builtins = true; }
      ~Flag() { registering_builtins = false; }
    } during;
    register_builtin_templates();
  });
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  return 0;
}

const char* to_string(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
  }
  return "unknown";
}

DType dtype_from_string(const std::string& text) {
  static const std::map<std::string, DType> names = {
      {"f32", DType::f32},   {"fp32", DType::f32},  {"float", DType::f32},
      {"float32", DType::f32}, {"f16", DType::f16}, {"fp16", DType::f16},
      {"half", DType::f16},  {"float16", DType::f16}, {"bf16", DType::bf16},
      {"bfloat16", DType::bf16}, {"f64", DType::f64}, {"fp64", DType::f64},
      {"double", DType::f64}, {"i32", DType::i32},  {"int32", DType::i32},
      {"i64", DType::i64},   {"int64", DType::i64}, {"u8", DType::u8}};
  auto it = names.find(text);
  if (it == names.end())
    throw Error(ErrorCode::parse_error,
                "unknown dtype \"" + text + "\" (expected f32, f16, bf16, f64, i32, i64 or u8)");
  return it->second;
}

void KernelTemplate::check_problem(const Problem& problem) const {
  if (problem.op != op())
    throw Error(ErrorCode::unsupported, "template " + name() + " implements op \"" + op() +
                                            "\", not \"" + problem.op + "\"");
  auto names = dim_names();
  if (problem.dims.size() != names.size())
    throw Error(ErrorCode::invalid_argument,
                "problem " + problem.key() + ": template " + name() + " expects dimensions " +
                    join(names, "x"));
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (problem.dims[i].first != names[i])
      throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": dimension " +
                                                   std::to_string(i + 1) + " must be " +
                                                   names[i] + ", not " + problem.dims[i].first);
    if (problem.dims[i].second < 1)
      throw Error(ErrorCode::invalid_argument,
                  "problem " + problem.key() + ": dimension " + names[i] + " must be >= 1");
  }
  auto domains = attr_domains();
  for (const auto& [attr, value] : problem.attrs) {
    auto it = domains.find(attr);
    if (it == domains.end())
      throw Error(ErrorCode::unknown_name,
                  "problem " + problem.key() + ": template " + name() +
                      " has no attribute \"" + attr + "\"");
    if (std::find(it->second.begin(), it->second.end(), value) == it->second.end())
      throw Error(ErrorCode::invalid_argument, "problem " + problem.key() + ": attribute " +
                                                   attr + "=" + value + " is not one of " +
                                                   join(it->second, ", "));
  }
  for (const auto& [attr, values] : domains)
    if (!problem.attrs.count(attr))
      throw Error(ErrorCode::invalid_argument,
                  "problem " + problem.key() + ": attribute " + attr + " is missing");
}

bool KernelTemplate::can_implement(const Problem&, const Config&, std::string*) const {
  return true;
}

void KernelTemplate::require_implementable(const Problem& problem,
                                           const Config& config) const {
  std::string why;
  if (!can_implement(problem, config, &why))
    throw Error(ErrorCode::invalid_argument, name() + " " + config.str() + ": " + why);
}

std::vector<std::string> KernelTemplate::problem_defines(const Problem&) const { return {}; }

std::string KernelTemplate::target_arch(const Device& device, const Config&) const {
  return device.arch();
}

void register_template(std::shared_ptr<const KernelTemplate> tmpl) {
  if (!tmpl) throw Error(ErrorCode::invalid_argument, "register_template: null template");
  ensure_builtins();
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.templates[tmpl->name()] = std::move(tmpl);
}

std::shared_ptr<const KernelTemplate> find_template(const std::string& name) {
  ensure_builtins();
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.templates.find(name);
  if (it != r.templates.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [n, t] : r.templates) known.push_back(n);
  throw Error(ErrorCode::unknown_name,
              "unknown template \"" + name + "\" (known: " + join(known, ", ") + ")");
}

std::vector<std::shared_ptr<const KernelTemplate>> all_templates() {
  ensure_builtins();
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::shared_ptr<const KernelTemplate>> out;
  for (const auto& [n, t] : r.templates) out.push_back(t);
  return out;
}

const std::string& embedded_source(const std::string& relative_path) {
  const auto& sources = detail::embedded_sources();
  auto it = sources.find(relative_path);
  if (it == sources.end())
    throw Error(ErrorCode::not_found,
                "no embedded template source \"" + relative_path + "\" under templates/");
  return it->second;
}

Problem make_problem(const KernelTemplate& tmpl, const std::string& shape,
                     const std::map<std::string, std::string>& attrs) {
  Problem p;
  p.op = tmpl.op();
  p.dims = parse_shape(shape, tmpl.dim_names());
  for (const auto& [attr, values] : tmpl.attr_domains())
    if (!values.empty()) p.attrs[attr] = values.front();
  for (const auto& [attr, value] : attrs) p.attrs[attr] = value;
  tmpl.check_problem(p);
  return p;
}

}  // namespace ktune
