// Tuner: the loop that ties a Searcher, a Measurer and a trial sink together. It measures the
// template's default config first (the speed-up reference), then any starting configs it was
// given (a warm start), asks the searcher for batches, measures them, feeds every trial back
// (failures included) and records it, stops on a budget (trials, wall time, no improvement),
// resumes from trials already measured, reports progress, and at the end re-measures the best
// few interleaved to pick a winner that resists noise.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/space.h"
#include "ktune/trial.h"

namespace ktune {

/// Where the tuner records every trial (the tuning log implements it; tests collect).
class TrialSink {
 public:
  virtual ~TrialSink() = default;
  /// Records one trial; called in measurement order from the tuning thread.
  virtual void record(const Trial& trial) = 0;
};

/// A snapshot of a tuning run, passed to the progress callback after every batch.
struct TuneProgress {
  std::size_t done = 0;       ///< trials so far (resumed ones included)
  std::size_t budget = 0;     ///< trial budget (max_trials, else valid configs), 0 unknown
  double elapsed_s = 0;       ///< wall time of this run
  double eta_s = -1;          ///< estimated seconds left, -1 unknown
  std::size_t failures = 0;   ///< trials that are not ok
  double best_ms = 0;         ///< best median so far, 0 none
  std::string best_config;    ///< its config text
  double default_ms = 0;      ///< median of the default config, 0 unknown
  double speedup = 0;         ///< default_ms / best_ms, 0 unknown
};

/// Tuning budgets and settings.
struct TunerOptions {
  std::size_t max_trials = 100;  ///< stop after this many trials in total; 0 = no limit
  double max_seconds = 0;        ///< stop after this much wall time; 0 = no limit
  std::size_t patience = 0;      ///< stop after this many trials without improvement; 0 = off
  double min_improvement = 0;    ///< relative gain that counts as an improvement for patience
  std::size_t batch = 8;         ///< configs asked from the searcher at once
  std::uint64_t seed = 0;        ///< searcher seed
  bool measure_default = true;   ///< measure the default config first
  /// Finalists re-measured at the end; 0 = no re-measurement. A config outside them whose
  /// one search trial would rank before the winner is re-measured too (at most top_k more).
  std::size_t top_k = 5;
  int final_rounds = 3;          ///< interleaved rounds of the re-measurement
  bool record_final = true;      ///< also record the re-measurement trials in the sink
  std::function<void(const TuneProgress&)> progress;  ///< called after every batch
};

/// What a finished tuning run found.
struct TuneResult {
  std::vector<Trial> trials;            ///< trials measured by this run (default included)
  std::optional<Trial> default_trial;   ///< the default config's trial
  std::optional<Trial> best;            ///< the winner (re-measured samples when re-measured)
  /// Re-measured finalists, fastest first, each with its rounds' pooled samples and, as its
  /// median, its typical trial over the search trial and the rounds (the lower median of
  /// those trials' medians, as the log judges a config: config_representatives()).
  std::vector<Trial> finalists;
  bool top_two_within_noise = false;    ///< the best two finalists cannot be told apart
  double top_two_difference = 0;        ///< |relative difference| of the best two's round medians
  std::string stop_reason;              ///< max_trials, max_seconds, patience or exhausted
  std::map<Status, std::size_t> status_counts;  ///< trials of this run per status
  double elapsed_s = 0;                 ///< wall time of the run
  /// Configs of start_with() measured by this run (those the budget left room for, not
  /// already measured or resumed).
  std::size_t started = 0;
  /// default median / best median, 0 when either is unknown.
  double speedup() const;
};

/// The tuning loop.
class Tuner {
 public:
  /// A tuner over `space`; the searcher and measurer must outlive it.
  Tuner(SearchSpace space, Searcher& searcher, Measurer& measurer, TunerOptions options = {});
  /// Records every trial into `sink` (not owned; nullptr = none).
  void set_sink(TrialSink* sink) { sink_ = sink; }
  /// Trials measured earlier for this task (e.g. from the tuning log): they are fed to the
  /// searcher first, count towards the budget, and are never measured again. An ok one whose
  /// median is not a finite time > 0 is taken as an invalid trial.
  void resume_from(std::vector<Trial> previous) { previous_ = std::move(previous); }
  /// Configs measured right after the default and before the searcher's first batch, within
  /// the budget, and observed by the searcher like its own (e.g. nearest_shape_configs(): the
  /// winners of nearby shapes). Configs already measured or resumed, repeated, or not valid
  /// in the space are skipped.
  void start_with(std::vector<Config> configs) { start_with_ = std::move(configs); }
  /// Runs until a budget is spent or the searcher is done.
  TuneResult run();

 private:
  SearchSpace space_;
  Searcher& searcher_;
  Measurer& measurer_;
  TunerOptions options_;
  TrialSink* sink_ = nullptr;
  std::vector<Trial> previous_;
  std::vector<Config> start_with_;
};

}  // namespace ktune
