// The DMA engines a core shares among its queues, as a SystemC module: the bandwidth model
// (DmaBandwidth) decides when each transfer lands; the module wakes only when a chunk lands
// and notifies the queue waiting for that transfer.
#pragma once

#include <vector>

#include <systemc>

#include "sim/units/dma_bandwidth.h"

namespace tandem {

class DmaSystem : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DmaSystem);
  DmaSystem(sc_core::sc_module_name name, const DmaModel& model);

  // Starts moving `t` now; `done` is notified when its last byte lands, and `*end` holds
  // that time. The notification is immediate (in the DMA system's own wake-up), so the caller
  // must wait on `done` straight after this call.
  void start(const DmaTransfer& t, sc_core::sc_event* done, Picos* end);

 private:
  struct Waiter {
    sc_core::sc_event* done = nullptr;
    Picos* end = nullptr;
  };
  void reschedule(double now);
  void wake();

  DmaBandwidth bandwidth_;
  std::vector<Waiter> waiters_;  // per transfer id
  std::vector<int> done_;
  sc_core::sc_event wake_;
  Picos wake_at_ = -1;  // when wake_ is due, -1 when it is not
};

}  // namespace tandem
