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
  int64_t buffers = 2;         // ceil(lifetime / dma_ii) + 1, from 2 to 16
  // On one buffer, the longest path by latency from the tile's writer to its last reader in
  // one iteration (compute latencies from their costs; 0: one is not known): the next
  // iteration's writer waits for it. It fits when it is no longer than dma_ii. When every tile
  // the loop could ring fits, the loop already runs at its DMA bound without a ring, and a
  // ring would only let its loads run ahead, competing for the DMA engines with the transfers
  // around the loop (address-rotation{buffers=model} then rings none of them).
  double one_buffer_ns = 0;
  bool one_buffer_fits = false;
};

// For tensor `tensor` written by `writers` and read by `readers` in `loop`: nullopt when no
// transfer touches it (a tile only compute engines use; its lifetime needs compute costs).
// A store reading a tile holds it like a load writing it: the latency is the slowest of them.
std::optional<PrefetchDepth> prefetch_depth(const Kernel& k, const DepGraph& g, LoopId loop, int tensor,
                                            const std::vector<InstId>& writers, const std::vector<InstId>& readers);

}  // namespace tandem
