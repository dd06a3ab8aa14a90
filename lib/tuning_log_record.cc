// TrialRecord helpers: device keys, building a record from a trial, run ids, the strict
// parser of the config text form "a=1,b=2" used for everything read back from a log, the
// log's ranking rule of a task's configs (each config's typical trial), and the validation
// of a record before it is stored (check_record, fits_device_key).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>

#include "ktune/build.h"
#include "ktune/error.h"
#include "ktune/log.h"
#include "ktune/problem.h"
#include "ktune/template.h"
#include "ktune/version.h"
#include "identifier.h"

namespace ktune {

std::string device_key_of(const Device& device) { return device.key(); }

std::string TrialRecord::device_key() const { return device_key_of(device); }

TrialRecord TrialRecord::make(const KernelTemplate& tmpl, const Problem& problem,
                              const Device& device, const Trial& trial,
                              const std::string& run_id) {
  TrialRecord r;
  r.template_name = tmpl.name();
  r.source_hash = Builder::source_hash(tmpl.source());
  r.problem_key = problem.key();
  r.device.name = device.name;
  r.device.cc_major = device.cc_major;
  r.device.cc_minor = device.cc_minor;
  r.device.sm_count = device.sm_count;
  r.device.driver_version = device.driver_version;
  r.ktune_version = KTUNE_VERSION;
  r.nvrtc_version = Builder::nvrtc_version();
  r.run_id = run_id;
  r.config_text = trial.config.str();
  r.trial = trial;
  return r;
}

std::string new_run_id() {
  static std::mt19937_64 rng{std::random_device{}() ^
                             static_cast<std::uint64_t>(
                                 std::chrono::steady_clock::now().time_since_epoch().count())};
  static std::mutex mutex;
  std::uint64_t salt;
  {
    std::lock_guard lock(mutex);
    salt = rng();
  }
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  char tail[48];
  std::snprintf(tail, sizeof tail, "-%x-%08x", static_cast<unsigned>(getpid()),
                static_cast<unsigned>(salt & 0xffffffffu));
  return std::string(stamp) + tail;
}

std::vector<TrialRecord> config_representatives(const std::vector<TrialRecord>& records) {
  std::vector<std::string> order;                     // config + source, first appearance
  std::map<std::string, std::vector<const TrialRecord*>> groups;
  for (const auto& r : records) {
    const std::string key = r.config_text + '\x1f' + r.source_hash;
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(&r);
  }
  std::vector<TrialRecord> out;
  out.reserve(order.size());
  std::vector<double> medians;
  for (const auto& key : order) {
    const auto& g = groups[key];
    // A config that failed any of its trials (a finalist whose output turned wrong when
    // measured again) is not judged at all, as the tuner drops such a finalist.
    // So is one whose "ok" trial has no usable time (a row edited outside ktune: check_record
    // keeps such times out of logs ktune writes).
    if (std::any_of(g.begin(), g.end(), [](const TrialRecord* r) {
          return !r->trial.ok() || ok_without_time(r->trial);
        }))
      continue;
    medians.clear();
    for (const TrialRecord* r : g) medians.push_back(r->trial.median_ms);
    out.push_back(*g[typical_trial_position(medians)]);
  }
  return out;
}

std::vector<TrialRecord> trials_ranked_for_launch(std::vector<TrialRecord> trials,
                                                  bool programmatic_launch) {
  auto same_way = [&](const TrialRecord& r) {
    return programmatic_form(r.trial.launch) == programmatic_launch;
  };
  // The other way's ok trials go only when the wanted way has one of its own.
  if (std::any_of(trials.begin(), trials.end(),
                  [&](const TrialRecord& r) { return r.trial.ok() && same_way(r); }))
    std::erase_if(trials, [&](const TrialRecord& r) { return r.trial.ok() && !same_way(r); });
  return trials;
}

std::vector<TrialRecord> ranked_representatives(const std::vector<TrialRecord>& ok,
                                                const std::string& prefer_source_hash) {
  auto rank = [&](const TrialRecord& r) {  // an empty preference ranks every source alike
    return std::make_pair(!prefer_source_hash.empty() && r.source_hash != prefer_source_hash,
                          r.trial.median_ms);
  };
  std::vector<TrialRecord> ranked = config_representatives(ok);
  // In order of first appearance, so that the stable sort sends ties to the earlier config.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const TrialRecord& a, const TrialRecord& b) { return rank(a) < rank(b); });
  return ranked;
}

std::size_t typical_trial_position(const std::vector<double>& medians) {
  if (medians.empty())
    throw Error(ErrorCode::invalid_argument, "typical_trial_position: no trial medians given");
  // A NaN (no time) sorts after every time, so that the order stays a strict weak ordering.
  auto key = [&](std::size_t i) {
    return std::isnan(medians[i]) ? std::numeric_limits<double>::infinity() : medians[i];
  };
  std::vector<std::size_t> order(medians.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  // The lower median (a measured trial); of equal medians, the earliest trial (the stable
  // sort keeps equal ones in trial order, so the first of their run).
  std::size_t at = (order.size() - 1) / 2;
  while (at > 0 && key(order[at - 1]) == key(order[at])) --at;
  return order[at];
}

bool has_control_character(const std::string& text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < ' ' || c == 0x7f; });
}

bool fits_device_key(const std::string& name) {
  return !has_control_character(name) && name.find('|') == std::string::npos;
}

bool fits_template_name(const std::string& name) {
  return fits_device_key(name) && name.find(' ') == std::string::npos;
}

void check_record_names(const TrialRecord& r, const std::string& where) {
  if (r.template_name.empty() || !fits_template_name(r.template_name))
    throw Error(ErrorCode::invalid_argument, where + ": template name '" + r.template_name +
                                                 "' is empty or holds a space, a control character or '|'");
  try {
    (void)Problem::from_key(r.problem_key);
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_argument, where + ": " + e.what() + " (expected op|dim=v,...|attr=v,...)");
  }
  if (r.run_id.empty() || has_control_character(r.run_id))
    throw Error(ErrorCode::invalid_argument,
                where + ": run id '" + r.run_id + "' is empty or holds a control character");
}

void check_record(const TrialRecord& record, const std::string& where) {
  check_record_names(record, where);
  const Trial& t = record.trial;
  // What bind_record stores (the config text, else trial.config's) must parse strictly, or
  // it could be stored but never imported again from the log's own export; a text given
  // beside trial.config must name the same config.
  const std::string stored = record.config_text.empty() ? t.config.str() : record.config_text;
  if (!stored.empty()) {
    Config parsed;
    try {
      parsed = parse_config_text(stored);
    } catch (const Error& e) {
      throw Error(ErrorCode::invalid_argument, where + ": trial " + record.template_name + " " +
                                                   record.problem_key + ": " + e.what());
    }
    if (!record.config_text.empty() && t.config.size() > 0 && parsed != t.config)
      throw Error(ErrorCode::invalid_argument,
                  where + ": trial " + record.template_name + " " + record.problem_key +
                      ": config text '" + record.config_text + "' and trial.config '" +
                      t.config.str() + "' name different configs");
  }
  if (!fits_device_key(record.device.name))
    throw Error(ErrorCode::invalid_argument,
                  where + ": trial " + record.template_name + " " + record.problem_key +
                      ": device name '" + record.device.name +
                      "' holds a control character or '|' (a device key is name|sm_XY|SMs)");
  // 0 stands for unknown (an import that was not told); below 0 is no device at all.
  const Device& d = record.device;
  if (d.sm_count < 0 || d.cc_major < 0 || d.cc_minor < 0 || d.cc_minor > 9)
    throw Error(ErrorCode::invalid_argument,
                where + ": trial " + record.template_name + " " + record.problem_key + ": device '" +
                    d.name + "' has compute capability " + std::to_string(d.cc_major) + "." +
                    std::to_string(d.cc_minor) + " and " + std::to_string(d.sm_count) +
                    " SMs; expected a capability X.Y with Y 0-9 and an SM count >= 0 (0: unknown)");
  if (t.status != Status::ok) return;
  if (!is_possible_time(t.median_ms)) {
    std::ostringstream median;
    median << t.median_ms;
    throw Error(ErrorCode::invalid_argument,
                where + ": trial " + record.template_name + " " + record.problem_key + " [" +
                    record.config_text + "] has status ok but median " + median.str() +
                    " ms; an ok trial needs a finite time above 0 ms");
  }
}

Config parse_config_text(const std::string& text) {
  // Configs of one log mostly share their parameter names: reuse the last list.
  thread_local std::shared_ptr<const std::vector<std::string>> last_names;
  std::vector<std::string> names;
  std::vector<Value> values;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string_view item(text.data() + pos, comma - pos);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw Error(ErrorCode::parse_error, "config '" + text + "': item '" + std::string(item) +
                                              "' is not name=value");
    }
    std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    if (!detail::is_identifier(name)) {
      throw Error(ErrorCode::parse_error,
                  "config '" + text + "': '" + std::string(name) + "' is not a parameter name");
    }
    Value v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      const bool too_large = ec == std::errc::result_out_of_range && end == value.data() + value.size();
      throw Error(ErrorCode::parse_error, "config '" + text + "': value '" + std::string(value) +
                                              "' of '" + std::string(name) +
                                              (too_large ? "' is out of range (64-bit integers)"
                                                         : "' is not an integer"));
    }
    for (const auto& n : names) {
      if (n == name) {
        throw Error(ErrorCode::parse_error,
                    "config '" + text + "': parameter '" + n + "' appears twice");
      }
    }
    names.emplace_back(name);
    values.push_back(v);
    pos = comma + 1;
    if (comma + 1 == text.size()) {
      throw Error(ErrorCode::parse_error, "config '" + text + "': trailing comma");
    }
  }
  if (!last_names || *last_names != names) {
    last_names = std::make_shared<const std::vector<std::string>>(std::move(names));
  }
  return Config(last_names, std::move(values));
}

}  // namespace ktune
