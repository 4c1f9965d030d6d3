// The simulator's view of a scheduled kernel: every static instruction with its unit (a
// compute engine, a DMA queue, or the barrier it is), its cost in picoseconds, and the
// channels (semaphores) that carry each dependence edge between dynamic instances. Built
// once from the Kernel, its DepGraph and the kernel's target (the model file, timing
// included); the simulator never re-analyses accesses (timing follows only the graph).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/analysis/costed_program.h"
#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"
#include "sched/target/dma_cost.h"
#include "sched/target/target.h"

namespace tandem {

using Picos = int64_t;

// A node of a unit's walk: a loop (with the nodes it holds) or one of the unit's instructions.
struct WalkNode {
  bool is_loop = false;
  int32_t id = 0;  // LoopId or InstId
  std::vector<WalkNode> children;
  // An instruction: the least seq_base of it and the instructions after it in its straight
  // run, in this walk's order (list-schedule reorders within a run). With the instance's
  // ivs (SimInst::seq_at), the least program position this unit can still record: the race
  // checker's min_seq, which must move within a run, or a straight-line kernel keeps every
  // read and write until the end and checks each read against all writes.
  int64_t future_seq_base = 0;
};

// One dependence edge as a channel between dynamic instances. Keys count the iterations of
// `key_loop` across the whole run (or are always 0 without one): the source publishes key k
// at its last instance inside iteration k; the destination in iteration k reads key k -
// distance when its iteration index within the loop is at least `distance`.
struct SimChannel {
  InstId src = kNoId;
  InstId dst = kNoId;
  DepKind kind = DepKind::Invalid;
  int distance = 0;
  LoopId key_loop = kNoId;
  int64_t key_lo = 0;             // key_loop's lower bound (read for every instance: kept here)
  std::vector<LoopId> src_inner;  // loops of src deeper than key_loop: publish at their last iteration
  bool cross_unit = false;        // a semaphore between two units
  bool src_dma = false;           // the source is a transfer on a DMA queue
  // Per tile (a sibling-loop or loop-carried edge, sched/analysis/tile_dependence.h): keys
  // count the source's instances, `src_per_key` per iteration of key_loop, numbered by
  // `src_tile` (loop, stride); the destination's instance j of an iteration (numbered by
  // `dst_tile`) reads the key of the source's instance tile_key[j] of the iteration
  // `distance` before. Empty: one key per iteration.
  std::vector<int64_t> tile_key;
  int64_t src_per_key = 1;
  std::vector<std::pair<LoopId, int64_t>> src_tile, dst_tile;
};

// A costed instruction with the channels it reads and publishes and its program position.
struct SimInst : CostedInst {
  std::vector<int> in_channels;
  std::vector<int> out_channels;
  // Position in sequential program order: seq = seq_base + sum over enclosing loops of
  // (iv - lo) * that loop's body size in dynamic instructions.
  int64_t seq_base = 0;
  std::vector<int64_t> seq_strides;  // per entry of `nest`

  int64_t seq(const int64_t* ivs, const Kernel& k) const { return seq_at(seq_base, ivs, k); }
  // The position `base` would have in this instruction's nest (WalkNode::future_seq_base).
  int64_t seq_at(int64_t base, const int64_t* ivs, const Kernel& k) const {
    for (size_t i = 0; i < nest.size(); ++i)
      base += (ivs[nest[i]] - k.loops[static_cast<size_t>(nest[i])].lo) * seq_strides[i];
    return base;
  }
};

struct SimProgram {
  std::shared_ptr<const Target> model;  // the kernel's target
  const Kernel* kernel = nullptr;
  std::vector<CostedUnit> units;
  std::vector<std::vector<WalkNode>> walks;  // per unit
  std::vector<SimInst> insts;                // indexed by InstId; erased ones have no unit
  std::vector<SimChannel> channels;
  std::vector<std::string> ports;  // "sbuf:dve+pool"
  std::vector<std::string> pipes;  // "wave:lds", one per engine and bandwidth-limited space
  Picos dma_fixed_ps = 0;
  int64_t dynamic_instructions = 0;
  // Counting semaphores the schedule needs: one per ordered pair of units (a barrier counts as
  // one unit) with a dependence between them, the pair's dependences waiting for successive
  // counts of it (docs/metrics.md, semaphores).
  int64_t semaphores = 0;
};

// The per-tile cases of the two functions below, out of line.
int64_t channel_needed_tile_key(const SimChannel& c, const Kernel& k, const int64_t* counts, const int64_t* ivs,
                                bool* needed);
int64_t channel_produced_tile_key(const SimChannel& c, const Kernel& k, const int64_t* counts, const int64_t* ivs);
// The key a destination reads of a channel with one key per iteration of `key_loop` (lower
// bound `key_lo`): the iteration `distance` back; `*needed` is false in the loop's first
// `distance` iterations. (channel_needed_key's common case; the units' channel ports use it too.)
inline int64_t loop_key_needed(LoopId key_loop, int64_t key_lo, int distance, const int64_t* counts, const int64_t* ivs,
                               bool* needed) {
  *needed = ivs[key_loop] - key_lo >= distance;
  return counts[key_loop] - 1 - distance;
}
// The key a channel's destination reads at the current iteration (`counts`, `ivs`: per
// LoopId, iterations started so far and the induction variable); `*needed` is false in the
// first `distance` iterations of the key loop, which have no source instance. Inline: the
// units evaluate it for every input of every instance.
inline int64_t channel_needed_key(const SimChannel& c, const Kernel& k, const int64_t* counts, const int64_t* ivs,
                                  bool* needed) {
  if (!c.tile_key.empty()) return channel_needed_tile_key(c, k, counts, ivs, needed);
  if (c.key_loop == kNoId) {
    *needed = true;
    return 0;
  }
  return loop_key_needed(c.key_loop, c.key_lo, c.distance, counts, ivs, needed);
}
// The key the channel's source publishes now; `*produce` is false unless this is the last
// instance of the source within the key (every loop below the key loop at its last iteration;
// a per-tile channel publishes every instance).
inline int64_t channel_produced_key(const SimChannel& c, const Kernel& k, const int64_t* counts, const int64_t* ivs,
                                    bool* produce) {
  *produce = true;
  if (!c.tile_key.empty()) return channel_produced_tile_key(c, k, counts, ivs);
  for (LoopId l : c.src_inner) *produce &= ivs[l] == k.loops[static_cast<size_t>(l)].hi - 1;
  return c.key_loop == kNoId ? 0 : counts[c.key_loop] - 1;
}

// Lowers a kernel for simulation on its target (`k.target`, which --hw replaces when the
// kernel is read). Every instruction must have an engine or queue (run assign-engines
// first). Errors: a target without its timing half (located in the model file); located at
// the instruction or tensor: an engine that may not access an operand's space, live tensors
// that do not fit a space (SpaceInfo::footprint), a dependence that an in-order engine can
// never satisfy.
SimProgram lower_for_simulation(const Kernel& k, const DepGraph& g);

}  // namespace tandem
