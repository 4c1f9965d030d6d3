#include "sim/driver/sweep/sweep_table.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "sched/support/error.h"
#include "sched/support/output.h"
#include "sched/target/target.h"
#include "sim/report/html_report.h"
#include "sim/report/metrics.h"

namespace tandem {

namespace {

// After the error column: where each point's result came from (empty for a failed point).
constexpr const char* kProvenanceColumns = "run_pipeline,model_file,model_hash,tandem";

}  // namespace

SweepTable::SweepTable(const SweepSpec& spec) : spec_(spec) {
  std::set<std::string> engines, spaces;
  for (const std::string& model : sweep_base_models(spec)) {
    const auto target = load_target(model);
    for (const auto& [name, e] : target->engines) engines.insert(name);
    // The spaces a result lists in spaces[]: those with a capacity, register files aside.
    for (const auto& [name, space] : target->spaces)
      if (space.capacity() > 0 && !space.is_register_file()) spaces.insert(name);
  }
  engines_.assign(engines.begin(), engines.end());
  spaces_.assign(spaces.begin(), spaces.end());
  for (const std::string& m : spec.metrics) {
    if (m == "utilization") {
      for (const std::string& e : engines_) metric_columns_.push_back("util_" + e);
      metric_columns_.push_back("util_dma_queues");
    } else if (find_metric(m, MetricScope::Space)) {
      for (const std::string& sp : spaces_) metric_columns_.push_back(sp + "." + m);
    } else {
      metric_columns_.push_back(m);
    }
  }
}

std::string SweepTable::header() const {
  std::string h = "point,kernel";
  for (const SweepParameter& p : spec_.parameters) h += "," + csv_cell(p.name);
  h += ",status";
  for (const std::string& c : metric_columns_) h += "," + c;
  return h + ",error," + kProvenanceColumns;
}

std::string SweepTable::metric_cells(const SimResult& r) const {
  const LoopResult* loop = main_loop(r);
  std::vector<std::string> cells;
  for (const std::string& name : spec_.metrics) {
    if (name == "utilization") {
      const Metric util = Metric::unit_utilization;
      double queues = 0;
      int n = 0;
      for (const std::string& e : engines_) {
        auto u = std::find_if(r.units.begin(), r.units.end(),
                              [&](const UnitResult& x) { return !x.is_queue && x.name == e; });
        cells.push_back(format_metric(util, u == r.units.end() ? 0.0 : metric_value(util, {r, &*u})));
      }
      for (const UnitResult& u : r.units)
        if (u.is_queue) {
          queues += metric_value(util, {r, &u});
          ++n;
        }
      cells.push_back(format_metric(util, n ? queues / n : 0.0));
    } else if (const MetricInfo* sm = find_metric(name, MetricScope::Space)) {
      // A space the point's model does not bound is empty.
      for (const std::string& sp : spaces_) {
        auto at = std::find_if(r.spaces.begin(), r.spaces.end(), [&](const SpaceResult& x) { return x.name == sp; });
        MetricSubject subject{r};
        if (at != r.spaces.end()) subject.space = &*at;
        cells.push_back(at == r.spaces.end() ? "" : format_metric(sm->id, metric_value(sm->id, subject)));
      }
    } else if (name == "lower_bound_resource") {
      cells.push_back(csv_cell(r.lower_bound_resource));
    } else if (name == "bound_resource" || name == "recurrence_cause") {
      cells.push_back(!loop ? "" : csv_cell(name == "bound_resource" ? loop->bound_resource : loop->recurrence_cause));
    } else if (const MetricInfo* k = find_metric(name, MetricScope::Kernel)) {
      cells.push_back(format_metric(k->id, metric_value(k->id, {r})));
    } else if (const MetricInfo* l = find_metric(name, MetricScope::Loop)) {
      // A loop metric of a kernel without loops is empty.
      cells.push_back(loop ? format_metric(l->id, metric_value(l->id, {r, nullptr, loop})) : "");
    }
  }
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  // The provenance cells go after the error column, on a line of their own until row().
  const Provenance& p = r.provenance;
  return out + "\n" + csv_cell(p.pipeline) + "," + csv_cell(p.model_file) + "," + p.model_hash + "," +
         csv_cell(p.tandem);
}

std::string SweepTable::row(size_t point, const std::string& status, const std::string& cells,
                            const std::string& error) const {
  const size_t n = spec_.points.size();
  const std::vector<std::string>& values = spec_.points[point % n];
  std::string r = std::to_string(point) + "," + csv_cell(spec_.kernels[point / n]);
  for (const std::string& v : values) r += "," + csv_cell(v);
  const size_t eol = cells.find('\n');
  r += "," + status + ",";
  r += cells.empty() ? std::string(metric_columns_.size() - 1, ',') : cells.substr(0, eol);
  return r + "," + csv_cell(error) + "," + (eol == std::string::npos ? std::string(",,,") : cells.substr(eol + 1));
}

std::set<size_t> SweepTable::done_points(const std::string& csv) const {
  std::set<size_t> done;
  std::ifstream in(csv);
  if (!in) return done;
  std::string line;
  if (!std::getline(in, line)) return done;
  if (line != header())
    throw Error(SourceLoc{intern_file_name(csv), 1, 1},
                "--resume: this file was written by a different sweep (its header differs)");
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    try {
      done.insert(static_cast<size_t>(std::stoull(line.substr(0, line.find(',')))));
    } catch (const std::exception&) {
      throw Error(SourceLoc{intern_file_name(csv), line_no, 1}, "--resume: row does not start with a point number");
    }
  }
  return done;
}

std::map<std::string, size_t> SweepTable::status_counts(const std::string& csv) const {
  // The status is the cell after the point, the kernel and the parameter values (cells with a
  // comma or a quote are quoted, as csv_cell writes them).
  std::map<std::string, size_t> counts;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // the header
  const size_t status_cell = 2 + spec_.parameters.size();
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    size_t cell = 0;
    bool quoted = false;
    std::string value;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted) {
        if (cell++ == status_cell) break;
        value.clear();
      } else if (cell == status_cell) {
        value += c;
      }
    }
    ++counts[value];
  }
  return counts;
}

std::vector<std::string> SweepTable::failed_points(const std::string& csv) const {
  std::ifstream in(csv);
  const std::vector<std::vector<std::string>> rows =
      parse_csv(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  std::vector<std::string> lines;
  if (rows.empty()) return lines;
  const std::vector<std::string>& header = rows[0];
  const size_t status = 2 + spec_.parameters.size();
  const size_t error = static_cast<size_t>(std::find(header.begin(), header.end(), "error") - header.begin());
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string>& r = rows[i];
    if (r.size() != header.size() || r[status] == "ok" || r[status] == "racy") continue;
    std::string line = "point " + r[0] + " (" + r[1].substr(r[1].rfind('/') + 1);
    for (size_t p = 0; p < spec_.parameters.size(); ++p) line += (p ? ", " : "; ") + header[2 + p] + " " + r[2 + p];
    const std::string& message = error < r.size() ? r[error] : std::string();
    lines.push_back(line + "), " + r[status] + ": " + message.substr(0, message.find('\n')));
  }
  return lines;
}

std::string drop_torn_row(const std::string& csv) {
  std::ifstream in(csv, std::ios::binary);
  if (!in) return "";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  if (text.empty() || text.back() == '\n') return "";
  const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  std::error_code ec;
  std::filesystem::resize_file(csv, keep, ec);
  if (ec)
    throw Error(SourceLoc{intern_file_name(csv), 0, 0}, "--resume: cannot drop the torn last row: " + ec.message());
  return text.substr(keep);
}

void sort_csv_rows(const std::string& path) {
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  std::map<size_t, std::string> rows;
  while (std::getline(in, line))
    if (!line.empty()) rows[static_cast<size_t>(std::stoull(line.substr(0, line.find(','))))] = line;
  std::string text = header + "\n";
  for (const auto& [point, row] : rows) text += row + "\n";
  write_file_atomic(path, text);
}

}  // namespace tandem
