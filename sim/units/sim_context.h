// Shared state of one simulation: the program, the semaphores, the barriers, the DMA
// system, the conflict ports and the observer of every instance. simulate() creates it and
// modules hold a reference; it is never freed (one simulation per process, docs/metrics.md).
#pragma once

#include <exception>
#include <memory>
#include <vector>

#include <systemc>

#include "sim/lower/program.h"
#include "sim/units/channel_ports.h"
#include "sim/units/hand_off.h"
#include "sim/units/semaphore.h"

namespace tandem {

class CoreBarrier;
class DmaSystem;
class FastForward;
class PortArbiter;
class InstanceObserver;
class StreamUnit;

struct SimContext {
  const SimProgram& program;
  uint64_t perturb_seed = 0;  // 0: nominal durations
  double perturb_spread = 0;
  std::vector<std::unique_ptr<Semaphore>> semaphores;  // one per SimChannel
  std::vector<CoreBarrier*> barriers;                  // per InstId; null unless a barrier
  DmaSystem* dma = nullptr;
  PortArbiter* ports = nullptr;          // access conflicts, if the model has any
  InstanceObserver* observer = nullptr;  // the ledger (sim/observe/), through fast-forward when on
  FastForward* fast_forward = nullptr;   // null: every instance is simulated
  std::vector<StreamUnit*> units;
  // The first exception a unit's thread raised: the unit stops the simulation, and simulate()
  // rethrows it as it was (a user Error stays one), never as SystemC's E549 report.
  std::exception_ptr failure;
  // The units' hand-offs: every process SystemC runs runs this before it returns.
  ReadyQueue ready{};
  // Units waiting for a SystemC notification (simulated time, a port's grant). None: until the
  // DMA system's next wake nothing else runs, so it may run ahead of SystemC's time (DmaSystem).
  int units_in_systemc = 0;
  // The DMA system's time while its wake runs (it may run ahead of SystemC's); -1 otherwise.
  Picos dma_time = -1;
  // The simulated time now, for the units and the DMA system: SystemC's, or the DMA system's
  // while it runs ahead (and the units it hands off to run with it).
  Picos now() const { return dma_time >= 0 ? dma_time : static_cast<Picos>(sc_core::sc_time_stamp().value()); }
  // Times a unit waited in the SystemC kernel (for simulated time, a port's grant): each a
  // process activation; hand-offs are not (docs/performance.md); bench/sim_bench reports it.
  int64_t kernel_waits = 0;
  // What the units visit of each instruction's channels (made once the semaphores exist).
  ChannelPorts channel_ports{};
};

}  // namespace tandem
