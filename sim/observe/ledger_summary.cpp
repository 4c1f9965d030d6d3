#include "sim/observe/ledger.h"

#include <algorithm>
#include <tuple>

#include "sched/analysis/allocator.h"
#include "sched/analysis/loop_bounds.h"

// The ledger's summary (Ledger::finish): per-unit totals, the instruction profile, each
// loop's result with its kept iterations, and the bounds of the kernel and of each loop.
namespace tandem {

namespace {

// The instructions a unit runs directly in the body of each loop, in its order (one walk for
// all loops: a walk per loop would be quadratic in the number of sibling loops).
void find_streams(const std::vector<WalkNode>& nodes, std::vector<std::vector<InstId>>& by_loop) {
  for (const WalkNode& n : nodes) {
    if (!n.is_loop) continue;
    for (const WalkNode& c : n.children)
      if (!c.is_loop) by_loop[static_cast<size_t>(n.id)].push_back(c.id);
    find_streams(n.children, by_loop);
  }
}

// A loop's speed of light as reported: DMA engines in a row with the same work (most kernels
// spread every transfer over all of them) as one entry, "dma engines 0-15", with the work of
// each.
std::vector<DemandResult> grouped(const std::vector<ResourceDemand>& demands) {
  std::vector<DemandResult> out;
  for (size_t i = 0; i < demands.size();) {
    const ResourceDemand& d = demands[i];
    size_t j = i + 1;
    auto continues_run = [&](const ResourceDemand& e) {
      return e.kind == ResourceDemand::Kind::DmaEngine && e.ps == d.ps && e.index == d.index + static_cast<int>(j - i);
    };
    if (d.kind == ResourceDemand::Kind::DmaEngine)
      while (j < demands.size() && continues_run(demands[j])) ++j;
    out.push_back(
        {j - i > 1 ? "dma engines " + std::to_string(d.index) + "-" + std::to_string(demands[j - 1].index) : d.resource,
         d.ps});
    i = j;
  }
  return out;
}

}  // namespace

void Ledger::compute_bounds(SimResult& out) {
  const SimProgram& p = ctx_.program;
  const Kernel& k = *p.kernel;
  // The lowered program as the bounds analysis reads it (sched/analysis/loop_bounds.h).
  BoundsInput in = bounds_view(p);
  for (const SimChannel& c : p.channels) in.edges.push_back({c.src, c.dst, c.kind, c.distance, c.key_loop});
  in.streams.assign(p.units.size(), std::vector<std::vector<InstId>>(k.loops.size()));
  for (size_t u = 0; u < p.units.size(); ++u) find_streams(p.walks[u], in.streams[u]);

  const ResourceBound whole = kernel_resource_bound(in);
  out.lower_bound_ps = whole.ps;
  out.lower_bound_resource = whole.resource;
  out.dma_engine_busy_ps = whole.dma_total_ps;
  out.dma_engine_work.assign(static_cast<size_t>(std::max<int64_t>(0, out.dma_engines)), 0);
  for (const ResourceDemand& d : resource_demands(in, kNoId))
    if (d.kind == ResourceDemand::Kind::DmaEngine && static_cast<size_t>(d.index) < out.dma_engine_work.size())
      out.dma_engine_work[static_cast<size_t>(d.index)] = d.ps;
  for (LoopResult& l : out.loops) {
    const std::vector<ResourceDemand> demands = resource_demands(in, l.id);
    for (const ResourceDemand& d : demands) {
      if (d.kind == ResourceDemand::Kind::Compute) l.compute_demand_ps += d.ps;
      if (d.is_dma()) l.dma_demand_ps = std::max(l.dma_demand_ps, d.ps);
    }
    l.demands = grouped(demands);
    const LoopBounds b = loop_bounds(in, l.id);
    l.resource_bound_ps = b.resource.ps;
    l.bound_resource = b.resource.resource;
    l.recurrence_bound_ps = b.recurrence_ps;
    l.recurrence_cause = b.recurrence_cause;
    l.ii_bound_ps = std::max(l.resource_bound_ps, l.recurrence_bound_ps);
    // The loop as a whole against the hardware alone: its busiest resource must do every
    // iteration's work inside the loop's span, fill and drain included, so the span cannot
    // beat it (a loop of few iterations can beat the per-iteration figures, by work run ahead
    // of its first iteration's end). What the schedule leaves on the table includes what its
    // own recurrences (barriers, cut or kept edges) cost; ii_bound_ns says how much is theirs.
    l.span_bound_ps = l.resource_bound_ps * l.dynamic_iterations;
    l.efficiency = l.span_ps > 0 ? static_cast<double>(l.span_bound_ps) / static_cast<double>(l.span_ps) : 0.0;
  }
}

SimResult Ledger::finish() {
  try_finalize(/*all_done=*/true);
  const SimProgram& p = ctx_.program;
  SimResult out;
  out.kernel = p.kernel->name;
  out.model = p.model->name;
  out.reference_clock_ghz = p.model->reference_clock_ghz;
  out.total_ps = total_;
  out.dynamic_instructions = p.dynamic_instructions;
  out.semaphores = p.semaphores;
  out.semaphores_available = p.model->semaphores;
  for (size_t i = 0; i < plans_.size(); ++i) {
    const InstPlan& prof = plans_[i];
    if (prof.instances == 0) continue;
    UnitResult& u = units_[static_cast<size_t>(p.insts[i].units.front())];  // its one unit
    u.busy_ps += prof.busy_ps;
    if (u.is_queue) u.setup_ps += prof.instances * p.insts[i].cycles_ps;
    u.instances += prof.instances;
    add_stalls(u.stall_ps, prof.stall_ps);
  }
  for (size_t u = 0; u < units_.size(); ++u) units_[u].bytes = unit_bytes_[u];
  out.units = units_;
  for (const UnitResult& u : units_) out.dma_bytes += u.bytes;
  out.dma_engines = p.model->dma.engines;
  out.dma_queues_available = static_cast<int64_t>(p.model->dma_queues.size());
  for (const auto& [name, space] : p.model->spaces)
    if (space.capacity() > 0 && !space.is_register_file()) {
      out.spaces.push_back({name, space.capacity_unit(), space_allocation(*p.kernel, name), space.capacity(), {}});
      // A spill's save reads the tensor it spills; a load again from DRAM names it.
      std::vector<std::string>& spilled = out.spaces.back().spilled;
      for (const Instruction& in : p.kernel->insts) {
        if (in.erased || !in.attrs.has(attr::kSpill) || in.reads.empty() || in.writes.empty()) continue;
        std::string tensor;
        if (p.kernel->tensors[static_cast<size_t>(in.reads.front().tensor_id)].space == name)
          tensor = "%" + in.reads.front().tensor;
        else if (const std::optional<std::string> refilled = in.attrs.get_string(attr::kRefills);
                 refilled && p.kernel->tensors[static_cast<size_t>(in.writes.front().tensor_id)].space == name)
          tensor = "%" + *refilled;
        if (!tensor.empty() && std::find(spilled.begin(), spilled.end(), tensor) == spilled.end())
          spilled.push_back(tensor);
      }
    }
  for (size_t i = 0; i < plans_.size(); ++i) {
    if (plans_[i].instances == 0) continue;
    InstProfile prof;
    prof.instances = plans_[i].instances;
    prof.busy_ps = plans_[i].busy_ps;
    prof.stall_ps = plans_[i].stall_ps;
    prof.name = p.insts[i].name;
    prof.opcode = p.kernel->insts[i].opcode;
    prof.unit = units_[static_cast<size_t>(p.insts[i].units.front())].name;  // an instance ran: it has its unit
    out.profile.push_back(prof);
  }
  // Longest first; ties in program order.
  std::stable_sort(out.profile.begin(), out.profile.end(),
                   [](const InstProfile& a, const InstProfile& b) { return a.busy_ps > b.busy_ps; });
  if (timeline_loop_ != kNoId) {
    out.timeline_loop = p.kernel->loops[static_cast<size_t>(timeline_loop_)].iv;
    out.timeline = timeline_;
    std::sort(out.timeline.begin(), out.timeline.end(), [](const TimelineSpan& a, const TimelineSpan& b) {
      return std::tie(a.iteration, a.start_ps, a.unit, a.inst) < std::tie(b.iteration, b.start_ps, b.unit, b.inst);
    });
  }
  for (LoopState& s : loops_) {
    LoopResult r = std::move(s.result);
    r.folded = !s.tail.empty();
    r.iterations = std::move(s.head);
    // The tail ring from its oldest entry.
    const size_t wrap = s.tail.size() < kept_ - kept_ / 2 ? 0 : s.tail_next;
    r.iterations.insert(r.iterations.end(), s.tail.begin() + static_cast<std::ptrdiff_t>(wrap), s.tail.end());
    r.iterations.insert(r.iterations.end(), s.tail.begin(), s.tail.begin() + static_cast<std::ptrdiff_t>(wrap));
    if (s.steady_intervals > 0)
      r.ii_ps = s.steady_ps / s.steady_intervals;
    else if (!r.iterations.empty())
      r.ii_ps = r.iterations.front().end_ps - r.iterations.front().start_ps;
    out.loops.push_back(std::move(r));
  }
  compute_bounds(out);
  return out;
}

}  // namespace tandem
