// `ktune best`: the best config per (template, problem, device) of a tuning log, with its
// speed-up over the template's default config and its ratio to the vendor reference, as an
// aligned table or as JSON.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "best_table.h"
#include "commands.h"
#include "ktune/user_template.h"
#include "ktune/log.h"

namespace ktune::cli {

void add_best_command(CLI::App& app) {
  auto db = std::make_shared<std::string>("ktune.db");
  auto json = std::make_shared<bool>(false);
  auto programmatic = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "best", "Best config per problem and device, with speed-up over the default and vs vendor");
  cmd->add_option("--db", *db, "Tuning log (SQLite)");
  cmd->add_flag("--json", *json, "Print a JSON array instead of a table");
  cmd->add_flag("--programmatic-launch", *programmatic,
                "Rank each task by its trials timed with programmatic launch (when it has any), as "
                "a Dispatcher with DispatcherOptions::programmatic_launch does; without it, by "
                "those timed without");
  auto spaces = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--space", *spaces,
                  "User template documents (T1 JSON) whose tasks the log holds (repeatable)");
  cmd->callback([db, json, spaces, programmatic] {
    for (const auto& s : *spaces) register_user_template({s, ""});
    TuningLog log(*db, LogMode::read_only);
    // Tasks whose ok trials name no config this build would launch (another kernel's records
    // under a template's name, parameters since removed): said, not silently left out.
    std::vector<TaskSummary> unusable;
    const auto rows = best_rows(log, &unusable, *programmatic);
    std::string note = unusable_tasks_note(unusable);
    if (const std::string unranked = unranked_trials_note(rows); !unranked.empty())
      note += (note.empty() ? "" : "\n") + unranked;
    if (*json) {
      // Names are stored as given (an import may carry bytes that are not UTF-8): those
      // become U+FFFD, as in exports, instead of failing the whole answer.
      std::printf("%s\n", best_rows_json(rows)
                              .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                              .c_str());
      if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());  // stdout stays the array
      return;
    }
    if (rows.empty()) {
      const bool any_ok = std::any_of(unusable.begin(), unusable.end(),
                                      [](const TaskSummary& t) { return t.ok_trials > 0; });
      std::printf(!any_ok ? "%s holds no successful trial yet\n"
                          : "%s holds no successful trial of a config this build would launch\n",
                  db->c_str());
      if (!note.empty()) std::printf("%s\n", note.c_str());
      return;
    }
    std::printf("%s", best_rows_text(rows).c_str());
    std::printf("best ms / default ms: each config's typical trial (the lower median of its "
                "trials' medians); launch: how the best's timed runs were launched (stream, graph, "
                "programmatic or programmatic_graph; unknown: not recorded, counted as without "
                "programmatic launch; a task's configs are ranked only against trials launched the same way, "
                "without programmatic launch unless --programmatic-launch or the task has no such "
                "trial); speedup: default / "
                "best; vendor ms: the vendor's time (`ktune vendor` records cuBLAS/cuDNN "
                "times; copy: the same bytes at the best copy bandwidth in the log); vs vendor: "
                "tuned speed / vendor speed, '-' when not measured; (older source): measured with "
                "another version of the template's source, none of this build's\n");
    if (!note.empty()) std::printf("%s\n", note.c_str());
  });
}

}  // namespace ktune::cli
