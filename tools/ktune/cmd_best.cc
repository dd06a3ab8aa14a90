// `ktune best`: the best config per (template, problem, device) of a tuning log, with its
// speed-up over the template's default config and its ratio to the vendor reference, as an
// aligned table or as JSON.
#include <cstdio>
#include <memory>

#include "best_table.h"
#include "commands.h"
#include "ktune/log.h"

namespace ktune::cli {

void add_best_command(CLI::App& app) {
  auto db = std::make_shared<std::string>("ktune.db");
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "best", "Best config per problem and device, with speed-up over the default and vs vendor");
  cmd->add_option("--db", *db, "Tuning log (SQLite)");
  cmd->add_flag("--json", *json, "Print a JSON array instead of a table");
  cmd->callback([db, json] {
    TuningLog log(*db, LogMode::read_only);
    const auto rows = best_rows(log);
    if (*json) {
      std::printf("%s\n", best_rows_json(rows).dump(2).c_str());
      return;
    }
    if (rows.empty()) {
      std::printf("%s holds no successful trial yet\n", db->c_str());
      return;
    }
    std::printf("%s", best_rows_text(rows).c_str());
    std::printf("speedup: default config median / best median (default measured in the best's "
                "run when possible); vs vendor: tuned speed / vendor speed (copy: bandwidth "
                "relative to the best copy in the log), '-' when not measured\n");
  });
}

}  // namespace ktune::cli
