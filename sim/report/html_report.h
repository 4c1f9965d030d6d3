// The HTML report (tandem sim/ab/sweep --report): one self-contained file, inline SVG and CSS,
// no script and no network. Built from the tandem.sim/1 JSON documents, so that a report of
// an A/B run (each simulation in its own process) is made the same way as one of a single
// simulation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/report/ab_report.h"

namespace tandem {

// A simulation: its timeline (first, middle and last iteration of the main loop, when the
// document carries one), overlap and exposed DMA per iteration, unit utilisation and stall
// breakdown, each loop's II against its bound.
std::string html_sim_report(const std::string& sim_json);

// Two simulations side by side, labelled by their pipelines (and models), below the A/B table
// (an HTML table); their timelines share one time scale.
std::string html_ab_report(const AbInput& a, const AbInput& b);

// A sweep's CSV: each metric against each varied parameter (one series per kernel), and the
// best point (least total time, or least of the first metric without it).
std::string html_sweep_report(const std::string& title, const std::vector<std::string>& parameters,
                              const std::string& csv_text);

// The rows of a CSV, each a list of its cells (quoted cells as csv_cell writes them).
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// tandem tune's search: its summary, the best time found against the points evaluated (the
// references, e.g. `default`, as flat lines; an infinite time, nothing clean yet, is left
// out), and each simulation given (pipeline, tandem.sim/1 document; the best first) side by side,
// their timelines on one time scale.
std::string html_tune_report(const std::string& title, const std::string& summary,
                             const std::vector<double>& best_so_far,
                             const std::vector<std::pair<std::string, double>>& references,
                             const std::vector<std::pair<std::string, std::string>>& sims);

}  // namespace tandem
