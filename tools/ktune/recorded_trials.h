// Recorded measurements as a stand-in for the GPU (`ktune tune --replay FILE`): reads a ktune
// database or JSON-lines export and, for one (template, problem), builds the device the data
// was measured on, the template's space narrowed to the recorded configs, and a
// ReplayMeasurer that answers from the records.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/device.h"
#include "ktune/log.h"
#include "ktune/replay.h"
#include "ktune/template.h"

namespace ktune::cli {

/// Recorded trials grouped by task (template, problem key), in file order within a task, so
/// that each of a plan's replays reads only its own task's records.
struct RecordedTrials {
  std::map<std::pair<std::string, std::string>, std::vector<TrialRecord>> by_task;
};

/// Every record of a ktune SQLite database or a ktune JSON-lines file (told apart by content).
/// Throws Error(not_found) for a missing file, Error(database_error/parse_error) otherwise.
RecordedTrials read_recorded_trials(const std::string& path);

/// What replaying one task needs.
struct ReplayTask {
  Device device;                             ///< the device of the records used
  SearchSpace space;                         ///< template space restricted to recorded configs
  std::unique_ptr<ReplayMeasurer> measurer;  ///< answers every config of `space`
  std::size_t records = 0;                   ///< distinct recorded configs used
  std::string origin;                        ///< the file the records come from
  /// Config text -> template source hash of the record each config replays, so that what is
  /// logged from a replay keeps the source it was measured with.
  std::map<std::string, std::string> source_of;
  /// The ok records it replays were timed with programmatic launch (programmatic_form); they
  /// are all of one way.
  bool programmatic = false;
};

/// Builds the replay of `tmpl` on `problem` from `recorded` (the device with the most records
/// of the task is used). Throws Error(not_found) naming `origin` and the task when the data
/// has no usable record of it, listing the tasks it does have. Each config replays the
/// record `ktune best` ranks it by, with `programmatic_launch` as its --programmatic-launch
/// (trials_ranked_for_launch).
ReplayTask make_replay_task(const RecordedTrials& recorded, const KernelTemplate& tmpl,
                            const Problem& problem, const std::string& origin,
                            bool programmatic_launch);

/// The config a record's text names in `space` (its parameter order), or nullopt when it is
/// not a valid config there. Parameters the template gained after the recording take their
/// defaults (a new parameter's default keeps the kernel as it was); an unknown parameter or a
/// value outside its domain drops the record.
std::optional<Config> config_in_space(const SearchSpace& space, const std::string& text);

/// A Device for a record's device fields (limits of an offline part of that architecture).
Device device_of_record(const Device& recorded);

}  // namespace ktune::cli
