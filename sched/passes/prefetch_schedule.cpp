#include "sched/passes/prefetch_schedule.h"

#include <algorithm>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/passes/shown_name.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<PrefetchSchedulePass::Options>>& PrefetchSchedulePass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {
      flag_option("after", &Options::after, "the run after the list scheduler (resolves what the first run marked)"),
      int_option("cc-dma-alignment", &Options::cc_dma_alignment, 0,
                 "0: nothing; 1: pin the loads feeding each collective behind its previous store; "
                 "2 (after only): keep the loop's other loads from overlapping a collective"),
      int_option("force-incoming-order", &Options::force_incoming_order, -1,
                 "loads of SBUF tensors of at least this many bytes (partitions x bytes per partition) follow their "
                 "incoming order; -1: off"),
      int_option("prefetch-distance", &Options::prefetch_distance, 0,
                 "after, an experiment beyond the seed: let loads run this many iterations ahead of compute "
                 "(needs that many + 1 buffers); 0: the split's barrier holds loads to one iteration"),
      names_option("loops", &Options::loops,
                   "the loops prefetch-distance applies to, induction variables separated by '|' (e.g. %k|%j), so "
                   "that each loop can get its own distance from its own step (empty: every loop)"),
  };
  return rows;
}

void PrefetchSchedulePass::Options::check() const {
  if (cc_dma_alignment < 0 || cc_dma_alignment > 2)
    throw Error("prefetch-schedule: cc-dma-alignment must be 0, 1 or 2, not " + std::to_string(cc_dma_alignment));
  if (cc_dma_alignment == 2 && !after)
    throw Error("prefetch-schedule: cc-dma-alignment=2 runs only after the scheduler (prefetch-schedule{after,...})");
  if (prefetch_distance < 0) throw Error("prefetch-schedule: prefetch-distance must not be negative");
  if (prefetch_distance > 0 && !after)
    throw Error("prefetch-schedule: prefetch-distance applies after the scheduler (prefetch-schedule{after,...})");
  if (!loops.empty() && prefetch_distance == 0)
    throw Error(
        "prefetch-schedule: loops needs prefetch-distance above 0 (it names the loops the distance applies to)");
}

namespace {

// Do both surely run on one engine or queue (which runs them in order)?
bool same_engine(const Kernel& k, InstId a, InstId b) {
  const std::string e = known_engine(k, a);
  return !e.empty() && e == known_engine(k, b);
}

}  // namespace

void PrefetchSchedulePass::run(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  const char* nothing_to_do = o_.after ? "after the scheduler: nothing to do with these options"
                                       : "before the scheduler: nothing to do with these options";
  if (o_.force_incoming_order < 0 && o_.cc_dma_alignment == 0 &&
      !(o_.after && o_.prefetch_distance > 0)) {  // the default pipeline's two runs
    ctx.skip_unchanged(nothing_to_do);
    return;
  }
  if (o_.force_incoming_order >= 0) force_incoming_order(ctx);
  if (o_.cc_dma_alignment > 0) align_collectives(ctx);
  if (o_.after && o_.prefetch_distance > 0) {
    std::vector<bool> chosen(k.loops.size(), o_.loops.empty());
    for (const std::string& iv : o_.loops) {
      bool found = false;
      for (size_t l = 0; l < k.loops.size(); ++l)
        if (k.loops[l].iv == iv) chosen[l] = found = true;
      if (!found) throw Error("prefetch-schedule: loops names " + iv + ", which is not a loop of the kernel");
    }
    // Fence the compute engines only: every one a compute instruction may run on, as one that
    // names none yet may land on any of its choices (assign-engines runs later, under a policy
    // this pass does not know). The lowering leaves out a fenced engine that runs nothing.
    std::set<std::string> engines;
    for (InstId id : k.program_order())
      if (!is_dma_class(k.target->opcode(k.insts[id].opcode)->op_class))
        for (const std::string& e : engine_choices(k, id)) engines.insert(e);
    std::string fence;
    for (const std::string& e : engines) fence += (fence.empty() ? "" : ",") + e;
    std::optional<DepGraph> derived;
    for (LoopId l = 0; l < static_cast<LoopId>(k.loops.size()); ++l)
      if (chosen[static_cast<size_t>(l)]) set_distance(ctx, l, o_.prefetch_distance, fence, derived);
  }
  if (ctx.stats.counters.empty()) ctx.skip(nothing_to_do);
}

namespace {
// Is there a path of same-iteration edges from `from` to `to`?
bool reaches(const DepGraph& g, InstId from, InstId to) {
  std::vector<InstId> work{from};
  std::set<InstId> seen{from};
  while (!work.empty()) {
    const InstId v = work.back();
    work.pop_back();
    if (v == to) return true;
    for (const DepEdgeRef& e : g.out_edges(v))
      if (e.props.distance == 0 && seen.insert(e.dst).second) work.push_back(e.dst);
  }
  return false;
}
}  // namespace

// Before: stamp the incoming order of the large loads. After: chain each to the previous one
// in that order when they run on different engines (one engine already runs them in order).
void PrefetchSchedulePass::force_incoming_order(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  const std::vector<InstId> order = k.program_order();
  auto qualifies = [&](InstId id) {  // a large SBUF load
    if (!is_load(k, id) || k.insts[id].writes.empty()) return false;
    const Tensor& t = k.tensors[k.insts[id].writes[0].tensor_id];
    return k.target->role_of(t.space) == SpaceRole::OnChip &&
           partitions_of(k, t) * bytes_per_partition(k, t) >= o_.force_incoming_order;
  };
  if (!o_.after) {
    int64_t n = 0;
    for (InstId id : order)
      if (qualifies(id)) {
        k.insts[id].attrs.set(attr::kPrefetch, n++);
        ctx.stats.add("loads_marked");
      }
    return;
  }
  // Marked loads by their stamp; loads the first run did not mark (it did not run, or with
  // another threshold) follow in program order, numbered after the largest stamp.
  std::vector<std::pair<int64_t, InstId>> marked;
  std::vector<InstId> unmarked;
  int64_t next = 0;
  for (InstId id : order) {
    if (!is_load(k, id) || k.insts[id].writes.empty()) continue;
    if (auto stamp = k.insts[id].attrs.get_int(attr::kPrefetch)) {
      marked.push_back({*stamp, id});
      next = std::max(next, *stamp + 1);
    } else if (qualifies(id)) {
      unmarked.push_back(id);
    }
  }
  for (InstId id : unmarked) marked.push_back({next++, id});
  std::sort(marked.begin(), marked.end());
  for (size_t i = 1; i < marked.size(); ++i) {
    const InstId before = marked[i - 1].second, load = marked[i].second;
    if (k.insts[before].loop != k.insts[load].loop) continue;  // incoming order within one block
    if (same_engine(k, before, load)) {
      ctx.stats.add("same_engine_pairs");
      continue;
    }
    if (reaches(ctx.deps, load, before)) {  // the order would close a dependence cycle: keep the graph's
      ctx.stats.add("order_edges_declined");
      ctx.note(k.display_name(load) + " keeps its place: following " + k.display_name(before) +
               " would close a dependence cycle");
      continue;
    }
    if (ctx.deps.add(before, load, DepKind::Flow)) ctx.stats.add("order_edges_added");
    ctx.log->debug("{} follows {} (incoming order)", shown(k, load), shown(k, before));
  }
  ctx.mark_deps_listed();
}

void PrefetchSchedulePass::align_collectives(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  DepGraph& g = ctx.deps;
  const std::vector<InstId> order = k.program_order();
  const std::vector<int> pos = program_positions(k);
  for (InstId c : order) {
    if (k.target->opcode(k.insts[c].opcode)->op_class != OpClass::Collective) continue;
    std::set<InstId> feeding;
    for (const DepEdgeRef& e : g.in_edges(c))
      if (e.props.kind == DepKind::Flow && e.props.distance == 0 && is_load(k, e.src)) feeding.insert(e.src);
    if (o_.cc_dma_alignment == 1) {
      // The store the collective feeds is its anchor: the next iteration's feeding loads wait for it.
      InstId store = kNoId;
      for (const DepEdgeRef& e : g.out_edges(c))
        if (e.props.kind == DepKind::Flow && e.props.distance == 0 &&
            k.target->opcode(k.insts[e.dst].opcode)->op_class == OpClass::Store &&
            (store == kNoId || pos[e.dst] < pos[store]))
          store = e.dst;
      const LoopId loop = k.insts[c].loop;
      if (store == kNoId || loop == kNoId) {
        ctx.skip("collective " + k.display_name(c) + ": no store it feeds in a loop");
        continue;
      }
      for (InstId l : feeding)
        if (g.add(store, l, DepKind::Flow, 1, loop)) ctx.stats.add("collective_loads_pinned");
      continue;
    }
    // Mode 2: the loop's other loads do not overlap the collective. One before it in program
    // order lands before it starts, and its next iteration's instance (the prefetch that would
    // run under the collective) waits for it to end; one after it waits for it to end.
    const LoopId loop = k.insts[c].loop;
    for (InstId id : order) {
      if (id == c || !is_load(k, id) || feeding.count(id) || k.insts[id].loop != loop || loop == kNoId) continue;
      if (pos[id] < pos[c]) {
        bool added = g.add(id, c, DepKind::Flow);
        added |= g.add(c, id, DepKind::Flow, 1, loop);
        if (added) ctx.stats.add("prefetches_kept_off_collective");
      } else if (reaches(g, id, c)) {
        // The load already comes before the collective (the split's barrier waits for it):
        // making it wait for the collective too would be a cycle.
        ctx.skip("collective " + k.display_name(c) + ": " + k.display_name(id) +
                 " after it in program order already precedes it, so it cannot also wait for it");
      } else if (g.add(c, id, DepKind::Flow)) {
        ctx.stats.add("prefetches_kept_off_collective");
      }
    }
  }
  ctx.mark_deps_listed();
}

// The loop's barrier stops fencing the DMA queues; each of its stage-0 loads waits for the
// barrier `distance + 1` iterations back (compute of i has started before loads of
// i + distance + 1 start). The loads' buffers must hold that many iterations in flight.
void PrefetchSchedulePass::set_distance(PassContext& ctx, LoopId loop, int64_t distance, const std::string& fence,
                                        std::optional<DepGraph>& derived) {
  Kernel& k = ctx.kernel;
  const std::string where = "loop " + k.loops[loop].iv;
  const auto [barrier, loads] = load_stage(k, ctx.deps, loop);
  if (barrier == kNoId) {
    ctx.skip(where + ": no load/compute split to set a prefetch distance on");
    return;
  }
  // With no compute engine, no unit would arrive at the barrier and nothing would release it.
  if (fence.empty()) {
    ctx.skip(
        where +
        ": no compute engine runs in the kernel, so the barrier would fence no unit; it keeps fencing the DMA queues");
    return;
  }
  for (InstId l : loads)
    for (const Access& w : k.insts[l].writes) {
      const Tensor& t = k.tensors[w.tensor_id];
      const int64_t buffers = t.attrs.get_int(attr::kBuffers).value_or(1);
      if (buffers < distance + 1)
        throw Error(t.loc, "prefetch-schedule: prefetch distance " + std::to_string(distance) + " in " + where +
                               " needs " + std::to_string(distance + 1) + " buffers of %" + t.name + " (it has " +
                               std::to_string(buffers) + "; run address-rotation first)");
    }
  k.insts[barrier].attrs.set(attr::kFence, fence);
  for (InstId l : loads)
    if (ctx.deps.add(barrier, l, DepKind::Flow, static_cast<int>(distance + 1), loop))
      ctx.stats.add("distance_edges_added");
  // Those edges, and rotation's, count iterations within one entry of the loop. A loop nested
  // in another is entered again for each outer iteration, and the first loads of an entry
  // would then wait for nothing, overwriting buffers the previous entry's last compute still
  // reads. Keep the order across entries exactly: each
  // stage-0 load waits for the previous entry's instructions that analysis orders it after
  // (the dependences carried by the enclosing loops, which the split cut; a later run of the
  // split keeps them).
  if (k.loops[loop].parent != kNoId) {
    if (!derived) derived = analyze_dependences(k);
    for (InstId l : loads)
      for (const DepEdgeRef& e : derived->in_edges(l)) {
        if (e.props.distance == 0 || e.props.loop == loop || !k.in_loop(e.src, loop)) continue;
        if (e.props.kind != DepKind::Anti && e.props.kind != DepKind::Output) continue;
        if (ctx.deps.add(e.src, l, e.props.kind, e.props.distance, e.props.loop)) ctx.stats.add("entry_edges_added");
      }
  }
  k.loops[loop].attrs.set(attr::kPrefetchDistance, distance);
  ctx.stats.add("o_.loopswith_prefetch_distance");
  ctx.log->debug("{}: loads run up to {} iteration(s) ahead", where, distance);
  ctx.mark_deps_listed();
}

}  // namespace tandem
