// The bounds of a scheduled kernel and of each of its loops, from per-instruction costs on the
// model (sched/analysis/inst_cost.h, sched/target/dma_cost.h): the resource bound (the busiest
// compute engine, DMA queue, register pipe or DMA engine) and the recurrence bound (the
// dependence and in-order-unit cycles through a loop's body, latency over distance, and the
// cycle that sets it). One computation: the simulator's report (sim/observe/ledger.cpp) fills
// BoundsInput from its lowered program and reports these figures (docs/metrics.md); the passes
// fill it from the kernel as scheduled so far (bounds_input below; address-rotation's
// {buffers=model}, docs/passes.md, auto).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"
#include "sched/target/dma_cost.h"

namespace tandem {

// What the bounds depend on, per static instruction (times in picoseconds).
struct BoundsInst {
  InstId id = kNoId;
  std::string name;        // "%la"
  std::vector<int> units;  // its unit; a barrier: every unit it fences; empty: not run
  bool is_barrier = false;
  int64_t cycles_ps = 0;   // unit occupancy (a transfer: its queue's setup stage)
  int64_t latency_ps = 0;  // start to completion
  int64_t data_ps = 0;     // a transfer: its data phase alone on its engines
  bool moves_dma = false;  // a transfer or a collective: `dma` crosses the DMA engines
  DmaTransfer dma;
  int pipe = -1;  // a register load from a space with bandwidth: its pipe
  int64_t pipe_ps = 0;
  std::vector<LoopId> nest;  // enclosing loops, outermost first
  int64_t dynamic_count = 1;
};

// A dependence as the units honour it: the source's instance in iteration i of `key_loop`
// feeds the destination's in iteration i + distance.
struct BoundsEdge {
  InstId src = kNoId;
  InstId dst = kNoId;
  DepKind kind = DepKind::Invalid;
  int distance = 0;
  LoopId key_loop = kNoId;
};

struct ResourceBound {
  int64_t ps = 0;
  std::string resource;       // "pe", "q3", "dma engine 0", "wave:lds pipe"
  int64_t dma_engine_ps = 0;  // the busiest DMA engine's work
  int64_t dma_total_ps = 0;   // all DMA engines' work together
};

struct BoundsInput {
  const Kernel* kernel = nullptr;
  std::vector<std::string> units;  // compute engines and DMA queues
  std::vector<bool> unit_is_queue;
  std::vector<std::string> pipes;
  std::vector<BoundsInst> insts;  // indexed by InstId
  std::vector<BoundsEdge> edges;
  // Per unit and loop: the unit's instructions directly in the loop's body, in its order.
  std::vector<std::vector<std::vector<InstId>>> streams;  // [unit][loop]
  int64_t dma_fixed_ps = 0;
  // loop_resource_bound's answers by loop (address-rotation asks once per loop and once per
  // tile). Fill the fields above before the first question.
  mutable std::vector<std::optional<ResourceBound>> resource_bound_by_loop;
  // Per loop, made on the first question: the instructions inside it (its nested loops'
  // included) and the edges between two of them (indices into `edges`), each in increasing
  // order, so that a question about a loop looks at that loop alone (a walk of the whole
  // program per loop is quadratic in the number of sibling loops).
  mutable std::vector<std::vector<InstId>> insts_in_loop;
  mutable std::vector<std::vector<size_t>> edges_in_loop;
};

struct LoopBounds {
  ResourceBound resource;        // per iteration
  int64_t recurrence_ps = 0;     // 0: no cycle
  std::string recurrence_cause;  // "%ld -> %mm -> %ld", or a barrier's window
};

// The input from a kernel that assign-engines may not have run on: an instruction without an
// engine or queue is placed where assign-engines' defaults would place it (a compute
// instruction on the first engine its opcode lists, preferred_engine(); transfers over all the
// model's DMA queues in turn, in program order), and each unit runs its instructions in
// program order. Costs come from inst_cost.h as the lowering times them, except
// register-load pipes, which only the lowering adds. Edges: `g`.
BoundsInput bounds_input(const Kernel& k, const DepGraph& g);

// The busiest resource's work over the whole kernel.
ResourceBound kernel_resource_bound(const BoundsInput& in);
// Per iteration of `loop` (loop_bounds(in, loop).resource, without the recurrence).
ResourceBound loop_resource_bound(const BoundsInput& in, LoopId loop);
// Per iteration of `loop`.
LoopBounds loop_bounds(const BoundsInput& in, LoopId loop);

}  // namespace tandem
