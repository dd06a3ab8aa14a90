// `ktune export`: writes the records of a tuning log (optionally filtered by template,
// problem, device, run or status) to ktune JSON lines or a T4 results file; with --best N,
// only each task's N fastest configs and its default (a compact log for deployment).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <ostream>
#include <streambuf>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "best_table.h"
#include "commands.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/user_template.h"
#include "option_checks.h"
#include "summary_output.h"

namespace ktune::cli {

namespace {

struct ExportArgs {
  std::string db = "ktune.db";
  std::string out;
  std::string format = "jsonl";
  std::string template_name, problem, device, run, status;
  std::size_t best = 0;
  std::vector<std::string> spaces;
};

/// Throws Error(invalid_argument) when a filter would export nothing, before the output is
/// touched (an empty export would silently replace a deployment log): each filter alone must
/// match a record, named with what the log holds instead, and then all of them together.
void check_filter_matches(const TuningLog& log, const LogFilter& filter, const ExportArgs& args) {
  if (log.count() == 0)
    throw Error(ErrorCode::invalid_argument, args.db + " holds no records; nothing to export");
  auto list = [](std::vector<std::string> values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::string out;
    for (std::size_t i = 0; i < values.size() && i < 8; ++i) out += (i ? ", " : "") + values[i];
    if (values.size() > 8) out += ", ... (" + std::to_string(values.size()) + " in all)";
    return out;
  };
  // Each filter alone; one that matches nothing is named with the values the log holds for it
  // (read only then).
  auto check_one = [&](const char* option, std::optional<std::string> LogFilter::*field, auto&& held) {
    if (!(filter.*field)) return;
    LogFilter one;
    one.*field = filter.*field;
    if (log.count(one) > 0) return;
    throw Error(ErrorCode::invalid_argument, std::string(option) + " " + *(filter.*field) + ": no record of " +
                                                 args.db + " has it (the log holds: " + list(held()) +
                                                 "); nothing written");
  };
  auto of_tasks = [&](std::string TaskSummary::*member) {
    return [&log, member] {
      std::vector<std::string> values;
      for (const auto& t : log.tasks()) values.push_back(t.*member);
      return values;
    };
  };
  check_one("--template", &LogFilter::template_name, of_tasks(&TaskSummary::template_name));
  check_one("--problem", &LogFilter::problem_key, of_tasks(&TaskSummary::problem_key));
  check_one("--device", &LogFilter::device_key, of_tasks(&TaskSummary::device_key));
  check_one("--run", &LogFilter::run_id, [&log] {
    std::vector<std::string> runs;
    for (const auto& r : log.runs()) runs.push_back(r.run_id);
    return runs;
  });
  if (filter.status) {
    LogFilter one;
    one.status = filter.status;
    if (log.count(one) == 0) {
      std::vector<std::string> held;
      for (Status s : all_statuses()) {
        one.status = s;
        if (log.count(one) > 0) held.push_back(to_string(s));
      }
      throw Error(ErrorCode::invalid_argument, std::string("--status ") + to_string(*filter.status) +
                                                   ": no record of " + args.db + " has it (the log holds: " +
                                                   list(held) + "); nothing written");
    }
  }
  LogFilter together = filter;
  if (args.best) together.status = Status::ok;  // --best exports ok trials only
  if (log.count(together) > 0) return;
  const bool filtered = filter.template_name || filter.problem_key || filter.device_key ||
                        filter.run_id || filter.status;
  if (!filtered)  // only --best's own status ok matched nothing
    throw Error(ErrorCode::invalid_argument,
                args.db + " holds no ok trial (--best exports ok trials only); nothing written");
  throw Error(ErrorCode::invalid_argument,
              std::string("no record of ") + args.db + " matches the filters together" +
                  (args.best ? " with status ok (all --best exports)" : "") + "; nothing written");
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "Export tuning-log records (JSON lines or T4 results)");
  cmd->add_option("--db", args->db, "tuning log (SQLite)");
  cmd->add_option("output", args->out, "file to write ('-' = standard output)")->required();
  cmd->add_option("--format", args->format, "jsonl or t4")->check(CLI::IsMember({"jsonl", "t4"}));
  cmd->add_option("--template", args->template_name, "only this template")->check(given_name());
  cmd->add_option("--problem", args->problem, "only this problem key")->check(given_name());
  cmd->add_option("--device", args->device, "only this device key (name|sm_XY|SMs)")->check(given_name());
  cmd->add_option("--run", args->run, "only this run id")->check(given_name());
  cmd->add_option("--status", args->status, "only trials with this status (e.g. ok)")->check(given_name());
  cmd->add_option("--best", args->best,
                  "only the ok trials of each task's N fastest configs (those `best` could "
                  "name) and of its default: a compact log for deployment")
      ->check(count_in(1, std::int64_t{1} << 20))
      ->default_str("");  // left out: every record (0 is not a count of configs to keep)
  cmd->add_option("--space", args->spaces,
                  "User template documents (T1 JSON) whose tasks the log holds (repeatable; "
                  "--best keeps their default configs' trials)");
  cmd->callback([args] {
    for (const auto& s : args->spaces) register_user_template({s, ""});
    TuningLog log(args->db, LogMode::read_only);
    LogFilter filter;
    if (!args->template_name.empty()) filter.template_name = args->template_name;
    if (!args->problem.empty()) filter.problem_key = args->problem;
    if (!args->device.empty()) filter.device_key = args->device;
    if (!args->run.empty()) filter.run_id = args->run;
    if (!args->status.empty()) filter.status = status_from_string(args->status);
    if (args->best && filter.status && *filter.status != Status::ok)
      throw Error(ErrorCode::invalid_argument,
                  "--best keeps ok trials only; --status " + args->status + " would export none");
    if (args->out != "-") check_output_path(log, args->out);  // a bad path first: it is the argument's fault
    check_filter_matches(log, filter, *args);
    const LogFormat format = log_format_from_string(args->format);
    const ExportSelection selection = args->best ? best_configs_selection(args->best) : ExportSelection{};
    if (args->best) {
      // --best keeps only configs this build would launch: counted before the output is
      // touched, so that a log of none cannot replace a deployment log with an empty one.
      struct Discard : std::streambuf {
        int overflow(int c) override { return c; }
      } discard;
      std::ostream nowhere(&discard);
      if (export_records(log, nowhere, format, filter, selection) == 0)
        throw Error(ErrorCode::invalid_argument,
                    "--best " + std::to_string(args->best) + ": no ok trial of " + args->db +
                        " (with these filters) names a config this build would launch; nothing written "
                        "(`ktune best` names the tasks)");
    }
    if (args->out == "-") {  // the records on stdout, the summary on stderr
      const auto n = export_records(log, std::cout, format, filter, selection);
      std::cout.flush();
      if (!std::cout)
        throw Error(ErrorCode::io_error, "writing the records to standard output failed");
      std::fprintf(stderr, "exported %zu records to standard output (%s)\n", n,
                   args->format.c_str());
      return;
    }
    std::FILE* summary = summary_stream(args->out);  // /dev/stdout: not into the records
    auto n = export_file(log, args->out, format, filter, selection);
    std::fprintf(summary, "exported %zu records to %s (%s)\n", n, args->out.c_str(), args->format.c_str());
  });
}

}  // namespace ktune::cli
