// A CoreBarrier: every unit it fences stops at it until all have arrived and its Flow
// predecessors have finished; then all continue from the same release time. The last unit
// to arrive reads the barrier's inputs and publishes its outputs on its behalf. The module
// owns the protocol: units arrive, the last releases, the others wait for the release (their
// wakers, sim/units/hand_off.h).
#pragma once

#include <vector>

#include <systemc>

#include "sim/lower/program.h"
#include "sim/units/hand_off.h"
#include "sim/units/unit_state.h"

namespace tandem {

class CoreBarrier : public sc_core::sc_module {
 public:
  CoreBarrier(sc_core::sc_module_name name, const SimInst& inst) : sc_module(name), inst_(inst) {}

  struct Arrival {
    bool last = false;        // the caller completes the barrier: it must call release()
    uint64_t generation = 0;  // the dynamic instance the caller arrived at
  };

  // A fenced unit arrives at local time `at`; `from_queue`: it is a DMA queue.
  Arrival arrive(Picos at, bool from_queue) {
    ++arrived_;
    if (at > latest_arrival_ || arrived_ == 1) latest_is_queue_ = from_queue;
    latest_arrival_ = std::max(latest_arrival_, at);
    return {arrived_ == fenced(), generation_};
  }

  // The last arrival: the barrier's inputs were ready at `inputs_ready` (0: it has none),
  // `inputs_from_dma` when a transfer set that time. Returns the release time.
  Picos release(Picos inputs_ready, bool inputs_from_dma) {
    release_time_ = std::max(latest_arrival_, inputs_ready);
    released_by_dma_ = release_time_ == inputs_ready && inputs_ready > 0 ? inputs_from_dma : latest_is_queue_;
    arrived_ = 0;
    latest_arrival_ = 0;
    ++generation_;
    for (Waker* w : waiters_) w->wake();
    waiters_.clear();
    return release_time_;
  }

  // `w` waits for the release of the instance it arrived at.
  void add_waiter(Waker* w) { waiters_.push_back(w); }
  // The instance `a` arrived at is released (its waiters may not have resumed yet).
  bool released(const Arrival& a) const { return generation_ != a.generation; }

  Picos latest_arrival() const { return latest_arrival_; }
  Picos release_time() const { return release_time_; }
  // A transfer set the last release (the units waited on DMA).
  bool released_by_dma() const { return released_by_dma_; }

  // Lists the barrier's state (sim/units/unit_state.h).
  void visit_state(StateVisitor& v) {
    v.exact(arrived_);
    v.time(latest_arrival_);
    v.exact(latest_is_queue_);
    v.time(release_time_);
    v.exact(released_by_dma_);
    auto generation = static_cast<int64_t>(generation_);
    v.count(generation);
    generation_ = static_cast<uint64_t>(generation);
    v.exact(static_cast<int64_t>(waiters_.size()));
    for (const Waker* w : waiters_) v.identity(w);
  }

 private:
  int fenced() const { return static_cast<int>(inst_.units.size()); }

  const SimInst& inst_;
  int arrived_ = 0;
  Picos latest_arrival_ = 0;
  bool latest_is_queue_ = false;  // the last to arrive was a DMA queue draining
  Picos release_time_ = 0;
  bool released_by_dma_ = false;
  uint64_t generation_ = 0;  // dynamic instances released so far
  std::vector<Waker*> waiters_;
};

}  // namespace tandem
