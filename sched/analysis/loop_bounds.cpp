#include "sched/analysis/loop_bounds.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/howard_cycle_ratio.hpp>
#include <boost/graph/strong_components.hpp>

#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

bool runs_on_queue(const BoundsInput& in, const CostedInst& inst) {
  return !inst.is_barrier && !inst.units.empty() &&
         in.units[static_cast<size_t>(inst.units[0])].kind == UnitKind::DmaQueue;
}

// BoundsInput::insts_in_loop and edges_in_loop, made once.
void index_loops(const BoundsInput& in) {
  if (!in.insts_in_loop.empty() || in.kernel->loops.empty()) return;
  const size_t loops = in.kernel->loops.size();
  in.insts_in_loop.resize(loops);
  in.edges_in_loop.resize(loops);
  for (const CostedInst* inst : in.insts)
    for (LoopId l : inst->nest) in.insts_in_loop[static_cast<size_t>(l)].push_back(inst->id);
  for (size_t e = 0; e < in.edges.size(); ++e) {
    // Nests list the loops outermost first: the loops around both are their common prefix.
    const std::vector<LoopId>& a = in.insts[static_cast<size_t>(in.edges[e].src)]->nest;
    const std::vector<LoopId>& b = in.insts[static_cast<size_t>(in.edges[e].dst)]->nest;
    for (size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i)
      in.edges_in_loop[static_cast<size_t>(a[i])].push_back(e);
  }
}

// The instructions inside `loop` (kNoId: all of them), in increasing order.
template <class Visit>
void for_each_inst(const BoundsInput& in, LoopId loop, const Visit& visit) {
  if (loop == kNoId) {
    for (const CostedInst* inst : in.insts) visit(*inst);
    return;
  }
  index_loops(in);
  for (InstId id : in.insts_in_loop[static_cast<size_t>(loop)]) visit(*in.insts[static_cast<size_t>(id)]);
}

// Each resource's work within `loop` (kNoId: the whole kernel).
struct ResourceWork {
  std::vector<int64_t> unit;        // compute: occupancy; queue: its setups
  std::vector<int64_t> queue_data;  // a queue moves one transfer's data at a time
  std::vector<int64_t> pipe;
  std::vector<int64_t> dma_engine;  // rounded down: the simulator rounds each transfer's end up
};

ResourceWork work_within(const BoundsInput& in, LoopId loop) {
  const Kernel& k = *in.kernel;
  const DmaModel& dma = k.target->dma;
  ResourceWork w{std::vector<int64_t>(in.units.size(), 0),
                 std::vector<int64_t>(in.units.size(), 0),
                 std::vector<int64_t>(in.pipes.size(), 0),
                 {}};
  std::vector<double> engine_work(static_cast<size_t>(std::max<int64_t>(1, dma.engines)), 0.0);
  for_each_inst(in, loop, [&](const CostedInst& inst) {
    if (inst.units.empty() || inst.is_barrier) return;
    const int64_t n =
        loop == kNoId ? inst.dynamic_count : instances_within(k, k.insts[static_cast<size_t>(inst.id)].loop, loop);
    w.unit[static_cast<size_t>(inst.units[0])] += inst.cycles_ps * n;
    w.queue_data[static_cast<size_t>(inst.units[0])] += inst.data_ps * n;
    if (inst.pipe >= 0) w.pipe[static_cast<size_t>(inst.pipe)] += inst.pipe_ps * n;
    if (inst.moves_dma)
      for (int i = 0; i < inst.dma.engine_count; ++i)
        engine_work[static_cast<size_t>((inst.dma.first_engine + i) % dma.engines)] +=
            static_cast<double>(n) * inst.dma.engine_bytes() /
            (dma.bandwidth_bytes_per_ns / 1000.0 * inst.dma.efficiency);
  });
  for (double e : engine_work) w.dma_engine.push_back(static_cast<int64_t>(std::floor(e + 1e-6)));
  return w;
}

// The busiest resource: a queue's work is the larger of its two stages.
ResourceBound busiest(const BoundsInput& in, LoopId loop) {
  const ResourceWork w = work_within(in, loop);
  ResourceBound b;
  for (size_t u = 0; u < w.unit.size(); ++u)
    if (std::max(w.unit[u], w.queue_data[u]) > b.ps) {
      b.ps = std::max(w.unit[u], w.queue_data[u]);
      b.resource = in.units[u].name;
    }
  for (size_t i = 0; i < w.pipe.size(); ++i)
    if (w.pipe[i] > b.ps) {
      b.ps = w.pipe[i];
      b.resource = in.pipes[i] + " pipe";
    }
  for (size_t e = 0; e < w.dma_engine.size(); ++e) {
    b.dma_engine_ps = std::max(b.dma_engine_ps, w.dma_engine[e]);
    b.dma_total_ps += w.dma_engine[e];
    if (w.dma_engine[e] > b.ps) {
      b.ps = w.dma_engine[e];
      b.resource = "dma engine " + std::to_string(e);
    }
  }
  return b;
}

}  // namespace

BoundsInput bounds_input(const Kernel& k, const DepGraph& g) {
  auto costed = std::make_shared<const CostedProgram>(cost_program(k, Placement::Defaulted));
  BoundsInput in = bounds_view(*costed);
  in.costed = std::move(costed);
  for (const DepEdgeRef& e : g.edges()) {
    if (in.insts[static_cast<size_t>(e.src)]->id == kNoId || in.insts[static_cast<size_t>(e.dst)]->id == kNoId)
      continue;
    in.edges.push_back({e.src, e.dst, e.props.kind, e.props.distance,
                        e.props.distance > 0 ? e.props.loop : k.common_loop(e.src, e.dst)});
  }
  in.streams.assign(in.units.size(), std::vector<std::vector<InstId>>(k.loops.size()));
  for (size_t l = 0; l < k.loops.size(); ++l)
    for (const Stmt& st : k.loops[l].body)
      if (st.kind == Stmt::kInst)
        for (int u : in.insts[static_cast<size_t>(st.id)]->units)
          in.streams[static_cast<size_t>(u)][l].push_back(st.id);
  return in;
}

ResourceBound kernel_resource_bound(const BoundsInput& in) { return busiest(in, kNoId); }

std::vector<ResourceDemand> resource_demands(const BoundsInput& in, LoopId loop) {
  const ResourceWork w = work_within(in, loop);
  std::vector<ResourceDemand> out;
  auto add = [&](std::string name, int64_t ps, ResourceDemand::Kind kind, size_t index) {
    if (ps > 0) out.push_back({std::move(name), ps, kind, static_cast<int>(index)});
  };
  for (size_t u = 0; u < w.unit.size(); ++u) {
    if (in.units[u].kind == UnitKind::DmaQueue) {
      add(in.units[u].name + " setup", w.unit[u], ResourceDemand::Kind::QueueSetup, u);
      add(in.units[u].name + " data", w.queue_data[u], ResourceDemand::Kind::QueueData, u);
    } else {
      add(in.units[u].name, w.unit[u], ResourceDemand::Kind::Compute, u);
    }
  }
  for (size_t i = 0; i < w.pipe.size(); ++i) add(in.pipes[i] + " pipe", w.pipe[i], ResourceDemand::Kind::Pipe, i);
  for (size_t e = 0; e < w.dma_engine.size(); ++e)
    add("dma engine " + std::to_string(e), w.dma_engine[e], ResourceDemand::Kind::DmaEngine, e);
  std::stable_sort(out.begin(), out.end(),
                   [](const ResourceDemand& a, const ResourceDemand& b) { return a.ps > b.ps; });
  return out;
}

ResourceBound loop_resource_bound(const BoundsInput& in, LoopId loop) {
  if (loop == kNoId) return busiest(in, loop);
  std::vector<std::optional<ResourceBound>>& memo = in.resource_bound_by_loop;
  if (memo.size() <= static_cast<size_t>(loop)) memo.resize(static_cast<size_t>(loop) + 1);
  std::optional<ResourceBound>& b = memo[static_cast<size_t>(loop)];
  if (!b) b = busiest(in, loop);
  return *b;
}

LoopBounds loop_bounds(const BoundsInput& in, LoopId loop) {
  LoopBounds out;
  out.resource = busiest(in, loop);
  auto inst = [&](InstId id) -> const CostedInst& { return *in.insts[static_cast<size_t>(id)]; };
  auto is_loop_barrier = [&](const CostedInst& b) { return b.is_barrier && !b.nest.empty() && b.nest.back() == loop; };
  // With one CoreBarrier in the body whose Flow inputs are every transfer of the loop, each
  // transfer runs between two of its releases: the last lands no sooner than the fixed cost
  // plus the busiest DMA engine's work. (A queue arrives once it has issued, so a transfer
  // without an edge into the barrier may still be moving after the release.) Worked out in
  // one pass over the edges and one over the instructions, never a scan of them per transfer.
  index_loops(in);
  const std::vector<InstId>& inside = in.insts_in_loop[static_cast<size_t>(loop)];
  const std::vector<size_t>& edges = in.edges_in_loop[static_cast<size_t>(loop)];
  const CostedInst* barrier = nullptr;
  int barriers = 0;
  for (InstId id : inside)
    if (is_loop_barrier(inst(id))) barrier = &inst(id), ++barriers;
  bool fences_queues = barriers == 1;
  if (fences_queues) {
    std::unordered_set<InstId> feeds_barrier;  // (only a source inside the loop is asked about)
    for (size_t e : edges) {
      const BoundsEdge& c = in.edges[e];
      if (c.kind == DepKind::Flow && inst(c.dst).is_barrier) feeds_barrier.insert(c.src);
    }
    for (InstId id : inside) {
      const CostedInst& transfer = inst(id);
      if (transfer.units.empty() || transfer.is_barrier || !runs_on_queue(in, transfer)) continue;
      if (!feeds_barrier.count(transfer.id) ||
          std::find(barrier->units.begin(), barrier->units.end(), transfer.units[0]) == barrier->units.end())
        fences_queues = false;
    }
  }
  const int64_t window = fences_queues ? in.dma_fixed_ps + out.resource.dma_engine_ps : 0;
  // Recurrence bound: the dependence cycles through this loop's body, latency over distance.
  using G = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::property<boost::vertex_index_t, int>,
      boost::property<boost::edge_weight_t, double, boost::property<boost::edge_weight2_t, double>>>;
  // The vertices: the loop's instructions that run on a unit, numbered in increasing order.
  std::vector<InstId> inst_of;
  for (InstId id : inside)
    if (!inst(id).units.empty()) inst_of.push_back(id);
  const int n = static_cast<int>(inst_of.size());
  auto vertex = [&](InstId id) {
    const auto it = std::lower_bound(inst_of.begin(), inst_of.end(), id);
    return it != inst_of.end() && *it == id ? static_cast<int>(it - inst_of.begin()) : -1;
  };
  G g(static_cast<size_t>(n));
  for (size_t e : edges) {
    const BoundsEdge& c = in.edges[e];
    int a = vertex(c.src), b = vertex(c.dst);
    if (a < 0 || b < 0) continue;
    if (c.distance > 0 && c.key_loop != loop) continue;
    const CostedInst& src = inst(c.src);
    // As the simulator publishes: an Anti edge is released once a compute engine has
    // consumed its inputs; a transfer reads until its last byte.
    const int64_t latency = c.kind == DepKind::Ordered                           ? 0
                            : c.kind == DepKind::Anti && !runs_on_queue(in, src) ? src.cycles_ps
                                                                                 : src.latency_ps;
    boost::add_edge(static_cast<size_t>(a), static_cast<size_t>(b),
                    {static_cast<double>(latency), static_cast<double>(c.distance)}, g);
  }
  // Each unit runs its share of the body in order, and a CoreBarrier holds every unit it
  // fences: consecutive instructions of a unit form edges too (the next starts after the
  // previous leaves the unit; a queue issues in order and reaches a barrier once it has
  // issued, so its edges weigh nothing).
  for (size_t u = 0; u < in.units.size(); ++u) {
    const std::vector<InstId>& stream = in.streams[u][static_cast<size_t>(loop)];
    for (size_t i = 0; i < stream.size(); ++i) {
      const CostedInst& a = inst(stream[i]);
      const bool wrap = i + 1 == stream.size();
      const CostedInst& b = inst(stream[wrap ? 0 : i + 1]);
      // (A queue's next transfer, or its arrival at a barrier, comes once this transfer's
      // setup, its cycles, is done; the data is waited for only through edges.)
      const int64_t w = a.is_barrier ? 0 : a.cycles_ps;
      boost::add_edge(static_cast<size_t>(vertex(a.id)), static_cast<size_t>(vertex(b.id)),
                      {static_cast<double>(w), wrap ? 1.0 : 0.0}, g);
    }
  }
  // ... and with one barrier, from one release to the next.
  if (window > 0)
    for (int v = 0; v < n; ++v)
      if (is_loop_barrier(inst(inst_of[static_cast<size_t>(v)])))
        boost::add_edge(static_cast<size_t>(v), static_cast<size_t>(v), {static_cast<double>(window), 1.0}, g);
  std::vector<int> comp(static_cast<size_t>(n));
  boost::strong_components(g, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g)));
  G cyc(static_cast<size_t>(n));
  bool any = false;
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    size_t a = boost::source(*it, g), b = boost::target(*it, g);
    if (comp[a] != comp[b]) continue;
    boost::add_edge(a, b, {boost::get(boost::edge_weight, g, *it), boost::get(boost::edge_weight2, g, *it)}, cyc);
    any = true;
  }
  if (!any) return out;
  std::vector<boost::graph_traits<G>::edge_descriptor> critical;
  double ratio =
      boost::maximum_cycle_ratio(cyc, boost::get(boost::vertex_index, cyc), boost::get(boost::edge_weight, cyc),
                                 boost::get(boost::edge_weight2, cyc), &critical);
  if (ratio <= 0) return out;
  out.recurrence_ps = static_cast<int64_t>(ratio);
  // The cycle that sets it, by instruction: "%ld -> %mm -> %ld" (a barrier by its name).
  for (size_t i = 0; i < critical.size(); ++i) {
    const auto e = critical[i];
    if (i == 0) out.recurrence_cause = inst(inst_of[boost::source(e, cyc)]).name;
    out.recurrence_cause += " -> " + inst(inst_of[boost::target(e, cyc)]).name;
  }
  // The barrier's own window (above): one release to the next.
  if (critical.size() == 1 && boost::source(critical[0], cyc) == boost::target(critical[0], cyc) &&
      inst(inst_of[boost::source(critical[0], cyc)]).is_barrier)
    out.recurrence_cause = inst(inst_of[boost::source(critical[0], cyc)]).name +
                           ": DMA fixed cost + the busiest DMA engine's work between its releases";
  return out;
}

}  // namespace tandem
