// Shared state of one simulation: the program, the semaphores, the barriers, the DMA
// system, the conflict ports and the ledger. simulate() creates it and modules hold a
// reference; it is never freed (one simulation per process, docs/metrics.md).
#pragma once

#include <memory>
#include <vector>

#include "sim/program.h"
#include "sim/semaphore.h"

namespace tandem {

class CoreBarrier;
class DmaSystem;
class Ledger;
class PortArbiter;
class RaceChecker;
class TraceWriter;
class StreamUnit;

struct SimContext {
  const SimProgram& program;
  uint64_t perturb_seed = 0;  // 0: nominal durations
  double perturb_spread = 0;
  std::vector<std::unique_ptr<Semaphore>> semaphores;  // one per SimChannel
  std::vector<CoreBarrier*> barriers;                  // per InstId; null unless a barrier
  DmaSystem* dma = nullptr;
  PortArbiter* ports = nullptr;                        // access conflicts, if the model has any
  Ledger* ledger = nullptr;
  TraceWriter* trace = nullptr;                        // --trace, if asked for
  RaceChecker* checker = nullptr;                      // the race checker, unless turned off
  std::vector<StreamUnit*> units;
};

}  // namespace tandem
