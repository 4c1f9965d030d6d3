// Base of the modules that run an instruction stream in order: compute engines and DMA
// queues. A unit walks its instructions through the loop nest on its own timeline (its
// local time runs ahead of SystemC's). It is a state machine, not a thread: where it must
// wait it saves its place and returns. A wait for a value another unit has not produced yet,
// for space in a full semaphore, at a CoreBarrier or for its own transfers ends by direct
// hand-off (sim/units/hand_off.h); only a wait for the simulated time at which the unit needs a
// shared resource (a conflict port, a collective's DMA) goes through the SystemC kernel, as a
// notification of the unit's method.
#pragma once

#include <limits>
#include <vector>

#include <systemc>

#include "sim/units/channel_ports.h"
#include "sim/units/core_barrier.h"
#include "sim/units/hand_off.h"
#include "sim/units/instance_record.h"
#include "sim/units/semaphore.h"
#include "sim/units/sim_context.h"
#include "sim/units/unit_bounds.h"
#include "sim/units/unit_state.h"

namespace tandem {

class StreamUnit : public Waker,
                   public sc_core::sc_module {  // Waker first: a hand-off calls resume() with no this-adjusting thunk
 public:
  SC_HAS_PROCESS(StreamUnit);
  StreamUnit(sc_core::sc_module_name name, SimContext& ctx, int index);

  using Horizon = UnitHorizon;
  Horizon horizon() const;
  bool done() const { return state_ == State::Done; }
  // Every instance this unit has not recorded yet comes at or after this in program order.
  int64_t min_future_seq() const;
  // What the unit is waiting for, for deadlock reports.
  std::string describe_wait() const;
  // Lists the unit's state (sim/units/unit_state.h); a visitor that shifts it writes it back.
  virtual void visit_state(StateVisitor& v);
  // The loops the unit's stream enters, and where each one's induction variable is now.
  const std::vector<LoopId>& walk_loops() const { return walk_loops_; }
  int64_t iv(LoopId l) const { return loop_ivs_[static_cast<size_t>(l)]; }
  int64_t started(LoopId l) const { return loop_counts_[static_cast<size_t>(l)]; }

 protected:
  enum class State { Running, WaitingData, WaitingSpace, WaitingTime, WaitingBarrier, Done };

  // Goes on with the stream until it must wait or is done: each unit's resume() (the Waker's
  // hand-off) is resume_stream<itself>(). The unit's type is a template argument so that the
  // walk calls its execute() directly, inline, not through the vtable: no call and frame per
  // instance.
  //
  // Each unit defines `bool execute(const SimInst& inst, InstanceRecord& r)`: runs one
  // instance, from where it last waited (step_, 0 at the instance's start); `r` comes with
  // inst, unit, free and loop pointers filled in. False: it waits (a waker or a notification of
  // wake_event_ is registered) and is called again with the same `r`.
  template <class Unit>
  void resume_stream();

  // Reads the instance's inputs from where it last waited: true once all are there, with
  // ready_ the latest completion among them and `r` naming which input it was.
  bool wait_inputs(const SimInst& inst, InstanceRecord& r);
  // Publishes on every output channel whose key this instance closes: for Ordered edges
  // its `start` (an order without data: the destination starts after the source started),
  // for Anti edges `read_done` (the unit has consumed its inputs), else `complete`; waits while
  // a channel is full (false: called again with the same times goes on from there). `which`:
  // all channels, only the Ordered ones (a DMA queue publishes them at issue) or only the others.
  enum class Publish { All = ChannelPorts::Out, Ordered = ChannelPorts::OutOrdered, Data = ChannelPorts::OutData };
  bool publish_outputs(const SimInst& inst, Picos start, Picos read_done, Picos complete, Publish which = Publish::All);
  // The same for an instance at the iteration vector `counts`/`ivs` (a DMA queue's data phase
  // publishes after its issue has moved on): publishes from the `next`th channel of the `which`
  // set on and returns the first semaphore without space (`waiter` registered there, `next` at
  // it), or null once all are published.
  Semaphore* try_publish(const SimInst& inst, Picos start, Picos read_done, Picos complete, const int64_t* counts,
                         const int64_t* ivs, Publish which, size_t& next, Waker* waiter);
  // The factor this instance's durations are scaled by: 1, or a jitter drawn from the
  // perturbation seed, the instruction and its place in program order.
  double jitter(const SimInst& inst) const { return ctx_.perturb_seed == 0 ? 1.0 : drawn_jitter(inst); }
  // Semaphore when the binding input came from another unit, Dependency otherwise.
  StallReason input_stall_reason(const InstanceRecord& r) const {
    if (r.binding_channel < 0) return StallReason::Semaphore;
    return ctx_.program.channels[static_cast<size_t>(r.binding_channel)].cross_unit ? StallReason::Semaphore
                                                                                    : StallReason::Dependency;
  }
  // In a catch block: keeps the first failure for simulate() to rethrow and stops the run.
  void fail();
  // True once SystemC's time has reached `t` and the time now (SimContext::now: the DMA system's
  // while it runs ahead), with `*at` = that time (later than `t` only when a full semaphore held
  // the unit: the window is the simulator's bound on how far a unit runs ahead, not the
  // hardware's, but a shared resource is used in SystemC time, so the unit uses it late).
  // False: the unit's method is notified for the later of the two.
  bool reach(Picos t, Picos* at);
  // Waits for a shared resource to notify wake_event_ (a conflict port's grant).
  void wait_for_wake_event();
  // Waits for a hand-off (this unit's own wake()) that a shared resource makes.
  void wait_for_hand_off();
  bool run_barrier(const SimInst& inst, InstanceRecord& r);
  // Reports that the unit waited at a barrier from `from` to `to` (Ledger::barrier_wait).
  virtual void report_barrier_wait(const InstanceRecord& r, Picos from, Picos to, bool released_by_dma);
  // Work the unit has accepted but not yet recorded (a DMA queue's transfers still moving):
  // the earliest start among it, its earliest program-order position, and whether a value
  // the unit produces itself may still come (then waiting for it is no deadlock).
  virtual Picos pending_floor() const { return std::numeric_limits<Picos>::max(); }
  virtual int64_t pending_seq() const { return std::numeric_limits<int64_t>::max(); }
  virtual bool producing() const { return false; }
  // Called once the stream has been walked: true when the accepted work is recorded.
  virtual bool drain() { return true; }

  SimContext& ctx_;
  const int index_;
  Picos free_ = 0;  // the unit's local time: when it can start its next instruction
  Picos pending_start_ = std::numeric_limits<Picos>::max();  // start of the record in flight
  std::vector<int64_t> loop_counts_;                         // per LoopId: iterations started so far
  std::vector<int64_t> loop_ivs_;                            // per LoopId: the current induction variable
  int64_t current_future_base_ = 0;                          // the current walk node's future_seq_base
  int step_ = 0;                                             // where execute() goes on: each unit's own steps, 0 first
  Picos ready_ = 0;                                          // wait_inputs: the latest input so far
  sc_core::sc_event wake_event_;                             // a wait in simulated time ends (the unit's method runs)
  bool in_systemc_ = false;  // wake_event_ is to come (counted in SimContext::units_in_systemc)
  State state_ = State::Running;

 private:
  // One step of the walk, the loop nest flattened: an instruction (a barrier apart), or a loop's
  // start or end (`jump`: a start's end + 1, an end's start; `lo`, `hi`: the loop's bounds).
  // An instruction's step carries its SimInst, so run() needs no load chain through the program.
  struct WalkStep {
    enum Kind : uint8_t { Inst, Barrier, LoopBegin, LoopEnd } kind;
    int32_t id;                     // InstId or LoopId
    const SimInst* inst = nullptr;  // Inst and Barrier
    size_t jump = 0;
    int64_t future_seq_base = 0;
    int64_t lo = 0, hi = 0;
  };
  void flatten(const std::vector<WalkNode>& nodes);
  // SystemC runs the method at the start and at each notification of wake_event_.
  void activated();
  template <class Unit>
  void run();
  // Moves to the walk's next instruction (current_inst_), entering and leaving loops;
  // its step, or null at the end.
  [[gnu::always_inline]] inline const WalkStep* next_instruction();
  void finish();
  double drawn_jitter(const SimInst& inst) const;  // jitter() with a perturbation seed
  // The failures of wait_inputs and try_publish, out of their loops.
  [[noreturn, gnu::cold, gnu::noinline]] void deadlock_on_self(const SimInst& inst, const Semaphore& s) const;
  [[noreturn, gnu::cold, gnu::noinline]] static void keys_out_of_order(const SimInst& inst);

  // Instance and Barrier: an instruction in flight (current_inst_), by its kind.
  enum class Phase : uint8_t { Next, Instance, Barrier, Drain, Finished };
  Phase phase_ = Phase::Next;
  std::vector<WalkStep> walk_;
  std::vector<LoopId> walk_loops_;      // the loops of walk_, each once
  const WalkStep* pc_ = nullptr;        // the walk step after current_inst_'s (walk_ is not resized once built)
  const WalkStep* walk_end_ = nullptr;  // walk_'s end
  InstanceRecord record_;               // the instance in flight
  InstanceRecord barrier_record_;       // a barrier's own record, made by its last arrival
  size_t input_next_ = 0;               // wait_inputs goes on at this input
  size_t publish_next_ = 0;             // publish_outputs goes on at this output
  Picos release_ = 0;                   // the barrier release the last arrival publishes
  Semaphore* blocked_on_ = nullptr;     // WaitingData: its consumer_waiter_ is this unit
  int64_t blocked_key_ = 0;             // the key of blocked_on_ a WaitingData unit needs
  int blocked_barrier_ = -1;
  CoreBarrier::Arrival barrier_arrival_;   // at blocked_barrier_
  const SimInst* current_inst_ = nullptr;  // the instruction in flight or run last (null before the first)
};

// The channel walks of every instance (wait_inputs, and try_publish with publish_outputs), inline
// in the units' execute() and the DMA queue's data phase, so that no instance pays their call
// frames (six saved registers each).
[[gnu::always_inline]] inline bool StreamUnit::wait_inputs(const SimInst& inst, InstanceRecord& r) {
  uint32_t n = 0;
  const ChannelPort* ports = ctx_.channel_ports.begin(inst.id, ChannelPorts::In, &n);
  Picos ready = ready_;
  // input_next_ in a register: written back where the loop waits.
  size_t i = input_next_;
  // An input's value: the latest so far binds the start.
  const auto take = [&](const ChannelPort& c, Picos v) {
    if (v > ready) {
      ready = v;
      r.binding_channel = c.channel;
      r.binding_signal = v;
      r.waited_on_dma = c.src_dma;
    }
  };
  if (state_ == State::WaitingData) {
    // Resumed from a wait: the unit is registered at the one semaphore it waited on (input
    // i), nowhere else; that input's key is known and needed (the iteration has not moved).
    Semaphore& s = *blocked_on_;
    s.consumer_waiter_ = nullptr;
    state_ = State::Running;
    s.release_below(blocked_key_);  // more may be produced since
    if (s.available(blocked_key_)) take(ports[i++], s.value(blocked_key_));
  }
  const int64_t* counts = loop_counts_.data();
  const int64_t* ivs = loop_ivs_.data();
  for (; i < n; ++i) {
    const ChannelPort& c = ports[i];
    Semaphore& s = *c.sem;
    bool needed = true;
    int64_t key = 0;
    if (c.general) {
      key = channel_needed_key(s.spec(), *ctx_.program.kernel, counts, ivs, &needed);
      s.release_below(key);  // per tile: keys count the source's instances in every case
    } else if (c.key_loop != kNoId) {
      key = loop_key_needed(c.key_loop, c.key_lo, c.distance, counts, ivs, &needed);
      s.release_below(key);
    }
    if (!needed) continue;
    if (!s.available(key)) {
      if (s.producer_unit() == index_ && !producing()) deadlock_on_self(inst, s);
      ready_ = ready;
      input_next_ = i;
      state_ = State::WaitingData;
      blocked_on_ = &s;
      blocked_key_ = key;
      s.consumer_waiter_ = this;
      return false;
    }
    take(c, s.value(key));
  }
  ready_ = ready;
  input_next_ = n;
  return true;
}

[[gnu::always_inline]] inline Semaphore* StreamUnit::try_publish(const SimInst& inst, Picos start, Picos read_done,
                                                                 Picos complete, const int64_t* counts,
                                                                 const int64_t* ivs, Publish which, size_t& next,
                                                                 Waker* waiter) {
  uint32_t n = 0;
  const ChannelPort* ports = ctx_.channel_ports.begin(inst.id, static_cast<ChannelPorts::Set>(which), &n);
  const Picos values[] = {start, read_done, complete};  // by ChannelPort::value
  for (size_t i = next; i < n; ++i) {
    const ChannelPort& c = ports[i];
    Semaphore& s = *c.sem;
    int64_t key = 0;
    if (c.general) {
      bool produce = false;
      key = channel_produced_key(s.spec(), *ctx_.program.kernel, counts, ivs, &produce);
      if (!produce) continue;
    } else if (c.key_loop != kNoId) {  // channel_produced_key's common case, inline
      key = counts[c.key_loop] - 1;
    }
    if (key != s.next_key()) keys_out_of_order(inst);
    if (!s.has_space()) {
      next = i;
      s.producer_waiter_ = waiter;
      return &s;
    }
    s.producer_waiter_ = nullptr;
    s.publish(values[c.value]);
  }
  next = n;
  return nullptr;
}

[[gnu::always_inline]] inline bool StreamUnit::publish_outputs(const SimInst& inst, Picos start, Picos read_done,
                                                               Picos complete, Publish which) {
  // Many sets are empty (most DMA queues' Ordered outputs): skip the walk then. Checked here,
  // before try_publish sets its walk up, though that looks the set up again: the check must
  // stay out of try_publish, where it costs more.
  uint32_t n = 0;
  ctx_.channel_ports.begin(inst.id, static_cast<ChannelPorts::Set>(which), &n);
  if (publish_next_ < n) {
    if (Semaphore* full = try_publish(inst, start, read_done, complete, loop_counts_.data(), loop_ivs_.data(), which,
                                      publish_next_, this)) {
      state_ = State::WaitingSpace;
      blocked_on_ = full;
      return false;
    }
  }
  publish_next_ = 0;
  state_ = State::Running;
  return true;
}

template <class Unit>
void StreamUnit::resume_stream() {
  if (in_systemc_) return;  // it waits for SystemC's notification, not for a hand-off
  try {
    run<Unit>();
  } catch (...) {
    fail();
  }
}

template <class Unit>
void StreamUnit::run() {
  for (;;) {
    switch (phase_) {
      case Phase::Next:
      next : {  // an instance done: straight here, not through the switch again
        const WalkStep* step = next_instruction();
        if (!step) {
          phase_ = Phase::Drain;
          break;
        }
        record_.begin(step->id, free_);
        step_ = 0;
        ready_ = 0;
        input_next_ = 0;
        publish_next_ = 0;
        if (step->kind == WalkStep::Barrier) {
          phase_ = Phase::Barrier;
          goto barrier;
        }
        phase_ = Phase::Instance;
        [[fallthrough]];
      }
      case Phase::Instance:
        if (!static_cast<Unit*>(this)->execute(*current_inst_, record_)) return;
        phase_ = Phase::Next;
        goto next;
      case Phase::Barrier:
      barrier:
        if (!run_barrier(*current_inst_, record_)) return;
        phase_ = Phase::Next;
        goto next;
      case Phase::Drain:
        if (!drain()) return;
        phase_ = Phase::Finished;
        finish();
        return;
      case Phase::Finished:
        return;
    }
  }
}

inline const StreamUnit::WalkStep* StreamUnit::next_instruction() {
  // Locals: the stores to the loop counters may alias the unit's fields as far as the
  // compiler knows, which would reload them at every step.
  const WalkStep* const walk = walk_.data();
  const WalkStep* const end = walk_end_;
  int64_t* counts = loop_counts_.data();
  int64_t* ivs = loop_ivs_.data();
  const WalkStep* s = pc_;
  while (s < end) {
    if (s->kind <= WalkStep::Barrier) {
      current_inst_ = s->inst;
      current_future_base_ = s->future_seq_base;
      pc_ = s + 1;
      return s;
    }
    const auto l = static_cast<size_t>(s->id);
    if (s->kind == WalkStep::LoopEnd) {
      // After its last iteration a loop's induction variable stays at its last value.
      if (ivs[l] + 1 < s->hi) {
        ++ivs[l];
        ++counts[l];
        s = walk + s->jump + 1;
      } else {
        ++s;
      }
    } else if (s->lo >= s->hi) {
      s = walk + s->jump;
    } else {
      ivs[l] = s->lo;
      ++counts[l];
      ++s;
    }
  }
  pc_ = end;
  return nullptr;
}

}  // namespace tandem
