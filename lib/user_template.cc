// A generic KernelTemplate built from a user's kernel source and a T1 / Kernel Tuner JSON
// document (read into a UserSpec by user_spec.cc): its space, launch plans and workloads
// (buffers, random inputs, and the reference: a GPU reference kernel, or recorded input and
// output files for one problem size), loading it from files, and registering it so that
// worker processes started later find it too.
#include "ktune/user_template.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "child_environment.h"
#include "host_dtype.h"
#include "input_file.h"
#include "json_input.h"
#include "ktune/error.h"
#include "user_spec.h"

namespace ktune {

namespace {

using Json = nlohmann::json;
using namespace user_spec;

/// Environment variable that carries registered user templates into worker processes.
constexpr const char* kEnvironmentVariable = "KTUNE_USER_TEMPLATES";

/// Buffers, random inputs and the GPU reference of one problem.
class UserWorkload final : public Workload {
 public:
  UserWorkload(std::shared_ptr<const UserSpec> spec, const Problem& problem)
      : spec_(std::move(spec)), values_(spec_->values(problem, nullptr)) {
    for (std::size_t i = 0; i < spec_->args.size(); ++i) {
      const auto& a = spec_->args[i];
      if (!a.vector) continue;
      std::string reason;
      const std::optional<Value> whole = a.size->eval_whole(values_, &reason);
      if (!whole)
        throw Error(ErrorCode::invalid_argument, spec_->origin + ": argument " + a.name + ": Size " + reason +
                                                     " for " + problem.key());
      const Value n = *whole;
      if (n < 1 || n > kMaxElements)
        throw Error(ErrorCode::invalid_argument,
                    spec_->origin + ": argument " + a.name + " has " + std::to_string(n) +
                        " elements for " + problem.key() + " (expected 1 .. 2^40)");
      buffers_.push_back(BufferSpec{a.name, a.dtype, static_cast<std::size_t>(n), a.role, 0});
      vector_args_.push_back(i);
    }
    if (spec_->recorded()) {
      check_recorded_shape(problem);
      for (const auto& b : buffers_) check_recorded_size(b, problem);
    }
    // Figures for reports: a finite number >= 0 (a division by zero gives NaN, and a value
    // past 2^63 is kept as the real it is rather than clamped).
    for (const auto& [expr, field] : {std::pair{&spec_->bytes, "Bytes"}, std::pair{&spec_->flops, "Flops"}}) {
      const double value = *expr ? (*expr)->eval_real(values_) : 0;
      if (!std::isfinite(value) || value < 0) {
        char shown[64];
        std::snprintf(shown, sizeof shown, "%.6g", value);
        throw Error(ErrorCode::invalid_argument,
                    spec_->origin + ": KtuneExtensions." + field + " \"" + (*expr)->code.text() +
                        "\" is " + shown + " for " + problem.key() +
                        " (expected a finite number >= 0" +
                        (std::isnan(value) ? "; a division by zero?)" : ")"));
      }
    }
  }

  std::vector<BufferSpec> buffers() const override { return buffers_; }

  void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const override {
    if (buffers.size() != buffers_.size())
      throw Error(ErrorCode::invalid_argument, spec_->name + " workload: expected " +
                                                   std::to_string(buffers_.size()) + " buffers");
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      const auto& a = spec_->args[vector_args_[b]];
      if (a.role != Role::input && a.role != Role::inout) continue;
      HostBuffer& buf = buffers[b];
      if (auto it = spec_->input_files.find(a.name); it != spec_->input_files.end()) {
        read_recorded(it->second, buf);
        continue;
      }
      const std::size_t n = buf.spec.elements;
      FillRng rng(seed * 0x9e3779b97f4a7c15ull + b + 1);
      const bool integer = a.dtype == DType::i32 || a.dtype == DType::i64 || a.dtype == DType::u8;
      if (!a.random_fill) {
        for (std::size_t i = 0; i < n; ++i) write_element(buf, i, a.fill_value);
      } else if (integer) {
        const auto hi = static_cast<std::int64_t>(std::max(1.0, a.fill_value));
        for (std::size_t i = 0; i < n; ++i) write_element(buf, i, static_cast<double>(rng.integer(0, hi)));
      } else {
        fill_uniform_around(buf, rng, 0, n, 0.0, a.fill_value == 0 ? 1.0 : a.fill_value);
      }
    }
  }

  void reference(std::vector<HostBuffer>& buffers) const override {
    if (!spec_->recorded())
      throw Error(ErrorCode::unsupported,
                  spec_->name + ": a user template is checked by its GPU reference kernel (" +
                      spec_->reference_name + "), not on the host");
    for (auto& buf : buffers)
      if (auto it = spec_->output_files.find(buf.spec.name); it != spec_->output_files.end())
        read_recorded(it->second, buf);
  }

  std::optional<DeviceReference> device_reference() const override {
    if (spec_->recorded()) return std::nullopt;
    DeviceReference ref;
    ref.source = spec_->reference_source;
    ref.source_name = spec_->reference_source_name;
    ref.options = spec_->compiler_options;
    ref.plan = spec_->plan(spec_->reference_name, spec_->reference_geometry, values_,
                           "reference kernel " + spec_->reference_name +
                               " (KtuneExtensions.Reference.LocalSize / GlobalSize)");
    return ref;
  }

  Tolerance tolerance(const BufferSpec& output) const override {
    for (std::size_t b = 0; b < buffers_.size(); ++b) {
      if (buffers_[b].name != output.name) continue;
      const auto& a = spec_->args[vector_args_[b]];
      const double bound = a.tolerance ? *a.tolerance : spec_->tolerance ? *spec_->tolerance
                                                                          : default_tolerance(a.dtype);
      return Tolerance{bound, -1, 0};
    }
    return Tolerance{default_tolerance(output.dtype), -1, 0};
  }

  double bytes() const override {
    if (spec_->bytes) return spec_->bytes->eval_real(values_);
    double total = 0;
    for (const auto& b : buffers_) {
      const double size = static_cast<double>(b.elements * dtype_size(b.dtype));
      if (b.role == Role::input || b.role == Role::output) total += size;
      if (b.role == Role::inout) total += 2 * size;
    }
    return total;
  }

  double flops() const override {
    return spec_->flops ? spec_->flops->eval_real(values_) : 0.0;
  }

 private:
  /// Throws Error(invalid_argument) unless `problem` is the shape the recorded files hold: the
  /// defaults of KtuneExtensions.Dimensions (a transposed shape has the same bytes, so sizes alone
  /// cannot tell).
  void check_recorded_shape(const Problem& problem) const {
    if (problem.dims == spec_->dims) return;
    auto text = [](const std::vector<std::pair<std::string, Value>>& dims) {
      std::string out;
      for (const auto& [n, v] : dims) out += (out.empty() ? "" : ", ") + n + "=" + std::to_string(v);
      return out;
    };
    throw Error(ErrorCode::invalid_argument,
                spec_->origin + ": KtuneExtensions.Reference: the recorded files hold the problem " +
                    text(spec_->dims) + " (the KtuneExtensions.Dimensions defaults), not " +
                    text(problem.dims) + "; record the files for that shape and set the defaults to it");
  }
  /// Throws Error(invalid_argument) when a recorded file of `b` does not hold exactly its bytes.
  void check_recorded_size(const BufferSpec& b, const Problem& problem) const {
    for (const auto* files : {&spec_->input_files, &spec_->output_files}) {
      auto it = files->find(b.name);
      if (it == files->end()) continue;
      std::error_code ec;
      const auto size = std::filesystem::file_size(it->second, ec);
      const char* field = files == &spec_->input_files ? "KtuneExtensions.Reference.InputFiles."
                                                        : "KtuneExtensions.Reference.OutputFiles.";
      if (ec || std::filesystem::is_directory(it->second))
        throw Error(ErrorCode::not_found, spec_->origin + ": " + field + b.name + ": recorded reference file \"" +
                                              it->second + "\": " +
                                              (ec ? ec.message() : std::string("it is a folder, not a file")));
      const std::size_t want = b.elements * dtype_size(b.dtype);
      if (size != want)
        throw Error(ErrorCode::invalid_argument,
                    spec_->origin + ": recorded reference file \"" + it->second + "\" of " + b.name +
                        " holds " + std::to_string(size) + " bytes but " + problem.key() + " needs " +
                        std::to_string(want) + " (" + std::to_string(b.elements) + " x " +
                        to_string(b.dtype) + "); the recorded data fits one problem size only");
    }
  }
  /// Fills `buf` from a recorded file (its size was checked when the workload was made).
  static void read_recorded(const std::string& path, HostBuffer& buf) {
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(buf.bytes.data()), static_cast<std::streamsize>(buf.bytes.size()));
    if (!in || static_cast<std::size_t>(in.gcount()) != buf.bytes.size())
      throw Error(ErrorCode::io_error, "cannot read " + std::to_string(buf.bytes.size()) +
                                           " bytes of " + buf.spec.name + " from \"" + path + "\"");
  }

  std::shared_ptr<const UserSpec> spec_;
  std::vector<Value> values_;
  std::vector<BufferSpec> buffers_;
  std::vector<std::size_t> vector_args_;  // argument index of each buffer
};

class UserTemplate final : public KernelTemplate {
 public:
  explicit UserTemplate(std::shared_ptr<const UserSpec> spec) : spec_(std::move(spec)) {}
  /// The document it was read from, as given.
  const std::string& origin() const { return spec_->origin; }

  std::string name() const override { return spec_->name; }
  std::string op() const override { return spec_->name; }
  std::string description() const override { return spec_->description; }
  const std::string& source() const override { return spec_->source; }
  std::string source_name() const override { return spec_->source_name; }
  std::vector<std::string> dim_names() const override {
    std::vector<std::string> out;
    for (const auto& [n, v] : spec_->dims) out.push_back(n);
    return out;
  }
  std::map<std::string, std::vector<std::string>> attr_domains() const override { return {}; }
  Problem example_problem() const override {
    Problem p;
    p.op = spec_->name;
    p.dims = spec_->dims;
    return p;
  }

  SearchSpace space(const Problem& problem, const Device& device) const override {
    check_problem(problem);
    // ProblemSize depends on the problem only: one that is not a whole number for it (a
    // division by zero) is named here, not left to fail every config's grid.
    const std::vector<Value> values = spec_->values(problem, nullptr);
    for (std::size_t i = 0; i < spec_->problem_size.size(); ++i) {
      std::string why;
      if (!spec_->problem_size[i].eval_whole(values, &why))
        throw Error(ErrorCode::unsupported, spec_->origin + ": KernelSpecification.ProblemSize[" +
                                                std::to_string(i) + "]: " + why + " (" +
                                                problem.key() + ")");
    }
    if (!spec_->geometry.uses_tunables()) {  // the same launch for every config: check it once
      std::string why;
      if (!can_implement(problem, spec_->space.default_config(), &why))
        throw Error(ErrorCode::unsupported,
                    spec_->origin + ": KernelSpecification: the launch geometry, which no tuning "
                    "parameter changes, cannot launch " + problem.key() + ": " + why);
    }
    const int max_threads = device.max_threads_per_block > 0 ? device.max_threads_per_block
                                                              : static_cast<int>(kMaxThreads);
    const std::string limit = spec_->geometry.thread_limit_constraint(
        spec_->block_texts, spec_->names.tunables, max_threads);
    if (limit.empty()) return spec_->space;
    SearchSpace::Builder b;
    for (const auto& p : spec_->space.params()) b.param(p.name, p.values, p.default_value);
    for (const auto& c : spec_->space.constraint_descriptions()) b.constraint(c);
    b.constraint(limit);
    return b.build();
  }

  bool can_implement(const Problem& problem, const Config& config,
                     std::string* why) const override {
    std::int64_t grid[3], block[3], smem = 0;
    return spec_->geometry.compute(spec_->values(problem, &config), spec_->names, grid, block,
                                   smem, why);
  }

  std::vector<std::string> problem_defines(const Problem&) const override {
    return spec_->compiler_options;
  }

  LaunchPlan launch(const Problem& problem, const Config& config, const Device&) const override {
    LaunchPlan plan = spec_->plan(spec_->kernel_name, spec_->geometry,
                                  spec_->values(problem, &config), config.str());
    plan.steps.front().grid_dependency_wait = spec_->grid_dependency_wait;
    return plan;
  }

  // A user kernel's needs are not declared: only each element's own alignment is checked.
  std::size_t buffer_alignment() const override { return 1; }

  std::unique_ptr<Workload> workload(const Problem& problem) const override {
    check_problem(problem);
    return std::make_unique<UserWorkload>(spec_, problem);
  }

 private:
  std::shared_ptr<const UserSpec> spec_;
};

std::shared_ptr<const KernelTemplate> load(const UserTemplateFiles& files) {
  const std::string spec_text = detail::read_text_file(files.spec_path, "template specification");
  const std::filesystem::path dir = std::filesystem::path(files.spec_path).parent_path();
  const Json spec = detail::parse_json_document(spec_text, files.spec_path);
  if (!spec.is_object())
    throw Error(ErrorCode::parse_error, files.spec_path + ": expected a JSON object (a T1 "
                                        "document), found " + detail::json_excerpt(spec));
  // A misspelt section is named before anything that section would have given is missed.
  detail::check_known_keys(spec, files.spec_path, "", user_spec::kDocumentSections,
                           detail::OtherKeys::accept);
  for (const char* section : {"ConfigurationSpace", "KernelSpecification"}) {
    if (!spec.contains(section))
      throw Error(ErrorCode::parse_error, files.spec_path + ": " + section + ": missing");
    if (!spec[section].is_object())
      throw Error(ErrorCode::parse_error, files.spec_path + ": " + section +
                                              ": expected an object, found " +
                                              detail::json_excerpt(spec[section]));
  }
  // Throws Error(not_found) unless `path` is a regular file, `named` saying who named it (a
  // loop of links or a name too long is "not readable", not a crash).
  auto require_regular_file = [](const std::string& path, const std::string& named) {
    std::error_code fs_error;
    if (!std::filesystem::is_regular_file(path, fs_error))
      throw Error(ErrorCode::not_found, named + "\"" + path + "\" is not a readable file" +
                                            (fs_error ? " (" + fs_error.message() + ")" : ""));
  };
  // A file the document names, relative to the document; `field` names where.
  auto named_file = [&](const Json& object, const std::string& field) -> std::string {
    const Json* file = object.is_object() && object.contains("KernelFile") ? &object["KernelFile"]
                                                                           : nullptr;
    if (!file) return "";
    // (A NUL would end the name early for the file system: "k.cu\u0000.txt" is not k.cu.)
    if (!file->is_string() || file->get<std::string>().empty() ||
        file->get<std::string>().find('\0') != std::string::npos)
      throw Error(ErrorCode::parse_error, files.spec_path + ": " + field +
                                              ".KernelFile: expected a file name, got " +
                                              detail::json_excerpt(*file));
    const std::string path = (dir / file->get<std::string>()).string();
    require_regular_file(path, files.spec_path + ": " + field + ".KernelFile: ");
    return path;
  };
  std::string kernel_path = files.kernel_path;
  if (kernel_path.empty()) {
    kernel_path = named_file(spec["KernelSpecification"], "KernelSpecification");
    if (kernel_path.empty())
      throw Error(ErrorCode::parse_error, files.spec_path +
                                              ": KernelSpecification.KernelFile: missing (or "
                                              "give the kernel file)");
  } else {
    require_regular_file(kernel_path, "kernel file ");
  }
  const std::string kernel = detail::read_text_file(kernel_path, "kernel source");
  std::string reference;
  const Json* ext = spec.contains("KtuneExtensions") ? &spec["KtuneExtensions"] : nullptr;
  if (ext && ext->is_object() && ext->contains("Reference"))
    if (const std::string ref = named_file((*ext)["Reference"], "KtuneExtensions.Reference");
        !ref.empty())
      reference = detail::read_text_file(ref, "reference kernel source");
  // A kernel file given in place of the document's KernelFile is named as given in compiler
  // messages, so that an error points at the file that was compiled.
  return make_user_template(spec_text, kernel, reference, files.spec_path, files.kernel_path);
}

}  // namespace

std::shared_ptr<const KernelTemplate> make_user_template(const std::string& spec_json,
                                                         const std::string& kernel_source,
                                                         const std::string& reference_source,
                                                         const std::string& origin,
                                                         const std::string& kernel_name) {
  return std::make_shared<UserTemplate>(
      read_user_spec(spec_json, kernel_source, reference_source, origin, kernel_name));
}

std::shared_ptr<const KernelTemplate> load_user_template(const UserTemplateFiles& files) {
  return load(files);
}

namespace {

/// The user templates this process announced to its children, in order.
struct Announcements {
  std::mutex mutex;
  std::vector<Json> entries;
  std::once_flag composer_installed;
};

Announcements& announcements() {
  static Announcements a;
  return a;
}

/// A child's KTUNE_USER_TEMPLATES: the process's own list at the spawn (`own`: a parent's
/// announcements, or what the program set) plus this process's announcements.
std::optional<std::string> compose_announcements(const std::optional<std::string>& own) {
  Json list = Json::array();
  if (own) {
    try {
      list = Json::parse(*own);
    } catch (const Json::exception&) {
      list = Json::array();
    }
    if (!list.is_array()) list = Json::array();
  }
  Announcements& a = announcements();
  std::lock_guard<std::mutex> lock(a.mutex);
  for (const auto& e : a.entries)
    if (std::find(list.begin(), list.end(), e) == list.end()) list.push_back(e);
  return list.dump();
}

/// Adds `entry` to what every child started from now on finds in KTUNE_USER_TEMPLATES.
void announce_to_children(const Json& entry) {
  Announcements& a = announcements();
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    if (std::find(a.entries.begin(), a.entries.end(), entry) == a.entries.end())
      a.entries.push_back(entry);
  }
  // Outside the entries' lock: the composer takes it under child_environment's lock, so
  // holding it while set_child_variable waits for that lock could deadlock. Every announcer
  // passes here, so none returns before the composer is in place.
  std::call_once(a.composer_installed,
                 [] { detail::set_child_variable(kEnvironmentVariable, compose_announcements); });
}

}  // namespace

std::shared_ptr<const KernelTemplate> register_user_template(const UserTemplateFiles& files) {
  auto tmpl = load(files);
  for (const auto& existing : all_templates()) {
    if (existing->name() != tmpl->name()) continue;
    const auto* user = dynamic_cast<const UserTemplate*>(existing.get());
    if (!user)
      throw Error(ErrorCode::invalid_argument,
                  files.spec_path + ": the name \"" + tmpl->name() +
                      "\" is a built-in template's; set General.BenchmarkName to another name");
    // The same document read again replaces itself; another one under the same name would
    // silently take the first one's place (its space, default and kernel).
    const auto& again = static_cast<const UserTemplate&>(*tmpl);
    std::error_code ec;
    const bool same_document = std::filesystem::equivalent(user->origin(), again.origin(), ec) &&
                               user->source() == again.source();
    if (!same_document)
      throw Error(ErrorCode::invalid_argument,
                  files.spec_path + ": the name \"" + tmpl->name() + "\" is already the user template of '" +
                      user->origin() + "' (or the same document with another kernel); give each document "
                      "its own General.BenchmarkName");
  }
  register_template(tmpl);
  // Announce it to worker processes started from now on (this process's environment is not
  // written: see child_environment.h).
  auto absolute = [](const std::string& p) {
    return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
  };
  announce_to_children({{"spec", absolute(files.spec_path)}, {"kernel", absolute(files.kernel_path)}});
  return tmpl;
}

void register_user_templates_from_environment() {
  const char* text = std::getenv(kEnvironmentVariable);
  if (!text || !*text) return;
  Json list;
  try {
    list = Json::parse(text);
  } catch (const Json::exception& e) {
    std::fprintf(stderr, "ktune: ignoring %s: not JSON (%s)\n", kEnvironmentVariable, e.what());
    return;
  }
  if (!list.is_array()) return;
  for (const auto& entry : list) {
    try {
      register_template(load({entry.value("spec", ""), entry.value("kernel", "")}));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ktune: ignoring user template %s: %s\n", entry.dump().c_str(), e.what());
    }
  }
}

}  // namespace ktune
