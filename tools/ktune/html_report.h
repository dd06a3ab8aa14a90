// `ktune report` page: a self-contained HTML file (inline SVG plots, inline CSS, no scripts or
// network) summarizing a tuning log: the tuned-vs-default-vs-vendor table, convergence curves
// (best-so-far median vs trial, one line per run) and the distribution of trial times per
// task, and failure counts by status.
#pragma once

#include <string>

#include "ktune/log.h"

namespace ktune::cli {

/// The whole HTML page for a log; `title` heads it. Its best table ranks each task as
/// best_rows() does with `programmatic_launch`.
std::string render_html_report(const TuningLog& log, const std::string& title,
                               bool programmatic_launch = false);

}  // namespace ktune::cli
