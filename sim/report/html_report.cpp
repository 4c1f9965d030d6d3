#include "sim/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/printf.h>

#include "sim/report/metrics.h"
#include "sim/report/report.h"

namespace tandem {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string fmt(double v, const char* f = "%.3f") { return fmt::sprintf(f, v); }
double ns(Picos ps) { return ps_to_ns(ps); }

const char* kPalette[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#000000"};
std::string color(size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

const char* kStyle = R"(<style>
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 14px; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
svg { display: block; margin: 8px 0; max-width: 100%; height: auto; } svg text { font: 11px system-ui, sans-serif; fill: #333; }
.columns { display: flex; gap: 32px; } .columns > div { flex: 1; min-width: 0; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; } .best { background: #eef6ee; }
.race-banner { background: #fdecec; border: 2px solid #c62828; color: #8e0000; padding: 8px 12px; font-weight: bold; }
ul.hazards { color: #8e0000; font-family: monospace; font-size: 12px; } tr.racy td { background: #fdecec; }
th { vertical-align: bottom; } table.relative { margin-bottom: 12px; } tr.baseline td { font-weight: bold; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; } td.kernel { white-space: nowrap; }
.legend .key { display: inline-block; margin-right: 16px; white-space: nowrap; }
.legend svg { display: inline-block; margin: 0 4px 0 0; vertical-align: middle; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(400px, 1fr)); gap: 8px 24px; }
.grid figure { margin: 0; min-width: 0; } .grid figcaption { font-weight: 600; }
.grid svg { width: 100%; max-width: 640px; } ol.categories { font: 12px monospace; overflow-wrap: anywhere; }
.lanes { display: grid; grid-template-columns: 6em minmax(0, 1fr); column-gap: 8px; margin: 8px 0; }
.lanes .names > div { height: 18px; line-height: 18px; font-size: 12px; white-space: nowrap; }
.lanes svg { width: 100%; max-width: none; margin: 0; } .lanes .legend { margin: 4px 0 0; font-size: 12px; }
.lanes .axis { display: flex; justify-content: space-between; font-size: 12px; color: #555; }
.sims { display: grid; grid-template-columns: repeat(auto-fit, minmax(580px, 1fr)); gap: 0 32px; }
.sims > div { min-width: 0; } td.error, table.failed th:last-child { text-align: left; overflow-wrap: anywhere; }
table.profile, table.bounds, table.sol, table.advice { font-size: 12px; } table.advice code { word-break: break-all; } table.sol { margin-top: 12px; } p.gaps { color: #8e0000; } .opcode { color: #666; }
table.profile td, table.profile th { padding: 2px 6px; } table.bounds td:last-child, table.bounds th:last-child { text-align: left; }
</style>
)";

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + esc(title) + "</title>\n" +
         kStyle + "</head>\n<body>\n<h1>" + esc(title) + "</h1>\n" + body + "</body>\n</html>\n";
}

// A line chart: x positions (numeric) or categories, one polyline with points per series.
struct Series {
  std::string name;
  std::vector<double> x, y;                          // in x order
  std::vector<std::pair<double, std::string>> gaps;  // an x without a value, and why
};

std::string line_chart(const std::string& cls, const std::string& x_label, const std::string& y_label,
                       const std::vector<Series>& series, const std::vector<std::string>& categories = {}) {
  const double w = 560, h = 220, l = 80, r = 16, t = 16, b = 40;  // l: room for %.4g labels
  double x0 = 1e300, x1 = -1e300, y0 = 0, y1 = -1e300;
  for (const Series& s : series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      x0 = std::min(x0, s.x[i]);
      x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.y[i]);
    }
  if (x0 > x1) x0 = 0, x1 = 1;
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  auto px = [&](double x) { return l + (x - x0) / (x1 - x0) * (w - l - r); };
  auto py = [&](double y) { return h - b - (y - y0) / (y1 - y0) * (h - t - b); };
  std::ostringstream o;
  o << "<svg class=\"chart " << cls << "\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
    << "\" role=\"img\">\n";
  o << "<line x1=\"" << l << "\" y1=\"" << h - b << "\" x2=\"" << w - r << "\" y2=\"" << h - b
    << "\" stroke=\"#888\"/>\n";
  o << "<line x1=\"" << l << "\" y1=\"" << t << "\" x2=\"" << l << "\" y2=\"" << h - b << "\" stroke=\"#888\"/>\n";
  o << "<text x=\"" << l - 4 << "\" y=\"" << py(y1) + 4 << "\" text-anchor=\"end\">" << fmt(y1, "%.4g") << "</text>\n";
  o << "<text x=\"" << l - 4 << "\" y=\"" << py(y0) + 4 << "\" text-anchor=\"end\">" << fmt(y0, "%.4g") << "</text>\n";
  if (categories.empty()) {
    o << "<text x=\"" << l << "\" y=\"" << h - b + 14 << "\">" << fmt(x0, "%.4g") << "</text>\n";
    o << "<text x=\"" << w - r << "\" y=\"" << h - b + 14 << "\" text-anchor=\"end\">" << fmt(x1, "%.4g")
      << "</text>\n";
  } else {
    for (size_t i = 0; i < categories.size(); ++i)
      o << "<text x=\"" << px(static_cast<double>(i)) << "\" y=\"" << h - b + 14 << "\" text-anchor=\"middle\">"
        << esc(categories[i].size() > 24 ? categories[i].substr(0, 21) + "..." : categories[i]) << "</text>\n";
  }
  o << "<text x=\"" << (l + w - r) / 2 << "\" y=\"" << h - 6 << "\" text-anchor=\"middle\">" << esc(x_label)
    << "</text>\n";
  o << "<text x=\"12\" y=\"" << (t + h - b) / 2 << "\" transform=\"rotate(-90 12 " << (t + h - b) / 2
    << ")\" text-anchor=\"middle\">" << esc(y_label) << "</text>\n";
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color(k) << "\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < s.x.size(); ++i)
      o << (i ? " " : "") << fmt(px(s.x[i]), "%.1f") << "," << fmt(py(s.y[i]), "%.1f");
    o << "\"/>\n";
    for (size_t i = 0; i < s.x.size(); ++i)
      o << "<circle class=\"point\" cx=\"" << fmt(px(s.x[i]), "%.1f") << "\" cy=\"" << fmt(py(s.y[i]), "%.1f")
        << "\" r=\"3\" fill=\"" << color(k) << "\"><title>" << esc(s.name) << ": " << fmt(s.y[i], "%.6g")
        << "</title></circle>\n";
  }
  for (size_t k = 0; k < series.size() && series.size() > 1; ++k)
    o << "<text x=\"" << l + 8 << "\" y=\"" << t + 12 * (k + 1) << "\" style=\"fill:" << color(k) << "\">"
      << esc(series[k].name) << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

// A sweep chart: one series per kernel (series[i] in the colour of kernel i, dashed past the
// palette), x numeric (linear or log) or categories (by number, their values listed apart),
// y from 0 (a ratio axis marks 1, the baseline). Its metric is named by the caption around
// it and the kernels by the page's legend, so the SVG holds only tick labels, each placed
// where it clears the others and the edges.
std::string sweep_chart(const std::vector<Series>& series, const std::vector<std::string>& categories, bool log_x,
                        bool relative) {
  const double w = 440, h = 220, l = 56, r = 14, t = 10, b = 36,
               char_w = 7.5;  // char_w: a generous width of one 11 px character
  std::vector<double> xs;
  double y1 = relative ? 1 : 0, y0 = 0;
  for (const Series& s : series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      xs.push_back(s.x[i]);
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.y[i]);
    }
    for (const auto& g : s.gaps) xs.push_back(g.first);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  if (xs.empty()) return "";
  if (y1 <= y0) y1 = y0 + 1;
  auto fx = [&](double x) { return log_x ? std::log(x) : x; };
  const double x0 = fx(xs.front()), x1 = xs.size() > 1 ? fx(xs.back()) : x0 + 1;
  auto px = [&](double x) { return l + (xs.size() > 1 ? (fx(x) - x0) / (x1 - x0) : 0.5) * (w - l - r); };
  auto py = [&](double y) { return h - b - (y - y0) / (y1 - y0) * (h - t - b); };
  std::ostringstream o;
  o << "<svg class=\"chart sweep\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
    << "\" role=\"img\">\n";
  o << "<line x1=\"" << l << "\" y1=\"" << h - b << "\" x2=\"" << w - r << "\" y2=\"" << h - b
    << "\" stroke=\"#888\"/>\n";
  o << "<line x1=\"" << l << "\" y1=\"" << t << "\" x2=\"" << l << "\" y2=\"" << h - b << "\" stroke=\"#888\"/>\n";
  if (relative)
    o << "<line class=\"baseline\" x1=\"" << l << "\" y1=\"" << fmt(py(1), "%.1f") << "\" x2=\"" << w - r << "\" y2=\""
      << fmt(py(1), "%.1f") << "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n";
  // Y labels: the top, the baseline, 0, each kept only if 12 units clear of those kept.
  std::vector<double> kept;
  for (double y : {y1, relative ? 1.0 : y0, y0}) {
    const double at = py(y);
    if (std::any_of(kept.begin(), kept.end(), [&](double k) { return std::abs(k - at) < 12; })) continue;
    kept.push_back(at);
    o << "<text x=\"" << l - 4 << "\" y=\"" << fmt(at + 4, "%.1f") << "\" text-anchor=\"end\">"
      << fmt(y, relative ? "%.3g" : "%.4g") << (relative ? "&times;" : "") << "</text>\n";
  }
  // X labels: each value (a category by its number when its text is too long for its slot),
  // skipped where it would run into the previous label.
  const double slot = (w - l - r) / static_cast<double>(std::max<size_t>(1, xs.size()));
  double right = -1e300;
  for (double x : xs) {
    std::string label = fmt(x, "%.4g");
    if (!categories.empty()) {
      const std::string& c = categories[static_cast<size_t>(x)];
      label = static_cast<double>(c.size()) * char_w <= slot - 6 ? c : "#" + std::to_string(static_cast<size_t>(x) + 1);
    }
    const double half = static_cast<double>(label.size()) * char_w / 2;
    const double at = std::min(std::max(px(x), half + 2), w - half - 2);
    if (at - half < right + 6) continue;
    right = at + half;
    o << "<text x=\"" << fmt(at, "%.1f") << "\" y=\"" << h - b + 20 << "\" text-anchor=\"middle\">" << esc(label)
      << "</text>\n";
  }
  if (log_x) o << "<text x=\"" << w - r << "\" y=\"" << h - 2 << "\" text-anchor=\"end\">log scale</text>\n";
  const size_t palette = sizeof kPalette / sizeof kPalette[0];
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    // A line joins neighbouring values only: a gap between two values breaks it.
    for (size_t from = 0; from < s.x.size();) {
      size_t to = from + 1;
      while (to < s.x.size() && std::none_of(s.gaps.begin(), s.gaps.end(),
                                             [&](const auto& g) { return g.first > s.x[to - 1] && g.first < s.x[to]; }))
        ++to;
      if (to - from > 1) {
        o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color(k) << "\" stroke-width=\"1.5\""
          << (k < palette ? "" : " stroke-dasharray=\"5 3\"") << " points=\"";
        for (size_t i = from; i < to; ++i)
          o << (i > from ? " " : "") << fmt(px(s.x[i]), "%.1f") << "," << fmt(py(s.y[i]), "%.1f");
        o << "\"/>\n";
      }
      from = to;
    }
    // A gap: a cross in the kernel's colour just above the x axis, one row up per kernel.
    for (const auto& [x, why] : s.gaps) {
      const double cx = px(x), cy = h - b - 6 - 9 * static_cast<double>(k % 4);
      o << "<path class=\"gap\" d=\"M" << fmt(cx - 4, "%.1f") << " " << fmt(cy - 4, "%.1f")
        << "l8 8m0 -8l-8 8\" stroke=\"" << color(k) << "\" stroke-width=\"2\"><title>" << esc(s.name)
        << ": no value at " << fmt(x, "%.6g") << " (" << esc(why) << ")</title></path>\n";
    }
    for (size_t i = 0; i < s.x.size(); ++i)
      o << "<circle class=\"point\" cx=\"" << fmt(px(s.x[i]), "%.1f") << "\" cy=\"" << fmt(py(s.y[i]), "%.1f")
        << "\" r=\"3\" fill=\"" << color(k) << "\"><title>" << esc(s.name) << ": " << fmt(s.y[i], "%.6g")
        << (relative ? "&times;" : "") << "</title></circle>\n";
  }
  o << "</svg>\n";
  return o.str();
}

// Lanes: a column of unit names in HTML beside one SVG of bars, a lane per unit, stretched to
// the width of its column (preserveAspectRatio none: x is time, 0 to kLaneWidth). The SVG
// holds no text, so no scaling shrinks a label: names, ticks and legends are HTML.
constexpr double kLaneWidth = 1000, kLaneRow = 18;

std::string lanes_open(const std::string& svg_class, const std::vector<std::string>& names,
                       const std::string& attributes = "") {
  const double h = kLaneRow * static_cast<double>(names.size());
  std::ostringstream o;
  o << "<div class=\"lanes\">\n<div class=\"names\">";
  for (const std::string& n : names) o << "<div>" << esc(n) << "</div>";
  o << "</div>\n<div class=\"plot\"><svg class=\"" << svg_class << "\"" << attributes << " viewBox=\"0 0 " << kLaneWidth
    << " " << h << "\" preserveAspectRatio=\"none\" style=\"height:" << h << "px\" role=\"img\">\n";
  for (size_t i = 1; i < names.size(); ++i)
    o << "<line x1=\"0\" y1=\"" << kLaneRow * static_cast<double>(i) << "\" x2=\"" << kLaneWidth << "\" y2=\""
      << kLaneRow * static_cast<double>(i) << "\" stroke=\"#eee\" vector-effect=\"non-scaling-stroke\"/>\n";
  return o.str();
}

// Closes the lanes, with `below` (the axis, a legend) under the bars.
std::string lanes_close(const std::string& below) { return "</svg>\n" + below + "</div>\n</div>\n"; }

// Tracks per unit: each span a bar over the iteration's time. The axis runs from the group's
// first start for `axis_ns` (at least the group's own length): reports drawn side by side
// pass the same length, and so share one ns-per-px scale.
std::string timeline_html(const std::vector<const TimelineSpan*>& spans, const std::vector<std::string>& units,
                          const std::set<std::string>& queues, double axis_ns) {
  double t0 = 1e300, t1 = -1e300;
  for (const TimelineSpan* s : spans) {
    t0 = std::min(t0, ns(s->start_ps));
    t1 = std::max(t1, ns(s->end_ps));
  }
  const double length = std::max({t1 - t0, axis_ns, 1e-3});
  std::map<std::string, size_t> track;
  for (size_t i = 0; i < units.size(); ++i) track[units[i]] = i;
  auto px = [&](double t) { return (t - t0) / length * kLaneWidth; };
  std::ostringstream o;
  o << lanes_open("timeline", units, " data-axis-ns=\"" + fmt(length) + "\"");
  for (const TimelineSpan* s : spans) {
    const std::string& unit = s->unit;
    const double a = ns(s->start_ps), b = ns(s->end_ps);
    const bool queue = queues.count(unit) > 0;
    // Alternate iterations in a darker shade, so a window's iterations tell apart.
    const bool odd = s->iteration % 2 != 0;
    o << "<rect class=\"span\" x=\"" << fmt(px(a), "%.2f") << "\" y=\""
      << kLaneRow * static_cast<double>(track[unit]) + 3 << "\" width=\"" << fmt(std::max(1.0, px(b) - px(a)), "%.2f")
      << "\" height=\"" << kLaneRow - 6 << "\" fill=\""
      << (queue ? (odd ? "#2a8fae" : "#66ccee") : (odd ? "#223f66" : "#4477aa")) << "\"><title>" << esc(s->inst)
      << " (iteration " << s->iteration << ") on " << esc(unit) << ": " << fmt(a) << " - " << fmt(b)
      << " ns</title></rect>\n";
  }
  o << lanes_close("<div class=\"axis\"><span>" + fmt(t0) + " ns</span><span>" + fmt(t0 + length) +
                   " ns</span></div>\n");
  return o.str();
}

// Horizontal bars per unit: busy share, then each stall reason.
std::string units_html(const SimResult& r) {
  const std::vector<UnitResult>& units = r.units;
  const double total = std::max(1e-9, ns(r.total_ps));
  std::vector<std::string> reasons, names;
  for (size_t i = 0; i < static_cast<size_t>(StallReason::Count); ++i)
    reasons.push_back(std::string(stall_reason_name(static_cast<StallReason>(i))) + "_ns");
  for (const UnitResult& u : units) names.push_back(u.name);
  std::ostringstream o;
  o << lanes_open("units", names);
  for (size_t i = 0; i < units.size(); ++i) {
    const UnitResult& u = units[i];
    const double y = kLaneRow * static_cast<double>(i);
    double x = 0;
    auto bar = [&](double ns, const std::string& fill, const std::string& what) {
      const double width = ns / total * kLaneWidth;
      if (width <= 0) return;
      o << "<rect class=\"bar\" x=\"" << fmt(x, "%.2f") << "\" y=\"" << y + 3 << "\" width=\"" << fmt(width, "%.2f")
        << "\" height=\"" << kLaneRow - 6 << "\" fill=\"" << fill << "\"><title>" << esc(u.name) << " " << esc(what)
        << ": " << fmt(ns) << " ns (" << fmt(100 * ns / total, "%.1f") << "%)</title></rect>\n";
      x += width;
    };
    bar(ns(u.busy_ps), "#4477aa", "busy");
    for (size_t k = 0; k < reasons.size(); ++k) bar(ns(u.stall_ps[k]), color(k + 1), "stall " + reasons[k]);
  }
  std::ostringstream legend;
  legend << "<p class=\"legend\"><span class=\"key\"><span class=\"swatch\" style=\"background:#4477aa\"></span>busy"
         << "</span>";
  for (size_t k = 0; k < reasons.size(); ++k)
    legend << " <span class=\"key\"><span class=\"swatch\" style=\"background:" << color(k + 1) << "\"></span>"
           << esc(reasons[k]) << "</span>";
  legend << "</p>\n";
  o << lanes_close("<div class=\"axis\"><span>0</span><span>" + fmt(total) + " ns (the total)</span></div>\n" +
                   legend.str());
  return o.str();
}

// The races of a run: a banner and the one-line messages (nothing when it is clean).
std::string races_html(const SimResult& r) {
  if (r.hazards.empty()) return "";
  std::ostringstream o;
  o << "<p class=\"race-banner\">" << r.hazards.size() << (r.hazards.size() == 1 ? " race" : " races")
    << ": the schedule breaks program order; its figures are not a valid result</p>\n<ul class=\"hazards\">\n";
  for (const HazardReport& h : r.hazards) o << "<li>" << esc(h.message) << "</li>\n";
  o << "</ul>\n";
  return o.str();
}

// The timeline of the main loop in groups: its first iteration, consecutive iterations from
// the middle of the run together on one time axis (how far one iteration's work runs into the
// next), and its last iteration.
struct TimelineGroup {
  std::string label;
  std::vector<const TimelineSpan*> spans;
  double length_ns() const {
    double t0 = 1e300, t1 = -1e300;
    for (const TimelineSpan* s : spans) t0 = std::min(t0, ns(s->start_ps)), t1 = std::max(t1, ns(s->end_ps));
    return spans.empty() ? 0 : t1 - t0;
  }
};

std::vector<TimelineGroup> timeline_groups(const SimResult& r) {
  std::map<int64_t, std::vector<const TimelineSpan*>> by_iteration;
  for (const TimelineSpan& s : r.timeline) by_iteration[s.iteration].push_back(&s);
  std::vector<TimelineGroup> groups;
  std::vector<const TimelineSpan*> window;
  int64_t from = -1, to = -1;
  for (const auto& [iteration, spans] : by_iteration) {
    const bool edge = iteration == by_iteration.begin()->first || iteration == by_iteration.rbegin()->first;
    if (edge && by_iteration.size() > 2) {
      if (!window.empty() && iteration == by_iteration.rbegin()->first)
        groups.push_back(
            {"iterations " + std::to_string(from) + " to " + std::to_string(to) + " (steady state, shared time)",
             window});
      groups.push_back({"iteration " + std::to_string(iteration), spans});
      continue;
    }
    if (from < 0) from = iteration;
    to = iteration;
    window.insert(window.end(), spans.begin(), spans.end());
  }
  if (by_iteration.size() <= 2 && !window.empty())
    groups.push_back({"iterations " + std::to_string(from) + " to " + std::to_string(to), window});
  return groups;
}

// The time axis of each timeline group that reports drawn side by side share: the longest
// length of that group among them, so that all draw it at one ns-per-px scale.
std::vector<double> shared_timeline_axes(const std::vector<SimResult>& results) {
  std::vector<double> axes;
  for (const SimResult& r : results) {
    const std::vector<TimelineGroup> groups = timeline_groups(r);
    if (axes.size() < groups.size()) axes.resize(groups.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g) axes[g] = std::max(axes[g], groups[g].length_ns());
  }
  return axes;
}

// A loop's per-iteration bounds and what sets each, and its span against the span bound.
// The loop's speed of light: the busiest resources' work per iteration against its II, the
// limiter, and how much of the DMA compute could hide at best.
std::string speed_of_light_html(const LoopResult& loop) {
  constexpr size_t kShown = 8;
  if (loop.demands.empty()) return "";
  std::ostringstream o;
  o << "<table class=\"sol\">\n<tr><th>resource</th><th>work per iteration, ns</th><th>of the II</th></tr>\n";
  auto share = [&](Picos ps) {
    return loop.ii_ps > 0 ? fmt::sprintf("%.1f%%", 100.0 * static_cast<double>(ps) / static_cast<double>(loop.ii_ps))
                          : std::string("-");
  };
  const std::vector<DemandResult>& shown = loop.demands;
  for (size_t i = 0; i < shown.size() && i < kShown; ++i)
    o << "<tr><td>" << esc(shown[i].resource) << (shown[i].resource.rfind("dma engines ", 0) == 0 ? ", each" : "")
      << "</td><td>" << fmt::sprintf("%.3f", ns(shown[i].ps)) << "</td><td>" << share(shown[i].ps) << "</td></tr>\n";
  if (!loop.recurrence_cause.empty())
    o << "<tr><td>recurrence</td><td>" << fmt::sprintf("%.3f", ns(loop.recurrence_bound_ps)) << "</td><td>"
      << share(loop.recurrence_bound_ps) << "</td></tr>\n";
  o << "</table>\n<p class=\"limiter\">limiter: " << esc(loop.limiter());
  if (shown.size() > kShown) o << " (" << shown.size() - kShown << " resources with less work not shown)";
  if (loop.dma_demand_ps > 0)
    o << "; compute (" << fmt::sprintf("%.3f", ns(loop.compute_demand_ps)) << " ns per iteration) can hide at most "
      << fmt::sprintf("%.1f%%", 100 * loop.hideable_dma()) << " of the DMA's "
      << fmt::sprintf("%.3f", ns(loop.dma_demand_ps)) << " ns; it hides "
      << fmt::sprintf("%.1f%%", 100 * loop.overlap());
  o << "</p>\n";
  return o.str();
}

// tandem sim --advise: the changes tried, gains best first with their commands, the rest
// with why, and the hints that were not simulated.
std::string advice_html(const SimResult& r) {
  if (r.advice.empty()) return "";
  std::ostringstream o;
  o << "<h2>Advice: each change simulated on its own</h2>\n<p>Race-checked, each pipeline verified; gain = this "
       "run's total over the change's.</p>\n<table class=\"advice\">\n<tr><th>gain</th><th>total ns</th>"
       "<th>change, and the command that reproduces it</th></tr>\n";
  std::string rest, hints;
  for (const Advice& a : r.advice) {
    if (!a.simulated) {
      hints += "<li>" + esc(a.change) + "</li>\n";
    } else if (!a.rejected.empty()) {
      rest += "<li>" + esc(a.change) + ": " + esc(a.rejected) + "</li>\n";
    } else {
      o << "<tr><td>" << fmt::sprintf("%.3fx", a.gain) << "</td><td>" << fmt::sprintf("%.3f", ns(a.total_ps))
        << "</td><td>" << esc(a.change) << "<br><code>" << esc(a.command) << "</code></td></tr>\n";
    }
  }
  o << "</table>\n";
  if (!rest.empty()) o << "<p>Not advised:</p>\n<ul class=\"rejected\">\n" << rest << "</ul>\n";
  if (!hints.empty())
    o << "<p>Hints, not simulated (they need a rewrite of the kernel):</p>\n<ul>\n" << hints << "</ul>\n";
  return o.str();
}

std::string loop_bounds_html(const SimResult& r, const LoopResult& loop) {
  const MetricSubject s{r, nullptr, &loop};
  auto ns_cell = [&](Metric m) { return format_metric(m, metric_value(m, s)); };
  std::ostringstream o;
  o << "<table class=\"bounds\">\n<tr><th>figure</th><th>ns</th><th>set by</th></tr>\n"
    << "<tr><td>II (measured)</td><td>" << ns_cell(Metric::loop_ii_ns) << "</td><td>the schedule</td></tr>\n"
    << "<tr><td>resource bound per iteration</td><td>" << ns_cell(Metric::loop_resource_bound_ns) << "</td><td>"
    << esc(loop.bound_resource) << "</td></tr>\n"
    << "<tr><td>recurrence bound per iteration</td><td>" << ns_cell(Metric::loop_recurrence_bound_ns)
    << "</td><td class=\"recurrence\">"
    << (loop.recurrence_cause.empty() ? std::string("no recurrence") : esc(loop.recurrence_cause)) << "</td></tr>\n"
    << "<tr><td>span (fill and drain included)</td><td>" << ns_cell(Metric::loop_span_ns)
    << "</td><td>the schedule</td></tr>\n"
    << "<tr><td>span bound</td><td>" << ns_cell(Metric::loop_span_bound_ns) << "</td><td>" << esc(loop.bound_resource)
    << ": " << loop.dynamic_iterations << " &times; " << ns_cell(Metric::loop_resource_bound_ns) << " ns</td></tr>\n"
    << "<tr><td>efficiency</td><td>" << fmt::sprintf("%.1f%%", 100 * metric_value(Metric::loop_efficiency, s))
    << "</td><td>span bound / span</td></tr>\n</table>\n";
  o << speed_of_light_html(loop);
  return o.str();
}

// The profile (`tandem sim --profile`): each static instruction, longest busy time first, at
// most kProfileShown of them.
std::string profile_html(const SimResult& r) {
  constexpr size_t kProfileShown = 40;
  if (r.profile.empty()) return "";
  std::ostringstream o;
  o << "<h2>Profile: instructions by busy time</h2>\n<table class=\"profile\">\n<tr><th>instruction, opcode</th>"
       "<th>unit</th><th>instances</th><th>busy ns</th><th>share</th><th>stall ns</th><th>stalled most on</th></tr>\n";
  const Picos busy = profile_busy_ps(r);
  for (size_t i = 0; i < r.profile.size() && i < kProfileShown; ++i) {
    const InstProfile& p = r.profile[i];
    const MetricSubject s{r, nullptr, nullptr, nullptr, nullptr, &p, busy};
    const auto most = std::max_element(p.stall_ps.begin(), p.stall_ps.end());
    const std::string cause =
        *most > 0 ? stall_reason_name(static_cast<StallReason>(most - p.stall_ps.begin())) : std::string("-");
    o << "<tr><td>" << esc(p.name) << "<br><span class=\"opcode\">" << esc(p.opcode) << "</span></td><td>"
      << esc(p.unit) << "</td><td>" << p.instances << "</td><td>"
      << format_metric(Metric::inst_busy_ns, metric_value(Metric::inst_busy_ns, s)) << "</td><td>"
      << fmt::sprintf("%.1f%%", 100 * metric_value(Metric::inst_share, s)) << "</td><td>"
      << format_metric(Metric::inst_stall_ns, metric_value(Metric::inst_stall_ns, s)) << "</td><td>" << esc(cause)
      << "</td></tr>\n";
  }
  o << "</table>\n";
  if (r.profile.size() > kProfileShown)
    o << "<p>... and " << r.profile.size() - kProfileShown
      << " more instructions (<code>tandem sim --profile</code> lists every one).</p>\n";
  return o.str();
}

// One simulation's report. `axes`: the time axis of each timeline group when the report is
// drawn beside others (shared_timeline_axes); empty: each group's own length.
std::string sim_body(const SimResult& r, const std::vector<double>& axes = {}) {
  const MetricSubject kernel{r};
  std::ostringstream o;
  o << races_html(r);
  o << "<table class=\"summary\">\n<tr><td>kernel</td><td>@" << esc(r.kernel) << " on " << esc(r.model)
    << "</td></tr>\n<tr><td>total</td><td>" << format_metric(Metric::total_ns, metric_value(Metric::total_ns, kernel))
    << " ns, " << format_metric(Metric::total_cycles, metric_value(Metric::total_cycles, kernel))
    << " cycles</td></tr>\n<tr><td>lower bound</td><td>"
    << format_metric(Metric::lower_bound_ns, metric_value(Metric::lower_bound_ns, kernel)) << " ns ("
    << esc(r.lower_bound_resource) << ")</td></tr>\n<tr><td>races</td><td>"
    << format_metric(Metric::races, metric_value(Metric::races, kernel));
  if (r.perturbed_runs > 0) o << " (this run and " << r.perturbed_runs << " perturbed runs)";
  o << "</td></tr>\n<tr><td>DMA engines</td><td>"
    << fmt::sprintf("%.1f%%", 100 * metric_value(Metric::dma_engine_utilization, kernel)) << " busy; queues used "
    << metric_value(Metric::dma_queues_used, kernel) << " of " << r.dma_queues_available;
  for (const SpaceResult& sp : r.spaces)
    o << "; " << esc(sp.name) << " " << sp.allocated << " of " << sp.capacity << " " << esc(sp.unit)
      << esc(format_spilled(sp));
  o << "</td></tr>\n";
  if (!r.provenance.model_file.empty())
    o << "<tr><td>provenance</td><td>model file " << esc(r.provenance.model_file) << " ("
      << esc(r.provenance.model_hash) << "), pipeline " << esc(r.provenance.pipeline) << ", tandem "
      << esc(r.provenance.tandem) << "</td></tr>\n";
  o << "</table>\n";

  if (!r.timeline_loop.empty()) {
    o << "<h2>Timeline of loop " << esc(r.timeline_loop)
      << ": first iteration, a steady-state window on shared time, last iteration</h2>\n";
    std::vector<std::string> units;
    std::set<std::string> queues;
    for (const UnitResult& u : r.units) {
      units.push_back(u.name);
      if (u.is_queue) queues.insert(u.name);
    }
    const std::vector<TimelineGroup> groups = timeline_groups(r);
    for (size_t g = 0; g < groups.size(); ++g) {
      std::set<std::string> used;
      for (const TimelineSpan* s : groups[g].spans) used.insert(s->unit);
      std::vector<std::string> tracks;
      for (const std::string& u : units)
        if (used.count(u)) tracks.push_back(u);
      o << "<h3>" << esc(groups[g].label) << "</h3>\n"
        << timeline_html(groups[g].spans, tracks, queues, g < axes.size() ? axes[g] : 0);
    }
  }

  for (const LoopResult& loop : r.loops) {
    o << "<h2>Loop " << esc(loop.iv) << "</h2>\n<p class=\"ii\">" << esc(format_loop_bounds(loop)) << "</p>\n"
      << loop_bounds_html(r, loop);
    Series overlap{"overlap %", {}, {}, {}}, exposed{"compute waiting on DMA ns", {}, {}, {}};
    for (const IterationResult& it : loop.iterations) {
      const double index = static_cast<double>(it.index);
      overlap.x.push_back(index);
      overlap.y.push_back(100 * it.overlap);
      exposed.x.push_back(index);
      exposed.y.push_back(ns(it.compute_dma_wait_ps));
    }
    if (!overlap.x.empty()) {
      o << line_chart("overlap", "iteration", "DMA overlapped (%)", {overlap});
      o << line_chart("exposed", "iteration", "compute engine time waiting on DMA (ns)", {exposed});
    }
  }
  o << "<h2>Units: busy and stalls, share of the total time</h2>\n"
    << units_html(r) << profile_html(r) << advice_html(r);
  return o.str();
}

}  // namespace

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        cell += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      row.push_back(cell);
      rows.push_back(row);
      row.clear();
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (!cell.empty() || !row.empty()) {
    row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

namespace {

bool numeric(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

using CsvRow = std::vector<std::string>;

// "a_b.c" with a break allowed after each underscore and dot, so long names do not widen a
// header column.
std::string breakable(const std::string& name) {
  std::string out;
  for (char c : name) out += esc(std::string(1, c)) + (c == '_' || c == '.' ? "<wbr>" : "");
  return out;
}

std::string short_name(const std::string& kernel) { return kernel.substr(kernel.rfind('/') + 1); }

bool value(const CsvRow& r, size_t c, double* v) { return numeric(r[c], v); }

// A metric column of a sweep's CSV; a relative one is shown as a ratio to each kernel's
// baseline.
struct MetricColumn {
  size_t index;
  bool relative;
  bool text = false;  // its cells are names (a resource, a dependence cycle): tabled, not charted
};

// A sweep's CSV as the report reads it. Only clean points are results: a point that raced
// (status racy) is listed apart and is never the best point, nor a baseline, nor part of a
// chart.
struct SweepCsv {
  SweepCsv(const std::vector<CsvRow>& all_rows, const std::vector<std::string>& parameters)
      : rows(all_rows),
        header(all_rows[0]),
        status(column("status")),
        kernel(column("kernel")),
        error(column("error")),
        point(column("point")) {
    for (size_t r = 1; r < rows.size(); ++r) {
      if (rows[r].size() != header.size()) continue;
      all.push_back(&rows[r]);
      if (rows[r][status] == "ok")
        ok.push_back(&rows[r]);
      else if (rows[r][status] == "racy")
        racy.push_back(&rows[r]);
      else
        failed.push_back(&rows[r]);
    }
    for (const std::string& p : parameters)
      if (column(p) < header.size()) params.push_back(column(p));
    // Kernels in order of appearance; each one's baseline is its first clean point (the rows
    // are in point order: the first value of every parameter, or the first of `points`).
    for (const CsvRow* r : ok)
      if (baseline.emplace((*r)[kernel], r).second) kernels.push_back((*r)[kernel]);
    for (size_t i = 0; i < kernels.size(); ++i) kernel_index[kernels[i]] = i;
    // The best point's measure: total time, or the first metric without it.
    key = column("total_ns") < header.size() ? column("total_ns") : (error > status + 1 ? status + 1 : status);
  }

  // The index of a column; header.size() when there is none.
  size_t column(const std::string& name) const {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  }
  size_t points() const { return rows.size() - 1; }
  const CsvRow& baseline_of(const std::string& k) const { return *baseline.at(k); }

  const std::vector<CsvRow>& rows;
  const CsvRow& header;
  const size_t status, kernel, error, point;
  std::vector<const CsvRow*> all, ok, racy, failed;  // failed: error, timeout, internal-error, miscompiled
  std::vector<size_t> params;                        // the varied parameters' columns
  std::vector<std::string> kernels;
  std::map<std::string, const CsvRow*> baseline;
  std::map<std::string, size_t> kernel_index;  // its colour
  size_t key = 0;
  std::vector<MetricColumn> metrics;   // those that change somewhere: charted and tabled
  std::vector<std::string> unchanged;  // the rest, named once
};

// Times (ns, cycles) and counts are shown relative to each kernel's baseline, so that a
// kernel 100 times shorter than another is not flattened on a shared axis; fractions
// (efficiency, overlap, utilisation) are already on one scale, and a metric whose baseline
// is 0 for some kernel has no ratio: both are shown as they are.
// A space's figures (`sbuf.headroom`: capacity left in the space's own unit) are shown as
// they are too: a multiple of a headroom says nothing. Text columns (the resource that sets a
// bound) go in the tables only.
void classify_metrics(SweepCsv& csv) {
  for (size_t c = csv.status + 1; c < csv.error; ++c) {
    bool varies = false, relative = true, text = false;
    const std::string& name = csv.header[c];
    const MetricInfo* info = find_metric(name, MetricScope::Kernel);
    if (!info) info = find_metric(name, MetricScope::Loop);
    if (!info && name.find('.') != std::string::npos)
      info = find_metric(name.substr(name.rfind('.') + 1), MetricScope::Space);
    if (name.rfind("util_", 0) == 0 ||
        (info && (std::string(info->unit) == "fraction" || info->scope == MetricScope::Space)))
      relative = false;
    for (const CsvRow* r : csv.ok) {
      double v = 0;
      text |= !(*r)[c].empty() && !value(*r, c, &v);
    }
    for (const std::string& k : csv.kernels) {
      double b = 0;
      if (!value(csv.baseline_of(k), c, &b) || b == 0) relative = false;
      for (const CsvRow* r : csv.ok) varies |= (*r)[csv.kernel] == k && (*r)[c] != csv.baseline_of(k)[c];
    }
    if (varies)
      csv.metrics.push_back({c, relative && !text, text});
    else
      csv.unchanged.push_back(name);
  }
}

// How many points, how many clean, how many failed, and a banner when some raced.
std::string points_summary_html(const SweepCsv& csv) {
  std::ostringstream o;
  if (!csv.racy.empty())
    o << "<p class=\"race-banner\">" << csv.racy.size() << " of " << csv.points()
      << " points raced: their schedules break program order, so their figures are not results. They are listed "
         "below and left out of the best points, the baselines and the charts.</p>\n";
  o << "<p>" << csv.points() << " points, " << csv.ok.size() << " ok";
  if (!csv.racy.empty()) o << ", " << csv.racy.size() << " raced";
  if (!csv.failed.empty()) o << ", " << csv.failed.size() << " failed (each with its error below)";
  o << ".</p>\n";
  return o.str();
}

// The points that failed, each with its error (nothing when none did), at most kFailedShown.
std::string failed_points_html(const SweepCsv& csv) {
  constexpr size_t kFailedShown = 200;
  if (csv.failed.empty()) return "";
  std::ostringstream o;
  o << "<h2>Points that failed (no figures)</h2>\n<table class=\"failed\">\n<tr><th>point</th><th>kernel</th>";
  for (size_t pc : csv.params) o << "<th>" << breakable(csv.header[pc]) << "</th>";
  o << "<th>status</th><th>error</th></tr>\n";
  for (size_t i = 0; i < csv.failed.size() && i < kFailedShown; ++i) {
    const CsvRow& r = *csv.failed[i];
    o << "<tr class=\"failed\"><td>" << esc(r[csv.point]) << "</td><td>" << esc(short_name(r[csv.kernel])) << "</td>";
    for (size_t pc : csv.params) o << "<td>" << esc(r[pc]) << "</td>";
    o << "<td>" << esc(r[csv.status]) << "</td><td class=\"error\">" << esc(r[csv.error]) << "</td></tr>\n";
  }
  o << "</table>\n";
  if (csv.failed.size() > kFailedShown)
    o << "<p>... and " << csv.failed.size() - kFailedShown
      << " more failed points: the CSV's error column gives each.</p>\n";
  return o.str();
}

// The best point of each kernel: least total time (or least of the first metric).
std::string best_points_html(const SweepCsv& csv) {
  std::ostringstream o;
  const std::string& key = csv.header[csv.key];
  o << "<h2>Best point of each kernel (least " << esc(key)
    << ")</h2>\n<table class=\"best\">\n<tr><th>point</th><th>kernel</th>";
  for (size_t pc : csv.params) o << "<th>" << breakable(csv.header[pc]) << "</th>";
  o << "<th>" << esc(key) << "</th><th>against the baseline</th></tr>\n";
  for (const std::string& k : csv.kernels) {
    const CsvRow* best = nullptr;
    double best_value = 0, base = 0;
    for (const CsvRow* r : csv.ok) {
      double v = 0;
      if ((*r)[csv.kernel] == k && value(*r, csv.key, &v) && (!best || v < best_value)) best = r, best_value = v;
    }
    if (!best) continue;
    o << "<tr><td>" << esc((*best)[csv.point]) << "</td><td>" << esc(short_name(k)) << "</td>";
    for (size_t pc : csv.params) o << "<td>" << esc((*best)[pc]) << "</td>";
    o << "<td>" << esc((*best)[csv.key]) << "</td><td>"
      << (value(csv.baseline_of(k), csv.key, &base) && base != 0 ? fmt(best_value / base, "%.3f") + "&times;" : "-")
      << "</td></tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

// Where the results came from (the columns after `error`, docs/sweeps.md): each model file
// and version once, with how many distinct model contents the points ran on it.
std::string provenance_html(const SweepCsv& csv) {
  std::map<std::string, std::set<std::string>> sources;  // "model file, tandem" -> model hashes
  const size_t model_file = csv.column("model_file"), model_hash = csv.column("model_hash"),
               version = csv.column("tandem");
  if (version < csv.header.size())
    for (const CsvRow* r : csv.ok) sources[(*r)[model_file] + ", tandem " + (*r)[version]].insert((*r)[model_hash]);
  std::ostringstream o;
  for (const auto& [source, hashes] : sources)
    o << "<p class=\"provenance\">model file " << esc(source) << " (" << hashes.size()
      << (hashes.size() == 1 ? " model content: " + esc(*hashes.begin()) : std::string(" model contents")) << ")</p>\n";
  return o.str();
}

// The points that raced, apart from the results (nothing when none did).
std::string racy_points_html(const SweepCsv& csv) {
  if (csv.racy.empty()) return "";
  std::ostringstream o;
  o << "<h2>Points that raced (not results)</h2>\n<table class=\"racy\">\n<tr><th>point</th><th>kernel</th>";
  for (size_t pc : csv.params) o << "<th>" << breakable(csv.header[pc]) << "</th>";
  const size_t races = csv.column("races");
  const bool has_races = races < csv.header.size();
  o << "<th>" << esc(csv.header[csv.key]) << "</th>" << (has_races ? "<th>races</th>" : "") << "</tr>\n";
  for (const CsvRow* r : csv.racy) {
    o << "<tr class=\"racy\"><td>" << esc((*r)[csv.point]) << "</td><td>" << esc(short_name((*r)[csv.kernel]))
      << "</td>";
    for (size_t pc : csv.params) o << "<td>" << esc((*r)[pc]) << "</td>";
    o << "<td>" << esc((*r)[csv.key]) << "</td>" << (has_races ? "<td>" + esc((*r)[races]) + "</td>" : "") << "</tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

// The metrics that do not vary, named once (nothing when all do).
std::string unchanged_html(const SweepCsv& csv) {
  if (csv.unchanged.empty()) return "";
  std::ostringstream o;
  o << "<p class=\"unchanged\">The same at every point of each kernel:";
  for (const std::string& u : csv.unchanged) o << " " << esc(u) << (&u == &csv.unchanged.back() ? "." : ",");
  o << "</p>\n";
  return o.str();
}

// One colour (and past the palette, a dash) per kernel, in the table and every chart.
std::string kernel_legend_html(const SweepCsv& csv) {
  const size_t palette = sizeof kPalette / sizeof kPalette[0];
  auto dash = [&](size_t i) { return i < palette ? std::string() : std::string(" stroke-dasharray=\"5 3\""); };
  std::ostringstream legend;
  legend << "<p class=\"legend\">";
  for (size_t i = 0; i < csv.kernels.size(); ++i)
    legend << "<span class=\"key\"><svg width=\"24\" height=\"10\" viewBox=\"0 0 24 10\" aria-hidden=\"true\"><line "
              "x1=\"0\" y1=\"5\" "
              "x2=\"24\" y2=\"5\" stroke=\""
           << color(i) << "\" stroke-width=\"3\"" << dash(i) << "/></svg>" << esc(short_name(csv.kernels[i]))
           << "</span> ";
  legend << "</p>\n";
  return legend.str();
}

// "value" at a kernel's baseline, "0.523×" of it elsewhere (a relative column).
std::string relative_cell(const SweepCsv& csv, const CsvRow& r, const MetricColumn& m) {
  double v = 0, b = 0;
  const CsvRow& base = csv.baseline_of(r[csv.kernel]);
  if (!m.relative || &r == &base || !value(r, m.index, &v) || !value(base, m.index, &b)) return esc(r[m.index]);
  return fmt(v / b, "%.3f") + "&times;";
}

// Each point against its kernel's baseline, in tables of at most 8 metric columns (a
// 1280 px window holds that many beside the kernel and the parameters), as even as may be.
std::string relative_tables_html(const SweepCsv& csv) {
  std::ostringstream o;
  o << "<h2>Each point against its kernel's baseline (its first point, in bold)</h2>\n<p>Times and counts as a "
       "multiple of the baseline's, where its value is not 0; fractions as they are.</p>\n";
  const std::vector<MetricColumn>& metrics = csv.metrics;
  const size_t tables = (metrics.size() + 7) / 8, per_table = (metrics.size() + tables - 1) / tables;
  for (size_t from = 0; from < metrics.size(); from += per_table) {
    const size_t to = std::min(metrics.size(), from + per_table);
    o << "<table class=\"relative\">\n<tr><th>kernel</th>";
    for (size_t pc : csv.params) o << "<th>" << breakable(csv.header[pc]) << "</th>";
    for (size_t m = from; m < to; ++m) o << "<th>" << breakable(csv.header[metrics[m].index]) << "</th>";
    o << "</tr>\n";
    for (const std::string& k : csv.kernels)
      for (const CsvRow* r : csv.ok) {
        if ((*r)[csv.kernel] != k) continue;
        const bool base = r == &csv.baseline_of(k);
        o << "<tr" << (base ? " class=\"baseline\"" : "")
          << "><td class=\"kernel\"><span class=\"swatch\" style=\"background:" << color(csv.kernel_index.at(k))
          << "\"></span>" << esc(short_name(k)) << "</td>";
        for (size_t pc : csv.params) o << "<td>" << esc((*r)[pc]) << "</td>";
        for (size_t m = from; m < to; ++m) o << "<td>" << relative_cell(csv, *r, metrics[m]) << "</td>";
        o << "</tr>\n";
      }
    o << "</table>\n";
  }
  return o.str();
}

// The values a parameter takes: numeric ones plot at their value (on a log axis when they
// span 8x or more, as engine counts and sizes do), others as categories in order of appearance.
struct ParameterAxis {
  std::vector<std::string> categories;
  bool all_numeric = true;
  bool log_x = false;

  // Where a value sits on the axis: its number, or its category's index.
  double position(const std::string& v) const {
    double x = 0;
    if (all_numeric)
      numeric(v, &x);
    else
      x = static_cast<double>(std::find(categories.begin(), categories.end(), v) - categories.begin());
    return x;
  }
};

// Every value of the parameter, also those at which no point is a result (drawn as gaps).
ParameterAxis parameter_axis(const SweepCsv& csv, size_t pc) {
  ParameterAxis axis;
  double lo = 1e300, hi = -1e300;
  for (const CsvRow* r : csv.all) {
    double v = 0;
    if (numeric((*r)[pc], &v))
      lo = std::min(lo, v), hi = std::max(hi, v);
    else
      axis.all_numeric = false;
    if (std::find(axis.categories.begin(), axis.categories.end(), (*r)[pc]) == axis.categories.end())
      axis.categories.push_back((*r)[pc]);
  }
  axis.log_x = axis.all_numeric && lo > 0 && hi >= 8 * lo;
  return axis;
}

// The points of a kernel at one value of a parameter: how many, and how many of them are
// results with a value of the metric (their sum, or the sum of their ratios to the baseline).
struct ValueTally {
  size_t points = 0, values = 0, failed = 0, racy = 0;
  double sum = 0;

  // Why a value has no mean: "1 of 3 points failed".
  std::string why() const {
    std::string w = std::to_string(points - values) + " of " + std::to_string(points) + " points";
    std::vector<std::string> causes;
    if (failed) causes.push_back(std::to_string(failed) + " failed");
    if (racy) causes.push_back(std::to_string(racy) + " raced");
    if (points - values > failed + racy)
      causes.push_back(std::to_string(points - values - failed - racy) + " no value");
    for (size_t i = 0; i < causes.size(); ++i) w += (i ? ", " : ": ") + causes[i];
    return w;
  }
};

// Each value of the parameter in column `pc` for kernel `k`: its points and their values of
// `m` (without `m`: every clean point counts as a value).
std::map<double, ValueTally> tally(const SweepCsv& csv, const std::string& k, size_t pc, const ParameterAxis& axis,
                                   const MetricColumn* m) {
  double base = 1;
  if (m && m->relative) value(csv.baseline_of(k), m->index, &base);
  std::map<double, ValueTally> at;
  for (const CsvRow* r : csv.all) {
    if ((*r)[csv.kernel] != k) continue;
    ValueTally& t = at[axis.position((*r)[pc])];
    ++t.points;
    const std::string& status = (*r)[csv.status];
    double y = 0;
    if (status == "racy")
      ++t.racy;
    else if (status != "ok")
      ++t.failed;
    else if (!m)
      ++t.values;
    else if (value(*r, m->index, &y))
      t.sum += y / base, ++t.values;
  }
  return at;
}

// Per kernel, the mean of the metric (or of its ratio to the baseline) at each value of the
// parameter in column `pc`, over every point at that value: a value where some point is not
// a result (failed, raced, no value) has no mean, only a gap, as a mean over whichever points
// succeeded is not comparable with the means beside it.
std::vector<Series> metric_series(const SweepCsv& csv, size_t pc, const ParameterAxis& axis, const MetricColumn& m) {
  std::vector<Series> series;
  for (const std::string& k : csv.kernels) {
    Series s{short_name(k), {}, {}, {}};
    for (const auto& [x, t] : tally(csv, k, pc, axis, &m)) {
      if (t.values == t.points) {
        s.x.push_back(x);
        s.y.push_back(t.sum / static_cast<double>(t.values));
      } else {
        s.gaps.push_back({x, t.why()});
      }
    }
    series.push_back(s);
  }
  return series;
}

// The values of the parameter in column `pc` at which a kernel's points are not all results:
// the charts' gaps, named once above them (nothing when there are none).
std::string gaps_html(const SweepCsv& csv, size_t pc, const ParameterAxis& axis) {
  std::vector<std::string> gaps;
  for (const std::string& k : csv.kernels)
    for (const auto& [x, t] : tally(csv, k, pc, axis, nullptr))
      if (t.failed + t.racy > 0)
        gaps.push_back(esc(short_name(k)) + " at " +
                       esc(axis.all_numeric ? fmt(x, "%.6g") : axis.categories[static_cast<size_t>(x)]) + " (" +
                       esc(t.why()) + ")");
  if (gaps.empty()) return "";
  std::ostringstream o;
  o << "<p class=\"gaps\">Gaps (&times; on the axis): no mean is drawn where not every point is a result:";
  for (size_t i = 0; i < gaps.size(); ++i) o << (i ? "; " : " ") << gaps[i];
  o << ".</p>\n";
  return o.str();
}

// Every varying metric against the parameter in column `pc`, one chart each.
std::string parameter_charts_html(const SweepCsv& csv, size_t pc, const std::string& legend) {
  std::ostringstream o;
  const ParameterAxis axis = parameter_axis(csv, pc);
  o << "<h2>Against " << esc(csv.header[pc])
    << (csv.params.size() > 1 ? " (each value: the mean over the other parameters)" : "") << "</h2>\n";
  o << gaps_html(csv, pc, axis);
  if (!axis.all_numeric) {
    o << "<ol class=\"categories\">";
    for (const std::string& c : axis.categories) o << "<li>" << esc(c) << "</li>";
    o << "</ol>\n";
  }
  o << legend << "<div class=\"grid\">\n";
  for (const MetricColumn& m : csv.metrics) {
    if (m.text) continue;
    o << "<figure><figcaption>" << esc(csv.header[m.index]) << (m.relative ? " against the baseline" : "")
      << "</figcaption>\n"
      << sweep_chart(metric_series(csv, pc, axis, m), axis.all_numeric ? std::vector<std::string>{} : axis.categories,
                     axis.log_x, m.relative)
      << "</figure>\n";
  }
  o << "</div>\n";
  return o.str();
}

}  // namespace

std::string html_sim_report(const std::string& sim_json) {
  const SimResult r = parse_sim_json(sim_json);
  return page("Tandem: @" + r.kernel + " on " + r.model, sim_body(r));
}

std::string html_ab_report(const AbInput& in_a, const AbInput& in_b) {
  const SimResult a = parse_sim_json(in_a.sim_json), b = parse_sim_json(in_b.sim_json);
  const std::string label_a = in_a.label(), label_b = in_b.label();
  std::ostringstream o;
  std::string racy;
  if (!a.hazards.empty()) racy += "A (" + label_a + ")";
  if (!b.hazards.empty()) racy += (racy.empty() ? "" : " and ") + std::string("B (") + label_b + ")";
  const bool both = !a.hazards.empty() && !b.hazards.empty();
  if (!racy.empty())
    o << "<p class=\"race-banner ab-races\">Races in " << esc(racy) << ": "
      << (both ? "their schedules break" : "its schedule breaks")
      << " program order, so this comparison does not tell which pipeline is faster (each side's races are listed "
         "in its column)</p>\n";
  o << "<p class=\"ab-sides\">A: " << esc(label_a) << "<br>B: " << esc(label_b) << "</p>\n";
  const AbTable table = ab_table(a, b);
  o << "<table class=\"ab\">\n<tr><th>figure</th><th>A</th><th>B</th><th>B - A</th><th>B / A</th></tr>\n";
  for (const AbTable::Row& r : table.rows)
    o << "<tr><td>" << esc(r.name) << "</td><td>" << esc(r.a) << "</td><td>" << esc(r.b) << "</td><td>" << esc(r.delta)
      << "</td><td>" << esc(r.ratio) << "</td></tr>\n";
  o << "</table>\n";
  if (!table.overlaps.empty()) {
    o << "<table class=\"ab-overlap\">\n<tr><th>overlap per iteration (min / median / "
         "max)</th><th>A</th><th>B</th></tr>\n";
    for (const AbTable::Overlap& l : table.overlaps)
      o << "<tr><td>loop " << esc(l.loop) << "</td><td>" << esc(l.a) << "</td><td>" << esc(l.b) << "</td></tr>\n";
    o << "</table>\n";
  }
  const std::vector<double> axes = shared_timeline_axes({a, b});
  o << "<div class=\"columns\">\n<div class=\"a\">\n<h2>A: " << esc(label_a) << "</h2>\n"
    << sim_body(a, axes) << "</div>\n<div class=\"b\">\n<h2>B: " << esc(label_b) << "</h2>\n"
    << sim_body(b, axes) << "</div>\n</div>\n";
  return page("Tandem A/B: @" + a.kernel + " on " + (a.model == b.model ? a.model : a.model + " and " + b.model),
              o.str());
}

std::string html_sweep_report(const std::string& title, const std::vector<std::string>& parameters,
                              const std::string& csv_text) {
  const std::vector<CsvRow> rows = parse_csv(csv_text);
  if (rows.size() < 2) return page(title, "<p>No points.</p>\n");
  SweepCsv csv(rows, parameters);
  classify_metrics(csv);
  std::ostringstream o;
  o << points_summary_html(csv) << best_points_html(csv) << provenance_html(csv) << failed_points_html(csv)
    << racy_points_html(csv) << unchanged_html(csv);
  if (csv.ok.empty() || csv.metrics.empty()) return page(title, o.str());
  const std::string legend = kernel_legend_html(csv);
  o << relative_tables_html(csv);
  for (size_t pc : csv.params) o << parameter_charts_html(csv, pc, legend);
  return page(title, o.str());
}

std::string html_tune_report(const std::string& title, const std::string& summary,
                             const std::vector<double>& best_so_far,
                             const std::vector<std::pair<std::string, double>>& references,
                             const std::vector<std::pair<std::string, std::string>>& sims) {
  std::ostringstream o;
  o << "<pre class=\"tune\">" << esc(summary) << "</pre>\n<h2>Search progress</h2>\n";
  std::vector<Series> series(1);
  series[0].name = "best so far";
  for (size_t i = 0; i < best_so_far.size(); ++i)
    if (std::isfinite(best_so_far[i])) {
      series[0].x.push_back(static_cast<double>(i + 1));
      series[0].y.push_back(best_so_far[i]);
    }
  for (const auto& [name, ns] : references)
    if (std::isfinite(ns) && !series[0].x.empty())
      series.push_back({name, {series[0].x.front(), series[0].x.back()}, {ns, ns}, {}});
  o << line_chart("tune-progress", "points evaluated", "best total_ns", series);
  std::vector<SimResult> results;
  for (const auto& sim : sims) results.push_back(parse_sim_json(sim.second));
  const std::vector<double> axes = shared_timeline_axes(results);
  o << "<div class=\"sims\">\n";
  for (size_t i = 0; i < sims.size(); ++i)
    o << "<div>\n<h2>" << (i == 0 ? "Best: " : "") << esc(sims[i].first) << "</h2>\n"
      << sim_body(results[i], axes) << "</div>\n";
  o << "</div>\n";
  return page(title, o.str());
}

}  // namespace tandem
