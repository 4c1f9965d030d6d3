#include "sim/units/compute_engine.h"

#include <algorithm>

#include "sim/units/dma_system.h"
#include "sim/units/observer.h"
#include "sim/units/port_arbiter.h"

namespace tandem {

void ComputeEngine::resume() { resume_stream<ComputeEngine>(); }

bool ComputeEngine::execute(const SimInst& inst, InstanceRecord& r) {
  if (step_ == kInputs) {
    if (!wait_inputs(inst, r)) return false;
    jitter_ = jitter(inst);
    cycles_ = static_cast<Picos>(static_cast<double>(inst.cycles_ps) * jitter_);
    latency_ = std::max(cycles_, static_cast<Picos>(static_cast<double>(inst.latency_ps) * jitter_));
    start_ = std::max(free_, ready_);
    if (ready_ > free_) r.stall[static_cast<size_t>(input_stall_reason(r))] = ready_ - free_;
    // Shared ports are arbitrated in simulated time: reach the start first.
    if (!inst.ports.empty()) pending_start_ = start_;
    step_ = inst.ports.empty() ? kTiming : kPortTime;
  }
  if (step_ == kPortTime) {
    if (!reach(start_, &start_)) return false;
    granted_ = start_;
    ctx_.ports->request(index_, inst.ports, cycles_, &wake_event_, &granted_);
    wait_for_wake_event();
    step_ = kPortGrant;
    return false;
  }
  if (step_ == kPortGrant) {
    state_ = State::Running;
    r.stall[static_cast<size_t>(StallReason::Conflict)] = granted_ - start_;
    start_ = granted_;
    step_ = kTiming;
  }
  if (step_ == kTiming) {
    r.start = r.busy_start = start_;
    r.busy_end = start_ + cycles_;
    r.complete = start_ + latency_;
    if (inst.pipe >= 0) {
      // The bytes queue behind earlier loads' on the space's pipe; the wait adds to the latency.
      Picos& pipe_free = pipe_free_[static_cast<size_t>(inst.pipe)];
      const Picos pipe_start = std::max(start_, pipe_free);
      pipe_free = pipe_start + static_cast<Picos>(static_cast<double>(inst.pipe_ps) * jitter_);
      r.complete = std::max(pipe_start + latency_, pipe_free);
    }
    // After its start-up a collective moves its ring volume through the shared DMA engines and
    // over the link; it completes when both are done.
    if (inst.collective) pending_start_ = start_;
    step_ = inst.collective ? kCollectiveTime : kRecord;
  }
  if (step_ == kCollectiveTime) {
    const Picos link = static_cast<Picos>(static_cast<double>(inst.link_ps) * jitter_);
    if (!reach(start_ + cycles_ - link, &data_start_)) return false;
    ctx_.dma->start(inst.dma, data_start_, this);
    wait_for_hand_off();
    step_ = kCollectiveData;
    return false;
  }
  if (step_ == kCollectiveData) {
    state_ = State::Running;
    const Picos link = static_cast<Picos>(static_cast<double>(inst.link_ps) * jitter_);
    r.busy_end = r.complete = std::max(dma_end_, data_start_ + link);
    step_ = kRecord;
  }
  if (step_ == kRecord) {
    free_ = r.busy_end;
    pending_start_ = std::numeric_limits<Picos>::max();
    ctx_.observer->record(r);
    step_ = kPublish;
  }
  return publish_outputs(inst, r.start, r.busy_end, r.complete);
}

void ComputeEngine::landed(Picos end) {
  dma_end_ = end;
  wake();
}

void ComputeEngine::visit_state(StateVisitor& v) {
  StreamUnit::visit_state(v);
  v.real(jitter_);
  v.exact(cycles_);
  v.exact(latency_);
  v.time(start_);
  v.time(granted_);
  v.time(data_start_);
  v.time(dma_end_);
  for (Picos& t : pipe_free_) v.time(t);
}

}  // namespace tandem
