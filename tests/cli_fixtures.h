// Helpers of the command-line tests: run the built `ktune` binary with arguments and capture
// its exit status and output, and write a recorded tuning database of plausible (synthetic)
// copy-template measurements that `ktune tune --replay` can tune from without a GPU.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ktune/build.h"
#include "ktune/log.h"
#include "ktune/template.h"
#include "log_fixtures.h"

namespace ktune::test {

/// Exit status and combined stdout/stderr of one ktune run.
struct CliResult {
  int status = -1;     ///< exit code (128 + signal when killed)
  std::string output;  ///< stdout and stderr interleaved
};

/// Checks that a run failed, without a crash, and that its output mentions every one of
/// `needles`.
inline void require_failure_mentioning(const CliResult& r,
                                       std::initializer_list<std::string> needles) {
  INFO("output: " << r.output);
  CHECK(r.status != 0);
  CHECK(r.output.find("terminate called") == std::string::npos);
  for (const auto& n : needles) CHECK(r.output.find(n) != std::string::npos);
}

/// require_failure_mentioning of one needle.
inline void require_failure_mentioning(const CliResult& r, const std::string& needle) {
  require_failure_mentioning(r, {needle});
}

/// The JSON array a command printed (`best --json`), without the notes it wrote to stderr
/// around it; "" when the output holds no array.
inline std::string json_array_of(const std::string& output) {
  const auto first = output.find('['), last = output.rfind(']');
  if (first == std::string::npos || last == std::string::npos || last < first) return "";
  return output.substr(first, last + 1 - first);
}

/// The ktune program under test: $KTUNE_CLI, else `ktune` in the folder above the test binary
/// (build trees copied to another machine keep working), else KTUNE_BINARY_DIR/ktune.
inline std::string ktune_program() {
  if (const char* explicit_path = std::getenv("KTUNE_CLI"); explicit_path && *explicit_path)
    return explicit_path;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path().parent_path() / "ktune";
    if (std::filesystem::is_regular_file(beside, ec)) return beside.string();
  }
  return std::string(KTUNE_BINARY_DIR) + "/ktune";
}

/// A path of the source tree (`relative` to its root): in place, else relative to the working
/// directory (a checkout copied to another machine and run from its root).
inline std::string source_path(const std::string& relative) {
  const std::string in_tree = std::string(KTUNE_SOURCE_DIR) + "/" + relative;
  return std::filesystem::exists(in_tree) ? in_tree : std::filesystem::absolute(relative).string();
}

/// Runs the shell command `command` with its output captured in a file of `dir` (the
/// redirection is the shell's own, opened as the current user).
inline CliResult run_shell(const TempDir& dir, const std::string& command) {
  const std::string out = dir.file("cli-output.txt");
  const int raw = std::system((command + " > '" + out + "' 2>&1").c_str());
  CliResult r;
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  else if (raw != -1 && WIFSIGNALED(raw)) r.status = 128 + WTERMSIG(raw);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  r.output = text.str();
  return r;
}

/// Runs `ktune_program() <args>` through the shell (args are inserted verbatim, so quote
/// them) with its output captured in a file of `dir`.
inline CliResult run_ktune(const TempDir& dir, const std::string& args) {
  return run_shell(dir, "'" + ktune_program() + "' " + args);
}

/// run_ktune as an unprivileged user (nobody, through setpriv) when the tests run as root, who
/// may write any file; as the current user otherwise. nullopt when root has no setpriv.
inline std::optional<CliResult> run_ktune_unprivileged(const TempDir& dir, const std::string& args) {
  if (geteuid() != 0) return run_ktune(dir, args);
  if (std::system("command -v setpriv > /dev/null 2>&1") != 0) return std::nullopt;
  return run_shell(dir, "setpriv --reuid=65534 --regid=65534 --clear-groups '" + ktune_program() +
                            "' " + args);
}

/// Writes a text file.
inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// The whole text of the file at `path` ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Synthetic copy time: bandwidth 3000 GB/s scaled by the efficiency of each parameter, so
/// that VEC=4, THREADS=256, ITEMS=4, GRID_STRIDE=0 is the unique optimum and the template
/// default (ITEMS=1) is 1/0.9 slower. THREADS=1024 with ITEMS=8 fails (launch_error).
inline Trial synthetic_copy_trial(const Config& c, std::int64_t n) {
  Trial t;
  t.config = c;
  if (c["THREADS"] == 1024 && c["ITEMS"] == 8) {
    t.status = Status::launch_error;
    t.message = "too many resources requested for launch (synthetic)";
    return t;
  }
  const double vec = c["VEC"] == 4 ? 1.0 : c["VEC"] == 2 ? 0.85 : 0.6;
  const double threads = c["THREADS"] == 256 ? 1.0 : c["THREADS"] == 512 ? 0.99 : 0.9;
  const double items = c["ITEMS"] == 4 ? 1.0 : c["ITEMS"] == 2 ? 0.95 : c["ITEMS"] == 1 ? 0.9 : 0.85;
  const double stride = c["GRID_STRIDE"] ? 0.98 : 1.0;
  const double ms = 8.0 * static_cast<double>(n) / (3000e9 * vec * threads * items * stride) * 1e3;
  t.status = Status::ok;
  t.times_ms = {ms * 1.01, ms, ms * 0.995, ms * 1.002, ms};
  summarize_times(t);
  t.median_ms = ms;
  t.timestamp_us = 1764500000000000;
  return t;
}

/// Records one synthetic trial of every valid copy config for each N (f32) on an H200 into
/// `path`; returns the fastest recorded median per N, in order.
inline std::vector<double> write_recorded_copy_db(const std::string& path,
                                                  const std::vector<std::int64_t>& sizes,
                                                  const std::string& source_hash = "") {
  TuningLog log(path, LogMode::read_write);
  auto tmpl = find_template("copy");
  const Device device = Device::h200();
  std::vector<double> best;
  for (std::int64_t n : sizes) {
    const Problem problem = make_problem(*tmpl, std::to_string(n), {{"dtype", "f32"}});
    const SearchSpace space = tmpl->space(problem, device);
    std::vector<TrialRecord> records;
    double fastest = 1e300;
    space.for_each_valid([&](Index, const Config& c) {
      Trial t = synthetic_copy_trial(c, n);
      if (t.ok()) fastest = std::min(fastest, t.median_ms);
      records.push_back(TrialRecord::make(*tmpl, problem, device, t, "recorded-on-h200"));
      if (!source_hash.empty()) records.back().source_hash = source_hash;
    });
    log.append_batch(records);
    best.push_back(fastest);
  }
  return best;
}

}  // namespace ktune::test
