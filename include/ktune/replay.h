// Replay: measuring from recorded data instead of a GPU. ReplayMeasurer answers each config
// from a record (the library reads Kernel Tuner cache files; the command line also builds one
// from a ktune log's trials), so every searcher can be tested and benchmarked on a machine
// without a GPU; replay_search runs a searcher against it and returns the best-so-far curve.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ktune/measure.h"
#include "ktune/searcher.h"

namespace ktune {

/// Which recorded number becomes the trial's objective (median_ms).
enum class ReplayObjective {
  recorded,           ///< the record's objective time (Kernel Tuner's "time": mean of samples)
  median_of_samples,  ///< the median of the recorded samples (falls back to the recorded time)
};

/// One recorded outcome of a config.
struct RecordedResult {
  Status status = Status::ok;    ///< ok, or how it failed
  double time_ms = 0;            ///< the objective time when ok
  std::vector<double> times_ms;  ///< recorded samples (may be empty)
  std::string message;           ///< error text of a failed record
  LaunchForm launch = LaunchForm::unknown;  ///< how the recorded runs were launched
};

/// A Measurer answering from recorded measurements; counts the evaluations it answers.
class ReplayMeasurer : public Measurer {
 public:
  /// Builds from records of configs of `space`; configs the space rejects are ignored
  /// (counted in ignored()). `origin` names the data in messages. An ok record whose time is
  /// not a positive finite number becomes a runtime_error record; two records of one config
  /// throw Error(invalid_argument) naming it.
  ReplayMeasurer(SearchSpace space, const std::vector<std::pair<Config, RecordedResult>>& records,
                 std::string origin);
  /// Loads a Kernel Tuner cache (.json / .json.gz). Error statuses: "InvalidConfig" -> invalid,
  /// "CompilationFailedConfig" -> compile_error, anything else -> runtime_error. Records that
  /// differ only in parameters the space lacks would give one config two outcomes: refused
  /// with Error(invalid_argument) naming those parameters.
  static ReplayMeasurer from_kernel_tuner_cache(const std::string& path, const SearchSpace& space,
                                                ReplayObjective objective = ReplayObjective::recorded);

  /// One trial per config. A config the space rejects (a value outside a domain, a violated
  /// constraint) is an `invalid` trial; a config of other parameter names (another space's)
  /// throws Error(invalid_argument), and a valid config missing from the record throws
  /// Error(not_found) naming it.
  std::vector<Trial> measure(const std::vector<Config>& batch) override;

  /// Evaluations answered since construction or the last reset_evaluations().
  std::uint64_t evaluations() const { return evaluations_; }
  /// Sets the evaluation count back to zero.
  void reset_evaluations() { evaluations_ = 0; }
  /// The space the records are read in.
  const SearchSpace& space() const { return space_; }
  /// Number of usable records (valid configs of the space).
  std::size_t size() const { return records_.size(); }
  /// Whether `config` (a config of the space) has a usable record.
  bool recorded(const Config& config) const { return records_.count(space_.index_of(config)) > 0; }
  /// The configs of the usable records, in no particular order.
  std::vector<Config> configs() const;
  /// Records skipped because the space rejects their config.
  std::size_t ignored() const { return ignored_; }
  /// Objective time of every usable record; +infinity for failed ones.
  std::vector<double> outcome_times() const;
  /// Fastest recorded time (the optimum); throws Error(not_found) when nothing succeeded.
  double best_time_ms() const;
  /// Where the data came from.
  const std::string& origin() const { return origin_; }

 private:
  /// Adds records (see the constructor); `collision` says why two records may share a config.
  void add(const std::vector<std::pair<Config, RecordedResult>>& records,
           const std::string& collision);

  SearchSpace space_;
  std::unordered_map<Index, RecordedResult> records_;
  std::size_t ignored_ = 0;
  std::uint64_t evaluations_ = 0;
  std::string origin_;
};

/// The paths a T1 space file is looked for at beside a data file, in order: for
/// "dir/name_DEVICE.json.gz", "dir/name_DEVICE.T1.json" and "dir/name.T1.json".
std::vector<std::string> t1_paths_beside(const std::string& data_path);
/// The first of t1_paths_beside() that exists, else nullopt.
std::optional<std::string> find_t1_beside(const std::string& data_path);

/// The trajectory of one replayed search.
struct ReplayRun {
  std::vector<double> best_ms;  ///< best time after each evaluation (+infinity until one succeeds)
  std::size_t failures = 0;     ///< failed evaluations
};

/// Runs `searcher` (reset with `seed`) against `measurer` for up to `budget` evaluations in
/// batches of `batch`, stopping early when the searcher returns an empty batch.
ReplayRun replay_search(Searcher& searcher, ReplayMeasurer& measurer, std::uint64_t seed,
                        std::size_t budget, std::size_t batch = 1);

}  // namespace ktune
