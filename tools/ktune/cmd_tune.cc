// `ktune tune`: tunes one problem (--op/--template, --shape, ...) or every problem of a plan
// file. Each task: the template's space, a searcher, the GPU measurer (or recorded
// measurements with --replay), and the Tuner loop; every trial goes into the tuning log as it
// is measured, a repeated command resumes where the last one stopped, and Ctrl-C stops after
// the trials in flight with everything measured so far kept.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "commands.h"
#include "created_log.h"
#include "compile_options.h"
#include "dry_run.h"
#include "launch_plan_runner.h"
#include "option_checks.h"
#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/log_recorder.h"
#include "ktune/measure.h"
#include "ktune/tuner.h"
#include "ktune/warm_start.h"
#include "progress_line.h"
#include "recorded_trials.h"
#include "tune_interrupt.h"
#include "tuning_plan.h"

namespace ktune::cli {

namespace {

struct TuneArgs {
  ProblemOptions problem;
  std::string plan;
  std::string searcher = "genetic";
  std::string options;
  std::size_t budget = 100;
  double seconds = 0;
  std::size_t early_stop = 0;
  std::size_t batch = 8;
  int jobs = 0;
  int compile_processes = kHelperPerCompileThread;
  std::string db = "ktune.db";
  int gpu = 0;
  std::uint64_t seed = 1;
  std::size_t warm_start = 3;  // configs of the nearest tuned shapes measured first
  std::string replay;
  std::string cache_dir;
  std::string worker;
  int progress = -1;  // -1 auto, 0 plain lines, 1 live line
  bool dry_run = false;
  bool programmatic_launch = false;
  bool graph_timing = false;
  std::string arch;  // --dry-run target; empty: the GPU, or sm_90 on a machine without one
};

// --- recording ---

/// How a run of this task stamps its trials: a replayed trial keeps the template source its
/// record was measured with and says where it was replayed from, so that it never passes for
/// a fresh measurement.
LogRecorder::Options recorder_options(const std::string& run_id, const ReplayTask* replay) {
  LogRecorder::Options o;
  o.run_id = run_id;
  if (replay) {
    o.source_of = replay->source_of;
    o.note = "replayed from " + replay->origin;
  }
  return o;
}

// --- one task ---------------------------------------------------------------------------------

/// What the command shares between tasks.
struct TuneContext {
  const TuneArgs& args;
  TuningLog& log;
  std::string run_id;
  std::optional<Device> gpu;                  // live tuning
  std::unique_ptr<Builder> builder;           // live tuning
  std::size_t recorded_before = 0;            // trials this run recorded for earlier tasks
};

/// Whether this run launches the task's kernels programmatically: some step of the default
/// config's plan is, by the launchers' rule (the memory-bound templates mark all their kernels
/// alike).
bool times_programmatically(const TuneArgs& args, const PlanEntry& entry, const Device& device,
                            const SearchSpace& space) {
  return detail::config_launched_programmatically(*entry.tmpl, entry.problem,
                                                  space.default_config(), device,
                                                  args.programmatic_launch);
}

/// Only the trials timed this run's way resume (trials_to_resume): say how many recorded
/// configs were timed only the other way and are measured again, so that a run that resumes
/// nothing of a full log is not a surprise.
void note_other_launch_way(std::size_t configs, bool programmatic) {
  if (configs == 0) return;
  std::printf("  note: %zu recorded config%s timed only %s programmatic launch, which this run "
              "%s; %s not resumed but measured again this run's way (configs are ranked only "
              "against trials launched as they were)\n",
              configs, configs == 1 ? " was" : "s were", programmatic ? "without" : "with",
              programmatic ? "uses" : "does not use", configs == 1 ? "it is" : "they are");
}

void print_result(const PlanEntry& entry, const TuneResult& result, std::size_t resumed,
                  std::size_t recorded) {
  std::printf("%s %s: ", entry.tmpl->name().c_str(), entry.problem.key().c_str());
  if (result.best) {
    std::printf("best %s", format_time_ms(result.best->median_ms).c_str());
    if (result.speedup() > 0) std::printf(" (%.2fx over the default)", result.speedup());
    std::printf(" with %s", result.best->config.str().c_str());
  } else {
    std::printf("no config succeeded");
  }
  std::size_t failed = 0;
  for (const auto& [status, n] : result.status_counts)
    if (status != Status::ok) failed += n;
  std::printf("; %zu trial%s recorded (%zu failed), %zu resumed, stop: %s, %s\n", recorded,
              recorded == 1 ? "" : "s", failed, resumed, result.stop_reason.empty() ? "-" : result.stop_reason.c_str(),
              format_duration(result.elapsed_s).c_str());
  if (result.best && result.top_two_within_noise)
    std::printf("  note: the two fastest configs are within noise (%.1f%% apart)\n",
                100 * result.top_two_difference);
}

void tune_task(TuneContext& ctx, const PlanEntry& entry, ReplayTask* replay, Searcher& searcher) {
  const TuneArgs& args = ctx.args;
  std::unique_ptr<Measurer> gpu_measurer;
  Device device;
  SearchSpace space;
  Measurer* measurer = nullptr;
  if (replay) {
    device = replay->device;
    space = replay->space;
    measurer = replay->measurer.get();
  } else {
    device = *ctx.gpu;
    space = entry.tmpl->space(entry.problem, device);
    RunnerOptions runner;
    runner.worker_path = args.worker;
    runner.seed = args.seed;
    runner.timing.programmatic_launch = args.programmatic_launch;
    runner.timing.graph = args.graph_timing;
    gpu_measurer = std::make_unique<GpuMeasurer>(entry.tmpl, entry.problem, device,
                                                 *ctx.builder, runner);
    measurer = gpu_measurer.get();
  }

  TunerOptions options;
  options.max_trials = entry.budget.value_or(args.budget);
  options.max_seconds = entry.seconds.value_or(args.seconds);
  options.patience = args.early_stop;
  options.batch = args.batch;
  options.seed = args.seed;
  if (replay) options.top_k = 0;  // recorded numbers do not change when measured again

  // A replay records the launch form of each record it replays, all of one way
  // (make_replay_task).
  const bool programmatic =
      replay ? replay->programmatic : times_programmatically(args, entry, device, space);
  std::size_t timed_other_way = 0;
  auto previous = trials_to_resume(ctx.log, *entry.tmpl, entry.problem, device, space,
                                   replay ? replay->source_of : std::map<std::string, std::string>{},
                                   programmatic, &timed_other_way);
  const std::size_t resumed = previous.size();
  if (options.max_trials > 0 && resumed >= options.max_trials) options.top_k = 0;
  // Warm start: the winners of the nearest shapes this log has tuned (not yet measured here,
  // and not the default, which is measured first anyway).
  std::vector<Config> starting;
  for (Config& c : nearest_shape_configs(ctx.log, *entry.tmpl, entry.problem, device, space,
                                         args.warm_start, programmatic))
    if (c != space.default_config() &&
        std::none_of(previous.begin(), previous.end(), [&](const Trial& t) { return t.config == c; }))
      starting.push_back(std::move(c));
  const std::size_t warm_candidates = starting.size();
  const std::string label = entry.tmpl->name() + " " + entry.problem.key();
  std::printf("tuning %s on %s: %s, %s%s%s%s\n", label.c_str(), device.key().c_str(),
              searcher.name().c_str(),
              options.max_trials ? ("budget " + std::to_string(options.max_trials) + " trials").c_str()
                                 : "no trial limit",
              resumed ? (", resuming from " + std::to_string(resumed) + " recorded trials").c_str() : "",
              replay ? (", replaying " + std::to_string(replay->records) + " recorded configs").c_str() : "",
              starting.empty() ? "" : (", warm start: the winners of the nearest tuned shapes (" +
                                       std::to_string(starting.size()) +
                                       (starting.size() == 1 ? " config)" : " configs)")).c_str());
  note_other_launch_way(timed_other_way, programmatic);
  std::fflush(stdout);

  // Live line on a terminal (stderr); plain lines go to stdout, in order with the summaries.
  const bool live = args.progress < 0 ? isatty(fileno(stderr)) != 0 : args.progress == 1;
  ProgressLine progress(label, live ? stderr : stdout, live ? 1 : 0);
  options.progress = [&progress](const TuneProgress& p) { progress.update(p); };

  StoppableSearcher stoppable_searcher(searcher);
  StoppableMeasurer stoppable_measurer(*measurer);
  LogRecorder recorder(ctx.log, entry.tmpl, entry.problem, device,
                       recorder_options(ctx.run_id, replay));
  InterruptAwareSink sink(recorder);
  Tuner tuner(space, stoppable_searcher, stoppable_measurer, options);
  tuner.set_sink(&sink);
  tuner.resume_from(std::move(previous));
  tuner.start_with(std::move(starting));
  try {
    TuneResult result = tuner.run();
    // Ctrl-C also ends a run through the searcher proposing nothing (the Tuner then reports
    // "exhausted" without measuring again, e.g. under --replay): still an interruption.
    if (stop_requested()) throw Interrupted{};
    progress.finish();
    ctx.recorded_before += recorder.recorded();
    print_result(entry, result, resumed, recorder.recorded());
    if (warm_candidates > 0)  // the budget may leave room for fewer than the header named
      std::printf("  warm start: %zu of %zu config%s measured\n", result.started, warm_candidates,
                  warm_candidates == 1 ? "" : "s");
    std::fflush(stdout);
  } catch (const Interrupted&) {
    progress.finish();
    std::printf("%s: interrupted; %zu trials of this run are in %s\n", label.c_str(),
                ctx.recorded_before + recorder.recorded(), args.db.c_str());
    throw;
  }
}

void run_tune(const TuneArgs& args) {
  // Everything the user typed is checked before any device or database work.
  std::vector<PlanEntry> plan;
  if (!args.plan.empty()) {
    if (args.problem.given())
      throw Error(ErrorCode::invalid_argument,
                  "give either --plan or the problem options (--template / --op, --shape, "
                  "--dtype, --layout, --attr, --space, --kernel), not both: the plan's entries "
                  "name their problems");
    plan = read_plan_file(args.plan);
  } else {
    plan.push_back(plan_entry_from_options(args.problem));
  }
  const SearcherOptions searcher_options = SearcherOptions::parse(args.options);
  auto searcher = make_searcher(args.searcher, searcher_options);
  std::vector<ReplayTask> replays;  // one per plan entry with --replay, checked up front
  if (!args.replay.empty()) {
    const auto recorded = read_recorded_trials(args.replay);
    for (const auto& entry : plan) {
      try {
        replays.push_back(make_replay_task(recorded, *entry.tmpl, entry.problem, args.replay,
                                           args.programmatic_launch));
      } catch (const Error& e) {
        if (args.plan.empty()) throw;
        throw Error(e.code(), entry.origin + ": " + e.what());  // which task of the plan
      }
    }
  }
  if (args.dry_run) {
    // A replay is described for the device of its records, as it would run.
    std::vector<Device> devices;
    std::vector<std::string> notes;
    for (const auto& replay : replays) {
      devices.push_back(replay.device);
      notes.push_back("  replay: " + std::to_string(replay.records) + " recorded configs of " +
                      replay.device.key() + " from " + replay.origin +
                      (replay.programmatic ? ", timed with programmatic launch" : ""));
    }
    if (replays.empty()) {
      // A target named with --arch is described as named, even on a machine with a GPU.
      const bool offline = !args.arch.empty() || cuda_unavailable_reason();
      devices.assign(plan.size(), offline ? Device::offline(args.arch.empty() ? "sm_90" : args.arch)
                                          : query_device(args.gpu));
    }
    print_dry_run(plan, devices, notes);
    return;
  }

  std::optional<Device> gpu;
  std::unique_ptr<Builder> builder;
  if (replays.empty()) {
    if (auto why = cuda_unavailable_reason())
      throw Error(ErrorCode::no_device,
                  *why + ": use --replay FILE to tune from recorded measurements");
    gpu = query_device(args.gpu);
    BuilderOptions bo;
    bo.threads = args.jobs;
    bo.compile_processes = args.compile_processes;
    bo.helper_program = args.worker;
    bo.cache_dir = args.cache_dir == "none" ? "" : args.cache_dir;
    builder = std::make_unique<Builder>(bo);
  }

  // A log this run creates and leaves without a trial (the first write failed, Ctrl-C before
  // any) is removed again.
  CreatedLog created(args.db);
  TuneContext context{args, created.log(), new_run_id(), gpu, std::move(builder)};
  StopOnSigint stop_on_sigint;
  std::printf("run %s -> %s\n", context.run_id.c_str(), args.db.c_str());
  try {
    for (std::size_t i = 0; i < plan.size(); ++i) {
      if (stop_requested()) throw Interrupted{};
      tune_task(context, plan[i], replays.empty() ? nullptr : &replays[i], *searcher);
    }
  } catch (const Interrupted&) {
    std::printf("stopped by Ctrl-C; run the same command again to resume\n");
    std::fflush(stdout);
    throw CLI::RuntimeError(130);  // the shell's code for "ended by SIGINT"
  }
  // A user template's tasks need its document beside the log to show their default.
  std::string spaces;
  std::set<std::string> named;
  for (const auto& entry : plan)
    if (!entry.space_path.empty() && named.insert(entry.space_path).second)
      spaces += " --space " + entry.space_path;
  std::printf("done: `ktune best --db %s%s` shows the best config per problem\n", args.db.c_str(),
              spaces.c_str());
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand(
      "tune", "Tune one problem or a plan of problems; every trial is recorded in the database");
  args->problem.add_to(*cmd);
  cmd->add_option("--plan", args->plan,
                  "JSON list of problems, e.g. [{\"op\": \"gemm\", \"shape\": \"1024x1024x1024\", "
                  "\"dtype\": \"f16\"}]");
  cmd->add_option("--searcher", args->searcher, "Search strategy (see `ktune list`)");
  cmd->add_option("--options", args->options, "Searcher options name=value,... (see `ktune list`)");
  cmd->add_option("--budget", args->budget, "Trials per problem, resumed ones included (0 = no limit)")
      ->check(count_in(0, kMaxTrials));
  cmd->add_option("--time", args->seconds, "Wall-clock seconds per problem (0 = no limit)")
      ->check(finite_non_negative());
  cmd->add_option("--early-stop", args->early_stop,
                  "Stop a problem after this many trials without improvement (0 = off)")
      ->check(count_in(0, kMaxTrials));
  cmd->add_option("--batch", args->batch, "Configs proposed and measured per batch")
      ->check(count_in(1, 4096));
  cmd->add_option("-j,--jobs", args->jobs, "Parallel NVRTC compiles (0 = all cores)")
      ->check(count_in(0, kMaxJobs));
  add_compile_processes_option(*cmd, args->compile_processes);
  cmd->add_option("--db", args->db, "Tuning log (SQLite; created when missing)");
  cmd->add_option("--gpu", args->gpu, "CUDA device index")->check(count_in(0, 1023));
  cmd->add_option("--seed", args->seed, "Searcher and verification seed")->check(seed_value());
  cmd->add_option("--warm-start", args->warm_start,
                  "Measure the best configs of this many nearest shapes already tuned in --db "
                  "(same template and device) right after the default (0 = off)")
      ->check(count_in(0, 64));
  auto* replay = cmd->add_option("--replay", args->replay,
                                 "Measure from recorded trials (a ktune database or JSON-lines "
                                 "export) instead of the GPU");
  cmd->add_option("--cache-dir", args->cache_dir, "On-disk cubin cache folder (default: none)");
  cmd->add_option("--worker", args->worker, "ktune-worker executable (default: found next to ktune)");
  cmd->add_option("--progress", args->progress,
                  "1 = live progress line, 0 = plain log lines, -1 = live on a terminal")
      ->check(count_in(-1, 1));
  cmd->add_flag("--programmatic-launch", args->programmatic_launch,
                "Time the kernels that allow it (the memory-bound templates') launched with programmatic "
                "dependent launch, as a Dispatcher with DispatcherOptions::programmatic_launch launches them");
  cmd->add_flag("--graph-timing", args->graph_timing,
                "Time each sample's back-to-back runs as one CUDA graph, as a program that replays its "
                "kernels through graphs runs them");
  auto* dry_run = cmd->add_flag("--dry-run", args->dry_run,
                "Check the problems, spaces, launch geometry and buffers, then stop (no GPU, no database)");
  // A tuning run builds for the GPU it measures on, and a replay for the device of its records:
  // a target named for either would be ignored, so it is refused.
  cmd->add_option("--arch", args->arch,
                  "Target of --dry-run (sm_80, sm_90, sm_90a, ...) in place of the GPU; without a "
                  "GPU the default is sm_90")
      ->needs(dry_run)
      ->excludes(replay);
  // A replay measures nothing and compiles nothing, and keeps each record's launch form: the
  // options of a GPU run would be ignored, so they are refused beside it.
  for (const char* gpu_only :
       {"--gpu", "--jobs", "--compile-processes", "--cache-dir", "--worker", "--graph-timing"})
    replay->excludes(cmd->get_option(gpu_only));
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace ktune::cli
