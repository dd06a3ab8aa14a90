// Dispatcher: the deploy-time call a program links against. It opens a tuning log (SQLite
// database, read-only) or an exported JSON-lines file, picks the config to use for a
// (template, problem, device) by documented rules, checks every value from the log against
// the template's declared space before anything is compiled, compiles the chosen config once
// (memory and disk cubin cache) and launches it. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/device.h"
#include "ktune/problem.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace ktune {

class KernelTemplate;

/// Why a config was selected, in the order the rules are tried.
enum class SelectionReason {
  exact,           ///< the best ok record of this problem on this device
  nearest_shape,   ///< the nearest tuned shape of the same template on this device
  same_arch,       ///< a record from another device of the same compute capability (flagged)
  default_config,  ///< nothing usable in the log: the template's default config
};

/// Stable name ("exact", "nearest_shape", "same_arch", "default_config").
const char* to_string(SelectionReason reason);

/// The outcome of select(): what to run and why.
struct Selection {
  Config config;                ///< validated against the space of the requested problem
  SelectionReason reason = SelectionReason::default_config;  ///< which rule chose it
  std::string explanation;      ///< one readable sentence naming the record used
  std::string source_problem;   ///< problem key of the record used ("" for the default)
  std::string source_device;    ///< device key of the record used ("" for the default)
  double median_ms = 0;         ///< recorded median of that record (0 for the default)
  double distance = 0;          ///< shape distance to the record's problem (0 when exact)
  /// True when the record was measured with another version of the template's source. Within
  /// the rule that chose it, records of the current source come first; the rules keep their
  /// order (an older-source exact record is chosen before a current-source one of another
  /// device).
  bool older_source = false;
  /// True when the record was timed the other way than this dispatcher launches the config
  /// (with programmatic launch when DispatcherOptions::programmatic_launch is off, or without
  /// it when the option is on and a kernel of the config waits for the previous grid): its
  /// task holds no ok trial timed this dispatcher's way. A task's configs are ranked by the
  /// trials of one way only (trials_ranked_for_launch in ktune/log.h).
  bool other_launch = false;
  /// True when the config was tuned on another device (reason same_arch).
  bool other_device() const { return reason == SelectionReason::same_arch; }
};

/// Dispatcher settings.
struct DispatcherOptions {
  /// On-disk cubin cache; "" = $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune/cubins, else
  /// $HOME/.cache/ktune/cubins. "none" disables the disk cache. When the default folder
  /// cannot be created (a read-only HOME), the dispatcher warns and compiles in memory only;
  /// a folder given here that cannot be created is an Error(io_error).
  std::string cache_dir;
  /// Use the nearest tuned shape when the exact problem was not tuned.
  bool allow_nearest_shape = true;
  /// Use records of other devices with the same compute capability.
  bool allow_same_arch = true;
  /// A record whose config is not in the template's space (unknown parameter, value outside
  /// its domain, text where a number belongs) throws Error(invalid_argument) naming it when
  /// true (text that does not parse: when the log is opened; a config outside the space: when
  /// its task is first consulted, every record of the task); when false it is skipped with a
  /// warning and listed by rejections().
  bool strict = false;
  /// Launch the kernels that allow it (LaunchStep::grid_dependency_wait: the memory-bound
  /// templates' kernels) with programmatic stream serialization (programmatic dependent
  /// launch): their blocks may be scheduled while the previous kernel on the stream drains,
  /// and each waits (griddepcontrol.wait) for that kernel to complete and its writes to be
  /// visible before touching memory, so results are those of an ordinary launch. It takes
  /// the stream's per-launch gap off short kernels (docs/deployment.md). Tune with
  /// TimingOptions::programmatic_launch set the same way, so that the log's times are these
  /// launches' times. It also picks which of a task's trials rank its configs: those timed
  /// this way when the task has any (Selection::other_launch otherwise).
  bool programmatic_launch = false;
};

/// Deploy-time selection and launch of tuned kernels.
class Dispatcher {
 public:
  /// Opens a SQLite tuning log (read-only) or a ktune JSON-lines export (by content) and
  /// indexes the best ok configs per (template, problem, device). Throws like TuningLog or
  /// the JSON-lines reader.
  explicit Dispatcher(const std::string& path, DispatcherOptions options = {});
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  /// Most selections remembered at once: when full, an eighth of them is dropped, so that a
  /// program whose shapes keep changing does not grow without bound.
  static constexpr std::size_t kRememberedSelections = 4096;
  /// Points of a space (index order) the last-resort rule looks through for a valid config
  /// that can implement the problem when the default cannot and no record can be used.
  static constexpr std::uint64_t kLastResortConfigs = std::uint64_t{1} << 20;

  /// The config for a problem on a device (rules in docs/deployment.md). Results are
  /// memoized (up to kRememberedSelections), so a repeated call is a hash lookup. Throws Error(unknown_name) for an
  /// unregistered template, the template's error for an invalid problem, and
  /// Error(unsupported) when no config can implement the problem (no record can, the default
  /// cannot, nor any of the first kLastResortConfigs points of the space).
  Selection select(const std::string& template_name, const Problem& problem,
                   const Device& device) const;
  /// Same, for a template object (registered or not). Selections are remembered by template
  /// name, as the log identifies templates: give different templates different names.
  Selection select(const KernelTemplate& tmpl, const Problem& problem, const Device& device) const;

  /// Selects for the current CUDA device, compiles the config once (cached), and enqueues its
  /// launch plan on `stream`. Each problem launched keeps its prepared launch (module, plan,
  /// device scratch) until release_launches() or the Dispatcher's end, since queued work and
  /// captured graphs use it. `buffers` are device pointers to the workload buffers of the
  /// template for this problem, in order (KernelTemplate::workload(problem)->buffers());
  /// scratch the plan needs is owned by the dispatcher. Throws Error(no_device),
  /// Error(compile_error) with the NVRTC log, Error(cuda_error) for a failed launch, and
  /// Error(invalid_argument) for a wrong number of buffers, or for a buffer of at least one
  /// element whose pointer is null or not aligned to the template's buffer_alignment() (16
  /// bytes for the built-in templates) or to its element size, whichever is larger (a
  /// workload buffer tuned at an offset needs only the alignment of that offset); nothing is
  /// launched then. Warm launches (a problem launched before on this device) can be captured
  /// into a CUDA graph on `stream`; the first launch of a problem compiles, loads and
  /// allocates, which a capture cannot record, so during a capture it throws
  /// Error(invalid_argument) saying so, before touching the stream (the capture stays valid).
  void launch(const std::string& template_name, const Problem& problem,
              const std::vector<void*>& buffers, CUstream_st* stream = nullptr);

  /// Frees every prepared launch (loaded modules, plans, the plans' device scratch), so that a
  /// program whose shapes keep changing can bound what launch() keeps; returns how many were
  /// freed. Call it only when no work queued by launch() is pending (synchronize the streams
  /// used) and no captured graph holding such a launch will run again, and not while another
  /// thread is inside launch() on this Dispatcher. A later launch prepares again from the
  /// cubin caches (in memory, and on disk unless disabled): nothing is compiled twice.
  std::size_t release_launches();
  /// Prepared launches kept now (one per template, problem and device launched since the last
  /// release_launches()).
  std::size_t prepared_launches() const;

  /// Records skipped because their config was not in the template's space, one message each
  /// naming the record (strict = false).
  std::vector<std::string> rejections() const;
  /// Number of ok records indexed at open.
  std::size_t indexed_records() const;
  /// Selections remembered now (at most kRememberedSelections).
  std::size_t remembered_selections() const;
  /// Compiles done by launch() (0 once everything is cached).
  std::uint64_t compiles() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
