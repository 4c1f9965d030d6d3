#include "sim/report/csv_tables.h"

#include <fmt/printf.h>

#include "sched/support/output.h"
#include "sim/report/metrics.h"

namespace tandem {

namespace {

std::string stall_header() {
  std::string h;
  for (size_t i = 0; i < static_cast<size_t>(StallReason::Count); ++i)
    h += std::string(",stall_") + stall_reason_name(static_cast<StallReason>(i)) + "_ns";
  return h;
}

std::string stall_cells(const StallArray& s) {
  std::string cells;
  for (Picos ps : s) cells += fmt::sprintf(",%.3f", ps_to_ns(ps));
  return cells;
}

// One table: `names` columns first, then every metric of `scope`.
class Table {
 public:
  Table(const std::string& names, MetricScope scope, bool stalls) : scope_(scope), stalls_(stalls) {
    text_ = names;
    for (const MetricInfo& m : metric_table())
      if (m.scope == scope) text_ += "," + std::string(m.name);
    if (stalls) text_ += stall_header();
    text_ += "\n";
  }

  void row(const std::string& names, const MetricSubject& s, const StallArray* stalls = nullptr) {
    text_ += names;
    for (const MetricInfo& m : metric_table())
      if (m.scope == scope_) text_ += "," + fmt::sprintf(m.format, metric_value(m.id, s));
    if (stalls_) text_ += stall_cells(*stalls);
    text_ += "\n";
  }

  const std::string& text() const { return text_; }

 private:
  MetricScope scope_;
  bool stalls_;
  std::string text_;
};

}  // namespace

std::map<std::string, std::string> format_csv_tables(const SimResult& r) {
  Table units("unit,kind", MetricScope::Unit, true);
  for (const UnitResult& u : r.units)
    units.row(csv_cell(u.name) + (u.is_queue ? ",dma queue" : ",engine"), {r, &u}, &u.stall_ps);

  Table loops("loop,bound_resource,recurrence_cause,limiter", MetricScope::Loop, false);
  Table iterations("loop", MetricScope::Iteration, false);
  for (const LoopResult& l : r.loops) {
    loops.row(csv_cell(l.iv) + "," + csv_cell(l.bound_resource) + "," + csv_cell(l.recurrence_cause) + "," +
                  csv_cell(l.limiter()),
              {r, nullptr, &l});
    for (const IterationResult& it : l.iterations) iterations.row(csv_cell(l.iv), {r, nullptr, &l, &it});
  }

  Table profile("instruction,opcode,unit", MetricScope::Instruction, true);
  const Picos busy = profile_busy_ps(r);
  for (const InstProfile& p : r.profile)
    profile.row(csv_cell(p.name) + "," + csv_cell(p.opcode) + "," + csv_cell(p.unit),
                {r, nullptr, nullptr, nullptr, nullptr, &p, busy}, &p.stall_ps);

  return {{"units.csv", units.text()},
          {"loops.csv", loops.text()},
          {"iterations.csv", iterations.text()},
          {"profile.csv", profile.text()}};
}

}  // namespace tandem
