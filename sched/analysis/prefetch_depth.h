// How many buffers a tile that a loop loads every iteration needs for its loads to run far
// enough ahead: N = ceil(lifetime / II) + 1, where II is the loop's resource bound per
// iteration (sched/analysis/loop_bounds.h: the busiest compute engine, DMA queue or DMA
// engine, on the kernel as scheduled so far) and the lifetime the latency (the DMA fixed cost
// plus the data time) of the transfer writing the tile plus that of a transfer reading it, a
// compute engine at either end counting one II (docs/passes.md, auto).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/analysis/loop_bounds.h"
#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace tandem {

struct PrefetchDepth {
  double load_latency_ns = 0;  // the slowest transfer into or out of the tile, issue to last byte
  double ii_ns = 0;            // the loop's resource bound per iteration
  std::string bound_resource;  // the resource that sets it
  double lifetime_ns = 0;      // writer's latency + reader's latency (a compute engine: ii)
  int64_t steady_buffers = 2;  // ceil(lifetime / ii) + 1, from 2 to 16
  // steady_buffers, or in a loop nested in another with at most 16 iterations per entry, at
  // least that many: one per iteration of an entry
  int64_t buffers = 2;
};

// For tensor `tensor` written by `writers` and read by `readers` in `loop`, from `in`
// (bounds_input() of the kernel): nullopt when no transfer touches it (a tile only compute
// engines use; its lifetime is not a transfer's). A store reading a tile holds it like a load
// writing it: the latency is the slowest of them.
std::optional<PrefetchDepth> prefetch_depth(const BoundsInput& in, LoopId loop, int tensor,
                                            const std::vector<InstId>& writers, const std::vector<InstId>& readers);

// Whether a loop already runs at its bound without a ring (address-rotation{buffers=model}
// then rings none of its tiles): for every tile it could ring, the longest path by latency
// from the tile's writer to its last reader within one iteration (latencies from `in`, an
// instruction of a nested loop once per nested iteration, in series, a per-tile edge from a
// sibling loop waited for tile by tile; 0 when
// one on the way is not known: a barrier, or a compute instruction without a cost), which the
// next iteration's writer waits for on one buffer, is no longer than the loop's resource
// bound per iteration. For a strip (writers in nested loops) whose carried edges into the
// next iteration's writers the simulator honours per tile, the next write of a slice waits
// only for that slice's last reader: the chain is then at most the longer of the write and
// read streams plus one slice's write and read. A ring would then only let the loads run ahead, competing for the DMA
// engines with the transfers around the loop (docs/passes.md, auto).
double one_buffer_chain_ns(const BoundsInput& in, const DepGraph& g, LoopId loop, const std::vector<InstId>& writers,
                           const std::vector<InstId>& readers);

// The longest turn of the loop on one buffer, in ns, with the instruction that sets it: a
// compute instruction r of the loop's body and the transfers tied to it both within an
// iteration and across the next one (a load of a tile r reads: it feeds r and waits for the
// previous r; a store of a tile r writes: r feeds it and the next r waits for it) run in
// turn, the transfers of one turn sharing the DMA engines between r(i) and r(i + 1). A turn
// is r's latency, the longest setup among its transfers and their data phases one after
// another. 0 when no transfer is tied to a compute instruction both ways. A loop whose turn
// exceeds its resource bound per iteration does not reach that bound on one buffer, whatever
// each tile's own chain.
double one_buffer_turn_ns(const BoundsInput& in, const DepGraph& g, LoopId loop, InstId* slowest = nullptr);

}  // namespace tandem
