// The CSV of a sweep (docs/sweeps.md): one row per (kernel, point) with the parameter values,
// a status, the metrics and the error of a failed point. Rows are appended as points finish;
// a finished sweep's file is rewritten sorted by point, so that it is the same whatever the
// order the points ran in.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/driver/sweep/sweep_spec.h"
#include "sim/observe/sim_result.h"

namespace tandem {

class SweepTable {
 public:
  explicit SweepTable(const SweepSpec& spec);

  std::string header() const;
  // The metric cells of one simulation, comma-separated (computed in the point's process),
  // then a newline and its provenance cells (pipeline, model file, model hash, version).
  std::string metric_cells(const SimResult& r) const;
  // A whole row from metric_cells' text; `cells` empty for a failed point.
  std::string row(size_t point, const std::string& status, const std::string& cells, const std::string& error) const;

  // Points already in `csv` (for --resume); an Error when its header is not this sweep's.
  std::set<size_t> done_points(const std::string& csv) const;

  // How many rows of `csv` have each status (ok, racy, error, miscompiled, internal-error).
  std::map<std::string, size_t> status_counts(const std::string& csv) const;

  // One line per failed row of `csv` (error, timeout, internal-error, miscompiled), in point
  // order: "point 1 (k.kir; spaces.sbuf.bytes_per_partition 64), error: MESSAGE".
  std::vector<std::string> failed_points(const std::string& csv) const;

 private:
  const SweepSpec& spec_;
  std::vector<std::string> engines_;  // compute engines of the base models, for utilization
  std::vector<std::string> spaces_;   // bounded spaces of the base models, for the space metrics
  std::vector<std::string> metric_columns_;
};

// --resume after an interrupted row write: a last row without its newline is cut off the
// file (rows never hold a newline). Returns that row's text, or "" when the file ends whole.
std::string drop_torn_row(const std::string& csv);

// Rewrites a CSV with its rows sorted by their first field (the point), atomically.
void sort_csv_rows(const std::string& path);

}  // namespace tandem
