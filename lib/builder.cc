// Builder: turns (template, problem, config, device) into NVRTC options and a cache key,
// compiles through the two-level cubin cache on a thread pool, and attaches the ptxas
// resource report to every result.
#include "ktune/build.h"

#include <algorithm>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "compile_helper.h"
#include "content_hash.h"
#include "cubin_cache.h"
#include "embedded_sources.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "nvrtc_compile.h"
#include "ptx_scan.h"
#include "ptxas_report.h"

namespace ktune {

namespace {

/// Layout version of the cache key material; bump when option handling changes meaning.
constexpr const char* kKeyFormat = "ktune-build-1";

/// A fixed set of worker threads running queued jobs in order.
class ThreadPool {
 public:
  /// Starts `threads` workers.
  explicit ThreadPool(int threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() { join(); }
  /// Finishes the queued jobs and stops the workers (idempotent).
  void join() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_)
      if (w.joinable()) w.join();
  }
  /// Queues a job.
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    wake_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

/// Compile threads of a Builder whose BuilderOptions::threads is `requested` (0: one per
/// hardware thread, at least 1).
int compile_threads(int requested) {
  return requested > 0 ? requested : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

namespace detail {

const std::vector<NvrtcHeader>& template_headers() {
  static const std::vector<NvrtcHeader> headers = [] {
    std::vector<NvrtcHeader> list;
    for (const auto& [path, text] : detail::embedded_sources())
      if (path.size() > 4 && path.compare(path.size() - 4, 4, ".cuh") == 0)
        list.push_back({path, text});
    return list;
  }();
  return headers;
}

std::vector<std::string> template_compile_options(const KernelTemplate& tmpl, const Problem& problem,
                                                  const Config& config, const std::string& arch) {
  std::vector<std::string> options = tmpl.problem_defines(problem);
  for (auto& define : config.defines()) options.push_back(std::move(define));
  options.push_back("--gpu-architecture=" + arch);
  add_default_language_standard(options);
  return options;
}

const std::string& template_headers_hash() {
  static const std::string hash = [] {
    std::uint64_t h = fnv1a64("");
    for (const auto& header : template_headers()) {
      h = fnv1a64(header.name, h);
      h = fnv1a64(std::string_view("\0", 1), h);
      h = fnv1a64(header.text, h);
    }
    return hex64(h);
  }();
  return hash;
}

}  // namespace detail

namespace {

/// 128-bit hex key of the text (two FNV-1a passes from different starting states).
std::string cache_key(const std::string& material) {
  return detail::hex64(detail::fnv1a64(material)) +
         detail::hex64(detail::fnv1a64(material, 0x84222325cbf29ce4ULL));
}

/// Each field the larger of `a` and `b` (-1, unknown, loses to any value).
Resources peak_of(const Resources& a, const Resources& b) {
  Resources r;
  r.registers = std::max(a.registers, b.registers);
  r.shared_bytes = std::max(a.shared_bytes, b.shared_bytes);
  r.spill_stores = std::max(a.spill_stores, b.spill_stores);
  r.spill_loads = std::max(a.spill_loads, b.spill_loads);
  r.stack_bytes = std::max(a.stack_bytes, b.stack_bytes);
  r.const_bytes = std::max(a.const_bytes, b.const_bytes);
  return r;
}

/// The kernel steps the launch plan of `config` runs, in order (empty when the template cannot
/// plan it: such a config still reports the first kernel of the report).
std::vector<LaunchStep> planned_kernels(const KernelTemplate& tmpl, const Problem& problem,
                                        const Config& config, const Device& device) {
  std::vector<LaunchStep> kernels;
  try {
    for (auto& step : tmpl.launch(problem, config, device).steps)
      if (step.kind == LaunchStep::Kind::kernel) kernels.push_back(std::move(step));
  } catch (const std::exception&) {
  }
  return kernels;
}

/// The entries of `kernels` marked grid_dependency_wait, when `arch` (sm_XX) is one that
/// launches them programmatically (9.0 and later; before it the wait is not compiled in and the
/// mark has no effect): each must wait on every path before it touches global memory
/// (grid_dependency_wait_problem), which the Builder checks on the PTX of each compile.
std::vector<std::string> waiting_entries(const std::vector<LaunchStep>& kernels,
                                         const std::string& arch) {
  std::vector<std::string> entries;
  if (arch.rfind("sm_", 0) != 0 || std::atoi(arch.c_str() + 3) < 90) return entries;
  for (const auto& step : kernels)
    if (step.grid_dependency_wait &&
        std::find(entries.begin(), entries.end(), step.entry) == entries.end())
      entries.push_back(step.entry);
  return entries;
}

/// Whether the cubin holds the code of kernel `entry` (its ".text.<entry>" section), whatever
/// the compiler's report says: a kernel defined only under a macro the config turns off, or
/// source the compiler stopped reading, gives a module without it.
bool cubin_has_kernel(const std::vector<char>& cubin, const std::string& entry) {
  const std::string section = ".text." + entry;
  const char* end = cubin.data() + cubin.size();
  for (const char* at = std::search(cubin.data(), end, section.begin(), section.end()); at != end;
       at = std::search(at + 1, end, section.begin(), section.end()))
    if (at + section.size() == end || at[section.size()] == '\0') return true;
  return false;
}

}  // namespace

struct Builder::Impl {
  BuilderOptions options;
  detail::CubinCache cache;
  std::unique_ptr<worker::CompileHelperPool> helpers;  // null: every compile in this process
  ThreadPool pool;

  explicit Impl(BuilderOptions o)
      : options(std::move(o)),
        cache(options.cache_dir),
        helpers(make_helpers(options)),
        pool(compile_threads(options.threads)) {}

  static std::unique_ptr<worker::CompileHelperPool> make_helpers(const BuilderOptions& o) {
    const int count = compile_helper_count(o);
    if (count <= 0) return nullptr;
    try {
      return std::make_unique<worker::CompileHelperPool>(find_worker_executable(o.helper_program),
                                                         count);
    } catch (const std::exception& e) {
      spdlog::warn("compiling in this process: no compile helper: {}", e.what());
      return nullptr;
    }
  }
};

namespace {

bool is_identifier_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The quoted source line without its string literals and // comment (a name there is text).
std::string code_of(const std::string& line) {
  std::string code;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      code += ' ';
      continue;
    }
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    code += c;
  }
  return code;
}

// A parameter reaches the kernel as the macro -DNAME=VALUE, which also replaces NAME in every
// header the kernel includes: a parameter named like a CUDA function (printf, min) breaks a
// CUDA header, and NVRTC's error points there, not at the parameter. When an error of a CUDA
// header (neither the kernel's file nor ktune's template headers, which use the parameters on
// purpose) quotes code holding a parameter's name as a word, say so.
std::string macro_collision_note(const std::string& log, const Config& config,
                                 const std::string& kernel_file) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::string> named;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    const auto mark = line.find("): error");
    const auto open = line.rfind('(', mark);
    if (mark == std::string::npos || open == std::string::npos || open == 0) continue;
    const std::string file = line.substr(0, open);
    if (file == kernel_file) continue;
    const auto& own = detail::template_headers();
    if (std::any_of(own.begin(), own.end(), [&](const detail::NvrtcHeader& h) {
          return file == h.name || file.ends_with("/" + h.name);
        }))
      continue;
    const std::string quoted = code_of(lines[i + 1]);
    for (const auto& name : config.names()) {
      for (auto at = quoted.find(name); at != std::string::npos; at = quoted.find(name, at + 1)) {
        const bool starts = at == 0 || !is_identifier_char(quoted[at - 1]);
        const bool ends = at + name.size() == quoted.size() || !is_identifier_char(quoted[at + name.size()]);
        if (starts && ends && std::find(named.begin(), named.end(), name) == named.end()) {
          named.push_back(name);
          break;
        }
      }
    }
  }
  std::string note;
  for (const auto& name : named)
    note += "\nnote: parameter '" + name + "' is passed as the macro -D" + name +
            "=..., which also replaces '" + name + "' in the CUDA headers the kernel includes, " +
            "and the error above is in one of them: if it names '" + name +
            "', rename the parameter";
  return note;
}

}  // namespace

int compile_helper_count(const BuilderOptions& options) {
  return options.compile_processes == kHelperPerCompileThread ? compile_threads(options.threads)
                                                               : options.compile_processes;
}

Builder::Builder(BuilderOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Builder::~Builder() {
  impl_->pool.join();  // queued builds still use the cache: finish them while it exists
}

BuildResult Builder::build(const KernelTemplate& tmpl, const Problem& problem,
                           const Config& config, const Device& device) {
  // A config of another space (other parameters, a value outside a domain) would compile with
  // the kernel's own #ifndef defaults in place of what is missing: a binary nobody asked for.
  if (const SearchSpace space = tmpl.space(problem, device); !space.contains(config)) {
    std::string names;
    for (const auto& p : space.params()) names += (names.empty() ? "" : ", ") + p.name;
    throw Error(ErrorCode::invalid_argument,
                "config '" + config.str() + "' is not a config of " + tmpl.name() + " on " +
                    problem.key() + " (parameters " + names + ", each within its domain)");
  }
  const std::string& source = tmpl.source();
  const std::string arch = tmpl.target_arch(device, config);
  device.check_runs(arch, "template " + tmpl.name());
  std::vector<std::string> options = detail::template_compile_options(tmpl, problem, config, arch);
  options.push_back("--ptxas-options=-v");
  for (const auto& extra : impl_->options.extra) options.push_back(extra);

  // The key covers everything that changes the binary except the location of the CUDA
  // headers, which follows the NVRTC version and differs between machines.
  std::string material = std::string(kKeyFormat) + "\nsource " + source_hash(source) +
                         "\nheaders " + detail::template_headers_hash() + "\nnvrtc " + nvrtc_version() +
                         "\narch " + arch;
  for (const auto& o : options) material += "\n" + o;
  const std::vector<LaunchStep> planned = planned_kernels(tmpl, problem, config, device);
  const std::vector<std::string> waiting = waiting_entries(planned, arch);
  for (const auto& e : waiting) material += "\nwaits " + e;  // checked before it is cached
  const std::string key = cache_key(material);

  std::vector<std::string> nvrtc_options = options;
  // NVRTC's own cache would answer a repeated compile without running ptxas, and so without
  // the -v report that resources come from (measured on the H200 machine: registers -1 on
  // every compile after the first of a program, across processes).
  if (detail::nvrtc_caches_programs()) nvrtc_options.push_back(detail::kNvrtcNoCache);
  if (const std::string& include = detail::cuda_include_dir(); !include.empty())
    nvrtc_options.push_back("-I" + include);

  auto [entry, source_of_entry] = impl_->cache.get_or_compile(key, [&] {
    std::optional<detail::NvrtcOutput> helped;
    const bool keep_ptx = !waiting.empty();
    if (impl_->helpers)
      helped = impl_->helpers->compile(source, tmpl.source_name(), nvrtc_options, keep_ptx);
    detail::NvrtcOutput out =
        helped ? std::move(*helped)
               : detail::nvrtc_compile(source, tmpl.source_name(), detail::template_headers(),
                                       nvrtc_options, keep_ptx);
    // A kernel launched programmatically may start before the previous kernel's writes are
    // visible: one that can touch global memory before its wait fails to build.
    for (const auto& e : waiting) {
      if (!out.ok) break;
      if (const std::string problem = detail::grid_dependency_wait_problem(out.ptx, e);
          !problem.empty()) {
        out.ok = false;
        out.cubin.clear();
        out.log += "\nktune: " + problem + ": its launch step is marked grid_dependency_wait "
                   "(programmatic launch may start it before the previous kernel's writes are "
                   "visible), so it must execute griddepcontrol.wait (asm volatile("
                   "\"griddepcontrol.wait;\" ::: \"memory\")) on every path before touching "
                   "global memory";
      }
    }
    out.ptx.clear();
    detail::CompiledKernel compiled;
    compiled.ok = out.ok;
    compiled.log = std::move(out.log);
    if (out.ok) compiled.cubin = std::make_shared<const std::vector<char>>(std::move(out.cubin));
    compiled.arch = arch;
    compiled.options = nvrtc_options;
    compiled.compile_ms = out.compile_ms;
    return compiled;
  });

  BuildResult result;
  result.ok = entry.ok;
  result.log = entry.log;
  // A log cached by an older build may still hold NVRTC's NUL bytes (see nvrtc_compile.cc).
  result.log.erase(std::remove(result.log.begin(), result.log.end(), '\0'), result.log.end());
  if (!entry.ok) result.log += macro_collision_note(entry.log, config, tmpl.source_name());
  result.cubin = entry.cubin;
  result.arch = entry.arch;
  result.key = key;
  result.options = entry.options;
  result.cache = source_of_entry == detail::CacheSource::memory ? BuildResult::Cache::memory
                 : source_of_entry == detail::CacheSource::disk ? BuildResult::Cache::disk
                                                                : BuildResult::Cache::miss;
  result.compile_ms = result.cache == BuildResult::Cache::miss ? entry.compile_ms : 0;
  if (entry.ok) {
    auto report = detail::parse_ptxas_report(entry.log);
    for (const auto& [name, resources] : report) result.kernels[name] = resources;
    for (const LaunchStep& step : planned) {
      const std::string& kernel = step.entry;
      if (result.cubin && !cubin_has_kernel(*result.cubin, kernel)) {
        std::string present;
        for (const auto& [name, resources] : report) present += (present.empty() ? "" : ", ") + name;
        result.ok = false;
        result.cubin.reset();
        result.log += "\nktune: the compiled module has no kernel '" + kernel + "' (the launch plan runs it; " +
                      (present.empty() ? std::string("the compiler reported no kernel")
                                       : "the compiler reported " + present) +
                      "): is it defined only under a macro this config turns off, with extern \"C\"?";
        return result;
      }
    }
    // The plan's peak, field by field: a pre-pass (padding, channel packing) that runs first
    // must not hide the main kernel's registers or spills.
    bool any = false;
    for (const LaunchStep& step : planned)
      if (auto it = result.kernels.find(step.entry); it != result.kernels.end()) {
        result.resources = any ? peak_of(result.resources, it->second) : it->second;
        any = true;
      }
    if (!any && !report.empty()) result.resources = report.front().second;
  }
  return result;
}

std::future<BuildResult> Builder::submit(std::shared_ptr<const KernelTemplate> tmpl,
                                         Problem problem, Config config, Device device) {
  auto task = std::make_shared<std::packaged_task<BuildResult()>>(
      [this, tmpl = std::move(tmpl), problem = std::move(problem), config = std::move(config),
       device = std::move(device)] { return build(*tmpl, problem, config, device); });
  std::future<BuildResult> result = task->get_future();
  impl_->pool.post([task] { (*task)(); });
  return result;
}

std::vector<BuildResult> Builder::build_all(std::shared_ptr<const KernelTemplate> tmpl,
                                            const Problem& problem,
                                            const std::vector<Config>& configs,
                                            const Device& device) {
  std::vector<std::future<BuildResult>> pending;
  pending.reserve(configs.size());
  for (const auto& config : configs) pending.push_back(submit(tmpl, problem, config, device));
  std::vector<BuildResult> results;
  results.reserve(configs.size());
  for (auto& f : pending) results.push_back(f.get());
  return results;
}

Builder::Stats Builder::stats() const {
  detail::CacheStats s = impl_->cache.stats();
  return Stats{s.compiles, s.memory_hits, s.disk_hits, s.failures,
               impl_->helpers ? impl_->helpers->compiles() : 0};
}

void Builder::clear_memory_cache() { impl_->cache.clear_memory(); }

std::string Builder::nvrtc_version() {
  static const std::string version = detail::nvrtc_version_string();
  return version;
}

std::string Builder::source_hash(const std::string& source) {
  return detail::hex64(detail::fnv1a64(source));
}

}  // namespace ktune
