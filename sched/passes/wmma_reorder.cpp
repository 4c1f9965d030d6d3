#include "sched/passes/wmma_reorder.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "sched/analysis/dependence_analysis.h"
#include "sched/passes/shown_name.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<WmmaReorderPass::Options>>& WmmaReorderPass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {
      text_choice_option(
          "mode", &Options::mode, {"vgpr", "explicit", "reverse"}, "vgpr",
          "where the order comes from: vgpr (least A/B operand register pressure, from a_tile/b_tile attributes), "
          "explicit (order=), reverse"),
      text_option("order", &Options::order, "", "mode=explicit: new position -> old WMMA position, e.g. 3:2:1:0"),
      int_option("distance", &Options::distance, -1,
                 "WMMA slots between a ds_load and its first consumer; -1 derives it from ds_load latency over WMMA "
                 "issue cycles"),
  };
  return rows;
}

void WmmaReorderPass::Options::check() const {
  if (distance < -1) throw Error("wmma-reorder: distance must be -1 (derived) or at least 0");
}

WmmaReorderPass::WmmaReorderPass(const Options& o)
    : order_(make_wmma_order(o.mode, o.order)), distance_(static_cast<int>(o.distance)) {}

namespace {

void shift_offset(Access& a, int64_t by) {
  a.dims[0].lo = a.dims[0].lo + by;
  a.dims[0].hi = a.dims[0].hi + by;
}

void retarget(Kernel& k, Access& a, int tensor) {
  a.tensor_id = tensor;
  a.tensor = k.tensors[tensor].name;
}

}  // namespace

void WmmaReorderPass::run(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  if (k.deps_listed()) {
    ctx.skip_unchanged("the kernel lists its dependences; wmma-reorder needs them derived from the accesses");
    return;
  }
  // Virtual registers already in the kernel (an earlier run's) keep their numbers.
  int applied = 0, next_virtual = 0;
  for (const Tensor& t : k.tensors) next_virtual = std::max(next_virtual, t.virtual_number + 1);
  for (LoopId loop = 0; loop < static_cast<LoopId>(k.loops.size()); ++loop) {
    const std::vector<Stmt>& body = k.loops[loop].body;
    if (std::none_of(body.begin(), body.end(), [&](const Stmt& s) {
          return s.kind == Stmt::kInst && k.target->has_tag(k.insts[s.id].opcode, OpTag::Wmma);
        }))
      continue;
    const std::string where = "loop " + k.loops[loop].iv;
    WmmaReorderPlan plan = plan_wmma_reorder(k, loop, ctx.deps, *order_, distance_, next_virtual);
    if (!plan.skip_reason.empty()) {
      ctx.skip(where + ": " + plan.skip_reason);
      continue;
    }
    ++applied;
    next_virtual += static_cast<int>(plan.virtuals.size());

    // The body is only permuted. The new order is the issue order: a list schedule's `order`
    // from an earlier pass described the old one and would contradict it.
    k.reorder_block(loop, plan.body);
    for (const Stmt& s : k.loops[loop].body)
      if (s.kind == Stmt::kInst && k.insts[s.id].attrs.erase("order")) ctx.stats.add("list_orders_dropped");

    // Prefetches: a newly wrapped load gets a preheader clone at its offset and loads one stride
    // ahead; a load that no longer wraps loses its preheader copy and is de-rotated.
    std::map<InstId, InstId> preheader_copy;
    for (const LoadPlacement& lp : plan.loads) {
      if (lp.wrapped && lp.twin == kNoId) {
        Instruction clone = k.insts[lp.load];
        clone.name = k.unique_name((clone.name.empty() ? "prefetch" : clone.name) + ".pre");
        const InstId id = k.add_inst(clone);
        k.insert_before_loop(loop, id);
        shift_offset(k.insts[lp.load].reads[0], *plan.stride);
        preheader_copy[lp.load] = id;
        ctx.log->debug("{}: {} now prefetched; preheader copy {}", where, shown(k, lp.load), shown(k, id));
      } else if (!lp.wrapped && lp.twin != kNoId) {
        k.erase(lp.twin);
        shift_offset(k.insts[lp.load].reads[0], -*plan.stride);
      } else if (lp.wrapped) {
        preheader_copy[lp.load] = lp.twin;
      }
    }

    // Collisions: the later producer group, its consumers' reads and preheader copies take a virtual register.
    for (const VirtualRegister& v : plan.virtuals) {
      const int file = k.virtual_register_file(k.insts[v.loads[0]].writes[0].tensor_id, v.number);
      for (InstId l : v.loads) {
        retarget(k, k.insts[l].writes[0], file);
        if (auto pre = preheader_copy.find(l); pre != preheader_copy.end())
          retarget(k, k.insts[pre->second].writes[0], file);
      }
      for (const auto& [consumer, read] : v.reads) retarget(k, k.insts[consumer].reads[read], file);
      ctx.log->debug("{}: {} moved to {}", where, shown(k, v.loads[0]), k.tensors[file].name);
    }

    ctx.stats.add("wmmas_moved", plan.wmmas_moved);
    ctx.stats.add("loads_moved", plan.loads_moved);
    ctx.stats.add("prefetches_added", plan.prefetches_added);
    ctx.stats.add("prefetches_removed", plan.prefetches_removed);
    if (plan.loads_kept_for_after_loop) ctx.stats.add("loads_kept_for_after_loop", plan.loads_kept_for_after_loop);
    if (plan.loads_kept_for_offset) ctx.stats.add("loads_kept_for_offset", plan.loads_kept_for_offset);
    if (applied == 1) {  // per kernel, from the first loop rewritten
      ctx.stats.add("stride", plan.stride.value_or(0));
      ctx.stats.add("distance", plan.distance);
    }
    ctx.stats.add("conflicts_virtualised", static_cast<int64_t>(plan.virtuals.size()));
  }
  ctx.stats.add("applied", applied);
  if (applied) ctx.deps = build_dep_graph(k);
}

}  // namespace tandem
