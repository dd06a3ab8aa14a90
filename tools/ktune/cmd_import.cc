// `ktune import`: adds a ktune JSON-lines file, a T4 results file or a Kernel Tuner cache
// (.json / .json.gz) to a tuning log in one transaction.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "commands.h"
#include "created_log.h"
#include "ktune/device.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/problem.h"
#include "ktune/space.h"
#include "ktune/template.h"
#include "option_checks.h"
#include "input_file.h"
#include "recorded_trials.h"
#include "tune_interrupt.h"

namespace ktune::cli {

namespace {

struct ImportArgs {
  std::string db = "ktune.db";
  std::string input;
  std::string format;
  std::string template_name, problem, device_name, arch, run;
  int sm_count = 0;
};

/// The device of records imported with `--arch`: any sm_XY (or sm_XYa, the same GPU), not only
/// the targets ktune compiles for, since a foreign file may come from any GPU. Throws
/// Error(invalid_argument) naming the option for anything else.
Device imported_arch(const std::string& arch) {
  std::string portable = arch;
  if (portable.size() > 3 && portable.back() == 'a') portable.pop_back();
  try {
    Device d = Device::from_key("imported|" + portable + "|0");
    if (d.cc_major > 0) return d;
  } catch (const Error&) {
  }
  throw Error(ErrorCode::invalid_argument,
              "--arch '" + arch + "': expected sm_ followed by the compute capability, e.g. sm_75, sm_90, sm_100");
}

/// The check of `import --template T` where T is a template this build knows: every record's
/// problem is one T can do and its config names only T's parameters, with values in their
/// domains (another kernel's cache imported under T's name would otherwise pass for T's trials).
/// Constraint violations are left to the records' status: `best` skips such configs.
std::function<void(const TrialRecord&)> template_fit_check(std::shared_ptr<const KernelTemplate> tmpl) {
  auto spaces = std::make_shared<std::map<std::string, SearchSpace>>();
  return [tmpl, spaces](const TrialRecord& r) {
    // A T4 file ktune wrote names each result's own template (its "ktune" object): only the
    // records the option put under T's name are T's to fit.
    if (r.template_name != tmpl->name()) return;
    auto it = spaces->find(r.problem_key + '\x1f' + r.device_key());
    if (it == spaces->end()) {
      // The check is about parameters and the problem, not the GPU's limits: a device of an
      // architecture ktune has no limits for (a Kernel Tuner cache's sm_00) is judged as sm_90.
      Device device = device_of_record(r.device);
      if (device.max_threads_per_block == 0) device = Device::offline("sm_90");
      try {
        it = spaces->emplace(r.problem_key + '\x1f' + r.device_key(),
                             tmpl->space(Problem::from_key(r.problem_key), device))
                 .first;
      } catch (const Error& e) {
        throw Error(ErrorCode::invalid_argument, "problem " + r.problem_key + " is not one template " +
                                                     tmpl->name() + " can do: " + e.what());
      }
    }
    try {
      (void)it->second.with_changes(parse_config_text(r.config_text).values_by_name());
    } catch (const Error& e) {
      throw Error(ErrorCode::invalid_argument, "config '" + r.config_text + "' is not one of template " +
                                                   tmpl->name() + ": " + e.what() +
                                                   " (is --template the kernel this file measured?)");
    }
  };
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import", "Import JSON lines, T4 results or a Kernel Tuner cache into a tuning log");
  cmd->add_option("--db", args->db, "tuning log (SQLite; created when missing)");
  cmd->add_option("input", args->input, "file to import ('-' = standard input)")->required();
  cmd->add_option("--format", args->format, "jsonl, t4 or kernel_tuner (default: detect)")->check(given_name());
  cmd->add_option("--template", args->template_name, "T4/Kernel Tuner: template name")->check(given_name());
  cmd->add_option("--problem", args->problem, "T4/Kernel Tuner: problem key")->check(given_name());
  cmd->add_option("--device-name", args->device_name, "T4/Kernel Tuner: device name")->check(given_name());
  cmd->add_option("--arch", args->arch, "T4/Kernel Tuner: device arch, e.g. sm_90 (the device keeps the file's name unless --device-name)")->check(given_name());
  cmd->add_option("--sm-count", args->sm_count,
                  "T4/Kernel Tuner: the device's SM count (with --arch), so that its records match "
                  "that GPU exactly when deployed (default: unknown, 0)")
      ->check(count_in(1, 1 << 20));
  cmd->add_option("--run", args->run,
                  "T4/Kernel Tuner: run id (default: derived from the file's content, so a file "
                  "imported again adds nothing)")
      ->check(given_name());
  cmd->callback([args] {
    ImportOptions options;
    if (!args->format.empty()) options.format = log_format_from_string(args->format);
    options.template_name = args->template_name;
    options.problem_key = args->problem;
    options.run_id = args->run;
    if (!args->template_name.empty()) {
      std::shared_ptr<const KernelTemplate> tmpl;
      try {
        tmpl = find_template(args->template_name);
      } catch (const Error&) {  // a name of the file's own: nothing to check against
      }
      if (tmpl) options.check = template_fit_check(tmpl);
    }
    if (args->sm_count > 0 && args->arch.empty())
      throw Error(ErrorCode::invalid_argument,
                  "--sm-count " + std::to_string(args->sm_count) +
                      " needs --arch (the device's architecture, e.g. sm_90)");
    if (!args->arch.empty() || !args->device_name.empty()) {
      Device device = args->arch.empty() ? Device{} : imported_arch(args->arch);
      // --arch alone keeps the device name the file gives (ImportOptions::device); the SM
      // count stays unknown (0) unless --sm-count gives it, not that of the architecture's
      // typical part.
      device.name = args->device_name;
      device.sm_count = args->sm_count;
      options.device = device;
    }
    // A first Ctrl-C stops the import at its next chunk or record, with nothing added; a
    // second ends the program at once.
    StopOnSigint stop_on_sigint;
    options.poll = [] {
      if (stop_requested()) throw Interrupted{};
    };
    const auto stopped = [&] {
      std::printf("stopped by Ctrl-C: nothing was imported into %s\n", args->db.c_str());
      std::fflush(stdout);
      return CLI::RuntimeError(130);  // the shell's code for "ended by SIGINT"
    };
    // A pipe or standard input is read into a temporary copy before the log is opened; a
    // Ctrl-C meanwhile stops with the copy removed and nothing created.
    std::optional<detail::RereadableInput> copied;
    try {
      copied.emplace(args->input, "file to import", options.poll);
    } catch (const Interrupted&) {
      throw stopped();
    }
    const detail::RereadableInput& input = *copied;
    ImportSummary summary;
    try {
      // A log this command creates and then fills with nothing (the file was refused, the
      // disk was full, Ctrl-C) is removed again, so that a failed import leaves no empty
      // database behind.
      CreatedLog created(args->db);
      summary = import_file(created.log(), input.path(), options);
    } catch (const Interrupted&) {
      throw stopped();
    } catch (const Error& e) {
      throw input.naming_input(e);  // messages name the input, not its temporary copy
    }
    std::printf("imported %zu record%s (%s) into %s%s", summary.records,
                summary.records == 1 ? "" : "s", to_string(summary.format), args->db.c_str(),
                summary.run_ids.empty() ? "" : ", runs:");
    // A file of many runs: the first few named, the rest counted (one line however many).
    constexpr std::size_t kRunsNamed = 8;
    for (std::size_t i = 0; i < summary.run_ids.size() && i < kRunsNamed; ++i)
      std::printf(" %s", summary.run_ids[i].c_str());
    if (summary.run_ids.size() > kRunsNamed)
      std::printf(" and %zu more", summary.run_ids.size() - kRunsNamed);
    std::printf("\n");
    if (summary.already_present)
      std::printf("%zu records were in %s already (same run, task, config, status, time and "
                  "median) and were not added again\n",
                  summary.already_present, args->db.c_str());
  });
}

}  // namespace ktune::cli
