// `ktune report`: writes a self-contained HTML page (inline SVG, no network needed) with the
// tuned-vs-default-vs-vendor table, convergence curves, trial time distributions and failure
// counts of a tuning log.
#include <cstdio>
#include <fstream>
#include <memory>

#include "atomic_file.h"
#include "commands.h"
#include "ktune/user_template.h"
#include "html_report.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "summary_output.h"

namespace ktune::cli {

void add_report_command(CLI::App& app) {
  auto db = std::make_shared<std::string>("ktune.db");
  auto out = std::make_shared<std::string>("report.html");
  auto title = std::make_shared<std::string>("ktune tuning report");
  auto programmatic = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("report", "Write an HTML report (plots inline) of a tuning log");
  cmd->add_option("--db", *db, "Tuning log (SQLite)");
  cmd->add_option("-o,--out", *out, "HTML file to write");
  cmd->add_option("--title", *title, "Page title");
  cmd->add_flag("--programmatic-launch", *programmatic,
                "Rank each task's table row by its trials timed with programmatic launch (when it "
                "has any), as `ktune best --programmatic-launch` does");
  auto spaces = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--space", *spaces,
                  "User template documents (T1 JSON) whose tasks the log holds (repeatable)");
  cmd->callback([db, out, title, spaces, programmatic] {
    for (const auto& s : *spaces) register_user_template({s, ""});
    TuningLog log(*db, LogMode::read_only);
    check_output_path(log, *out);
    const std::string html = render_html_report(log, *title, *programmatic);
    // Whole or not at all, with the reason when it cannot be written.
    std::FILE* summary = summary_stream(*out);  // /dev/stdout: not after </html>
    detail::write_file_atomically(*out, [&](std::ostream& file) { file << html; });
    std::fprintf(summary, "wrote %s (%zu bytes)\n", out->c_str(), html.size());
  });
}

}  // namespace ktune::cli
