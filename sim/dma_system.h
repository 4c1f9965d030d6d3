// The DMA engines a core shares among its queues. A transfer is split across the engines
// its partitions map to; each engine divides its bandwidth equally among the chunks it is
// moving (the fluid limit of serving its queues round-robin), scaled by each transfer's
// efficiency at its bytes per partition. Rates change only when a chunk arrives or leaves,
// so the module wakes only then.
#pragma once

#include <vector>

#include <systemc>

#include "sim/program.h"

namespace tandem {

class DmaSystem : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DmaSystem);
  DmaSystem(sc_core::sc_module_name name, const DmaModel& model);

  // Starts moving `t` now; `done` is notified when its last byte lands, and `*end` holds
  // that time.
  void start(const DmaTransfer& t, sc_core::sc_event* done, Picos* end);

 private:
  struct Chunk {
    int transfer;
    double remaining;   // bytes
    double efficiency;
  };
  struct Engine {
    std::vector<Chunk> active;
    double updated_ps = 0;
  };
  struct Transfer {
    int chunks_left = 0;
    sc_core::sc_event* done = nullptr;
    Picos* end = nullptr;
  };

  double rate(const Engine& e, const Chunk& c) const;  // bytes per ps
  void advance(Engine& e, double now);
  void reschedule(double now);
  void wake();

  const DmaModel& model_;
  std::vector<Engine> engines_;
  std::vector<Transfer> transfers_;
  std::vector<int> free_slots_;
  sc_core::sc_event wake_;
};

}  // namespace tandem
