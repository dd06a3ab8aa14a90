// Recording a tuning run into a tuning log, and resuming one from it: the TrialSink that
// appends every trial the Tuner reports (stamped with template, problem, device and run), and
// the trials a new run of the same task resumes from (one per config, by the log's ranking
// rule), so that `ktune tune` and a program tuning through the library record and resume alike.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/log.h"
#include "ktune/problem.h"
#include "ktune/space.h"
#include "ktune/template.h"
#include "ktune/tuner.h"

namespace ktune {

/// Appends every trial to a TuningLog, stamped with template, problem, device, run id and,
/// when the trial has none, the time it was recorded.
class LogRecorder : public TrialSink {
 public:
  /// How trials are stamped beyond the task.
  struct Options {
    std::string run_id;  ///< the run every trial belongs to; "" = a new one (new_run_id())
    /// Config text -> the template source hash the config's trial was measured with, where it
    /// is not the template's current source (trials replayed from older records).
    std::map<std::string, std::string> source_of;
    /// Put before each trial's message ("replayed from FILE"), so that a trial that was not
    /// measured now never passes for one that was; "" = none.
    std::string note;
  };

  /// Records trials of `tmpl` on `problem` and `device` into `log`, which must outlive the
  /// recorder (the template is shared; problem and device are copied).
  LogRecorder(TuningLog& log, std::shared_ptr<const KernelTemplate> tmpl, const Problem& problem,
              const Device& device, Options options = {});

  /// Appends `trial` (throws like TuningLog::append).
  void record(const Trial& trial) override;
  /// Trials appended so far.
  std::size_t recorded() const { return recorded_; }
  /// The run id of every appended trial.
  const std::string& run_id() const { return options_.run_id; }

 private:
  TuningLog& log_;
  std::shared_ptr<const KernelTemplate> tmpl_;
  Problem problem_;
  Device device_;
  Options options_;
  std::size_t recorded_ = 0;
};

/// The trials of this task (template, problem, device) already in `log` for
/// Tuner::resume_from, one per config of `space`: only trials of the template source a new
/// run would record for the config (the current source, or `source_of`'s, as LogRecorder
/// stamps it), and of configs `space` holds and finds valid. A config measured several times
/// (the final rounds re-measure the finalists) resumes as its typical trial, the rule of
/// `ktune best` and the Dispatcher, so that a resumed run names the winner they would; a
/// config that failed any of its trials (which they never name) resumes as its first failed
/// trial. In order of first appearance. Only ok trials timed the way the new run times
/// (`programmatic_launch`: with programmatic launch or without, programmatic_form) resume, so
/// that a run never ranks configs across the two ways; failures resume either way. A config
/// whose ok trials were all timed the other way does not resume (the run measures it again,
/// its own way); `timed_other_way`, when given, receives how many such configs there are.
std::vector<Trial> trials_to_resume(const TuningLog& log, const KernelTemplate& tmpl,
                                    const Problem& problem, const Device& device,
                                    const SearchSpace& space,
                                    const std::map<std::string, std::string>& source_of = {},
                                    bool programmatic_launch = false,
                                    std::size_t* timed_other_way = nullptr);

}  // namespace ktune
