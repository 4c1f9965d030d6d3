#include "sim/report/report.h"

#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

namespace tandem {

namespace {

double ns(Picos ps) { return ps_to_ns(ps); }
double cycles(Picos ps, double ghz) { return ps_to_ns(ps) * ghz; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

nlohmann::ordered_json stalls_json(const StallArray& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t i = 0; i < s.size(); ++i) j[std::string(stall_reason_name(static_cast<StallReason>(i))) + "_ns"] = ns(s[i]);
  return j;
}

nlohmann::ordered_json unit_json(const UnitResult& u, Picos total) {
  nlohmann::ordered_json j = {{"name", u.name},
                      {"busy_ns", ns(u.busy_ps)},
                      {"utilization", total > 0 ? static_cast<double>(u.busy_ps) / static_cast<double>(total) : 0.0},
                      {"instances", u.instances},
                      {"stalls", stalls_json(u.stall_ps)}};
  if (u.is_queue) j["bytes"] = u.bytes;
  return j;
}

}  // namespace

std::string format_json(const SimResult& r) {
  nlohmann::ordered_json engines = nlohmann::ordered_json::array(), queues = nlohmann::ordered_json::array(), loops = nlohmann::ordered_json::array();
  for (const UnitResult& u : r.units) (u.is_queue ? queues : engines).push_back(unit_json(u, r.total_ps));
  for (const LoopResult& l : r.loops) {
    nlohmann::ordered_json iters = nlohmann::ordered_json::array();
    for (const IterationResult& it : l.iterations)
      iters.push_back({{"index", it.index},
                       {"iv", it.iv},
                       {"start_ns", ns(it.start_ps)},
                       {"end_ns", ns(it.end_ps)},
                       {"dma_busy_ns", ns(it.dma_busy_ps)},
                       {"compute_busy_ns", ns(it.compute_busy_ps)},
                       {"overlap", it.overlap},
                       {"exposed_dma_ns", ns(it.exposed_dma_ps)},
                       {"wmma_bubble_cycles", cycles(it.wmma_bubble_ps, r.reference_clock_ghz)},
                       {"stalls", stalls_json(it.stall_ps)}});
    loops.push_back({{"name", l.iv},
                     {"trip_count", l.trip_count},
                     {"dynamic_iterations", l.dynamic_iterations},
                     {"ii_ns", ns(l.ii_ps)},
                     {"ii_bound_ns", ns(l.ii_bound_ps)},
                     {"resource_bound_ns", ns(l.resource_bound_ps)},
                     {"bound_resource", l.bound_resource},
                     {"recurrence_bound_ns", ns(l.recurrence_bound_ps)},
                     {"efficiency", l.efficiency},
                     {"dma_busy_ns", ns(l.dma_busy_ps)},
                     {"overlap", l.overlap()},
                     {"exposed_dma_ns", ns(l.exposed_dma_ps)},
                     {"wmmas", l.wmma_instances},
                     {"wmma_bubble_cycles_per_iteration", l.wmma_bubble_cycles_per_iteration(r.reference_clock_ghz)},
                     {"iterations_folded", l.folded},
                     {"iterations", iters}});
  }
  nlohmann::ordered_json hazards = nlohmann::ordered_json::array();
  for (const HazardReport& h : r.hazards)
    hazards.push_back({{"kind", h.kind}, {"first", h.first}, {"second", h.second}, {"message", h.message}});
  nlohmann::ordered_json j = {{"schema", "tandem.sim/1"},
                      {"kernel", r.kernel},
                      {"model", r.model},
                      {"reference_clock_ghz", r.reference_clock_ghz},
                      {"total_ns", ns(r.total_ps)},
                      {"total_cycles", cycles(r.total_ps, r.reference_clock_ghz)},
                      {"lower_bound_ns", ns(r.lower_bound_ps)},
                      {"lower_bound_resource", r.lower_bound_resource},
                      {"dynamic_instructions", r.dynamic_instructions},
                      {"semaphores", r.semaphores},
                      {"semaphores_available", r.semaphores_available},
                      {"engines", engines},
                      {"dma", {{"bytes", r.dma_bytes}, {"queues", queues}}},
                      {"loops", loops},
                      {"races_checked", r.checked},
                      {"perturbed_runs", r.perturbed_runs},
                      {"hazards", hazards}};
  if (!r.timeline_loop.empty()) {  // only when captured (tandem sim --report)
    nlohmann::ordered_json spans = nlohmann::ordered_json::array();
    for (const TimelineSpan& s : r.timeline)
      spans.push_back({{"unit", s.unit}, {"inst", s.inst}, {"iteration", s.iteration}, {"start_ns", ns(s.start_ps)},
                       {"end_ns", ns(s.end_ps)}});
    j["timeline"] = {{"loop", r.timeline_loop}, {"spans", spans}};
  }
  return j.dump(2) + "\n";
}

std::vector<HazardReport> hazards_from_json(const std::string& sim_json) {
  std::vector<HazardReport> out;
  const nlohmann::json doc = nlohmann::json::parse(sim_json);  // must outlive the loop
  for (const auto& h : doc.at("hazards"))
    out.push_back({h.at("kind"), h.at("first"), h.at("second"), h.at("message")});
  return out;
}

std::string format_summary(const SimResult& r) {
  std::ostringstream o;
  if (!r.hazards.empty()) {
    o << r.hazards.size() << (r.hazards.size() == 1 ? " race" : " races") << " (the schedule breaks program order):\n";
    for (const HazardReport& h : r.hazards) o << "  " << h.message << "\n";
    o << "\n";
  }
  o << "kernel @" << r.kernel << " on " << r.model << ": " << fmt("%.3f", ns(r.total_ps)) << " ns, "
    << fmt("%.0f", cycles(r.total_ps, r.reference_clock_ghz)) << " cycles at "
    << fmt("%g", r.reference_clock_ghz) << " GHz\n";
  o << "lower bound " << fmt("%.3f", ns(r.lower_bound_ps)) << " ns (" << r.lower_bound_resource << "), "
    << r.dynamic_instructions << " dynamic instructions, " << r.semaphores << " semaphores"
    << (r.semaphores_available ? " of " + std::to_string(r.semaphores_available) : std::string()) << ", "
    << fmt("%.0f", r.dma_bytes) << " DMA bytes\n\n";
  o << "unit        busy_ns   util   stall_ns: semaphore dependency    barrier      queue   conflict\n";
  for (const UnitResult& u : r.units) {
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %12.3f %5.1f%% %20.3f %10.3f %10.3f %10.3f %10.3f\n", u.name.c_str(),
                  ns(u.busy_ps), r.total_ps > 0 ? 100.0 * static_cast<double>(u.busy_ps) / static_cast<double>(r.total_ps) : 0.0,
                  ns(u.stall_ps[0]), ns(u.stall_ps[1]), ns(u.stall_ps[2]), ns(u.stall_ps[3]), ns(u.stall_ps[4]));
    o << line;
  }
  for (const LoopResult& l : r.loops) {
    o << "\nloop " << l.iv << " (" << l.dynamic_iterations << " iterations): II " << fmt("%.3f", ns(l.ii_ps))
      << " ns, bound " << fmt("%.3f", ns(l.ii_bound_ps)) << " ns ("
      << (l.recurrence_bound_ps > l.resource_bound_ps ? std::string("recurrence") : l.bound_resource) << "), efficiency "
      << fmt("%.1f", 100 * l.efficiency) << "%, DMA overlapped " << fmt("%.1f", 100 * l.overlap()) << "%, exposed DMA "
      << fmt("%.3f", ns(l.exposed_dma_ps)) << " ns\n";
    if (l.wmma_instances > 0)
      o << "  WMMA issue bubbles: " << fmt("%.2f", l.wmma_bubble_cycles_per_iteration(r.reference_clock_ghz))
        << " cycles per iteration over " << l.wmma_instances / std::max<int64_t>(1, l.dynamic_iterations)
        << " WMMA(s) (time a WMMA waited for its operands after the issue stream was free)\n";
    o << "  iteration     start_ns       end_ns  dma_busy_ns  compute_busy_ns  overlap  exposed_dma_ns\n";
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
      char line[256];
      std::snprintf(line, sizeof line, "  %9lld %12.3f %12.3f %12.3f %16.3f %7.1f%% %15.3f\n", static_cast<long long>(it.index),
                    ns(it.start_ps), ns(it.end_ps), ns(it.dma_busy_ps), ns(it.compute_busy_ps), 100 * it.overlap,
                    ns(it.exposed_dma_ps));
      o << line;
      prev = i;
    }
  }
  // What the race check tried, also when it found nothing.
  if (r.perturbed_runs > 0)
    o << "\nrace check: this run and " << r.perturbed_runs << " perturbed run" << (r.perturbed_runs == 1 ? "" : "s")
      << " (seeds 1.." << r.perturbed_runs << ", spread " << fmt("%g", r.perturb_spread) << "): "
      << (r.hazards.empty() ? std::string("no race")
                            : std::to_string(r.hazards.size()) + (r.hazards.size() == 1 ? " race" : " races") + " (above)")
      << "\n";
  return o.str();
}

}  // namespace tandem
