#include "sched/passes/assign_engines.h"

#include <map>

#include <spdlog/spdlog.h>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/passes/shown_name.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<AssignEnginesPass::Options>>& AssignEnginesPass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {
      int_option("queues", &Options::queues, 0, "DMA queues to spread transfers over (0 = all the target has)"),
      choice_option("policy", &Options::balance, {{"first", false}, {"balance", true}}, "first",
                    "first: the first engine the target lists for the opcode; balance: the least loaded of them "
                    "(by dynamic instruction count)"),
  };
  return rows;
}

void AssignEnginesPass::run(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  const Target& t = *k.target;
  int64_t queues = o_.queues == 0 ? static_cast<int64_t>(t.dma_queues.size()) : o_.queues;
  if (queues < 0 || queues > static_cast<int64_t>(t.dma_queues.size()))
    throw Error("assign-engines: queues=" + std::to_string(o_.queues) + " but target '" + t.name + "' has " +
                std::to_string(t.dma_queues.size()) + " DMA queues");

  std::map<std::string, int64_t> load;  // dynamic instructions per engine
  std::vector<InstId> order = k.program_order();
  for (InstId id : order)
    if (!k.insts[id].engine.empty()) load[k.insts[id].engine] += dynamic_count(k, id);

  int64_t next_queue = 0;
  for (InstId id : order) {
    Instruction& in = k.insts[id];
    if (!in.engine.empty()) continue;
    // The one list of where it may run (kernel_queries.h): the passes that reason about
    // engines before this one runs assume the same choices.
    const std::vector<std::string> choices = engine_choices(k, id);
    if (choices.empty()) continue;  // barriers and branches take no engine (nor transfers without queues)
    if (t.is_dma_queue(choices[0])) {
      if (queues == 0) continue;
      in.engine = choices[static_cast<size_t>(next_queue++ % queues)];
      ctx.stats.add("queues_assigned");
    } else {
      // Only an engine that may read and write every space the instruction touches.
      auto may_access = [&](const std::string& e) {
        for (bool write : {true, false})
          for (const Access& a : write ? in.writes : in.reads) {
            const SpaceInfo* space = t.space(k.tensors[a.tensor_id].space);
            if (space && !space->allows(e, write)) return false;
          }
        return true;
      };
      std::string pick;
      for (const auto& e : choices) {
        if (!may_access(e)) continue;
        if (pick.empty() || (o_.balance && load[e] < load[pick])) pick = e;
      }
      if (pick.empty())
        throw Error(in.loc, k.display_name(id) + ": none of the engines of '" + in.opcode +
                                "' may access the spaces it reads and writes");
      in.engine = pick;
      ctx.stats.add("engines_assigned");
    }
    load[in.engine] += dynamic_count(k, id);
    ctx.log->debug("{} -> {}", shown(k, id), in.engine);
  }
  if (ctx.stats.counters.empty()) {
    ctx.skip("every instruction already has an engine or queue");
    return;
  }

  // A queue runs a straight run in list-schedule's order where it set one: two transfers it
  // swapped keep that order, not program order's (the split may have cut the queue edge
  // between them so that list-schedule could).
  auto swapped = [&](InstId a, InstId b) {
    const auto oa = k.insts[a].attrs.get_int(attr::kOrder), ob = k.insts[b].attrs.get_int(attr::kOrder);
    if (!oa || !ob || *ob > *oa || k.insts[a].loop != k.insts[b].loop) return false;
    const std::vector<Stmt>& block = k.insts[a].loop == kNoId ? k.body : k.loops[k.insts[a].loop].body;
    bool inside = false;
    for (const Stmt& st : block) {
      const bool end = st.kind == Stmt::kInst && (st.id == a || st.id == b);
      if (inside && (end || st.kind == Stmt::kLoop)) return end;  // a nested loop ends the run
      if (end) inside = true;
    }
    return false;
  };
  auto same_queue = [&](InstId a, InstId b) {
    const std::string& q = k.insts[a].engine;
    return !q.empty() && q == k.insts[b].engine && t.is_dma_queue(q);
  };
  // Same-queue order is a dependence (Ordered). Where the graph is still the analysis of the
  // accesses, re-derive it (but for the queue order of pairs list-schedule swapped); where
  // passes have edited it, add only the queue edges.
  if (!k.deps_listed()) {
    ctx.deps = build_dep_graph(k);
    std::vector<std::pair<InstId, InstId>> reversed;
    for (const DepEdgeRef& e : ctx.deps.edges())
      if (e.props.kind == DepKind::Ordered && e.props.distance == 0 && same_queue(e.src, e.dst) &&
          swapped(e.src, e.dst))
        reversed.push_back({e.src, e.dst});
    for (const auto& [a, b] : reversed) ctx.deps.remove(a, b, 0, kNoId);
    return;
  }
  for (const DepEdgeRef& e : analyze_dependences(k).edges()) {
    if (!same_queue(e.src, e.dst)) continue;
    if (e.props.distance == 0 && swapped(e.src, e.dst)) continue;
    if (ctx.deps.add(e.src, e.dst, DepKind::Ordered, e.props.distance, e.props.loop))
      ctx.stats.add("ordered_edges_added");
  }
}

}  // namespace tandem
