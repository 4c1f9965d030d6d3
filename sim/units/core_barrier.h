// A CoreBarrier: every unit it fences stops at it until all have arrived and its Flow
// predecessors have finished; then all continue from the same release time. The last unit
// to arrive reads the barrier's inputs and publishes its outputs on its behalf.
#pragma once

#include <systemc>

#include "sim/lower/program.h"

namespace tandem {

class CoreBarrier : public sc_core::sc_module {
 public:
  CoreBarrier(sc_core::sc_module_name name, const SimInst& inst) : sc_module(name), inst_(inst) {}

  int fenced() const { return static_cast<int>(inst_.units.size()); }

  int arrived = 0;
  Picos latest_arrival = 0;
  bool latest_is_queue = false;   // the last to arrive was a DMA queue draining
  Picos release_time = 0;
  bool released_by_dma = false;   // a transfer set the release (its waiters wait on DMA)
  uint64_t generation = 0;  // dynamic instances released so far
  sc_core::sc_event released;

 private:
  const SimInst& inst_;
};

}  // namespace tandem
