#include "sim/units/compute_engine.h"

#include <algorithm>

#include "sim/units/dma_system.h"
#include "sim/units/observer.h"
#include "sim/units/port_arbiter.h"

namespace tandem {

void ComputeEngine::execute(const SimInst& inst, InstanceRecord& r) {
  const Picos ready = wait_inputs(inst, r);
  const double f = jitter(inst);
  const Picos cycles = static_cast<Picos>(static_cast<double>(inst.cycles_ps) * f);
  const Picos latency = std::max(cycles, static_cast<Picos>(static_cast<double>(inst.latency_ps) * f));
  Picos start = std::max(free_, ready);
  if (ready > free_) r.stall[static_cast<size_t>(input_stall_reason(r))] = ready - free_;
  if (!inst.ports.empty()) {
    // Shared ports are arbitrated in simulated time: reach the start first.
    pending_start_ = start;
    start = wait_until(start);
    Picos granted = start;
    ctx_.ports->request(index_, inst.ports, cycles, &port_granted_, &granted);
    wait_for_event(port_granted_);
    r.stall[static_cast<size_t>(StallReason::Conflict)] = granted - start;
    start = granted;
  }
  r.start = r.busy_start = start;
  r.busy_end = start + cycles;
  r.complete = start + latency;
  if (inst.pipe >= 0) {
    // The bytes queue behind earlier loads' on the space's pipe; the wait adds to the latency.
    Picos& pipe_free = pipe_free_[static_cast<size_t>(inst.pipe)];
    const Picos pipe_start = std::max(start, pipe_free);
    pipe_free = pipe_start + static_cast<Picos>(static_cast<double>(inst.pipe_ps) * f);
    r.complete = std::max(pipe_start + latency, pipe_free);
  }
  if (inst.collective) {
    // After its start-up the collective moves its ring volume through the shared DMA
    // engines and over the link; it completes when both are done.
    const Picos link = static_cast<Picos>(static_cast<double>(inst.link_ps) * f);
    pending_start_ = start;
    const Picos data_start = wait_until(start + cycles - link);
    ctx_.dma->start(inst.dma, data_start, this);
    wait_for_event(port_granted_);
    r.busy_end = r.complete = std::max(dma_end_, data_start + link);
  }
  free_ = r.busy_end;
  pending_start_ = std::numeric_limits<Picos>::max();
  ctx_.observer->record(r);
  publish_outputs(inst, r.start, r.busy_end, r.complete);
}

void ComputeEngine::landed(Picos end) {
  dma_end_ = end;
  port_granted_.notify();  // immediate: the engine waits for it
}

}  // namespace tandem
