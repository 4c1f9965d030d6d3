#include "sched/analysis/prefetch_depth.h"

#include <algorithm>
#include <cmath>

#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

struct TransferCost {
  double data_ns = 0;      // first to last byte
  double engine_ns = 0;    // summed over the DMA engines it uses
};

// A transfer's data time as the lowering counts it (sim/lower/program.cpp, lower_dma): its
// on-chip side's partitions pick the DMA engines, its bytes per partition the efficiency.
std::optional<TransferCost> transfer_cost(const Kernel& k, const Instruction& in) {
  const OpcodeInfo* op = k.target->opcode(in.opcode);
  if (!op || (op->op_class != OpClass::Load && op->op_class != OpClass::IndirectLoad && op->op_class != OpClass::Store))
    return std::nullopt;
  const DmaModel& dma = k.target->dma;
  for (const auto* list : {&in.writes, &in.reads})
    for (const Access& a : *list) {
      const Tensor& t = k.tensors[a.tensor_id];
      const SpaceInfo* sp = k.target->space(t.space);
      if (!sp || sp->partitions == 0) continue;
      const int64_t partitions = std::max<int64_t>(1, partitions_of(k, t));
      const double bpp = static_cast<double>(bytes_per_partition(k, t));
      const int64_t per_engine = std::max<int64_t>(1, dma.partitions_per_engine);
      const int64_t engines =
          std::clamp<int64_t>((partitions + per_engine - 1) / per_engine, 1, std::max<int64_t>(1, dma.engines));
      const double rate = static_cast<double>(engines) * dma.bandwidth_bytes_per_ns * dma.efficiency_at(bpp);
      TransferCost c;
      c.data_ns = rate > 0 ? bpp * static_cast<double>(partitions) / rate : 0;
      c.engine_ns = c.data_ns * static_cast<double>(engines);
      return c;
    }
  return std::nullopt;
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
