// A compute engine (TensorE, ScalarE, VectorE, GpSimdE, the collective cores, a GPU wave):
// runs its stream in order; an instance starts when the engine is free and its inputs are
// complete, occupies the engine for its cost and completes after its latency. Instructions
// that touch a space with an access conflict hold that conflict's port while they run,
// granted in simulated-time order. A collective (on the collective cores) moves its data
// through the shared DMA engines after its start-up. A register load from a space with a
// bandwidth (the LDS) queues its bytes on that space's pipe of this engine.
#pragma once

#include "sim/units/dma_system.h"
#include "sim/units/stream_unit.h"

namespace tandem {

class ComputeEngine : public StreamUnit, public DmaClient {
 public:
  ComputeEngine(sc_core::sc_module_name name, SimContext& ctx, int index)
      : StreamUnit(name, ctx, index), pipe_free_(ctx.program.pipes.size(), 0) {}

 protected:
  void execute(const SimInst& inst, InstanceRecord& r) override;
  void landed(Picos end) override;  // a collective's data has moved

 private:
  sc_core::sc_event port_granted_;  // also: a collective's data has moved
  Picos dma_end_ = 0;               // when it did
  std::vector<Picos> pipe_free_;    // per pipe: when its last queued bytes are through
};

}  // namespace tandem
