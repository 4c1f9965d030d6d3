// The timing half of a model file (docs/models.md): engine clocks and per-opcode cost
// formulas, the DMA system, which engines may touch which space, access conflicts, and the
// reference clock for cycles. The target half (spaces, opcodes, queues) is sched's Target,
// read from the same file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/target/target.h"
#include "sched/target/cost_formula.h"

namespace tandem {

// Inputs of every cost formula, in the order eval() takes them (docs/models.md defines each).
const std::vector<std::string>& cost_variables();

struct OpCost {
  CostFormula cycles;                  // engine occupancy (issue cycles)
  std::optional<CostFormula> latency;  // completion after start; default = cycles
};

struct EngineModel {
  std::string name;
  double clock_ghz = 1;
  double min_ii_cycles = 0;
  int64_t lanes = 1;  // a register load moves its registers' bytes once per lane (a GPU wave)
  std::map<std::string, OpCost> costs;  // opcode -> cost on this engine
};

struct DmaModel {
  int64_t engines = 0;
  int64_t partitions_per_engine = 1;
  double bandwidth_bytes_per_ns = 1;  // per DMA engine
  double fixed_cost_ns = 0;           // issue to first byte, per transfer
  // Fraction of the bandwidth a transfer achieves, by bytes per partition; linear between
  // points, flat beyond the ends.
  std::vector<std::pair<double, double>> efficiency;

  double efficiency_at(double bytes_per_partition) const;
};

struct SpaceAccess {
  std::set<std::string> readers;  // engine names; "dma" for the DMA queues
  std::set<std::string> writers;
  // Bytes per cycle (of the reading engine) the space returns into registers; 0 = unlimited.
  // Register loads from it queue on one pipe per engine (gpu-cu: the LDS).
  double bandwidth_bytes_per_cycle = 0;
};

// Engines that cannot use `space` at the same time.
struct ConflictRule {
  std::string space;
  std::vector<std::string> engines;
};

struct CollectiveModel {
  double link_bandwidth_bytes_per_ns = 0;  // 0: collectives move no data (start-up only)
};

struct HardwareModel {
  std::shared_ptr<const Target> target;
  std::string name;
  double reference_clock_ghz = 1;
  std::map<std::string, EngineModel> engines;
  DmaModel dma;
  CollectiveModel collective;
  std::map<std::string, SpaceAccess> access;
  std::vector<ConflictRule> conflicts;
  int64_t semaphores = 0;

  const EngineModel* engine(const std::string& name) const;
};

// Reads and validates the whole model file: a missing field, a negative bandwidth, an
// unknown key, a cost formula that does not parse or names an unknown variable, an opcode
// with no cost on an engine that may run it: each an Error at file:line:col.
std::shared_ptr<const HardwareModel> load_hardware_model(const std::string& path);

}  // namespace tandem
