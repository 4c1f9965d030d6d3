// What one static instruction costs on its target, from its operands' shapes and the model:
// the lowering for simulation and the passes' analyses use these, so a cost is derived once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sched/ir/kernel.h"
#include "sched/target/dma_cost.h"

namespace tandem {

// The extent an access covers: partitions (the first dimension, in a partitioned space) and
// elements per partition.
struct OperandShape {
  int64_t partitions = 1;
  int64_t free = 1;  // elements per partition
  int64_t elem_bytes = 0;
  std::string dtype;
  int64_t bytes() const { return partitions * free * elem_bytes; }
};
OperandShape operand_shape(const Kernel& k, const Access& a);

// Does `in` move data through a DMA queue (a DMA-class opcode on a queue, or, before
// assign-engines, one the model runs on the DMA queues)?
bool is_transfer(const Kernel& k, const Instruction& in);

// A transfer's shape for the DMA system: the bytes that land (a gather reads a large table but
// writes a tile), the partitions of its first operand in a partitioned space (writes first),
// and the most contiguous runs per partition row of any operand.
DmaShape transfer_shape(const Kernel& k, const Instruction& in);

// dma_transfer() of the instruction's shape; nullopt unless is_transfer().
std::optional<DmaTransfer> transfer_of(const Kernel& k, const Instruction& in);

// An instruction's cost on a compute engine, in that engine's cycles: its opcode's cost
// formula over the operand shapes (docs/models.md defines the variables), unless the
// instruction sets issue_cycles / latency_cycles. nullopt when the engine has no cost for it.
struct ComputeCycles {
  double cycles = 0;   // engine occupancy
  double latency = 0;  // start to completion
};
std::optional<ComputeCycles> compute_cycles(const Kernel& k, const Instruction& in, const EngineInfo& engine);

// Times in picoseconds as the simulator runs an instruction (and the bounds count it).
// A collective on the ring algorithm: the bytes that cross every DMA engine (all-reduce moves
// its largest operand 2 (ranks - 1) / ranks times, the others (ranks - 1) / ranks) and the
// time they take over the link. nullopt unless `in` is a collective on a model with a link.
struct CollectiveCost {
  DmaTransfer dma;  // over every DMA engine
  int64_t link_ps = 0;
};
std::optional<CollectiveCost> collective_cost(const Kernel& k, const Instruction& in);

struct InstTimes {
  int64_t cycles_ps = 0;   // unit occupancy (a transfer: its queue's setup stage, the DMA fixed cost)
  int64_t latency_ps = 0;  // start to completion
  int64_t data_ps = 0;     // a transfer: its data phase alone on its engines
};
// A compute instruction's cost on `engine` (latency at least its occupancy).
InstTimes compute_times(const ComputeCycles& c, const EngineInfo& engine);
// A transfer: the queue holds the setup stage, then the data moves; the data time is rounded
// down (the simulator rounds each transfer's end up, and bounds must not exceed it).
InstTimes transfer_times(const DmaModel& dma, const DmaTransfer& t);

}  // namespace tandem
