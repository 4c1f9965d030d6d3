// The costed program: every static instruction of a kernel with the unit it runs on and what
// it costs there on the kernel's target, in picoseconds. Built once, by cost_program(), and
// read by everything that times a kernel: the lowering for simulation (sim/lower/program.h,
// whose SimInst extends CostedInst), the bounds the passes plan with and the bounds the
// report prints (loop_bounds.h). The cost rules themselves live in inst_cost.h (an
// instruction's cycles, a transfer's DMA cost, a collective's link time) and here (units,
// conflict ports, register-load pipes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/ir/kernel.h"
#include "sched/target/dma_cost.h"
#include "sched/target/target.h"

namespace tandem {

enum class UnitKind { Compute, DmaQueue };

// A unit instructions run on in order: a compute engine or a DMA queue.
struct CostedUnit {
  std::string name;  // "pe", "q3"
  UnitKind kind = UnitKind::Compute;
};

struct CostedInst {
  InstId id = kNoId;
  std::string name;  // "%la" for messages and traces
  OpClass op_class = OpClass::Compute;
  std::vector<int> units;  // one unit; a barrier lists every unit it fences; empty: not run
  bool is_barrier = false;
  bool wmma = false;        // a WMMA: its issue waits are the loop's WMMA bubbles
  int64_t cycles_ps = 0;    // unit occupancy (a transfer: its queue's setup stage)
  int64_t latency_ps = 0;   // start to completion (>= cycles_ps)
  int64_t data_ps = 0;      // a transfer: its data phase alone on its engines
  DmaTransfer dma;          // a transfer; a collective's ring volume
  bool moves_dma = false;   // a transfer on a queue or a collective: `dma` crosses the DMA engines
  bool collective = false;  // also holds its engine for `link_ps` over the link
  int64_t link_ps = 0;
  std::vector<int> ports;     // conflict ports it must hold while it runs
  int pipe = -1;              // a register load from a space with bandwidth: its pipe ...
  int64_t pipe_ps = 0;        // ... and how long the bytes occupy it
  std::vector<LoopId> nest;   // enclosing loops, outermost first
  int64_t dynamic_count = 1;  // product of the enclosing trip counts
};

struct CostedProgram {
  const Kernel* kernel = nullptr;
  std::vector<CostedUnit> units;   // compute engines by name, then queues by number
  std::vector<CostedInst> insts;   // indexed by InstId; an erased or unplaced one has no unit
  std::vector<std::string> ports;  // "sbuf:dve+pool"
  std::vector<std::string> pipes;  // "wave:lds", one per engine and bandwidth-limited space
  int64_t dma_fixed_ps = 0;        // a queue's setup stage
};

// Where instructions without an engine or queue go.
enum class Placement {
  // Every instruction has its engine or queue (the lowering: a missing one, an engine that
  // may not access an operand's space, a missing or unusable cost, a branch, a fence naming
  // no unit of the target are located errors).
  Assigned,
  // An unplaced instruction goes where assign-engines' defaults would put it (a compute
  // instruction on the first engine its opcode lists; transfers over the model's DMA queues
  // in turn, in program order); what has no cost counts nothing (the passes' bounds, on a
  // kernel scheduled so far).
  Defaulted,
};

CostedProgram cost_program(const Kernel& k, Placement placement);

}  // namespace tandem
