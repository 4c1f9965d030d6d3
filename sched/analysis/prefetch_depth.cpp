#include "sched/analysis/prefetch_depth.h"

#include <algorithm>
#include <cmath>

#include "sched/analysis/inst_cost.h"
#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

struct TransferCost {
  double data_ns = 0;      // first to last byte
  double engine_ns = 0;    // summed over the DMA engines it uses
};

// A transfer's data time and DMA engine work, as the lowering counts them (inst_cost.h).
std::optional<TransferCost> transfer_cost(const Kernel& k, const Instruction& in) {
  const std::optional<DmaTransfer> t = transfer_of(k, in);
  if (!t) return std::nullopt;
  TransferCost c;
  c.data_ns = dma_data_ns(k.target->dma, *t);
  c.engine_ns = c.data_ns * static_cast<double>(t->engine_count);
  return c;
}

bool within(const Kernel& k, LoopId inner, LoopId outer) {
  for (LoopId l = inner; l != kNoId; l = k.loops[l].parent)
    if (l == outer) return true;
  return false;
}

}  // namespace

std::optional<PrefetchDepth> prefetch_depth(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& writers,
                                            const std::vector<InstId>& readers) {
  if (!k.target) return std::nullopt;
  PrefetchDepth d;
  // A transfer holds the buffer from its issue to its last byte: a load writing it (w), a
  // store or gather reading it (r).
  double w = 0, r = 0;
  for (const auto* list : {&writers, &readers})
    for (InstId i : *list) {
      const Instruction& in = k.insts[i];
      const auto c = transfer_cost(k, in);
      if (!c) continue;
      const double latency = k.target->dma.fixed_cost_ns + c->data_ns;
      for (const Access& a : in.writes)
        if (a.tensor_id == tensor && list == &writers) w = std::max(w, latency);
      for (const Access& a : in.reads)
        if (a.tensor_id == tensor && list == &readers) r = std::max(r, latency);
    }
  const bool loaded = w > 0 || r > 0;
  d.load_latency_ns = std::max(w, r);
  if (!loaded) return std::nullopt;
  double engine_ns = 0;
  for (InstId i = 0; i < static_cast<InstId>(k.insts.size()); ++i) {
    const Instruction& in = k.insts[i];
    if (in.erased || !within(k, in.loop, loop)) continue;
    if (const auto c = transfer_cost(k, in)) engine_ns += c->engine_ns * static_cast<double>(instances_within(k, in.loop, loop));
  }
  d.dma_ii_ns = engine_ns / static_cast<double>(std::max<int64_t>(1, k.target->dma.engines));
  // The buffer lives from its writer's start until its last reader is done with it: a
  // transfer's latency at either end; a compute engine, in a schedule starting an iteration
  // every II, is done within one II (an index tile's life spans its load and the gather).
  d.lifetime_ns = (w > 0 ? w : d.dma_ii_ns) + (r > 0 ? r : d.dma_ii_ns);
  const double ahead = d.dma_ii_ns > 0 ? std::ceil(d.lifetime_ns / d.dma_ii_ns) : 1.0;
  d.buffers = std::clamp<int64_t>(static_cast<int64_t>(std::min(ahead, 64.0)) + 1, 2, 16);
  return d;
}

}  // namespace tandem
