// How many buffers a tile that a loop loads every iteration needs for its loads to run far
// enough ahead: N = ceil(lifetime / II) + 1, where II is the loop's DMA work per iteration
// spread over the DMA engines and the lifetime the latency (the DMA fixed cost plus the data
// time) of the transfer writing the tile plus that of a transfer reading it, a compute engine
// at either end counting one II; all from the model's DMA figures. Compute costs are not known before the
// lowering, so the II is the DMA part of the resource bound: a loop bound by compute gets at
// least as many buffers as it needs, never fewer (docs/passes.md, auto).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace tandem {

struct PrefetchDepth {
  double load_latency_ns = 0;  // the slowest transfer into or out of the tile, issue to last byte
  double dma_ii_ns = 0;        // the loop's DMA work per iteration over the DMA engines
  double lifetime_ns = 0;      // writer's latency + reader's latency (a compute engine: dma_ii)
  int64_t steady_buffers = 2;  // ceil(lifetime / dma_ii) + 1, from 2 to 16
  // steady_buffers, or in a loop nested in another with at most 16 iterations per entry, at
  // least that many: one per iteration of an entry
  int64_t buffers = 2;
};

// For tensor `tensor` written by `writers` and read by `readers` in `loop`: nullopt when no
// transfer touches it (a tile only compute engines use; its lifetime needs compute costs).
// A store reading a tile holds it like a load writing it: the latency is the slowest of them.
std::optional<PrefetchDepth> prefetch_depth(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& writers,
                                            const std::vector<InstId>& readers);

// Whether a loop already runs at its bound without a ring (address-rotation{buffers=model}
// then rings none of its tiles): for every tile it could ring, the longest path by latency
// from the tile's writer to its last reader within one iteration (0: a latency on the way is
// not known; compute latencies from their costs on the engine assign-engines' default policy
// picks), which the next iteration's writer waits for on one buffer, is no longer than
// loop_ii_ns, the loop's work per iteration on its busiest resource (dma_ii_ns, or a compute
// engine's summed occupancy). A ring would then only let the loads run ahead, competing for
// the DMA engines with the transfers around the loop (docs/passes.md, auto).
double one_buffer_chain_ns(const Kernel& k, const DepGraph& g, LoopId loop, const std::vector<InstId>& writers,
                           const std::vector<InstId>& readers);
// Its DMA part in *dma_ii_ns.
double loop_ii_ns(const Kernel& k, LoopId loop, double* dma_ii_ns = nullptr);

}  // namespace tandem
