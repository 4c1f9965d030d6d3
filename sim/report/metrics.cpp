#include "sim/report/metrics.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/printf.h>

namespace tandem {

const std::vector<MetricInfo>& metric_table() {
  static const std::vector<MetricInfo> table = {
#define METRIC(id, name, scope, unit, format, compared, definition) \
  {Metric::id, name, MetricScope::scope, unit, format, compared, definition},
#include "sim/report/metrics.def"
#undef METRIC
  };
  return table;
}

const MetricInfo& metric_info(Metric m) { return metric_table()[static_cast<size_t>(m)]; }

const MetricInfo* find_metric(const std::string& name, MetricScope scope) {
  for (const MetricInfo& m : metric_table())
    if (m.scope == scope && name == m.name) return &m;
  return nullptr;
}

const char* metric_scope_name(MetricScope s) {
  switch (s) {
    case MetricScope::Kernel:
      return "kernel";
    case MetricScope::Unit:
      return "unit";
    case MetricScope::Loop:
      return "loop";
    case MetricScope::Iteration:
      return "iteration";
    case MetricScope::Space:
      return "space";
    case MetricScope::Instruction:
      return "instruction";
    case MetricScope::Resource:
      return "resource";
    case MetricScope::DmaEngine:
      return "dma_engine";
  }
  return "?";
}

namespace {

double ns(Picos ps) { return ps_to_ns(ps); }
double fraction(Picos part, Picos whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

template <class T>
const T& need(const T* p, Metric m) {
  if (!p) throw std::logic_error(std::string("metric ") + metric_info(m).name + " measured without its subject");
  return *p;
}

}  // namespace

double metric_value(Metric m, const MetricSubject& s) {
  const SimResult& r = s.result;
  const double ghz = r.reference_clock_ghz;
  switch (m) {
    case Metric::total_ns:
      return ns(r.total_ps);
    case Metric::total_cycles:
      return ns(r.total_ps) * ghz;
    case Metric::lower_bound_ns:
      return ns(r.lower_bound_ps);
    case Metric::dynamic_instructions:
      return static_cast<double>(r.dynamic_instructions);
    case Metric::semaphores:
      return static_cast<double>(r.semaphores);
    case Metric::semaphores_available:
      return static_cast<double>(r.semaphores_available);
    case Metric::dma_bytes:
      return r.dma_bytes;
    case Metric::races:
      return static_cast<double>(r.hazards.size());
    case Metric::perturbed_runs:
      return r.perturbed_runs;

    case Metric::unit_busy_ns:
      return ns(need(s.unit, m).busy_ps);
    case Metric::unit_setup_ns:
      return ns(need(s.unit, m).setup_ps);
    case Metric::unit_utilization: {
      const UnitResult& u = need(s.unit, m);
      return fraction(std::max(u.busy_ps, u.setup_ps), r.total_ps);
    }
    case Metric::unit_instances:
      return static_cast<double>(need(s.unit, m).instances);
    case Metric::unit_bytes:
      return need(s.unit, m).bytes;
    case Metric::unit_stall_ns: {
      const StallArray& st = need(s.unit, m).stall_ps;
      return ns(std::accumulate(st.begin(), st.end(), Picos{0}));
    }

    case Metric::loop_trip_count:
      return static_cast<double>(need(s.loop, m).trip_count);
    case Metric::loop_dynamic_iterations:
      return static_cast<double>(need(s.loop, m).dynamic_iterations);
    case Metric::loop_ii_ns:
      return ns(need(s.loop, m).ii_ps);
    case Metric::loop_ii_bound_ns:
      return ns(need(s.loop, m).ii_bound_ps);
    case Metric::loop_resource_bound_ns:
      return ns(need(s.loop, m).resource_bound_ps);
    case Metric::loop_recurrence_bound_ns:
      return ns(need(s.loop, m).recurrence_bound_ps);
    case Metric::loop_span_ns:
      return ns(need(s.loop, m).span_ps);
    case Metric::loop_span_bound_ns:
      return ns(need(s.loop, m).span_bound_ps);
    case Metric::loop_efficiency:
      return need(s.loop, m).efficiency;
    case Metric::loop_dma_in_flight_ns:
      return ns(need(s.loop, m).dma_in_flight_ps);
    case Metric::loop_dma_moving_ns:
      return ns(need(s.loop, m).dma_moving_ps);
    case Metric::loop_dma_waiting_ns:
      return ns(need(s.loop, m).dma_waiting_ps);
    case Metric::loop_compute_demand_ns:
      return ns(need(s.loop, m).compute_demand_ps);
    case Metric::loop_dma_demand_ns:
      return ns(need(s.loop, m).dma_demand_ps);
    case Metric::loop_hideable_dma:
      return need(s.loop, m).hideable_dma();
    case Metric::loop_overlap:
      return need(s.loop, m).overlap();
    case Metric::loop_exposed_dma_ns:
      return ns(need(s.loop, m).exposed_dma_ps);
    case Metric::loop_wmmas:
      return static_cast<double>(need(s.loop, m).wmma_instances);
    case Metric::loop_wmma_bubble_cycles:
      return need(s.loop, m).wmma_bubble_cycles_per_iteration(ghz);

    case Metric::iter_index:
      return static_cast<double>(need(s.iteration, m).index);
    case Metric::iter_iv:
      return static_cast<double>(need(s.iteration, m).iv);
    case Metric::iter_start_ns:
      return ns(need(s.iteration, m).start_ps);
    case Metric::iter_end_ns:
      return ns(need(s.iteration, m).end_ps);
    case Metric::iter_dma_in_flight_ns:
      return ns(need(s.iteration, m).dma_in_flight_ps);
    case Metric::iter_dma_moving_ns:
      return ns(need(s.iteration, m).dma_moving_ps);
    case Metric::iter_dma_waiting_ns:
      return ns(need(s.iteration, m).dma_waiting_ps);
    case Metric::iter_compute_busy_ns:
      return ns(need(s.iteration, m).compute_busy_ps);
    case Metric::iter_overlap:
      return need(s.iteration, m).overlap;
    case Metric::iter_compute_dma_wait_ns:
      return ns(need(s.iteration, m).compute_dma_wait_ps);
    case Metric::iter_wmma_bubble_cycles:
      return ns(need(s.iteration, m).wmma_bubble_ps) * ghz;

    case Metric::dma_engines:
      return static_cast<double>(r.dma_engines);
    case Metric::dma_engine_busy_ns:
      return ns(r.dma_engine_busy_ps);
    case Metric::dma_engine_utilization:
      return r.dma_engines > 0 ? fraction(r.dma_engine_busy_ps, r.total_ps) / static_cast<double>(r.dma_engines) : 0.0;
    case Metric::dma_queues_used:
      return static_cast<double>(std::count_if(r.units.begin(), r.units.end(),
                                               [](const UnitResult& u) { return u.is_queue && u.instances > 0; }));
    case Metric::dma_queues_available:
      return static_cast<double>(r.dma_queues_available);
    case Metric::space_allocated:
      return static_cast<double>(need(s.space, m).allocated);
    case Metric::space_capacity:
      return static_cast<double>(need(s.space, m).capacity);
    case Metric::space_headroom:
      return static_cast<double>(need(s.space, m).capacity - need(s.space, m).allocated);
    case Metric::inst_instances:
      return static_cast<double>(need(s.inst, m).instances);
    case Metric::inst_busy_ns:
      return ns(need(s.inst, m).busy_ps);
    case Metric::inst_stall_ns: {
      const StallArray& st = need(s.inst, m).stall_ps;
      return ns(std::accumulate(st.begin(), st.end(), Picos{0}));
    }
    case Metric::resource_demand_ns:
      return ns(need(s.demand, m).ps);
    case Metric::resource_of_ii:
      return fraction(need(s.demand, m).ps, need(s.loop, m).ii_ps);
    case Metric::dma_engine_work_ns:
      return ns(need(s.engine_work, m));
    case Metric::dma_engine_work_utilization:
      return fraction(need(s.engine_work, m), r.total_ps);
    case Metric::inst_share:
      return fraction(need(s.inst, m).busy_ps, s.profile_busy >= 0 ? s.profile_busy : profile_busy_ps(r));
  }
  throw std::logic_error("metric without a value");
}

Picos profile_busy_ps(const SimResult& r) {
  Picos all = 0;
  for (const InstProfile& p : r.profile) all += p.busy_ps;
  return all;
}

std::string format_metric(Metric m, double v) { return fmt::sprintf(metric_info(m).format, v); }

const LoopResult* main_loop(const SimResult& r) {
  const LoopResult* best = nullptr;
  for (const LoopResult& l : r.loops)
    if (!best || l.dynamic_iterations > best->dynamic_iterations) best = &l;
  return best;
}

}  // namespace tandem
