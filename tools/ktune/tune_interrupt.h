// Ctrl-C during `ktune tune`: the first one lets the batch in flight finish and be recorded,
// then ends the run (exit 130, everything measured kept); a second one ends the program at
// once. The pieces that stop the Tuner's searcher and measurer and keep trials of workers the
// terminal's SIGINT killed out of the log (they measured nothing; resuming measures them).
// `ktune import` stops on the same flag (ImportOptions::poll), adding nothing.
#pragma once

#include <signal.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ktune/log_recorder.h"
#include "ktune/measure.h"
#include "ktune/searcher.h"
#include "ktune/tuner.h"

namespace ktune::cli {

/// True once Ctrl-C was pressed while a StopOnSigint is alive.
bool stop_requested();

/// Installs the SIGINT handler for the lifetime of a tuning command.
class StopOnSigint {
 public:
  StopOnSigint();
  ~StopOnSigint();
  StopOnSigint(const StopOnSigint&) = delete;
  StopOnSigint& operator=(const StopOnSigint&) = delete;

 private:
  struct sigaction previous_ {};
};

/// Thrown to leave the Tuner once Ctrl-C was pressed and the batch in flight is recorded.
struct Interrupted {};

/// A searcher that proposes nothing more once Ctrl-C was pressed.
class StoppableSearcher final : public Searcher {
 public:
  explicit StoppableSearcher(Searcher& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  void reset(const SearchSpace& space, std::uint64_t seed) override { inner_.reset(space, seed); }
  std::vector<Config> propose(std::size_t max_batch) override {
    return stop_requested() ? std::vector<Config>{} : inner_.propose(max_batch);
  }
  void observe(const std::vector<Trial>& trials) override { inner_.observe(trials); }

 private:
  Searcher& inner_;
};

/// A measurer that refuses new work (throws Interrupted) once Ctrl-C was pressed.
class StoppableMeasurer final : public Measurer {
 public:
  explicit StoppableMeasurer(Measurer& inner) : inner_(inner) {}
  std::vector<Trial> measure(const std::vector<Config>& batch) override {
    if (stop_requested()) throw Interrupted{};
    return inner_.measure(batch);
  }

 private:
  Measurer& inner_;
};

/// The log's recorder, less a worker that the terminal's Ctrl-C killed: it did not measure its
/// candidate, so the trial is left out and resuming measures the candidate.
class InterruptAwareSink final : public TrialSink {
 public:
  explicit InterruptAwareSink(LogRecorder& recorder) : recorder_(recorder) {}
  void record(const Trial& trial) override {
    if (stop_requested() && !trial.ok() && trial.message.find("SIGINT") != std::string::npos) return;
    recorder_.record(trial);
  }

 private:
  LogRecorder& recorder_;
};

}  // namespace ktune::cli
