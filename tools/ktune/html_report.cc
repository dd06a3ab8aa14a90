// HTML/SVG rendering of a tuning log (see html_report.h). The plots are drawn by hand as SVG
// elements: a convergence chart with a logarithmic time axis, histograms of time relative to
// the task's best, and a bar chart of trial statuses.
#include "html_report.h"
#include "vendor_records.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "best_table.h"
#include "progress_line.h"

namespace ktune::cli {

namespace {

/// Escapes text for HTML content and attribute values.
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v, const char* format = "%.4g") {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                               "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

/// A plot area of an SVG chart with linear x and linear-or-log y mapping.
struct Frame {
  double width = 560, height = 260, left = 64, right = 16, top = 16, bottom = 40;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool log_y = false;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (width - left - right); }
  double py(double y) const {
    const double a = log_y ? std::log10(y0) : y0, b = log_y ? std::log10(y1) : y1;
    const double v = log_y ? std::log10(y) : y;
    return height - bottom - (v - a) / (b - a) * (height - top - bottom);
  }
  std::string open() const {
    return "<svg width=\"" + num(width) + "\" height=\"" + num(height) + "\" viewBox=\"0 0 " +
           num(width) + " " + num(height) + "\" role=\"img\">";
  }
  /// Axes, ticks and labels.
  std::string axes(const std::string& xlabel, const std::string& ylabel) const {
    std::string s;
    s += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" +
         num(width - left - right) + "\" height=\"" + num(height - top - bottom) +
         "\" fill=\"none\" stroke=\"#999\"/>";
    for (int i = 0; i <= 4; ++i) {
      const double x = x0 + (x1 - x0) * i / 4.0;
      s += "<text x=\"" + num(px(x)) + "\" y=\"" + num(height - bottom + 14) +
           "\" text-anchor=\"middle\" class=\"tick\">" + num(std::round(x), "%.0f") + "</text>";
      double y = log_y ? std::pow(10, std::log10(y0) + (std::log10(y1) - std::log10(y0)) * i / 4.0)
                       : y0 + (y1 - y0) * i / 4.0;
      s += "<line x1=\"" + num(left) + "\" x2=\"" + num(width - right) + "\" y1=\"" + num(py(y)) +
           "\" y2=\"" + num(py(y)) + "\" stroke=\"#eee\"/>";
      s += "<text x=\"" + num(left - 4) + "\" y=\"" + num(py(y) + 4) +
           "\" text-anchor=\"end\" class=\"tick\">" + num(y, "%.3g") + "</text>";
    }
    s += "<text x=\"" + num((left + width - right) / 2) + "\" y=\"" + num(height - 6) +
         "\" text-anchor=\"middle\" class=\"label\">" + esc(xlabel) + "</text>";
    s += "<text transform=\"translate(14," + num((top + height - bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" class=\"label\">" + esc(ylabel) + "</text>";
    return s;
  }
};

/// Trials of one task grouped by run, in insertion order: each trial's median when it is ok,
/// else 0 (all the charts read; a log of a million trials is not held whole).
struct TaskTrials {
  std::map<std::string, std::vector<double>> runs;
  std::map<std::string, std::int64_t> status_counts;
};

/// Best-so-far convergence of each run of a task.
std::string convergence_svg(const TaskTrials& task) {
  Frame f;
  f.log_y = true;
  double lo = 1e300, hi = 0;
  std::size_t longest = 1;
  std::vector<std::pair<std::string, std::vector<double>>> curves;
  for (const auto& [run, medians] : task.runs) {
    std::vector<double> curve;
    double best = 0;
    for (double ms : medians) {
      if (ms > 0 && (best == 0 || ms < best)) best = ms;
      curve.push_back(best);
      if (best > 0) {
        lo = std::min(lo, best);
        hi = std::max(hi, best);
      }
    }
    longest = std::max(longest, curve.size());
    curves.emplace_back(run, std::move(curve));
  }
  if (hi <= 0) return "<p class=\"note\">No successful trial: nothing to plot.</p>";
  if (hi <= lo * 1.0001) hi = lo * 1.1;
  f.x0 = 1;
  f.x1 = static_cast<double>(std::max<std::size_t>(longest, 2));
  f.y0 = lo / 1.05;
  f.y1 = hi * 1.05;
  std::string s = f.open() + f.axes("trial of the run", "best median so far (ms)");
  std::size_t color = 0;
  std::string legend;
  for (const auto& [run, curve] : curves) {
    std::string points;
    for (std::size_t i = 0; i < curve.size(); ++i)
      if (curve[i] > 0) points += num(f.px(static_cast<double>(i + 1))) + "," + num(f.py(curve[i])) + " ";
    const char* c = kColors[color++ % std::size(kColors)];
    s += "<polyline fill=\"none\" stroke=\"" + std::string(c) + "\" stroke-width=\"2\" points=\"" +
         points + "\"/>";
    legend += "<span class=\"key\" style=\"background:" + std::string(c) + "\"></span>run " +
              esc(run) + " (" + std::to_string(curve.size()) + " trials) ";
  }
  return s + "</svg><div class=\"legend\">" + legend + "</div>";
}

/// Histogram of ok trial medians relative to the fastest one (log-spaced bins); labelled so,
/// since the table's best is a config's typical trial, which may be a little slower.
std::string distribution_svg(const TaskTrials& task) {
  std::vector<double> times;
  for (const auto& [run, medians] : task.runs)
    for (double ms : medians)
      if (ms > 0) times.push_back(ms);
  if (times.empty()) return "<p class=\"note\">No successful trial.</p>";
  const double best = *std::min_element(times.begin(), times.end());
  // Bins of relative time: [1, 1.05), [1.05, 1.1), ... doubling widths up to >= 8x.
  const std::vector<double> edges{1, 1.05, 1.1, 1.2, 1.35, 1.5, 2, 3, 4, 6, 8};
  std::vector<int> counts(edges.size(), 0);
  for (double t : times) {
    const double rel = t / best;
    std::size_t b = edges.size() - 1;
    for (std::size_t i = 0; i + 1 < edges.size(); ++i)
      if (rel < edges[i + 1]) {
        b = i;
        break;
      }
    ++counts[b];
  }
  Frame f;
  f.x0 = 0;
  f.x1 = static_cast<double>(counts.size());
  f.y0 = 0;
  f.y1 = std::max(1, *std::max_element(counts.begin(), counts.end())) * 1.1;
  std::string s = f.open();
  // Axes drawn by hand: x labels are bin names, not numbers.
  s += "<rect x=\"" + num(f.left) + "\" y=\"" + num(f.top) + "\" width=\"" +
       num(f.width - f.left - f.right) + "\" height=\"" + num(f.height - f.top - f.bottom) +
       "\" fill=\"none\" stroke=\"#999\"/>";
  const double bw = (f.width - f.left - f.right) / static_cast<double>(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double x = f.px(static_cast<double>(i));
    const double y = f.py(counts[i]);
    s += "<rect x=\"" + num(x + 2) + "\" y=\"" + num(y) + "\" width=\"" + num(bw - 4) +
         "\" height=\"" + num(f.py(0) - y) + "\" fill=\"#1f77b4\"><title>" +
         std::to_string(counts[i]) + " trials</title></rect>";
    if (counts[i] > 0)
      s += "<text x=\"" + num(x + bw / 2) + "\" y=\"" + num(y - 3) +
           "\" text-anchor=\"middle\" class=\"tick\">" + std::to_string(counts[i]) + "</text>";
    const std::string label = i + 1 < edges.size() ? num(edges[i], "%.3g") : ">=" + num(edges[i], "%.3g");
    s += "<text x=\"" + num(x + bw / 2) + "\" y=\"" + num(f.height - f.bottom + 14) +
         "\" text-anchor=\"middle\" class=\"tick\">" + label + "</text>";
  }
  s += "<text x=\"" + num((f.left + f.width - f.right) / 2) + "\" y=\"" + num(f.height - 6) +
       "\" text-anchor=\"middle\" class=\"label\">trial median / fastest trial median (bin starts "
       "at), fastest = " +
       esc(format_time_ms(best)) + "</text>";
  s += "<text transform=\"translate(14," + num((f.top + f.height - f.bottom) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" class=\"label\">ok trials</text>";
  return s + "</svg>";
}

/// Bar chart of trial counts per status over the whole log.
std::string status_svg(const std::map<std::string, std::int64_t>& counts) {
  Frame f;
  f.height = 40.0 + 26.0 * static_cast<double>(std::max<std::size_t>(counts.size(), 1));
  f.left = 120;
  std::int64_t most = 1;
  for (const auto& [status, n] : counts) most = std::max(most, n);
  std::string s = f.open();
  double y = f.top;
  for (const auto& [status, n] : counts) {
    const double w = (f.width - f.left - f.right - 50) * static_cast<double>(n) / static_cast<double>(most);
    const char* color = status == "ok" ? "#2ca02c" : "#d62728";
    s += "<text x=\"" + num(f.left - 6) + "\" y=\"" + num(y + 15) +
         "\" text-anchor=\"end\" class=\"label\">" + esc(status) + "</text>";
    s += "<rect x=\"" + num(f.left) + "\" y=\"" + num(y + 2) + "\" width=\"" + num(std::max(w, 1.0)) +
         "\" height=\"18\" fill=\"" + color + "\"/>";
    s += "<text x=\"" + num(f.left + w + 6) + "\" y=\"" + num(y + 15) + "\" class=\"label\">" +
         std::to_string(n) + "</text>";
    y += 26;
  }
  return s + "</svg>";
}

std::string cell(const std::optional<double>& v, const char* format) {
  return v ? num(*v, format) : "-";
}

std::string best_table_html(const std::vector<BestRow>& rows) {
  std::string s =
      "<table><tr><th>template</th><th>problem</th><th>device</th><th>trials (ok)</th>"
      "<th>tuned</th><th>launch</th><th>default</th><th>speed-up</th><th>vendor</th>"
      "<th>vs vendor</th><th>best config</th></tr>";
  for (const auto& r : rows) {
    s += "<tr><td>" + esc(r.template_name) + "</td><td>" + esc(r.problem_key) + "</td><td>" +
         esc(r.device_key) + "</td><td>" + std::to_string(r.trials) + " (" +
         std::to_string(r.ok_trials) + ")</td><td>" + esc(format_time_ms(r.median_ms)) +
         "</td><td>" + esc(to_string(r.launch)) + "</td><td>" +
         (r.default_ms ? esc(format_time_ms(*r.default_ms)) : "-") + "</td><td>" +
         cell(r.speedup, "%.2fx") + "</td><td>" +
         (r.vendor_ms ? esc(format_time_ms(*r.vendor_ms)) + " " + esc(r.vendor) : "-") +
         "</td><td title=\"" + esc(r.vendor_detail) + "\">" +
         (r.vendor_ratio ? num(*r.vendor_ratio, "%.2f") + " of " + esc(r.vendor) : "-") +
         "</td><td class=\"mono\">" + esc(r.config) +
         (r.older_source ? " <em>(older source)</em>" : "") + "</td></tr>";
  }
  return s + "</table>";
}

const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1150px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; } h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ccc; padding: 3px 7px; text-align: left; }
th { background: #f0f0f0; }
.mono { font-family: monospace; font-size: 12px; }
.tick { font-size: 10px; fill: #555; } .label { font-size: 12px; fill: #222; }
.legend { font-size: 12px; margin: 4px 0 12px 0; }
.key { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 10px; }
.note { color: #666; font-size: 13px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
)";

}  // namespace

std::string render_html_report(const TuningLog& log, const std::string& title,
                               bool programmatic_launch) {
  std::map<std::string, TaskTrials> tasks;  // by "template | problem | device"
  std::map<std::string, std::int64_t> statuses;
  std::int64_t total = 0;
  std::set<std::string> runs;  // tuning runs: vendor records are counted with the vendor times
  log.for_each({}, [&](const TrialRecord& r) {
    if (is_vendor_template(r.template_name)) return;  // shown in the table's vendor columns
    runs.insert(r.run_id);
    const std::string key = r.template_name + " | " + r.problem_key + " | " + r.device_key();
    auto& task = tasks[key];
    task.runs[r.run_id].push_back(r.trial.ok() && r.trial.median_ms > 0 ? r.trial.median_ms : 0.0);
    task.status_counts[to_string(r.trial.status)]++;
    statuses[to_string(r.trial.status)]++;
    ++total;
  });
  std::vector<TaskSummary> unusable;  // noted under the table, as `ktune best` does
  const auto rows = best_rows(log, &unusable, programmatic_launch);
  const std::string unusable_note = unusable_tasks_note(unusable);
  const std::string unranked_note = unranked_trials_note(rows);
  char stamp[64];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));

  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
      << esc(title) << "</title><style>" << kStyle << "</style></head><body>\n";
  out << "<h1>" << esc(title) << "</h1>\n<p class=\"note\">Tuning log " << esc(log.path())
      << ": " << total << (total == 1 ? " trial, " : " trials, ") << tasks.size()
      << (tasks.size() == 1 ? " task, " : " tasks, ") << runs.size()
      << (runs.size() == 1 ? " run" : " runs") << ". Generated " << stamp
      << " by ktune report.</p>\n";
  out << "<h2>Tuned vs default vs vendor</h2>\n" << best_table_html(rows)
      << "\n<p class=\"note\">tuned / default: each config's typical trial (the lower median of "
         "its trials' medians); launch: how the tuned time's runs were launched (stream, graph, "
         "programmatic or programmatic_graph; unknown: not recorded); each row ranks the "
         "task's trials timed "
      << (programmatic_launch ? "with" : "without")
      << " programmatic launch when it has any, else the others (ktune report "
         "--programmatic-launch chooses which); speed-up: default / "
         "tuned; (older source): measured only with "
         "another version of the template's source. vendor: the vendor library's time for the problem (recorded "
         "with ktune vendor; copy: the same bytes at the best copy bandwidth of this log). vs "
         "vendor: tuned speed relative to the vendor reference; - when the log holds no vendor "
         "measurement.</p>\n";
  if (!unusable_note.empty()) out << "<p class=\"note\">" << esc(unusable_note) << "</p>\n";
  if (!unranked_note.empty()) out << "<p class=\"note\">" << esc(unranked_note) << "</p>\n";
  out << "<h2>Trials by status</h2>\n" << status_svg(statuses) << "\n";
  for (const auto& [key, task] : tasks) {
    out << "<h2>" << esc(key) << "</h2>\n<p class=\"note\">";
    for (const auto& [status, n] : task.status_counts) out << esc(status) << ": " << n << " &nbsp; ";
    out << "</p>\n<div class=\"charts\"><div><h3>Convergence</h3>" << convergence_svg(task)
        << "</div><div><h3>Distribution of trial times</h3>" << distribution_svg(task)
        << "</div></div>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace ktune::cli
