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
  void resume() override;           // resume_stream<ComputeEngine>()
  void landed(Picos end) override;  // a collective's data has moved: a hand-off

 public:
  void visit_state(StateVisitor& v) override;

 private:
  friend class StreamUnit;  // the walk calls execute(), inline (StreamUnit::resume_stream)
  [[gnu::always_inline]] inline bool execute(const SimInst& inst, InstanceRecord& r);
  // execute()'s steps, in order; a step that waits is entered again when the wait ends.
  enum Step { kInputs, kPortTime, kPortGrant, kTiming, kCollectiveTime, kCollectiveData, kRecord, kPublish };
  double jitter_ = 1;               // the instance's
  Picos cycles_ = 0, latency_ = 0;  // its occupancy and latency, jittered
  Picos start_ = 0;                 // its start so far
  Picos granted_ = 0;               // its ports' grant (PortArbiter writes it)
  Picos data_start_ = 0;            // a collective's data phase
  Picos dma_end_ = 0;               // when a collective's data moved
  std::vector<Picos> pipe_free_;    // per pipe: when its last queued bytes are through
};

}  // namespace tandem
