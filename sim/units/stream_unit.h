// Base of the modules that run an instruction stream in order: compute engines and DMA
// queues. A unit walks its instructions through the loop nest on its own timeline (its
// local time runs ahead of SystemC's) and meets the SystemC kernel only to wait for a
// semaphore value another unit has not produced yet, for space in a full semaphore, at a
// CoreBarrier, or to reach the simulated time at which it needs a shared resource.
#pragma once

#include <limits>
#include <vector>

#include <systemc>

#include "sim/units/core_barrier.h"
#include "sim/units/instance_record.h"
#include "sim/units/sim_context.h"

namespace tandem {

class StreamUnit : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(StreamUnit);
  StreamUnit(sc_core::sc_module_name name, SimContext& ctx, int index);

  // What bounds the start of every record this unit will still produce: its own `floor`,
  // raised to the bound of the unit it waits for (`waits_on`), or to the smallest bound of
  // the other units at the barrier it waits at (`barrier`); and, apart, the work it has
  // accepted and not yet recorded (`accepted`: a DMA queue's transfers still moving), which
  // no wait of its stream holds up. Ledger::watermark() solves them.
  struct Horizon {
    Picos floor;
    int waits_on = -1;
    InstId barrier = kNoId;
    Picos accepted = std::numeric_limits<Picos>::max();
  };
  Horizon horizon() const;
  bool done() const { return state_ == State::Done; }
  // Every instance this unit has not recorded yet comes at or after this in program order.
  int64_t min_future_seq() const;
  // What the unit is waiting for, for deadlock reports.
  std::string describe_wait() const;

 protected:
  enum class State { Running, WaitingData, WaitingSpace, WaitingTime, WaitingBarrier, Done };

  // Runs one instance; `r` comes with inst, unit, free and loop pointers filled in.
  virtual void execute(const SimInst& inst, InstanceRecord& r) = 0;

  // Latest completion among the instance's inputs (waiting for any not yet produced), and
  // which input it was.
  Picos wait_inputs(const SimInst& inst, InstanceRecord& r);
  // Publishes on every output channel whose key this instance closes: for Ordered edges
  // its `start` (an order without data: the destination starts after the source started),
  // for Anti edges `read_done` (the unit has consumed its inputs), else `complete`; waits while
  // a channel is full. `which`: all channels, only the Ordered ones (a DMA queue publishes
  // them at issue) or only the others.
  enum class Publish { All, Ordered, Data };
  void publish_outputs(const SimInst& inst, Picos start, Picos read_done, Picos complete,
                       Publish which = Publish::All);
  // The same without waiting, for a caller that cannot (a DMA queue's data phase, a method
  // process) and for an instance at the iteration vector `counts`/`ivs` (the data phase
  // publishes after its issue has moved on): publishes from the `next`th channel of the `which`
  // set on and returns the first semaphore without space (its producer marked waiting, `next`
  // at it), or null once all are published.
  Semaphore* try_publish(const SimInst& inst, Picos start, Picos read_done, Picos complete, const int64_t* counts,
                         const int64_t* ivs, Publish which, size_t& next);
  // The factor this instance's durations are scaled by: 1, or a jitter drawn from the
  // perturbation seed, the instruction and its place in program order.
  double jitter(const SimInst& inst) const;
  // Semaphore when the binding input came from another unit, Dependency otherwise.
  StallReason input_stall_reason(const InstanceRecord& r) const;
  // In a catch block: keeps the first failure for simulate() to rethrow and stops the run.
  void fail();
  // Advances SystemC time to `t` and returns it; or returns SystemC's time if that is later.
  // It is only when a full semaphore held the unit (WaitingSpace): the window is the
  // simulator's bound on how far a unit runs ahead, not the hardware's, but a shared resource
  // is used in SystemC time, so the unit uses it late.
  Picos wait_until(Picos t);
  // Waits in simulated time for a shared resource to signal `e`.
  void wait_for_event(sc_core::sc_event& e);
  void run_barrier(const SimInst& inst, InstanceRecord& r);
  // Reports that the unit waited at a barrier from `from` to `to` (Ledger::barrier_wait).
  virtual void report_barrier_wait(const InstanceRecord& r, Picos from, Picos to, bool released_by_dma);
  // Work the unit has accepted but not yet recorded (a DMA queue's transfers still moving):
  // the earliest start among it, its earliest program-order position, and whether a value
  // the unit produces itself may still come (then waiting for it is no deadlock).
  virtual Picos pending_floor() const { return std::numeric_limits<Picos>::max(); }
  virtual int64_t pending_seq() const { return std::numeric_limits<int64_t>::max(); }
  virtual bool producing() const { return false; }
  // Called once the stream has been walked: returns when the accepted work is recorded.
  virtual void drain() {}

  SimContext& ctx_;
  const int index_;
  Picos free_ = 0;  // the unit's local time: when it can start its next instruction
  Picos pending_start_ = std::numeric_limits<Picos>::max();  // start of the record in flight
  std::vector<int64_t> loop_counts_;  // per LoopId: iterations started so far
  std::vector<int64_t> loop_ivs_;     // per LoopId: the current induction variable
  int64_t current_future_base_ = 0;   // the current walk node's future_seq_base

 private:
  void thread();
  void walk(const std::vector<WalkNode>& nodes);

  State state_ = State::Running;
  const Semaphore* blocked_on_ = nullptr;
  int64_t blocked_key_ = 0;  // the key of blocked_on_ a WaitingData unit needs
  int blocked_barrier_ = -1;
  CoreBarrier::Arrival barrier_arrival_;  // at blocked_barrier_
  InstId current_ = kNoId;
};

}  // namespace tandem
