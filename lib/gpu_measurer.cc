// GpuMeasurer: configs -> Trials on a GPU. Rejects configs that violate the space or that the
// template cannot implement (invalid), submits every compile of a batch to the Builder at once
// so NVRTC works on later candidates while earlier ones are measured, and measures each
// compiled candidate in the ktune-worker process with a per-trial time limit.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>
#include <sstream>

#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/measure.h"
#include "ktune/template.h"
#include "worker_client.h"
#include "worker_reference_cache.h"

namespace ktune {

namespace {

using Clock = std::chrono::steady_clock;

/// The lines of a compiler log that say what went wrong (or its first lines), bounded.
std::string log_excerpt(const std::string& log) {
  std::istringstream in(log);
  std::string line, errors, head;
  int error_lines = 0, head_lines = 0;
  while (std::getline(in, line)) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower.find("error") != std::string::npos && error_lines < 10) {
      errors += line + "\n";
      ++error_lines;
    }
    if (head_lines < 10) {
      head += line + "\n";
      ++head_lines;
    }
  }
  std::string out = errors.empty() ? head : errors;
  if (out.size() > 2000) out = out.substr(0, 2000) + "...";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.empty() ? "compilation failed (empty log)" : out;
}

}  // namespace

struct GpuMeasurer::Impl {
  std::shared_ptr<const KernelTemplate> tmpl;
  Problem problem;
  Device device;
  Builder& builder;
  RunnerOptions options;
  SearchSpace space;
  std::unique_ptr<worker::WorkerClient> client;
  std::optional<double> baseline_ms;  // first good median
  std::string reference_dir;          // seed data that survives worker restarts
  std::uint64_t checks = 0;
  MeasurerTimeSplit split;

  Impl(std::shared_ptr<const KernelTemplate> t, Problem p, Device d, Builder& b, RunnerOptions o)
      : tmpl(std::move(t)), problem(std::move(p)), device(std::move(d)), builder(b),
        options(std::move(o)) {
    if (!tmpl) throw Error(ErrorCode::invalid_argument, "GpuMeasurer: null template");
    tmpl->check_problem(problem);
    space = tmpl->space(problem, device);
    worker::WorkerSpec spec;
    spec.program = find_worker_executable(options.worker_path);
    spec.template_name = tmpl->name();
    spec.problem_key = problem.key();
    spec.device = device.ordinal < 0 ? 0 : device.ordinal;
    spec.canary_bytes = options.canary_bytes;
    spec.setup_timeout_ms = options.host_timeout_ms;
    reference_dir = worker::make_reference_cache_dir();
    spec.reference_cache_dir = reference_dir;
    client = std::make_unique<worker::WorkerClient>(std::move(spec));
  }

  ~Impl() {
    client.reset();  // the worker ends before its folder goes
    worker::remove_reference_cache_dir(reference_dir);
  }

  double timeout_ms() const {
    if (options.timeout_ms > 0) return options.timeout_ms;
    if (!baseline_ms) return std::max(options.initial_timeout_ms, options.min_timeout_ms);
    return std::max(options.min_timeout_ms, options.timeout_factor * *baseline_ms);
  }

  std::uint64_t next_seed() {
    std::uint64_t n = checks++;
    return options.seed + (options.seed_pool > 0 ? n % static_cast<std::uint64_t>(options.seed_pool) : n);
  }

  /// Static rejection; returns the reason, or nullopt when the config may be compiled.
  std::optional<std::string> rejection(const Config& c) const {
    if (!space.contains(c)) return "config " + c.str() + " is not in the space of " + tmpl->name();
    if (auto v = space.violated(c)) return "violates constraint " + *v;
    std::string why;
    if (!tmpl->can_implement(problem, c, &why))
      return "cannot implement " + problem.key() + (why.empty() ? "" : ": " + why);
    return std::nullopt;
  }

  void measure_built(Trial& trial, BuildResult built) {
    trial.compile_ms = built.compile_ms;
    trial.resources = built.resources;
    if (!built.ok || !built.cubin) {
      trial.status = Status::compile_error;
      trial.message = log_excerpt(built.log);
      return;
    }
    worker::MeasureRequest req;
    try {
      req.plan = tmpl->launch(problem, trial.config, device);
    } catch (const Error& e) {
      trial.status = Status::invalid;
      trial.message = std::string("no launch plan: ") + e.what();
      return;
    }
    req.cubin = built.cubin;
    req.seed = next_seed();
    req.timing = options.timing;
    req.kernel_timeout_ms = timeout_ms();
    req.host_timeout_ms = options.host_timeout_ms;
    auto start = Clock::now();
    worker::WorkerResult r = client->measure(req);
    trial.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    split.candidates += 1;
    split.round_trip_ms += trial.wall_ms;
    split.worker_prepare_ms += r.prepare_ms;
    split.worker_verify_ms += r.verify_ms;
    split.worker_timing_ms += r.timing_ms;
    // Each sample is the mean of runs_per_sample runs: the GPU ran that many per sample.
    for (double t : r.times_ms) split.kernel_ms += t * r.runs_per_sample;
    trial.status = r.status;
    trial.message = r.message;
    trial.times_ms = std::move(r.times_ms);
    trial.error_norm = r.error_norm;
    trial.sm_clock_mhz = r.sm_clock_mhz;
    trial.temperature_c = r.temperature_c;
    trial.launch = r.launch;
    summarize_times(trial);
    if (trial.ok() && !baseline_ms) baseline_ms = trial.median_ms;
  }
};

GpuMeasurer::GpuMeasurer(std::shared_ptr<const KernelTemplate> tmpl, Problem problem,
                         Device device, Builder& builder, RunnerOptions options)
    : impl_(std::make_unique<Impl>(std::move(tmpl), std::move(problem), std::move(device), builder,
                                   std::move(options))) {}

GpuMeasurer::~GpuMeasurer() = default;

std::vector<Trial> GpuMeasurer::measure(const std::vector<Config>& batch) {
  auto& m = *impl_;
  std::vector<Trial> trials(batch.size());
  std::vector<std::optional<std::future<BuildResult>>> builds(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    trials[i].config = batch[i];
    if (auto why = m.rejection(batch[i])) {
      trials[i].status = Status::invalid;
      trials[i].message = *why;
      continue;
    }
    builds[i] = m.builder.submit(m.tmpl, m.problem, batch[i], m.device);
  }
  // Candidates are measured in the order their compiles finish, so the GPU never waits for
  // one compile while another candidate's cubin is ready.
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (builds[i])
      pending.push_back(i);
    else
      trials[i].timestamp_us = unix_time_us();
  }
  while (!pending.empty()) {
    auto wait_start = Clock::now();
    std::size_t pick = 0;
    for (bool found = false; !found;) {
      for (std::size_t k = 0; k < pending.size() && !found; ++k)
        if (builds[pending[k]]->wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
          pick = k;
          found = true;
        }
      if (!found) builds[pending.front()]->wait_for(std::chrono::microseconds(200));
    }
    const std::size_t i = pending[pick];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(pick));
    BuildResult built;
    try {
      built = builds[i]->get();
    } catch (const std::exception& e) {
      built.ok = false;
      built.log = e.what();
    }
    m.split.compile_wait_ms += std::chrono::duration<double, std::milli>(Clock::now() - wait_start).count();
    m.measure_built(trials[i], std::move(built));
    trials[i].timestamp_us = unix_time_us();
    spdlog::debug("trial {} -> {} {}", trials[i].config.str(), to_string(trials[i].status),
                  trials[i].message);
  }
  return trials;
}

int GpuMeasurer::worker_restarts() const { return impl_->client->restarts(); }

double GpuMeasurer::current_timeout_ms() const { return impl_->timeout_ms(); }

MeasurerTimeSplit GpuMeasurer::time_split() const { return impl_->split; }

}  // namespace ktune
