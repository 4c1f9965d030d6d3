// The bounds of a scheduled kernel and of each of its loops, from its costed program
// (costed_program.h): the resource bound (the busiest compute engine, DMA queue, register pipe
// or DMA engine) and the recurrence bound (the dependence and in-order-unit cycles through a
// loop's body, latency over distance, and the cycle that sets it). One computation: the
// simulator's report (sim/observe/ledger.cpp) reads the lowered program's records
// (bounds_view) and reports these figures (docs/metrics.md); the passes read the kernel as
// scheduled so far (bounds_input below; address-rotation's {buffers=model}, docs/passes.md,
// auto).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/analysis/costed_program.h"
#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"
#include "sched/target/dma_cost.h"

namespace tandem {

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

// The bounds' reading of a costed program: its records (by pointer, indexed by InstId), the
// dependences between them as the units honour them, and each unit's order.
struct BoundsInput {
  const Kernel* kernel = nullptr;
  std::vector<CostedUnit> units;  // compute engines and DMA queues
  std::vector<std::string> pipes;
  std::vector<const CostedInst*> insts;  // indexed by InstId
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
  std::shared_ptr<const CostedProgram> costed;  // what `insts` points into, when bounds_input() costed it
};

// The records of a costed program (a CostedProgram, or the simulation program made from one),
// without edges and streams.
template <class Program>
BoundsInput bounds_view(const Program& p) {
  BoundsInput in;
  in.kernel = p.kernel;
  in.units = p.units;
  in.pipes = p.pipes;
  in.dma_fixed_ps = p.dma_fixed_ps;
  in.insts.reserve(p.insts.size());
  for (const auto& inst : p.insts) in.insts.push_back(&inst);
  return in;
}

struct LoopBounds {
  ResourceBound resource;        // per iteration
  int64_t recurrence_ps = 0;     // 0: no cycle
  std::string recurrence_cause;  // "%ld -> %mm -> %ld", or a barrier's window
};

// One resource's work, per iteration of a loop or over the whole kernel: what the resource
// alone needs, whatever the schedule. A queue has two stages that overlap across transfers,
// each a resource of its own: its setups (one at a time) and its data phases (one at a time).
struct ResourceDemand {
  enum class Kind { Compute, QueueSetup, QueueData, DmaEngine, Pipe };
  std::string resource;  // "pe", "q0 setup", "q0 data", "dma engine 3", "wave:lds pipe"
  int64_t ps = 0;
  Kind kind = Kind::Compute;
  int index = 0;  // its unit, pipe or DMA engine
  bool is_dma() const { return kind == Kind::QueueSetup || kind == Kind::QueueData || kind == Kind::DmaEngine; }
};

// The input from a kernel that assign-engines may not have run on: its costed program with
// unplaced instructions where assign-engines' defaults would place them
// (Placement::Defaulted), each unit running its instructions in program order; edges: `g`.
BoundsInput bounds_input(const Kernel& k, const DepGraph& g);

// The busiest resource's work over the whole kernel.
ResourceBound kernel_resource_bound(const BoundsInput& in);
// Per iteration of `loop` (loop_bounds(in, loop).resource, without the recurrence).
ResourceBound loop_resource_bound(const BoundsInput& in, LoopId loop);
// Every resource with work within `loop` (kNoId: the whole kernel), most work first (unit
// order, then pipes, then DMA engines, on ties); the first is the resource bound's.
std::vector<ResourceDemand> resource_demands(const BoundsInput& in, LoopId loop);
// Per iteration of `loop`.
LoopBounds loop_bounds(const BoundsInput& in, LoopId loop);

}  // namespace tandem
