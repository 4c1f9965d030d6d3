#include "sim/report/ab_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <fmt/printf.h>
#include <nlohmann/json.hpp>

#include "sim/report/metrics.h"
#include "sim/report/report.h"

namespace tandem {

namespace {

struct Row {
  std::string name;
  double a = 0, b = 0;
  bool percent = false;  // a fraction shown as %
  bool count = false;    // a whole number
  bool cycles = false;   // cycles: whole when both values are
};

// The A/B rows: every compared metric of the table, on the kernel, on each loop both runs
// have (matched by name, in order), and on each engine and queue both have.
std::vector<Row> compare(const SimResult& a, const SimResult& b) {
  std::vector<Row> rows;
  auto add = [&](const std::string& prefix, Metric m, const MetricSubject& x, const MetricSubject& y) {
    const MetricInfo& info = metric_info(m);
    rows.push_back({prefix + info.name, metric_value(m, x), metric_value(m, y), std::string(info.unit) == "fraction",
                    std::string(info.unit) == "count", std::string(info.unit) == "cycles"});
  };
  for (const MetricInfo& m : metric_table())
    if (m.compared && m.scope == MetricScope::Kernel) add("", m.id, {a}, {b});
  for (size_t i = 0; i < a.loops.size() && i < b.loops.size(); ++i) {
    const LoopResult &la = a.loops[i], &lb = b.loops[i];
    if (la.iv != lb.iv) continue;
    for (const MetricInfo& m : metric_table()) {
      if (!m.compared || m.scope != MetricScope::Loop) continue;
      if (m.id == Metric::loop_wmma_bubble_cycles && la.wmma_instances + lb.wmma_instances == 0) continue;
      add("loop " + la.iv + " ", m.id, {a, nullptr, &la}, {b, nullptr, &lb});
    }
  }
  for (const UnitResult& ua : a.units)
    for (const UnitResult& ub : b.units) {
      if (ua.name != ub.name) continue;
      for (const MetricInfo& m : metric_table())
        if (m.compared && m.scope == MetricScope::Unit) add(ua.name + " ", m.id, {a, &ua}, {b, &ub});
    }
  return rows;
}

// min / median / max of a loop's per-iteration overlap.
std::string overlap_summary(const LoopResult& loop) {
  std::vector<double> v;
  for (const IterationResult& it : loop.iterations) v.push_back(it.overlap);
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  return fmt::sprintf("%.1f%% / %.1f%% / %.1f%%", 100 * v.front(), 100 * v[v.size() / 2], 100 * v.back());
}

// A figure the clock makes a whole number of cycles (up to the ns-to-cycles conversion).
bool whole(double v) { return std::abs(v - std::round(v)) < 1e-6; }

// B / A; "-" when A is zero (no ratio).
std::string ratio(double a, double b) { return a != 0 ? fmt::sprintf("%.3f", b / a) : "-"; }

}  // namespace

AbTable ab_table(const SimResult& a, const SimResult& b) {
  AbTable t;
  for (const Row& r : compare(a, b)) {
    if (r.percent)
      t.rows.push_back({r.name, fmt::sprintf("%.1f%%", 100 * r.a), fmt::sprintf("%.1f%%", 100 * r.b),
                        fmt::sprintf("%+.1f%%", 100 * (r.b - r.a)), ""});
    else if (r.count || (r.cycles && whole(r.a) && whole(r.b)))
      t.rows.push_back({r.name, fmt::sprintf("%.0f", r.a), fmt::sprintf("%.0f", r.b), fmt::sprintf("%+.0f", r.b - r.a),
                        ratio(r.a, r.b)});
    else
      t.rows.push_back({r.name, fmt::sprintf("%.3f", r.a), fmt::sprintf("%.3f", r.b), fmt::sprintf("%+.3f", r.b - r.a),
                        ratio(r.a, r.b)});
  }
  for (size_t i = 0; i < a.loops.size() && i < b.loops.size(); ++i)
    if (a.loops[i].iv == b.loops[i].iv)
      t.overlaps.push_back({a.loops[i].iv, overlap_summary(a.loops[i]), overlap_summary(b.loops[i])});
  return t;
}

std::string format_ab_race_banner(const AbInput& a, const AbInput& b) {
  std::string banner;
  auto side = [&](const char* name, const AbInput& in) {
    const SimResult r = parse_sim_json(in.sim_json);
    const size_t n = r.hazards.size();
    if (n == 0) return;
    banner += std::string("RACES: ") + name + " (" + in.label() + ") races: " + std::to_string(n) +
              (n == 1 ? " race" : " races") +
              "; the schedule breaks program order and its figures are not a valid result\n";
    for (const HazardReport& h : r.hazards) banner += "  " + h.message + "\n";
  };
  side("A", a);
  side("B", b);
  return banner;
}

std::string format_ab_summary(const AbInput& a, const AbInput& b) {
  const SimResult ra = parse_sim_json(a.sim_json), rb = parse_sim_json(b.sim_json);
  std::ostringstream o;
  if (const std::string banner = format_ab_race_banner(a, b); !banner.empty()) o << banner << "\n";
  auto model_file = [](const SimResult& r) {
    return "model file " + r.provenance.model_file + " (" + r.provenance.model_hash + ")";
  };
  if (a.model.empty() && b.model.empty()) {
    o << "kernel @" << ra.kernel << " on " << ra.model << "\n";
    o << "  A: " << a.pipeline << "\n  B: " << b.pipeline << "\n";
    if (!ra.provenance.model_file.empty()) o << "  " << model_file(ra) << ", tandem " << ra.provenance.tandem << "\n";
  } else {
    o << "kernel @" << ra.kernel << ", tandem " << ra.provenance.tandem << "\n";
    o << "  A: " << a.label() << ", " << model_file(ra) << "\n  B: " << b.label() << ", " << model_file(rb) << "\n";
  }
  o << "\n";
  o << fmt::sprintf("%-46s %16s %16s %16s %9s\n", "", "A", "B", "B - A", "B / A");
  const AbTable table = ab_table(ra, rb);
  for (const AbTable::Row& r : table.rows)
    o << fmt::sprintf("%-46s %16s %16s %16s %9s\n", r.name, r.a, r.b, r.delta, r.ratio);
  auto loop_named = [](const SimResult& r, const std::string& iv) {
    return std::find_if(r.loops.begin(), r.loops.end(), [&](const LoopResult& l) { return l.iv == iv; });
  };
  for (const AbTable::Overlap& l : table.overlaps) {
    const auto la = loop_named(ra, l.loop), lb = loop_named(rb, l.loop);
    if (la != ra.loops.end() && lb != rb.loops.end())
      o << "\nloop " << l.loop << ": its bounds, and the span bound efficiency divides by\n"
        << "  A: " << format_loop_bounds(*la) << "\n  B: " << format_loop_bounds(*lb) << "\n";
    o << (la != ra.loops.end() && lb != rb.loops.end() ? "" : "\n") << "loop " << l.loop
      << " overlap per iteration (min / median / max)\n"
      << "  A: " << l.a << "\n  B: " << l.b << "\n";
  }
  return o.str();
}

std::string format_ab_json(const AbInput& a, const AbInput& b) {
  using Json = nlohmann::ordered_json;
  const Json ja = Json::parse(a.sim_json), jb = Json::parse(b.sim_json);
  Json diff = Json::array();
  for (const Row& r : compare(parse_sim_json(a.sim_json), parse_sim_json(b.sim_json))) {
    Json d = {{"name", r.name}, {"a", r.a}, {"b", r.b}, {"delta", r.b - r.a}};
    d["ratio"] = r.a != 0 ? Json(r.b / r.a) : Json(nullptr);
    diff.push_back(d);
  }
  const size_t races_a = ja.at("hazards").size(), races_b = jb.at("hazards").size();
  Json racy = Json::array();
  if (races_a) racy.push_back("a");
  if (races_b) racy.push_back("b");
  Json out = {{"schema", "tandem.ab/1"},
              {"a", {{"pipeline", a.pipeline}, {"model", ja.at("model")}, {"races", races_a}, {"result", ja}}},
              {"b", {{"pipeline", b.pipeline}, {"model", jb.at("model")}, {"races", races_b}, {"result", jb}}},
              {"racy", racy},
              {"diff", diff}};
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";  // a name that is not UTF-8: U+FFFD
}

}  // namespace tandem
