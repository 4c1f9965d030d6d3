#include "sim/report/ab_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem {

namespace {

using Json = nlohmann::ordered_json;

struct Row {
  std::string name;
  double a = 0, b = 0;
  bool percent = false;  // a fraction shown as %
  bool count = false;    // a whole number
};

size_t races(const Json& doc) { return doc.at("hazards").size(); }

// Rows present in both runs, matched by name: kernel totals, loops, engines and queues.
std::vector<Row> compare(const Json& a, const Json& b) {
  std::vector<Row> rows;
  auto add = [&](const std::string& name, const Json& x, const Json& y, const char* key, bool percent = false) {
    rows.push_back({name + key, x.at(key).get<double>(), y.at(key).get<double>(), percent});
  };
  add("", a, b, "total_ns");
  add("", a, b, "total_cycles");
  add("", a, b, "lower_bound_ns");
  rows.push_back({"races", static_cast<double>(races(a)), static_cast<double>(races(b)), false, true});
  const Json& la = a.at("loops");
  const Json& lb = b.at("loops");
  for (size_t i = 0; i < la.size() && i < lb.size(); ++i) {
    if (la[i].at("name") != lb[i].at("name")) continue;
    const std::string p = "loop " + la[i].at("name").get<std::string>() + " ";
    for (const char* key : {"ii_ns", "ii_bound_ns", "exposed_dma_ns", "dma_busy_ns"}) add(p, la[i], lb[i], key);
    for (const char* key : {"efficiency", "overlap"}) add(p, la[i], lb[i], key, true);
    if (la[i].at("wmmas").get<int64_t>() + lb[i].at("wmmas").get<int64_t>() > 0)
      add(p, la[i], lb[i], "wmma_bubble_cycles_per_iteration");
  }
  auto units = [&](const Json& x) {
    std::vector<Json> all(x.at("engines").begin(), x.at("engines").end());
    all.insert(all.end(), x.at("dma").at("queues").begin(), x.at("dma").at("queues").end());
    return all;
  };
  auto stall_total = [](const Json& u) {
    double s = 0;
    for (const auto& [k, v] : u.at("stalls").items()) s += v.get<double>();
    return s;
  };
  for (const Json& ua : units(a))
    for (const Json& ub : units(b)) {
      if (ua.at("name") != ub.at("name")) continue;
      const std::string p = ua.at("name").get<std::string>() + " ";
      add(p, ua, ub, "busy_ns");
      rows.push_back({p + "stall_ns", stall_total(ua), stall_total(ub), false});
    }
  return rows;
}

// min / median / max of a loop's per-iteration overlap.
std::string overlap_summary(const Json& loop) {
  std::vector<double> v;
  for (const Json& it : loop.at("iterations")) v.push_back(it.at("overlap").get<double>());
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.1f%% / %.1f%% / %.1f%%", 100 * v.front(), 100 * v[v.size() / 2], 100 * v.back());
  return buf;
}

}  // namespace

std::string format_ab_race_banner(const AbInput& a, const AbInput& b) {
  std::string banner;
  auto side = [&](const char* name, const AbInput& in) {
    const Json doc = Json::parse(in.sim_json);
    const size_t n = races(doc);
    if (n == 0) return;
    banner += std::string("RACES: ") + name + " (" + in.pipeline + ") races: " + std::to_string(n) +
              (n == 1 ? " race" : " races") + "; the schedule breaks program order and its figures are not a valid result\n";
    for (const Json& h : doc.at("hazards")) banner += "  " + h.at("message").get<std::string>() + "\n";
  };
  side("A", a);
  side("B", b);
  return banner;
}

std::string format_ab_summary(const AbInput& a, const AbInput& b) {
  const Json ja = Json::parse(a.sim_json), jb = Json::parse(b.sim_json);
  std::ostringstream o;
  if (const std::string banner = format_ab_race_banner(a, b); !banner.empty()) o << banner << "\n";
  o << "kernel @" << ja.at("kernel").get<std::string>() << " on " << ja.at("model").get<std::string>() << "\n";
  o << "  A: " << a.pipeline << "\n  B: " << b.pipeline << "\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-46s %16s %16s %16s %9s\n", "", "A", "B", "B - A", "B / A");
  o << line;
  for (const Row& r : compare(ja, jb)) {
    if (r.percent)
      std::snprintf(line, sizeof line, "%-46s %15.1f%% %15.1f%% %+15.1f%% %9s\n", r.name.c_str(), 100 * r.a, 100 * r.b,
                    100 * (r.b - r.a), "");
    else if (r.count)
      std::snprintf(line, sizeof line, "%-46s %16.0f %16.0f %+16.0f %9s\n", r.name.c_str(), r.a, r.b, r.b - r.a, "");
    else
      std::snprintf(line, sizeof line, "%-46s %16.3f %16.3f %+16.3f %9.3f\n", r.name.c_str(), r.a, r.b, r.b - r.a,
                    r.a != 0 ? r.b / r.a : 0.0);
    o << line;
  }
  const Json& la = ja.at("loops");
  const Json& lb = jb.at("loops");
  for (size_t i = 0; i < la.size() && i < lb.size(); ++i) {
    if (la[i].at("name") != lb[i].at("name")) continue;
    o << "\nloop " << la[i].at("name").get<std::string>() << " overlap per iteration (min / median / max)\n"
      << "  A: " << overlap_summary(la[i]) << "\n  B: " << overlap_summary(lb[i]) << "\n";
  }
  return o.str();
}

std::string format_ab_json(const AbInput& a, const AbInput& b) {
  const Json ja = Json::parse(a.sim_json), jb = Json::parse(b.sim_json);
  Json diff = Json::array();
  for (const Row& r : compare(ja, jb))
    diff.push_back({{"name", r.name}, {"a", r.a}, {"b", r.b}, {"delta", r.b - r.a}, {"ratio", r.a != 0 ? r.b / r.a : 0.0}});
  Json racy = Json::array();
  if (races(ja)) racy.push_back("a");
  if (races(jb)) racy.push_back("b");
  Json out = {{"schema", "tandem.ab/1"},
              {"a", {{"pipeline", a.pipeline}, {"races", races(ja)}, {"result", ja}}},
              {"b", {{"pipeline", b.pipeline}, {"races", races(jb)}, {"result", jb}}},
              {"racy", racy},
              {"diff", diff}};
  return out.dump(2) + "\n";
}

}  // namespace tandem
