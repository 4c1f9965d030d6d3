#include "sim/report/report.h"

#include <cmath>
#include <functional>
#include <sstream>

#include <fmt/printf.h>
#include <nlohmann/json.hpp>

#include "sim/report/metrics.h"

namespace tandem {

namespace {

using Json = nlohmann::ordered_json;

double ns(Picos ps) { return ps_to_ns(ps); }
double cycles(Picos ps, double ghz) { return ps_to_ns(ps) * ghz; }
std::string fmt(const char* f, double v) { return fmt::sprintf(f, v); }
Picos ps_from_ns(double v) { return static_cast<Picos>(std::llround(v * 1000.0)); }

// A table metric into its JSON object: counts and capacities as integers, everything else as a
// double.
void put(Json& j, Metric m, const MetricSubject& s) {
  const MetricInfo& info = metric_info(m);
  const double v = metric_value(m, s);
  if (std::string(info.unit) == "count" || std::string(info.unit) == "capacity unit")
    j[info.name] = static_cast<int64_t>(v);
  else
    j[info.name] = v;
}

Json stalls_json(const StallArray& s) {
  Json j = Json::object();
  for (size_t i = 0; i < s.size(); ++i)
    j[std::string(stall_reason_name(static_cast<StallReason>(i))) + "_ns"] = ns(s[i]);
  return j;
}

StallArray stalls_from_json(const nlohmann::json& j) {
  StallArray s{};
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = ps_from_ns(j.at(std::string(stall_reason_name(static_cast<StallReason>(i))) + "_ns").get<double>());
  return s;
}

Json unit_json(const SimResult& r, const UnitResult& u) {
  const MetricSubject s{r, &u};
  Json j = {{"name", u.name}};
  for (Metric m : {Metric::unit_busy_ns, Metric::unit_setup_ns, Metric::unit_utilization, Metric::unit_instances,
                   Metric::unit_stall_ns})
    put(j, m, s);
  j["stalls"] = stalls_json(u.stall_ps);
  if (u.is_queue) put(j, Metric::unit_bytes, s);
  return j;
}

}  // namespace

std::string format_loop_bounds(const LoopResult& l) {
  std::string text = "II " + fmt("%.3f", ns(l.ii_ps)) + " ns; per iteration " + l.bound_resource + " needs " +
                     fmt("%.3f", ns(l.resource_bound_ps)) + " ns";
  if (!l.recurrence_cause.empty())
    text += " and the recurrence " + l.recurrence_cause + " " + fmt("%.3f", ns(l.recurrence_bound_ps)) + " ns";
  return text + "; span " + fmt("%.3f", ns(l.span_ps)) + " ns against its bound " + fmt("%.3f", ns(l.span_bound_ps)) +
         " ns (" + l.bound_resource + ": " + std::to_string(l.dynamic_iterations) + " x " +
         fmt("%.3f", ns(l.resource_bound_ps)) + " ns): efficiency " + fmt("%.1f", 100 * l.efficiency) + "%";
}

namespace {

// The DMA engines' work, consecutive engines with the same work on one row ("dma 0-15").
std::string format_dma_engine_rows(const SimResult& r) {
  std::string o;
  const std::vector<Picos>& w = r.dma_engine_work;
  for (size_t first = 0, e = 0; e < w.size(); first = e) {
    while (e < w.size() && w[e] == w[first]) ++e;
    if (w[first] == 0) continue;
    const std::string name =
        e - first == 1 ? "dma " + std::to_string(first) : "dma " + std::to_string(first) + "-" + std::to_string(e - 1);
    o += fmt::sprintf("%-8s %12.3f %12s %5.1f%%%s\n", name, ns(w[first]), "-",
                      r.total_ps > 0 ? 100.0 * static_cast<double>(w[first]) / static_cast<double>(r.total_ps) : 0.0,
                      e - first == 1 ? "" : "  each");
  }
  return o;
}

std::string format_speed_of_light(const LoopResult& l) {
  constexpr size_t kShown = 4;
  std::string o = "  speed of light per iteration, against the II: ";
  auto share = [&](Picos ps) {
    return l.ii_ps > 0 ? fmt("%.1f", 100.0 * static_cast<double>(ps) / static_cast<double>(l.ii_ps)) + "%" : "-";
  };
  const std::vector<DemandResult>& shown = l.demands;
  for (size_t i = 0; i < shown.size() && i < kShown; ++i)
    o += (i ? ", " : "") + shown[i].resource + " " + fmt("%.3f", ns(shown[i].ps)) + " ns " + share(shown[i].ps) +
         (shown[i].resource.rfind("dma engines ", 0) == 0 ? " each" : "");
  if (shown.size() > kShown) o += ", " + std::to_string(shown.size() - kShown) + " more";
  if (!l.recurrence_cause.empty())
    o += std::string(l.demands.empty() ? "" : "; ") + "recurrence " + fmt("%.3f", ns(l.recurrence_bound_ps)) + " ns " +
         share(l.recurrence_bound_ps);
  o += "; limiter " + l.limiter();
  if (l.dma_demand_ps > 0)
    o += "; compute (" + fmt("%.3f", ns(l.compute_demand_ps)) + " ns) can hide at most " +
         fmt("%.1f", 100 * l.hideable_dma()) + "% of the DMA's " + fmt("%.3f", ns(l.dma_demand_ps)) + " ns";
  return o + "\n";
}

constexpr int kJsonIndent = 2;

std::string dump_json(const Json& j) {
  return j.dump(kJsonIndent, ' ', false, Json::error_handler_t::replace);  // a name that is not UTF-8: U+FFFD
}

Json loop_json(const SimResult& r, const LoopResult& l) {
  Json iters = Json::array();
  for (const IterationResult& it : l.iterations) {
    const MetricSubject s{r, nullptr, &l, &it};
    Json ij = Json::object();
    for (Metric m : {Metric::iter_index, Metric::iter_iv, Metric::iter_start_ns, Metric::iter_end_ns,
                     Metric::iter_dma_in_flight_ns, Metric::iter_dma_moving_ns, Metric::iter_dma_waiting_ns,
                     Metric::iter_compute_busy_ns, Metric::iter_overlap, Metric::iter_compute_dma_wait_ns,
                     Metric::iter_wmma_bubble_cycles})
      put(ij, m, s);
    ij["stalls"] = stalls_json(it.stall_ps);
    iters.push_back(ij);
  }
  const MetricSubject s{r, nullptr, &l};
  Json lj = {{"name", l.iv}};
  for (Metric m : {Metric::loop_trip_count, Metric::loop_dynamic_iterations, Metric::loop_ii_ns,
                   Metric::loop_ii_bound_ns, Metric::loop_resource_bound_ns})
    put(lj, m, s);
  lj["bound_resource"] = l.bound_resource;
  put(lj, Metric::loop_recurrence_bound_ns, s);
  lj["recurrence_cause"] = l.recurrence_cause;
  for (Metric m :
       {Metric::loop_span_ns, Metric::loop_span_bound_ns, Metric::loop_efficiency, Metric::loop_dma_in_flight_ns,
        Metric::loop_dma_moving_ns, Metric::loop_dma_waiting_ns, Metric::loop_overlap, Metric::loop_exposed_dma_ns,
        Metric::loop_compute_demand_ns, Metric::loop_dma_demand_ns, Metric::loop_hideable_dma, Metric::loop_wmmas,
        Metric::loop_wmma_bubble_cycles})
    put(lj, m, s);
  lj["limiter"] = l.limiter();
  Json sol = Json::array();
  for (const DemandResult& d : l.demands) {
    MetricSubject ds = s;
    ds.demand = &d;
    Json dj = {{"resource", d.resource}};
    for (Metric m : {Metric::resource_demand_ns, Metric::resource_of_ii}) put(dj, m, ds);
    sol.push_back(dj);
  }
  lj["speed_of_light"] = sol;
  lj["iterations_folded"] = l.folded;
  lj["iterations"] = iters;
  return lj;
}

// The document's "loops" array as dump_json would print it inside the top-level object, one
// loop at a time: a kernel of many loops never holds all their trees, or all their text, at once.
void write_loops(const SimResult& r, const std::function<void(const std::string&)>& out) {
  if (r.loops.empty()) {
    out("[]");
    return;
  }
  const std::string item_indent(2 * kJsonIndent, ' ');
  for (size_t i = 0; i < r.loops.size(); ++i) {
    const std::string text = dump_json(loop_json(r, r.loops[i]));
    std::string indented = i ? ",\n" : "[\n";
    for (size_t from = 0; from <= text.size();) {
      const size_t nl = std::min(text.find('\n', from), text.size());
      indented += item_indent;
      indented.append(text, from, nl - from);
      if (nl == text.size()) break;
      indented += '\n';
      from = nl + 1;
    }
    out(indented);
  }
  out("\n" + std::string(kJsonIndent, ' ') + "]");
}

}  // namespace

void write_json(const SimResult& r, const std::function<void(const std::string&)>& out) {
  const MetricSubject kernel{r};
  Json engines = Json::array(), queues = Json::array();
  for (const UnitResult& u : r.units) (u.is_queue ? queues : engines).push_back(unit_json(r, u));
  Json hazards = Json::array();
  for (const HazardReport& h : r.hazards)
    hazards.push_back({{"kind", h.kind}, {"first", h.first}, {"second", h.second}, {"message", h.message}});
  Json j = {{"schema", "tandem.sim/1"}, {"kernel", r.kernel}, {"model", r.model}};
  j["provenance"] = {{"tandem", r.provenance.tandem},
                     {"model_file", r.provenance.model_file},
                     {"model_hash", r.provenance.model_hash},
                     {"pipeline", r.provenance.pipeline},
                     {"model_edits", r.provenance.model_edits}};
  j["reference_clock_ghz"] = r.reference_clock_ghz;
  for (Metric m : {Metric::total_ns, Metric::total_cycles, Metric::lower_bound_ns}) put(j, m, kernel);
  j["lower_bound_resource"] = r.lower_bound_resource;
  for (Metric m : {Metric::dynamic_instructions, Metric::semaphores, Metric::semaphores_available}) put(j, m, kernel);
  j["engines"] = engines;
  Json dma = {{"bytes", metric_value(Metric::dma_bytes, kernel)}};
  for (Metric m : {Metric::dma_engines, Metric::dma_engine_busy_ns, Metric::dma_engine_utilization,
                   Metric::dma_queues_used, Metric::dma_queues_available}) {
    const std::string name = metric_info(m).name;
    Json leaf;
    put(leaf, m, kernel);
    dma[name.substr(4)] = leaf[name];  // "dma.engines" -> dma["engines"]
  }
  Json engine_work = Json::array();
  for (size_t e = 0; e < r.dma_engine_work.size(); ++e) {
    MetricSubject es = kernel;
    es.engine_work = &r.dma_engine_work[e];
    Json ej = {{"name", "dma engine " + std::to_string(e)}};
    for (Metric m : {Metric::dma_engine_work_ns, Metric::dma_engine_work_utilization}) put(ej, m, es);
    engine_work.push_back(ej);
  }
  dma["engine_work"] = engine_work;
  dma["queues"] = queues;
  j["dma"] = dma;
  Json spaces = Json::array();
  for (const SpaceResult& sp : r.spaces) {
    Json sj = {{"name", sp.name}, {"unit", sp.unit}};
    for (Metric m : {Metric::space_allocated, Metric::space_capacity, Metric::space_headroom})
      put(sj, m, {r, nullptr, nullptr, nullptr, &sp});
    if (!sp.spilled.empty()) sj["spilled"] = sp.spilled;
    spaces.push_back(sj);
  }
  j["spaces"] = spaces;
  // A placeholder for the loops, printed one by one below: a string value cannot hold a raw
  // newline, so the key at the top level's indent is found only where it is.
  const std::string placeholder = "loops printed separately";
  j["loops"] = placeholder;
  j["races_checked"] = r.checked;
  for (Metric m : {Metric::races, Metric::perturbed_runs}) put(j, m, kernel);
  j["hazards"] = hazards;
  Json profile = Json::array();
  const Picos busy = profile_busy_ps(r);
  for (const InstProfile& p : r.profile) {
    const MetricSubject s{r, nullptr, nullptr, nullptr, nullptr, &p, busy};
    Json pj = {{"name", p.name}, {"opcode", p.opcode}, {"unit", p.unit}};
    for (Metric m : {Metric::inst_instances, Metric::inst_busy_ns, Metric::inst_stall_ns, Metric::inst_share})
      put(pj, m, s);
    pj["stalls"] = stalls_json(p.stall_ps);
    profile.push_back(pj);
  }
  j["profile"] = profile;
  if (!r.advice.empty()) {  // only when asked for (tandem sim --advise)
    Json advice = Json::array();
    for (const Advice& a : r.advice) {
      Json aj = {{"change", a.change}, {"simulated", a.simulated}};
      if (a.simulated) {
        aj["command"] = a.command;
        aj["total_ns"] = ns(a.total_ps);
        aj["gain"] = a.gain;
        aj["rejected"] = a.rejected;
      }
      advice.push_back(aj);
    }
    j["advice"] = advice;
  }
  if (!r.timeline_loop.empty()) {  // only when captured (tandem sim --report)
    Json spans = Json::array();
    for (const TimelineSpan& sp : r.timeline)
      spans.push_back({{"unit", sp.unit},
                       {"inst", sp.inst},
                       {"iteration", sp.iteration},
                       {"start_ns", ns(sp.start_ps)},
                       {"end_ns", ns(sp.end_ps)}});
    j["timeline"] = {{"loop", r.timeline_loop}, {"spans", spans}};
  }
  // Each figure's unit, by the scope of the object it sits in (the metric table's).
  Json units = Json::object();
  for (const MetricInfo& m : metric_table()) units[metric_scope_name(m.scope)][m.name] = m.unit;
  j["units"] = units;
  const std::string text = dump_json(j);
  const std::string key = "\n" + std::string(kJsonIndent, ' ') + "\"loops\": ";
  const size_t at = text.find(key + "\"" + placeholder + "\"") + key.size();
  out(text.substr(0, at));
  write_loops(r, out);
  out(text.substr(at + placeholder.size() + 2) + "\n");
}

std::string format_json(const SimResult& r) {
  std::string text;
  write_json(r, [&](const std::string& part) { text += part; });
  return text;
}

SimResult parse_sim_json(const std::string& sim_json) {
  const nlohmann::json doc = nlohmann::json::parse(sim_json);
  SimResult r;
  r.kernel = doc.at("kernel");
  r.model = doc.at("model");
  if (doc.contains("provenance")) {
    const auto& p = doc.at("provenance");
    r.provenance = {p.at("tandem"), p.at("model_file"), p.at("model_hash"), p.at("pipeline"),
                    p.value("model_edits", "")};
  }
  r.reference_clock_ghz = doc.at("reference_clock_ghz");
  r.total_ps = ps_from_ns(doc.at("total_ns"));
  r.lower_bound_ps = ps_from_ns(doc.at("lower_bound_ns"));
  r.lower_bound_resource = doc.at("lower_bound_resource");
  r.dynamic_instructions = doc.at("dynamic_instructions");
  r.semaphores = doc.at("semaphores");
  r.semaphores_available = doc.at("semaphores_available");
  r.dma_bytes = doc.at("dma").at("bytes");
  const auto& dma = doc.at("dma");
  r.dma_engines = dma.at("engines");
  r.dma_engine_busy_ps = ps_from_ns(dma.at("engine_busy_ns"));
  r.dma_queues_available = dma.at("queues_available");
  for (const auto& ej : dma.at("engine_work")) r.dma_engine_work.push_back(ps_from_ns(ej.at("busy_ns")));
  for (const auto& sp : doc.at("spaces"))
    r.spaces.push_back({sp.at("name"), sp.at("unit"), sp.at("allocated"), sp.at("capacity"),
                        sp.value("spilled", std::vector<std::string>{})});
  for (const auto& pj : doc.at("profile")) {
    InstProfile p;
    p.name = pj.at("name");
    p.opcode = pj.at("opcode");
    p.unit = pj.at("unit");
    p.instances = pj.at("instances");
    p.busy_ps = ps_from_ns(pj.at("busy_ns"));
    p.stall_ps = stalls_from_json(pj.at("stalls"));
    r.profile.push_back(p);
  }
  auto unit = [](const nlohmann::json& j, bool queue) {
    UnitResult u;
    u.name = j.at("name");
    u.is_queue = queue;
    u.busy_ps = ps_from_ns(j.at("busy_ns"));
    u.setup_ps = ps_from_ns(j.at("setup_ns"));
    u.instances = j.at("instances");
    u.stall_ps = stalls_from_json(j.at("stalls"));
    if (queue) u.bytes = j.at("bytes");
    return u;
  };
  for (const auto& e : doc.at("engines")) r.units.push_back(unit(e, false));
  for (const auto& q : doc.at("dma").at("queues")) r.units.push_back(unit(q, true));
  for (const auto& lj : doc.at("loops")) {
    LoopResult l;
    l.iv = lj.at("name");
    l.trip_count = lj.at("trip_count");
    l.dynamic_iterations = lj.at("dynamic_iterations");
    l.ii_ps = ps_from_ns(lj.at("ii_ns"));
    l.ii_bound_ps = ps_from_ns(lj.at("ii_bound_ns"));
    l.resource_bound_ps = ps_from_ns(lj.at("resource_bound_ns"));
    l.bound_resource = lj.at("bound_resource");
    l.recurrence_bound_ps = ps_from_ns(lj.at("recurrence_bound_ns"));
    l.recurrence_cause = lj.value("recurrence_cause", "");
    l.span_ps = ps_from_ns(lj.at("span_ns"));
    l.span_bound_ps = ps_from_ns(lj.at("span_bound_ns"));
    l.efficiency = lj.at("efficiency");
    l.dma_in_flight_ps = ps_from_ns(lj.at("dma_in_flight_ns"));
    l.dma_moving_ps = ps_from_ns(lj.at("dma_moving_ns"));
    l.dma_waiting_ps = ps_from_ns(lj.at("dma_waiting_ns"));
    l.overlapped_dma_ps =
        static_cast<Picos>(std::llround(lj.at("overlap").get<double>() * static_cast<double>(l.dma_in_flight_ps)));
    l.compute_demand_ps = ps_from_ns(lj.at("compute_demand_ns"));
    l.dma_demand_ps = ps_from_ns(lj.at("dma_demand_ns"));
    for (const auto& dj : lj.at("speed_of_light"))
      l.demands.push_back({dj.at("resource"), ps_from_ns(dj.at("demand_ns"))});
    l.exposed_dma_ps = ps_from_ns(lj.at("exposed_dma_ns"));
    l.wmma_instances = lj.at("wmmas");
    l.wmma_bubble_ps = ps_from_ns(lj.at("wmma_bubble_cycles_per_iteration").get<double>() / r.reference_clock_ghz *
                                  static_cast<double>(l.dynamic_iterations));
    l.folded = lj.at("iterations_folded");
    for (const auto& ij : lj.at("iterations")) {
      IterationResult it;
      it.index = ij.at("index");
      it.iv = ij.at("iv");
      it.start_ps = ps_from_ns(ij.at("start_ns"));
      it.end_ps = ps_from_ns(ij.at("end_ns"));
      it.dma_in_flight_ps = ps_from_ns(ij.at("dma_in_flight_ns"));
      it.dma_moving_ps = ps_from_ns(ij.at("dma_moving_ns"));
      it.dma_waiting_ps = ps_from_ns(ij.at("dma_waiting_ns"));
      it.compute_busy_ps = ps_from_ns(ij.at("compute_busy_ns"));
      it.overlap = ij.at("overlap");
      it.compute_dma_wait_ps = ps_from_ns(ij.at("compute_dma_wait_ns"));
      it.wmma_bubble_ps = ps_from_ns(ij.at("wmma_bubble_cycles").get<double>() / r.reference_clock_ghz);
      it.stall_ps = stalls_from_json(ij.at("stalls"));
      l.iterations.push_back(it);
    }
    r.loops.push_back(std::move(l));
  }
  r.checked = doc.at("races_checked");
  r.perturbed_runs = doc.at("perturbed_runs");
  for (const auto& h : doc.at("hazards"))
    r.hazards.push_back({h.at("kind"), h.at("first"), h.at("second"), h.at("message")});
  if (doc.contains("advice"))
    for (const auto& aj : doc.at("advice")) {
      Advice a{aj.at("change"), "", aj.at("simulated"), 0, 0, ""};
      if (a.simulated) {
        a.command = aj.at("command");
        a.total_ps = ps_from_ns(aj.at("total_ns"));
        a.gain = aj.at("gain");
        a.rejected = aj.at("rejected");
      }
      r.advice.push_back(a);
    }
  if (doc.contains("timeline")) {
    r.timeline_loop = doc.at("timeline").at("loop");
    for (const auto& sp : doc.at("timeline").at("spans"))
      r.timeline.push_back({sp.at("unit"), sp.at("inst"), sp.at("iteration"), ps_from_ns(sp.at("start_ns")),
                            ps_from_ns(sp.at("end_ns"))});
  }
  return r;
}

std::string format_spilled(const SpaceResult& sp) {
  std::string out;
  for (const std::string& t : sp.spilled) out += (out.empty() ? " (spilled to DRAM: " : ", ") + t;
  return out.empty() ? out : out + ")";
}

std::string format_summary(const SimResult& r) {
  std::ostringstream o;
  if (!r.hazards.empty()) {
    o << r.hazards.size() << (r.hazards.size() == 1 ? " race" : " races") << " (the schedule breaks program order):\n";
    for (const HazardReport& h : r.hazards) o << "  " << h.message << "\n";
    o << "\n";
  }
  o << "kernel @" << r.kernel << " on " << r.model << ": " << fmt("%.3f", ns(r.total_ps)) << " ns, "
    << fmt("%.0f", cycles(r.total_ps, r.reference_clock_ghz)) << " cycles at " << fmt("%g", r.reference_clock_ghz)
    << " GHz\n";
  o << "lower bound " << fmt("%.3f", ns(r.lower_bound_ps)) << " ns (" << r.lower_bound_resource << "), "
    << r.dynamic_instructions << " dynamic instructions, " << r.semaphores << " semaphores"
    << (r.semaphores_available ? " of " + std::to_string(r.semaphores_available) : std::string()) << ", "
    << fmt("%.0f", r.dma_bytes) << " DMA bytes\n";
  o << "DMA engines " << fmt("%.1f", 100 * metric_value(Metric::dma_engine_utilization, {r})) << "% busy ("
    << r.dma_engines << " engines), queues used " << metric_value(Metric::dma_queues_used, {r}) << " of "
    << r.dma_queues_available;
  for (const SpaceResult& sp : r.spaces)
    o << ", " << sp.name << " " << sp.allocated << " of " << sp.capacity << " " << sp.unit << " allocated"
      << format_spilled(sp);
  o << "\n\n";
  o << "unit          busy_ns     setup_ns   util   stall_ns: semaphore dependency    barrier      queue   conflict\n";
  for (const UnitResult& u : r.units) {
    o << fmt::sprintf("%-8s %12.3f %12s %5.1f%% %20.3f %10.3f %10.3f %10.3f %10.3f\n", u.name, ns(u.busy_ps),
                      u.is_queue ? fmt("%.3f", ns(u.setup_ps)) : std::string("-"),
                      100.0 * metric_value(Metric::unit_utilization, {r, &u}), ns(u.stall_ps[0]), ns(u.stall_ps[1]),
                      ns(u.stall_ps[2]), ns(u.stall_ps[3]), ns(u.stall_ps[4]));
  }
  o << format_dma_engine_rows(r);
  for (const LoopResult& l : r.loops) {
    o << "\nloop " << l.iv << " (" << l.dynamic_iterations << " iterations): " << format_loop_bounds(l)
      << "; DMA overlapped " << fmt("%.1f", 100 * l.overlap()) << "% (compute could hide at most "
      << fmt("%.1f", 100 * l.hideable_dma()) << "%), exposed DMA " << fmt("%.3f", ns(l.exposed_dma_ps))
      << " ns of wall time\n";
    if (l.wmma_instances > 0)
      o << "  WMMA issue bubbles: " << fmt("%.2f", l.wmma_bubble_cycles_per_iteration(r.reference_clock_ghz))
        << " cycles per iteration over " << l.wmma_instances / std::max<int64_t>(1, l.dynamic_iterations)
        << " WMMA(s) (time a WMMA waited for its operands after the issue stream was free)\n";
    o << format_speed_of_light(l);
    o << "  iteration     start_ns       end_ns  dma_in_flight_ns  compute_busy_ns  overlap  compute_dma_wait_ns\n";
    // Folded: the first two, one steady iteration from the middle, and the last.
    const auto& its = l.iterations;
    std::vector<size_t> show;
    if (its.size() <= 6) {
      for (size_t i = 0; i < its.size(); ++i) show.push_back(i);
    } else {
      show = {0, 1, its.size() / 2, its.size() - 1};
    }
    size_t prev = 0;
    for (size_t n = 0; n < show.size(); ++n) {
      size_t i = show[n];
      if (n > 0 && i > prev + 1) o << "  ...\n";
      const IterationResult& it = its[i];
      o << fmt::sprintf("  %9d %12.3f %12.3f %17.3f %16.3f %7.1f%% %20.3f\n", it.index, ns(it.start_ps), ns(it.end_ps),
                        ns(it.dma_in_flight_ps), ns(it.compute_busy_ps), 100 * it.overlap, ns(it.compute_dma_wait_ps));
      prev = i;
    }
  }
  if (!r.provenance.model_file.empty())
    o << "\nmodel file " << r.provenance.model_file << " (" << r.provenance.model_hash << ")"
      << (r.provenance.model_edits.empty() ? "" : " with" + r.provenance.model_edits) << ", pipeline "
      << r.provenance.pipeline << ", tandem " << r.provenance.tandem << "\n";
  // What the race check tried, also when it found nothing.
  if (r.perturbed_runs > 0)
    o << "\nrace check: this run and " << r.perturbed_runs << " perturbed run" << (r.perturbed_runs == 1 ? "" : "s")
      << " (seeds 1.." << r.perturbed_runs << ", spread " << fmt("%g", r.perturb_spread) << "): "
      << (r.hazards.empty()
              ? std::string("no race")
              : std::to_string(r.hazards.size()) + (r.hazards.size() == 1 ? " race" : " races") + " (above)")
      << "\n";
  return o.str();
}

std::string format_profile(const SimResult& r) {
  std::ostringstream o;
  o << "\nprofile (by busy time; stalls by cause, ns):\n";
  o << fmt::sprintf("%-20s %-14s %-6s %9s %14s %6s %12s %10s %10s %10s %10s %10s\n", "instruction", "opcode", "unit",
                    "instances", "busy_ns", "share", "stall_ns", "semaphore", "dependency", "barrier", "queue",
                    "conflict");
  const Picos busy = profile_busy_ps(r);
  for (const InstProfile& p : r.profile) {
    const MetricSubject s{r, nullptr, nullptr, nullptr, nullptr, &p, busy};
    o << fmt::sprintf("%-20s %-14s %-6s %9d %14.3f %5.1f%% %12.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", p.name,
                      p.opcode, p.unit, p.instances, ns(p.busy_ps), 100 * metric_value(Metric::inst_share, s),
                      metric_value(Metric::inst_stall_ns, s), ns(p.stall_ps[0]), ns(p.stall_ps[1]), ns(p.stall_ps[2]),
                      ns(p.stall_ps[3]), ns(p.stall_ps[4]));
  }
  return o.str();
}

}  // namespace tandem
