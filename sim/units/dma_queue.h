// A DMA queue, a two-stage pipeline: transfers issue in order when their inputs are complete
// and the previous transfer's setup (descriptor generation, synchronisation: the fixed cost)
// is done; a transfer's setup overlaps the previous transfer's data, and its data moves after
// the previous transfer's data (FIFO).
// The data phase runs on the shared DmaSystem, so it meets SystemC time.
#pragma once

#include "sim/units/stream_unit.h"

namespace tandem {

class DmaQueue : public StreamUnit {
 public:
  DmaQueue(sc_core::sc_module_name name, SimContext& ctx, int index) : StreamUnit(name, ctx, index) {}

 protected:
  void execute(const SimInst& inst, InstanceRecord& r) override;
  Picos arrival_time() const override { return std::max(free_, data_free_); }
  void on_barrier(Picos release) override { data_free_ = std::max(data_free_, release); }

 private:
  Picos data_free_ = 0;  // the previous transfer's last byte
  sc_core::sc_event done_;
};

}  // namespace tandem
