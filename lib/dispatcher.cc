// Dispatcher: index of the best ok configs of a tuning log, the selection rules (exact,
// nearest shape, same compute capability, default), validation of logged configs against the
// template's space, and compile-once launches (see include/ktune/dispatch.h and
// docs/deployment.md).
#include "ktune/dispatch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "cuda_module.h"
#include "input_file.h"
#include "jsonl_format.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/template.h"
#include "launch_plan_runner.h"
#include "shape_distance.h"
#include "sqlite_db.h"

namespace ktune {

const char* to_string(SelectionReason reason) {
  switch (reason) {
    case SelectionReason::exact: return "exact";
    case SelectionReason::nearest_shape: return "nearest_shape";
    case SelectionReason::same_arch: return "same_arch";
    case SelectionReason::default_config: return "default_config";
  }
  return "default_config";
}

namespace {

/// One distinct config of a task with its best recorded median.
struct Candidate {
  std::string config_text;
  double median_ms = 0;
  std::string record;       // names the record in messages
  std::string source_hash;  // of the template source it was measured with
  bool programmatic = false;  // timed with programmatic launch (programmatic_form)
};

/// The ok records of one (template, problem, device), fastest first.
struct Task {
  std::string problem_key;
  std::optional<Problem> problem;  // nullopt when the key does not parse
  std::string device_key;
  int cc_major = 0, cc_minor = 0;
  std::vector<Candidate> candidates;
};

/// The SM count a device key ends with ("NAME|sm_90|132"), -1 when it is no device key.
long sm_count_of(const std::string& device_key) {
  try {
    return Device::from_key(device_key).sm_count;
  } catch (const Error&) {
    return -1;
  }
}

std::string default_cache_dir() {
  if (const char* dir = std::getenv("KTUNE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/ktune/cubins";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/ktune/cubins";
  return "";
}

std::string record_name(const std::string& path, bool from_jsonl, std::int64_t id,
                        const std::string& template_name, const std::string& problem_key,
                        const std::string& device_key, const std::string& run_id) {
  std::string where = from_jsonl ? path + ":" + std::to_string(id)
                                 : path + " record #" + std::to_string(id);
  return where + " (template " + template_name + ", problem " + problem_key + ", device " +
         device_key + ", run " + run_id + ")";
}

/// While indexing: what selection needs of one ok trial (not its samples or message).
struct Measured {
  double median_ms = 0;
  std::int64_t id = 0;
  std::string run_id;
};

/// While indexing: the trials of one task, grouped by config and template source in order
/// of first appearance.
struct PendingTask {
  std::string template_name, problem_key, device_key;
  int cc_major = 0, cc_minor = 0;
  struct Group {
    std::string config_text, source_hash;
    bool programmatic = false;  // how its trials were timed (programmatic_form)
    std::vector<Measured> trials;
  };
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> group_of;  // config + source + way -> groups index
};

/// A compiled, loaded and planned kernel for one (template, problem, device ordinal).
struct Prepared {
  Selection selection;
  LaunchPlan plan;
  std::shared_ptr<detail::CudaModule> module;
  std::vector<BufferSpec> buffers;             // the caller's buffers, in order
  std::size_t alignment = 1;                   // each caller buffer's (KernelTemplate)
  std::vector<detail::DeviceMemory> scratch;   // the plan's scratch buffers
};

}  // namespace

struct Dispatcher::Impl {
  std::string path;
  DispatcherOptions options;
  std::size_t indexed = 0;
  std::unordered_map<std::string, std::vector<Task>> tasks_by_template;

  mutable std::shared_mutex memo_mutex;
  mutable std::unordered_map<std::string, Selection> memo;
  mutable std::mutex rejection_mutex;
  mutable std::vector<std::string> rejections;
  mutable std::set<std::string> rejected_records;

  mutable std::mutex prepare_mutex;  // serializes cold launches (compiles, module loads)
  mutable std::shared_mutex prepared_mutex;
  std::unordered_map<std::string, std::shared_ptr<Prepared>> prepared;
  std::unique_ptr<Builder> builder;
  std::map<std::string, std::shared_ptr<detail::CudaModule>> modules;  // by cubin key
  std::map<int, Device> devices;                                        // by ordinal
  std::uint64_t compiles = 0;

  /// Receives the records one at a time (TuningLog::for_each's visitor).
  using RecordSink = std::function<void(const TrialRecord&)>;
  /// Indexes the ok records that `read` passes to its sink.
  void index(const std::function<void(const RecordSink&)>& read, bool from_jsonl);
  /// Indexes the regular file `file`: an SQLite tuning log or a JSON-lines export (by content).
  void index_file(const std::string& file);
  Selection compute(const KernelTemplate& tmpl, const Problem& problem, const Device& device) const;
  std::optional<Config> try_task(const KernelTemplate& tmpl, const Task& task,
                                 const Problem& problem, const Device& device,
                                 const SearchSpace& space, const std::string& current_source,
                                 bool current, const Candidate** used) const;
  void reject(const std::string& record, const std::string& why) const;
  Selection select(const KernelTemplate& tmpl, const Problem& problem, const Device& device) const;
  std::shared_ptr<Prepared> prepare(const std::string& template_name, const Problem& problem,
                                    int ordinal);
};

void Dispatcher::Impl::index(const std::function<void(const RecordSink&)>& read, bool from_jsonl) {
  // The usable ok trials of each (template, problem, device), tasks in order of appearance;
  // only what selection reads is kept, so a log of a million trials is not held whole.
  std::unordered_map<std::string, std::size_t> task_of;
  std::vector<PendingTask> pending;
  // Task + config + source of each failed trial: such a config is never selected (the tuner
  // drops a finalist that fails when measured again; config_representatives() likewise).
  std::unordered_set<std::string> failed_groups;
  auto task_key_of = [](const std::string& tmpl, const std::string& problem, const std::string& device) {
    return tmpl + '\x1f' + problem + '\x1f' + device;
  };
  auto group_key_of = [](const std::string& config, const std::string& source) {
    return config + '\x1f' + source;
  };
  read([&](const TrialRecord& r) {
    const std::string device_key = r.device_key();
    const std::string task_key = task_key_of(r.template_name, r.problem_key, device_key);
    const std::string group_key = group_key_of(r.config_text, r.source_hash);
    if (!r.trial.ok()) {
      failed_groups.insert(task_key + '\x1f' + group_key);
      return;
    }
    try {  // a log written by hand or by an older ktune: an impossible time never wins
      check_record(r, "the record");
    } catch (const Error& e) {
      reject(record_name(path, from_jsonl, r.id, r.template_name, r.problem_key, device_key, r.run_id),
             e.what());
      return;
    }
    ++indexed;
    auto [t, new_task] = task_of.try_emplace(task_key, pending.size());
    if (new_task) {
      PendingTask task;
      task.template_name = r.template_name;
      task.problem_key = r.problem_key;
      task.device_key = device_key;
      task.cc_major = r.device.cc_major;
      task.cc_minor = r.device.cc_minor;
      pending.push_back(std::move(task));
    }
    PendingTask& task = pending[t->second];
    const bool programmatic = programmatic_form(r.trial.launch);
    auto [g, new_group] =
        task.group_of.try_emplace(group_key + (programmatic ? "\x1fp" : ""), task.groups.size());
    if (new_group) task.groups.push_back({r.config_text, r.source_hash, programmatic, {}});
    task.groups[g->second].trials.push_back({r.trial.median_ms, r.id, r.run_id});
  });
  std::vector<double> medians;
  for (auto& p : pending) {
    Task task;
    task.problem_key = p.problem_key;
    try {
      task.problem = Problem::from_key(p.problem_key);
    } catch (const Error&) {
      task.problem.reset();  // only usable for exact matches
    }
    task.device_key = p.device_key;
    task.cc_major = p.cc_major;
    task.cc_minor = p.cc_minor;
    // Each config by its typical trial (the rule of config_representatives): a config the
    // tuner's final rounds re-measured is not judged by its luckiest trial.
    const std::string task_key = task_key_of(p.template_name, p.problem_key, p.device_key);
    // Configs are ranked by the trials timed the way this dispatcher launches when the task
    // has any, else by those timed the other way (trials_ranked_for_launch's rule).
    const bool wanted = options.programmatic_launch;
    const bool has_wanted =
        std::any_of(p.groups.begin(), p.groups.end(),
                    [&](const PendingTask::Group& g) { return g.programmatic == wanted; });
    for (auto& g : p.groups) {
      if (has_wanted && g.programmatic != wanted) continue;
      if (failed_groups.count(task_key + '\x1f' + group_key_of(g.config_text, g.source_hash))) continue;
      medians.clear();
      for (const auto& m : g.trials) medians.push_back(m.median_ms);
      const Measured& typical = g.trials[typical_trial_position(medians)];
      task.candidates.push_back(Candidate{std::move(g.config_text), typical.median_ms,
                                          record_name(path, from_jsonl, typical.id, p.template_name,
                                                      p.problem_key, p.device_key, typical.run_id),
                                          std::move(g.source_hash), g.programmatic});
    }
    std::stable_sort(task.candidates.begin(), task.candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.median_ms < b.median_ms; });
    tasks_by_template[p.template_name].push_back(std::move(task));
  }
}

void Dispatcher::Impl::reject(const std::string& record, const std::string& why) const {
  std::string message = record + ": rejected: " + why;
  // A hostile record may carry megabytes of text (and quote it twice): its message is cut,
  // so that the warning, rejections() and a strict Error stay readable.
  constexpr std::size_t kMaxRejectionChars = 1000;
  if (message.size() > kMaxRejectionChars) {
    std::size_t cut = kMaxRejectionChars;  // not inside a UTF-8 character
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    message = message.substr(0, cut) + "... (" + std::to_string(message.size()) + " characters)";
  }
  if (options.strict) throw Error(ErrorCode::invalid_argument, message);
  std::lock_guard lock(rejection_mutex);
  if (rejected_records.insert(message).second) {
    rejections.push_back(message);
    spdlog::warn("dispatch: {}", message);
  }
}

// First candidate of a task that is in the template's space for the task's own problem (else
// the record is hostile or stale and rejected), and valid and implementable for `problem`,
// among those measured with the template's current source (`current`), else the others.
std::optional<Config> Dispatcher::Impl::try_task(const KernelTemplate& tmpl, const Task& task,
                                                 const Problem& problem, const Device& device,
                                                 const SearchSpace& space,
                                                 const std::string& current_source, bool current,
                                                 const Candidate** used) const {
  // Nothing of this source: no space to build, no record to check.
  if (std::none_of(task.candidates.begin(), task.candidates.end(),
                   [&](const Candidate& c) { return (c.source_hash == current_source) == current; }))
    return std::nullopt;
  const bool same_problem = task.problem_key == problem.key();
  std::optional<SearchSpace> own_space;  // the space the record was tuned in
  if (!same_problem) {
    if (!task.problem) return std::nullopt;
    try {
      own_space = tmpl.space(*task.problem, device);
    } catch (const Error& e) {
      spdlog::debug("dispatch: skipping {} (not a problem of {}: {})", task.problem_key,
                    tmpl.name(), e.what());
      return std::nullopt;
    }
  }
  // Steps 1 and 2 of a record: its config text parsed strictly and checked against the space
  // of the record's own problem; a record failing them is rejected (thrown when strict).
  // Parameters the template gained since the recording take their defaults there, as `ktune
  // best` and --replay take them.
  auto own_values = [&](const Candidate& c) -> std::optional<std::map<std::string, Value>> {
    try {
      // Throws for an unknown parameter or a value outside its domain.
      return (own_space ? *own_space : space)
          .with_changes(parse_config_text(c.config_text).values_by_name())
          .values_by_name();
    } catch (const Error& e) {
      reject(c.record, std::string("config '") + c.config_text + "' is not in the space of " +
                           tmpl.name() + ": " + e.what());
      return std::nullopt;
    }
  };
  // Strict: every record of the task is checked, not only those ranked above the one that is
  // used, so a hostile record cannot hide behind an honest best.
  if (options.strict)  // (in either pass that consults the task; a second check finds nothing new)
    for (const Candidate& c : task.candidates) (void)own_values(c);
  for (const Candidate& c : task.candidates) {
    if ((c.source_hash == current_source) != current) continue;
    const auto values = own_values(c);
    if (!values) continue;
    Config config;
    try {
      config = space.make(*values);  // in the requested problem's space (order and domains)
    } catch (const Error& e) {
      spdlog::debug("dispatch: {}: config '{}' not in the space of {}: {}", c.record,
                    c.config_text, problem.key(), e.what());
      continue;
    }
    std::string why;
    if (!space.valid(config)) {
      spdlog::debug("dispatch: {}: '{}' violates {}", c.record, c.config_text,
                    space.violated(config).value_or("a constraint"));
      continue;
    }
    if (!tmpl.can_implement(problem, config, &why)) {
      spdlog::debug("dispatch: {}: '{}' cannot implement {}: {}", c.record, c.config_text,
                    problem.key(), why);
      continue;
    }
    *used = &c;
    return config;
  }
  return std::nullopt;
}

Selection Dispatcher::Impl::compute(const KernelTemplate& tmpl, const Problem& problem,
                                    const Device& device) const {
  const SearchSpace space = tmpl.space(problem, device);
  const std::string key = problem.key();
  const std::string dk = device_key_of(device);
  const std::string current_source = Builder::source_hash(tmpl.source());
  static const std::vector<Task> kNone;
  auto found = tasks_by_template.find(tmpl.name());
  const std::vector<Task>& tasks = found == tasks_by_template.end() ? kNone : found->second;

  // Tasks of a device group ordered by shape distance (exact first), comparable ones only.
  auto ordered = [&](auto&& same_group) {
    std::vector<std::pair<double, const Task*>> out;
    for (const Task& t : tasks) {
      if (!same_group(t)) continue;
      if (t.problem_key == key) {
        out.emplace_back(0.0, &t);
      } else if (t.problem) {
        // (rounded: equal ratios up and down tie, and ties go to the problem key)
        if (auto d = shape_distance(problem, *t.problem)) out.emplace_back(*d, &t);
      }
    }
    // Ties (one problem tuned on several devices of the requested compute capability) go to
    // the device whose SM count is nearest the requested one, then by device key: never to the
    // order in which the records were imported.
    auto sm_gap = [&](const Task& t) { return std::abs(sm_count_of(t.device_key) - device.sm_count); };
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      const Task &x = *a.second, &y = *b.second;
      if (x.problem_key != y.problem_key) return x.problem_key < y.problem_key;
      if (sm_gap(x) != sm_gap(y)) return sm_gap(x) < sm_gap(y);
      return x.device_key < y.device_key;
    });
    return out;
  };
  // Whether this dispatcher launches `config` programmatically: with the option on, a config
  // none of whose kernels waits for the previous grid (GEMM, convolution) is launched as
  // usual, so plain trials are then timed its own way.
  auto launches_programmatically = [&](const Config& config) {
    return detail::config_launched_programmatically(tmpl, problem, config, device,
                                                    options.programmatic_launch);
  };
  // One task's selection under a rule: its first usable record of the current template source
  // (`current`) or of the older ones.
  auto try_one = [&](double distance, const Task& task, bool current,
                     bool other_device) -> std::optional<Selection> {
    const bool exact = task.problem_key == key;
    if (!exact && !options.allow_nearest_shape) return std::nullopt;
    const Candidate* used = nullptr;
    auto config = try_task(tmpl, task, problem, device, space, current_source, current, &used);
    if (!config) return std::nullopt;
    Selection s;
    s.config = *config;
    s.older_source = used->source_hash != current_source;
    s.other_launch = used->programmatic != launches_programmatically(s.config);
    s.reason = other_device ? SelectionReason::same_arch
                            : (exact ? SelectionReason::exact : SelectionReason::nearest_shape);
    s.source_problem = task.problem_key;
    s.source_device = task.device_key;
    s.median_ms = used->median_ms;
    s.distance = distance;
    s.explanation = std::string(exact ? "best record of this problem" : "nearest tuned shape " +
                                                                         task.problem_key) +
                    (other_device ? " on another device of the same compute capability (" +
                                        task.device_key + ")"
                                  : "") +
                    " (" + used->record + ", median " + std::to_string(used->median_ms) +
                    " ms" + (exact ? "" : ", log2 distance " + std::to_string(distance)) +
                    (s.older_source ? ", measured with an older source of the template" : "") +
                    (!s.other_launch ? ""
                     : used->programmatic
                         ? ", timed with programmatic launch, which this dispatcher does not use"
                         : ", timed without programmatic launch, which this dispatcher uses") +
                    ")";
    return s;
  };
  // Within each rule (the exact problem, then the nearest shapes), records of the current
  // template source come before older ones over all of the rule's tasks, nearest first.
  auto attempt = [&](const std::vector<std::pair<double, const Task*>>& group, bool other_device)
      -> std::optional<Selection> {
    for (const bool exact_rule : {true, false})
      for (const bool current : {true, false})
        for (const auto& [distance, task] : group)
          if ((task->problem_key == key) == exact_rule)
            if (auto s = try_one(distance, *task, current, other_device)) return s;
    return std::nullopt;
  };

  if (auto s = attempt(ordered([&](const Task& t) { return t.device_key == dk; }), false)) return *s;
  if (options.allow_same_arch) {
    auto same_cc = [&](const Task& t) {
      return t.device_key != dk && t.cc_major == device.cc_major && t.cc_minor == device.cc_minor;
    };
    if (auto s = attempt(ordered(same_cc), true)) return *s;
  }

  Selection s;
  s.reason = SelectionReason::default_config;
  std::string why;
  Config fallback = space.default_config();
  if (space.valid(fallback) && tmpl.can_implement(problem, fallback, &why)) {
    s.config = fallback;
    s.explanation = "no usable record: the template's default config";
    return s;
  }
  // The default cannot run this problem: the first valid config of the space that can, among
  // its first kLastResortConfigs points (index order; a space of more than 2^63 points has no
  // size, and a scan of it none either).
  Index limit = Dispatcher::kLastResortConfigs;
  try {
    limit = std::min<Index>(space.size(), Dispatcher::kLastResortConfigs);
  } catch (const Error&) {
  }
  for (Index i = 0; i < limit; ++i) {
    Config c = space.at(i);
    if (space.valid(c) && tmpl.can_implement(problem, c)) {
      s.config = c;
      s.explanation = "no usable record and the default config cannot implement the problem (" +
                      why + "): the first valid config of the space";
      return s;
    }
  }
  throw Error(ErrorCode::unsupported, "template " + tmpl.name() + " has no config that can " +
                                          "implement " + key + " on " + dk +
                                          " (no record, the default cannot, and none of the first " +
                                          std::to_string(limit) + " points of its space can)");
}

Selection Dispatcher::Impl::select(const KernelTemplate& tmpl, const Problem& problem,
                                   const Device& device) const {
  // Remembered by the device's limits too, which spaces are built against: two devices of
  // one key (a queried one, and Device::from_key's, which has none) may differ in them.
  std::string key = tmpl.name() + '\x1f' + problem.key() + '\x1f' + device_key_of(device) +
                    '\x1f' + std::to_string(device.max_threads_per_block) + ',' +
                    std::to_string(device.smem_per_block) + ',' +
                    std::to_string(device.smem_per_block_optin) + ',' +
                    std::to_string(device.smem_per_sm) + ',' +
                    std::to_string(device.regs_per_block) + ',' +
                    std::to_string(device.max_threads_per_sm) + device.arch_suffix;
  {
    std::shared_lock lock(memo_mutex);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
  }
  Selection s = compute(tmpl, problem, device);
  spdlog::debug("dispatch: {} {} on {}: {} config {} ({})", tmpl.name(), problem.key(),
                device_key_of(device), to_string(s.reason), s.config.str(), s.explanation);
  std::unique_lock lock(memo_mutex);
  // Bounded: a program whose shapes keep changing drops an eighth of the memo (in the map's
  // order, unrelated to use) when it is full, instead of growing; a working set just past the
  // bound still finds most of its selections.
  if (memo.size() >= Dispatcher::kRememberedSelections) {
    auto it = memo.begin();
    for (std::size_t k = 0; k < Dispatcher::kRememberedSelections / 8 && it != memo.end(); ++k)
      it = memo.erase(it);
  }
  memo.emplace(std::move(key), s);
  return s;
}

std::shared_ptr<Prepared> Dispatcher::Impl::prepare(const std::string& template_name,
                                                    const Problem& problem, int ordinal) {
  auto devit = devices.find(ordinal);
  if (devit == devices.end()) devit = devices.emplace(ordinal, query_device(ordinal)).first;
  const Device& device = devit->second;
  auto tmpl = find_template(template_name);
  auto p = std::make_shared<Prepared>();
  p->selection = select(*tmpl, problem, device);
  if (!builder) {
    BuilderOptions bo;
    bo.threads = 1;
    std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
    bo.cache_dir = dir == "none" ? "" : dir;
    try {
      builder = std::make_unique<Builder>(bo);
    } catch (const Error& e) {
      // The default folder is a convenience (a read-only HOME must not stop a deployed
      // program); a folder the caller named is not.
      if (!options.cache_dir.empty() || e.code() != ErrorCode::io_error) throw;
      spdlog::warn("dispatch: no disk cubin cache ({}); compiling in memory only", e.what());
      bo.cache_dir.clear();
      builder = std::make_unique<Builder>(bo);
    }
  }
  BuildResult built = builder->build(*tmpl, problem, p->selection.config, device);
  if (!built.ok) {
    throw Error(ErrorCode::compile_error, "dispatch: compiling " + template_name + " config " +
                                              p->selection.config.str() + " for " + problem.key() +
                                              " failed:\n" + built.log);
  }
  if (built.cache == BuildResult::Cache::miss) ++compiles;
  auto& module = modules[built.key];
  if (!module) module = std::make_shared<detail::CudaModule>(*built.cubin);
  p->module = module;
  p->plan = tmpl->launch(problem, p->selection.config, device);
  try {
    detail::check_plan_signatures(*module, p->plan);
  } catch (const Error& e) {
    throw Error(e.code(), "dispatch: " + template_name + " config " + p->selection.config.str() +
                              " for " + problem.key() + ": " + e.what());
  }
  p->buffers = tmpl->workload(problem)->buffers();
  p->alignment = tmpl->buffer_alignment();
  for (const auto& spec : p->plan.scratch)
    p->scratch.emplace_back(spec.elements * dtype_size(spec.dtype) + spec.offset_bytes);
  return p;
}

Dispatcher::Dispatcher(const std::string& path, DispatcherOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->options = std::move(options);
  detail::require_read_permission(path, "dispatch: tuning log");
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec))
    throw Error(ErrorCode::not_found, "dispatch: tuning log '" + path + "' does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorCode::invalid_argument,
                "dispatch: tuning log '" + path + "' is a folder; expected an SQLite log or a "
                "JSON-lines export");
  // The format is told by content and then read: a pipe or a process substitution such as
  // <(zcat log.jsonl.gz) is read once into a temporary copy first, as imports are ("./-": a
  // file of that name, not standard input).
  const detail::RereadableInput input(path == "-" ? "./-" : path, "dispatch: tuning log");
  try {
    impl_->index_file(input.path());
  } catch (const Error& e) {  // messages name the log given, not its temporary copy
    throw input.naming_input(e);
  }
  spdlog::debug("dispatch: indexed {} ok records of '{}'", impl_->indexed, path);
}

void Dispatcher::Impl::index_file(const std::string& file) {
  // An SQLite tuning log, else a JSON-lines export (whose reader names what a file of neither
  // kind lacks), as `ktune tune --replay` decides.
  if (!sqlite::is_sqlite_file(file)) {
    index(
        [&](const Impl::RecordSink& sink) {
          // Streamed; a config text that does not parse is kept, so that selection rejects
          // that record by name as it does an SQLite log's, instead of refusing the file.
          try {
            jsonl::for_each_in_file(file, sink, jsonl::ConfigText::verbatim);
          } catch (const Error&) {  // a T4 file or a cache: say so, not a JSON parser's message
            refuse_foreign_log(file, "dispatch: tuning log");
            throw;
          }
        },
        true);
    return;
  }
  TuningLog log(file, LogMode::read_only);  // every trial: failed ones rule their configs out
  index([&](const Impl::RecordSink& sink) { log.for_each({}, sink); }, false);
}

Dispatcher::~Dispatcher() = default;

Selection Dispatcher::select(const std::string& template_name, const Problem& problem,
                             const Device& device) const {
  return impl_->select(*find_template(template_name), problem, device);
}

Selection Dispatcher::select(const KernelTemplate& tmpl, const Problem& problem,
                             const Device& device) const {
  return impl_->select(tmpl, problem, device);
}

namespace {

// A problem's first launch compiles, loads a module and allocates scratch: none of it can be
// recorded into a CUDA graph, and in a global-mode capture the allocation would invalidate the
// caller's capture. Refused while `stream` is capturing, before anything touches it.
void refuse_cold_launch_in_capture(cudaStream_t stream, const std::string& template_name,
                                   const Problem& problem) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    cudaGetLastError();  // e.g. the legacy stream while another stream captures: not ours to judge
    return;
  }
  if (capture == cudaStreamCaptureStatusNone) return;
  throw Error(ErrorCode::invalid_argument,
              "dispatch: " + template_name + " " + problem.key() +
                  ": the first launch of a problem compiles, loads and allocates, which a CUDA "
                  "graph capture cannot record; launch it once before capturing (its later "
                  "launches are captured like any kernel)");
}

}  // namespace

void Dispatcher::launch(const std::string& template_name, const Problem& problem,
                        const std::vector<void*>& buffers, CUstream_st* stream) {
  int ordinal = -1;
  if (cudaGetDevice(&ordinal) != cudaSuccess) {
    throw Error(ErrorCode::no_device,
                "dispatch: " + cuda_unavailable_reason().value_or("no current CUDA device"));
  }
  std::string key = template_name + '\x1f' + problem.key() + '\x1f' + std::to_string(ordinal);
  std::shared_ptr<Prepared> p;
  {
    std::shared_lock lock(impl_->prepared_mutex);
    auto it = impl_->prepared.find(key);
    if (it != impl_->prepared.end()) p = it->second;
  }
  if (!p) {
    std::lock_guard cold(impl_->prepare_mutex);
    {
      std::shared_lock lock(impl_->prepared_mutex);
      auto it = impl_->prepared.find(key);
      if (it != impl_->prepared.end()) p = it->second;
    }
    if (!p) {
      refuse_cold_launch_in_capture(stream, template_name, problem);
      p = impl_->prepare(template_name, problem, ordinal);
      std::unique_lock lock(impl_->prepared_mutex);
      impl_->prepared.emplace(key, p);
    }
  }
  detail::check_caller_buffers([&] { return "dispatch: " + template_name + " " + problem.key(); },
                               p->buffers, buffers, p->alignment);
  std::vector<detail::DeviceBuffer> all;
  all.reserve(buffers.size() + p->scratch.size());
  for (std::size_t i = 0; i < buffers.size(); ++i)
    all.push_back({buffers[i], p->buffers[i].elements * dtype_size(p->buffers[i].dtype)});
  for (std::size_t i = 0; i < p->scratch.size(); ++i) {
    auto* base = static_cast<char*>(p->scratch[i].get());
    all.push_back({base + p->plan.scratch[i].offset_bytes,
                   p->scratch[i].bytes() - p->plan.scratch[i].offset_bytes});
  }
  auto status = detail::run_launch_plan(*p->module, p->plan, all, stream,
                                        impl_->options.programmatic_launch);
  if (!status.ok()) throw Error(ErrorCode::cuda_error, "dispatch: " + status.message);
}

std::size_t Dispatcher::release_launches() {
  std::lock_guard cold(impl_->prepare_mutex);
  std::unique_lock lock(impl_->prepared_mutex);
  const std::size_t released = impl_->prepared.size();
  impl_->prepared.clear();  // scratch and plans; modules once no launch holds them
  impl_->modules.clear();
  return released;
}

std::size_t Dispatcher::prepared_launches() const {
  std::shared_lock lock(impl_->prepared_mutex);
  return impl_->prepared.size();
}

std::vector<std::string> Dispatcher::rejections() const {
  std::lock_guard lock(impl_->rejection_mutex);
  return impl_->rejections;
}

std::size_t Dispatcher::indexed_records() const { return impl_->indexed; }

std::size_t Dispatcher::remembered_selections() const {
  std::shared_lock lock(impl_->memo_mutex);
  return impl_->memo.size();
}

std::uint64_t Dispatcher::compiles() const {
  std::lock_guard lock(impl_->prepare_mutex);
  return impl_->compiles;
}

}  // namespace ktune
