// Per-tile dependences between sibling loops (issue 14). A distance-0 edge whose source sits
// in loops that the destination is not in (a loop loading a strip tile by tile, then a loop
// consuming it) is, by default, honoured whole: the destination's first instance waits for
// the source's last instance of the common iteration. When the accesses are affine, each
// destination instance needs only the source instances that touched what it touches: the map
// below says which, and the simulator waits for just that one (sim/lower/program.h,
// SimChannel::tile_key). An edge through which the dependence analysis left out another
// (DepEdge::implies) stays whole: per tile it would order only some instances.
//
// A loop-carried edge (distance d > 0 on loop L: the strip loads of the next iteration of L
// overwrite what the consumers of this one read) works the same way with L as the common
// loop: instance j of the destination in iteration i of L waits for source instance
// wait_for[j] of iteration i - d, the accesses compared with L shifted by d between the two.
// At least the source's first instance of i - d: that covers every older iteration, since a
// semaphore key stands for all the source's earlier instances (sim/units/semaphore.h).
//
// A tensor ringed over N buffers (address-rotation) is compared buffer by buffer, the buffer
// (iv - lo) mod N of its ring loop as the race checker counts it: a nested loop ringed as
// deep as its entry pairs the next entry's k-th load with this entry's k-th reader only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace tandem {

struct TileMap {
  LoopId common = kNoId;          // the innermost loop enclosing both (kNoId: none), or the carrying loop
  std::vector<LoopId> src_loops;  // the source's loops inside `common`, outermost first
  std::vector<LoopId> dst_loops;  // the destination's
  int64_t src_instances = 1;      // source instances per iteration of `common`
  // Per destination instance of an iteration of `common`, numbered in execution order: the
  // source instance (same numbering) it waits for. Non-decreasing; the latest source instance
  // whose accesses conflict with it or with an earlier destination instance (an in-order
  // unit already waited for those), at least the first.
  std::vector<int64_t> wait_for;
};

// The map for the edge src -> dst, or nullopt when the edge is honoured whole: the source
// has no loop of its own inside the common one, an access uses an address register, an
// access's index in the common loops differs between the two (so the map would change from
// one common iteration to the next), the instances are too many to compare (more than 2^18
// pairs per common iteration), or the map waits for the last source instance throughout.
// With `distance` > 0, the edge is carried by `loop` (which encloses both); the same rules
// hold with `loop` and the loops around it as the common ones, and the map is nullopt when
// the loop runs no more than `distance` iterations, or when distance + 2 iterations of source
// instances (what the simulator's semaphore holds) exceed 2^18.
std::optional<TileMap> tile_map(const Kernel& k, InstId src, InstId dst, int distance = 0, LoopId loop = kNoId);

// The map by which the simulator honours the graph's edge src -> dst per tile, or nullopt
// when it honours it whole: explicit deps, implied edges and Ordered edges keep their
// whole-loop meaning, and otherwise tile_map decides. The lowering and the passes' timing
// estimates both ask this.
std::optional<TileMap> edge_tile_map(const Kernel& k, InstId src, InstId dst, const DepEdge& e);

}  // namespace tandem
