// The tuning loop (see tuner.h): default first, then the starting configs and searcher batches
// under budgets, every trial recorded and observed, and a final interleaved re-measurement of
// the best few.
#include "ktune/tuner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "ktune/error.h"
#include "ktune/log.h"
#include "stats.h"

namespace ktune {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Whether a config timed `time_a` and first recorded at `seen_a` ranks before another, as the
/// log's best() ranks configs: the faster first, equal times to the config recorded first.
bool ranks_before(double time_a, std::size_t seen_a, double time_b, std::size_t seen_b) {
  return time_a != time_b ? time_a < time_b : seen_a < seen_b;
}

/// Configs of ok trials, fastest first (ranks_before), at most k, each config once.
std::vector<Trial> fastest_ok(const std::unordered_map<std::string, Trial>& known,
                              const std::unordered_map<std::string, std::size_t>& first_seen,
                              std::size_t k) {
  std::vector<Trial> ok;
  for (const auto& [key, t] : known)
    if (t.ok()) ok.push_back(t);
  auto seen = [&](const Trial& t) { return first_seen.at(t.config.str()); };
  std::sort(ok.begin(), ok.end(), [&](const Trial& a, const Trial& b) {
    return ranks_before(a.median_ms, seen(a), b.median_ms, seen(b));
  });
  if (ok.size() > k) ok.resize(k);
  return ok;
}

/// An ok trial without a possible time (ok_without_time) becomes a `status` trial whose
/// message says so, led by `source` ("the measurer reported an ok trial"); others stay as
/// they are.
void fail_if_without_time(Trial& t, Status status, const std::string& source) {
  if (!ok_without_time(t)) return;
  t.status = status;
  t.message = source + " with median " + std::to_string(t.median_ms) +
              " ms, not a finite time > 0" + (t.message.empty() ? "" : ": " + t.message);
}

/// The measurer's answer to `batch`, held to its contract: one trial per config, same order
/// (else Error naming what came back: a tuner cannot go on from trials it did not ask for, nor
/// stop counting trials never returned); an ok trial whose median is not a finite time > 0 (no
/// measurement can give one) becomes a runtime_error trial saying so, so that it can neither
/// win nor reorder the finalists.
std::vector<Trial> measure_checked(Measurer& measurer, const std::vector<Config>& batch) {
  std::vector<Trial> trials = measurer.measure(batch);
  if (trials.size() != batch.size())
    throw Error(ErrorCode::invalid_argument,
                "the measurer returned " + std::to_string(trials.size()) + " trials for " +
                    std::to_string(batch.size()) + " configs (expected one per config, in order)");
  for (std::size_t i = 0; i < trials.size(); ++i) {
    Trial& t = trials[i];
    if (!(t.config == batch[i]))
      throw Error(ErrorCode::invalid_argument,
                  "the measurer's trial " + std::to_string(i) + " is for config " + t.config.str() +
                      ", asked for " + batch[i].str() + " (expected one per config, in order)");
    fail_if_without_time(t, Status::runtime_error, "the measurer reported an ok trial");
  }
  return trials;
}

/// State of one run, shared by the phases of Tuner::run.
struct RunState {
  Clock::time_point start = Clock::now();
  std::unordered_map<std::string, Trial> known;  // every trial by config text
  std::unordered_map<std::string, std::size_t> first_seen;  // config text -> order first met
  std::size_t done = 0;
  std::size_t failures = 0;
  std::size_t since_improvement = 0;
  std::size_t measured_this_run = 0;
  std::optional<Trial> best;
  TuneResult result;
};

}  // namespace

double TuneResult::speedup() const {
  if (!default_trial || !default_trial->ok() || !best || best->median_ms <= 0) return 0;
  return default_trial->median_ms / best->median_ms;
}

Tuner::Tuner(SearchSpace space, Searcher& searcher, Measurer& measurer, TunerOptions options)
    : space_(std::move(space)), searcher_(searcher), measurer_(measurer), options_(std::move(options)) {
  if (options_.batch == 0)
    throw Error(ErrorCode::invalid_argument, "TunerOptions::batch must be at least 1");
  auto check = [](bool ok, const std::string& what) {
    if (!ok) throw Error(ErrorCode::invalid_argument, "TunerOptions::" + what);
  };
  check(std::isfinite(options_.max_seconds) && options_.max_seconds >= 0,
        "max_seconds must be a finite number >= 0 (0 = no limit), not " +
            std::to_string(options_.max_seconds));
  check(std::isfinite(options_.min_improvement) && options_.min_improvement >= 0,
        "min_improvement must be a finite fraction >= 0, not " +
            std::to_string(options_.min_improvement));
  check(options_.final_rounds >= 0,
        "final_rounds must be >= 0, not " + std::to_string(options_.final_rounds));
}

TuneResult Tuner::run() {
  RunState st;
  searcher_.reset(space_, options_.seed);

  std::size_t budget = options_.max_trials;
  if (budget == 0) {
    try {
      budget = static_cast<std::size_t>(space_.count_valid(Index{1} << 22));
    } catch (const Error&) {
      budget = 0;  // too large to count: unknown
    }
  }

  auto note_ok = [&](const Trial& t) {
    if (!t.ok()) return;
    bool improves = !st.best || t.median_ms < st.best->median_ms * (1 - options_.min_improvement);
    if (!st.best || t.median_ms < st.best->median_ms) st.best = t;
    if (improves) st.since_improvement = 0;
  };

  // Trials this run measures: recorded, counted, remembered.
  auto take = [&](const Trial& t) {
    if (sink_) sink_->record(t);
    st.result.trials.push_back(t);
    st.result.status_counts[t.status]++;
    ++st.done;
    ++st.measured_this_run;
    ++st.since_improvement;
    if (!t.ok()) ++st.failures;
    st.known[t.config.str()] = t;
    st.first_seen.emplace(t.config.str(), st.first_seen.size());
    note_ok(t);
  };

  auto report = [&] {
    if (!options_.progress) return;
    TuneProgress p;
    p.done = st.done;
    p.budget = budget;
    p.elapsed_s = seconds_since(st.start);
    p.failures = st.failures;
    if (st.best) {
      p.best_ms = st.best->median_ms;
      p.best_config = st.best->config.str();
    }
    if (st.result.default_trial && st.result.default_trial->ok()) {
      p.default_ms = st.result.default_trial->median_ms;
      if (p.best_ms > 0) p.speedup = p.default_ms / p.best_ms;
    }
    if (st.measured_this_run > 0) {
      double per_trial = p.elapsed_s / static_cast<double>(st.measured_this_run);
      if (budget > st.done) p.eta_s = per_trial * static_cast<double>(budget - st.done);
      if (budget > 0 && st.done >= budget) p.eta_s = 0;
      if (options_.max_seconds > 0) {
        double left = std::max(0.0, options_.max_seconds - p.elapsed_s);
        p.eta_s = p.eta_s < 0 ? left : std::min(p.eta_s, left);
      }
    }
    options_.progress(p);
  };

  // 1. Resume: earlier trials are observed, counted, and never measured again. An "ok" one
  // without a usable time (a log row edited outside ktune) counts as failed, as a measured
  // one does.
  for (auto& t : previous_) fail_if_without_time(t, Status::invalid, "resumed as ok");
  for (const auto& t : previous_) {
    st.known[t.config.str()] = t;
    st.first_seen.emplace(t.config.str(), st.first_seen.size());
    if (!t.ok()) ++st.failures;
    note_ok(t);
  }
  st.done = st.known.size();
  if (!previous_.empty()) searcher_.observe(previous_);

  // 2. The default config, the reference of the speed-up: a resumed trial of it whatever
  // budget is left, else measured within the budget (resumed trials that fill it leave
  // nothing to measure).
  const Config dc = space_.default_config();
  if (options_.measure_default) {
    const auto it = st.known.find(dc.str());
    if (it != st.known.end()) st.result.default_trial = it->second;
  }
  if (options_.measure_default && !st.result.default_trial && (budget == 0 || st.done < budget)) {
    if (space_.valid(dc)) {
      auto trials = measure_checked(measurer_, {dc});
      take(trials.front());
      st.result.default_trial = trials.front();
      searcher_.observe(trials);
    } else {
      spdlog::info("default config {} violates {}; no default measurement", dc.str(),
                   space_.violated(dc).value_or("?"));
    }
    report();
  }

  // 3. The starting configs (a warm start), as one batch within the budget.
  std::vector<Config> starting;
  for (const Config& c : start_with_) {
    if (options_.max_trials > 0 && st.done + starting.size() >= options_.max_trials) break;
    if (st.known.count(c.str()) || std::find(starting.begin(), starting.end(), c) != starting.end())
      continue;
    if (!space_.contains(c) || !space_.valid(c)) {
      spdlog::info("starting config {} is not valid in this space; skipped", c.str());
      continue;
    }
    starting.push_back(c);
  }
  st.result.started = starting.size();
  if (!starting.empty()) {
    auto trials = measure_checked(measurer_, starting);
    for (const auto& t : trials) take(t);
    searcher_.observe(trials);
    report();
  }

  // 4. The search.
  for (;;) {
    if (options_.max_trials > 0 && st.done >= options_.max_trials) {
      st.result.stop_reason = "max_trials";
      break;
    }
    if (options_.max_seconds > 0 && seconds_since(st.start) >= options_.max_seconds) {
      st.result.stop_reason = "max_seconds";
      break;
    }
    if (options_.patience > 0 && st.since_improvement >= options_.patience) {
      st.result.stop_reason = "patience";
      break;
    }
    std::size_t n = options_.batch;
    if (options_.max_trials > 0) n = std::min(n, options_.max_trials - st.done);
    // Never past the patience: a batch ends where it would run out without an improvement.
    if (options_.patience > 0) n = std::min(n, options_.patience - st.since_improvement);
    auto proposed = searcher_.propose(n);
    if (proposed.empty()) {
      st.result.stop_reason = "exhausted";
      break;
    }
    std::vector<Config> fresh;
    std::vector<Trial> answered;
    for (const auto& c : proposed) {
      auto it = st.known.find(c.str());
      if (it != st.known.end())
        answered.push_back(it->second);
      else if (std::none_of(fresh.begin(), fresh.end(), [&](const Config& f) { return f == c; }))
        fresh.push_back(c);
    }
    if (!fresh.empty()) {
      auto measured = measure_checked(measurer_, fresh);
      for (const auto& t : measured) take(t);
      answered.insert(answered.end(), measured.begin(), measured.end());
    }
    searcher_.observe(answered);
    report();
  }

  // 5. Finalists re-measured interleaved: each round measures every finalist once, in turn.
  // Every ok config, fastest first: the top_k finalists, then the challengers below in order.
  const std::vector<Trial> ranked = fastest_ok(st.known, st.first_seen, st.known.size());
  std::vector<Trial> finalists(ranked.begin(),
                               ranked.begin() + static_cast<std::ptrdiff_t>(std::min(options_.top_k, ranked.size())));
  bool remeasure = options_.top_k > 0 && options_.final_rounds > 0 && !finalists.empty();
  if (remeasure) {
    std::vector<std::vector<double>> round_medians, pooled;
    std::vector<bool> failed;
    // The rounds over finalists[from..]: each round measures each of them once, in turn.
    auto measure_rounds = [&](std::size_t from) {
      std::vector<Config> configs;
      for (std::size_t i = from; i < finalists.size(); ++i) configs.push_back(finalists[i].config);
      round_medians.resize(finalists.size());
      pooled.resize(finalists.size());
      failed.resize(finalists.size(), false);
      for (int round = 0; round < options_.final_rounds; ++round) {
        auto trials = measure_checked(measurer_, configs);
        for (std::size_t j = 0; j < trials.size(); ++j) {
          const std::size_t i = from + j;
          if (sink_ && options_.record_final) sink_->record(trials[j]);
          if (!trials[j].ok()) {
            failed[i] = true;  // a finalist that fails when measured again cannot win
            continue;
          }
          round_medians[i].push_back(trials[j].median_ms);
          pooled[i].insert(pooled[i].end(), trials[j].times_ms.begin(), trials[j].times_ms.end());
        }
      }
    };
    // Each finalist is judged by its typical trial over the search trial and the rounds, the
    // rule of config_representatives(): with the rounds recorded, the log's best(), `ktune
    // best` and the dispatcher then name the same winner as this run.
    auto typical_of = [&](std::size_t i) {
      std::vector<double> medians{finalists[i].median_ms};
      medians.insert(medians.end(), round_medians[i].begin(), round_medians[i].end());
      return medians[typical_trial_position(medians)];
    };
    measure_rounds(0);
    // Finalists ranked as the log's best() ranks configs (ranks_before) by typical trial.
    auto seen = [&](std::size_t i) { return st.first_seen.at(finalists[i].config.str()); };
    // A config outside the finalists whose one search trial ranks before the winner's typical
    // trial (faster, or as fast and recorded first) would be the log's best, judged by that one
    // trial: such a challenger is measured in rounds too, the fastest first, until none is
    // left (at most top_k of them).
    for (std::size_t extra = 0; extra < options_.top_k && finalists.size() < ranked.size(); ++extra) {
      std::optional<std::size_t> winner;
      for (std::size_t i = 0; i < finalists.size(); ++i)
        if (!failed[i] && !round_medians[i].empty() &&
            (!winner || ranks_before(typical_of(i), seen(i), typical_of(*winner), seen(*winner))))
          winner = i;
      const Trial& challenger = ranked[finalists.size()];  // the fastest config not re-measured
      if (winner && !ranks_before(challenger.median_ms, st.first_seen.at(challenger.config.str()),
                                  typical_of(*winner), seen(*winner)))
        break;
      finalists.push_back(challenger);
      measure_rounds(finalists.size() - 1);
    }
    std::vector<std::size_t> order;
    std::vector<double> typical(finalists.size(), 0.0);
    for (std::size_t i = 0; i < finalists.size(); ++i) {
      if (failed[i] || round_medians[i].empty()) continue;
      typical[i] = typical_of(i);
      order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return ranks_before(typical[a], seen(a), typical[b], seen(b));
    });
    for (std::size_t i : order) {
      Trial t = finalists[i];
      t.times_ms = pooled[i];
      summarize_times(t);
      t.median_ms = typical[i];
      st.result.finalists.push_back(t);
    }
    if (order.size() >= 2) {
      auto verdict = stats::compare_rounds(round_medians[order[0]], round_medians[order[1]]);
      st.result.top_two_within_noise = verdict.within_noise;
      // Ranked by typical trials, the winner's rounds may have the higher median: the size of
      // the difference is what is reported.
      st.result.top_two_difference = std::fabs(verdict.difference);
    }
    if (!st.result.finalists.empty()) st.result.best = st.result.finalists.front();
    // A default that was a finalist is judged by the same typical trial, so the speed-up
    // printed here is the one `ktune best` and a resumed run compute from the log.
    if (st.result.default_trial)
      for (const auto& f : st.result.finalists)
        if (f.config == st.result.default_trial->config) st.result.default_trial = f;
  }
  // Without re-measurement the best is the fastest ok trial; with it, only a finalist that
  // stayed correct can win.
  if (!remeasure && st.best) st.result.best = st.best;
  if (st.result.best && st.result.default_trial && st.result.default_trial->ok() &&
      st.result.best->config == st.result.default_trial->config)
    spdlog::info("the default config is the best found");
  st.result.elapsed_s = seconds_since(st.start);
  report();
  return st.result;
}

}  // namespace ktune
