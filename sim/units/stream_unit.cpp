#include "sim/units/stream_unit.h"

#include <algorithm>
#include <stdexcept>

#include "sched/support/error.h"
#include "sim/units/core_barrier.h"
#include "sim/units/observer.h"
#include "sim/units/semaphore.h"

namespace tandem {

namespace {
constexpr Picos kNever = std::numeric_limits<Picos>::max();
}

StreamUnit::StreamUnit(sc_core::sc_module_name name, SimContext& ctx, int index)
    : Waker(ctx.ready),
      sc_module(name),
      ctx_(ctx),
      index_(index),
      loop_counts_(ctx.program.kernel->loops.size(), 0),
      loop_ivs_(ctx.program.kernel->loops.size(), 0) {
  flatten(ctx.program.walks[static_cast<size_t>(index)]);
  record_.bind(index_, loop_counts_.data(), loop_ivs_.data());
  pc_ = walk_.data();
  walk_end_ = walk_.data() + walk_.size();
  SC_METHOD(activated);
  sensitive << wake_event_;
}

void StreamUnit::flatten(const std::vector<WalkNode>& nodes) {
  for (const WalkNode& n : nodes) {
    if (!n.is_loop) {
      const SimInst& inst = ctx_.program.insts[static_cast<size_t>(n.id)];
      walk_.push_back({inst.is_barrier ? WalkStep::Barrier : WalkStep::Inst, n.id, &inst, 0, n.future_seq_base});
      continue;
    }
    const Loop& l = ctx_.program.kernel->loops[static_cast<size_t>(n.id)];
    walk_loops_.push_back(n.id);
    const size_t begin = walk_.size();
    walk_.push_back({WalkStep::LoopBegin, n.id, nullptr, 0, 0, l.lo, l.hi});
    flatten(n.children);
    walk_.push_back({WalkStep::LoopEnd, n.id, nullptr, begin, 0, l.lo, l.hi});
    walk_[begin].jump = walk_.size();
  }
}

void StreamUnit::activated() {
  if (in_systemc_) {
    in_systemc_ = false;
    --ctx_.units_in_systemc;
  }
  resume();
  ctx_.ready.run();  // the units this one handed off to, and theirs
}

void StreamUnit::finish() {
  state_ = State::Done;
  // Nothing this unit's instructions would read can matter any more: close their input
  // channels, in channel order (a close wakes a producer waiting for room). Found through the
  // unit's own instructions, never a look at every channel per unit (quadratic in the
  // program).
  std::vector<int> inputs;
  for (const WalkStep& s : walk_)
    if (s.kind == WalkStep::Inst) inputs.insert(inputs.end(), s.inst->in_channels.begin(), s.inst->in_channels.end());
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  for (int ch : inputs) ctx_.semaphores[static_cast<size_t>(ch)]->close();
  ctx_.observer->unit_done();
}

void StreamUnit::deadlock_on_self(const SimInst& inst, const Semaphore& s) const {
  // It would wait for itself: the same deadlock the ledger reports.
  throw Error("the schedule deadlocks: " + ctx_.program.units[static_cast<size_t>(index_)].name + " at " + inst.name +
              " waits for " + ctx_.program.insts[static_cast<size_t>(s.spec().src)].name +
              ", which the same unit runs only after it");
}

void StreamUnit::fail() {
  if (!ctx_.failure) ctx_.failure = std::current_exception();
  ctx_.ready.stop();
  sc_core::sc_stop();
}

double StreamUnit::drawn_jitter(const SimInst& inst) const {
  // splitmix64 of (seed, instruction, program-order position): independent of the order
  // in which SystemC happens to run the units.
  uint64_t z = ctx_.perturb_seed * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(inst.id) * 0xBF58476D1CE4E5B9ULL ^
               static_cast<uint64_t>(inst.seq(loop_ivs_.data(), *ctx_.program.kernel));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  return 1.0 + (2.0 * u - 1.0) * ctx_.perturb_spread;
}

void StreamUnit::keys_out_of_order(const SimInst& inst) {
  throw std::logic_error("semaphore keys out of order at " + inst.name);
}

bool StreamUnit::reach(Picos t, Picos* at) {
  const Picos now = ctx_.now();
  const Picos systemc = static_cast<Picos>(sc_core::sc_time_stamp().value());
  if (t <= now && now == systemc) {
    *at = now;
    state_ = State::Running;
    return true;
  }
  // SystemC's time must reach `t`, and the DMA system's time if that runs ahead of it.
  pending_start_ = std::min(pending_start_, t);
  wake_event_.notify(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::max(t, now) - systemc)));
  wait_for_wake_event();
  return false;
}

void StreamUnit::wait_for_wake_event() {
  state_ = State::WaitingTime;
  ++ctx_.kernel_waits;
  if (!in_systemc_) {
    in_systemc_ = true;
    ++ctx_.units_in_systemc;
  }
}

void StreamUnit::wait_for_hand_off() { state_ = State::WaitingTime; }

// Steps of a barrier instance.
enum BarrierStep { kArrive, kReleased, kLastInputs, kLastPublish, kReport };

bool StreamUnit::run_barrier(const SimInst& inst, InstanceRecord& r) {
  CoreBarrier& b = *ctx_.barriers[static_cast<size_t>(inst.id)];
  if (step_ == kArrive) {
    const bool queue = ctx_.program.units[static_cast<size_t>(index_)].kind == UnitKind::DmaQueue;
    // A unit whose SystemC time ran past its own (a queue that waited for a full queue to
    // drain) arrives no earlier than that: the release never lies in SystemC's past.
    free_ = std::max(free_, ctx_.now());
    barrier_arrival_ = b.arrive(free_, queue);
    if (barrier_arrival_.last) {
      barrier_record_ = r;
      barrier_record_.unit = -1;
      step_ = kLastInputs;
    } else {
      state_ = State::WaitingBarrier;
      blocked_barrier_ = inst.id;
      b.add_waiter(this);
      step_ = kReleased;
    }
  }
  if (step_ == kReleased) {
    if (!b.released(barrier_arrival_)) return false;
    state_ = State::Running;
    step_ = kReport;
  }
  if (step_ == kLastInputs) {
    if (!wait_inputs(inst, barrier_record_)) return false;
    InstanceRecord& br = barrier_record_;
    br.free = b.latest_arrival();
    release_ = b.release(ready_, br.waited_on_dma);
    br.start = br.busy_start = br.busy_end = br.complete = release_;
    ctx_.observer->record(br);
    step_ = kLastPublish;
  }
  if (step_ == kLastPublish) {
    if (!publish_outputs(inst, release_, release_, release_)) return false;
    step_ = kReport;
  }
  report_barrier_wait(r, free_, b.release_time(), b.released_by_dma());
  free_ = std::max(free_, b.release_time());
  return true;
}

void StreamUnit::report_barrier_wait(const InstanceRecord& r, Picos from, Picos to, bool released_by_dma) {
  ctx_.observer->barrier_wait(r, to - from, released_by_dma);
}

void StreamUnit::visit_state(StateVisitor& v) {
  if (in_systemc_) return v.refuse();  // a notification SystemC holds cannot be moved
  v.exact(static_cast<int64_t>(phase_));
  v.exact(static_cast<int64_t>(state_));
  v.exact(step_);
  v.exact(pc_ - walk_.data());
  v.exact(current_inst_ ? current_inst_->id : -1);
  v.time(free_);
  v.time(pending_start_);
  for (LoopId l : walk_loops_) {
    v.count(loop_counts_[static_cast<size_t>(l)]);
    v.count(loop_ivs_[static_cast<size_t>(l)]);
  }
  v.time(ready_);
  v.exact(static_cast<int64_t>(input_next_));
  v.exact(static_cast<int64_t>(publish_next_));
  v.exact(state_ == State::WaitingData || state_ == State::WaitingSpace ? blocked_on_->channel() : -1);
  v.count(blocked_key_);
  v.exact(blocked_barrier_);
  v.exact(barrier_arrival_.last);
  auto generation = static_cast<int64_t>(barrier_arrival_.generation);
  v.count(generation);
  barrier_arrival_.generation = static_cast<uint64_t>(generation);
  v.record(record_);
  v.record(barrier_record_);
  v.time(release_);
}

StreamUnit::Horizon StreamUnit::horizon() const {
  Horizon h{free_};
  switch (state_) {
    case State::Done:
      h = {kNever};
      break;
    case State::WaitingTime:
      h = {pending_start_};
      break;
    case State::WaitingData: {
      // Once the value is there the unit resumes from its own time, however far its producer
      // has moved on since (SystemC has yet to run it: the order it runs units in decides).
      const int p = blocked_on_->producer_unit();
      if (!blocked_on_->available(blocked_key_)) h = {free_, p == index_ ? -1 : p};
      break;
    }
    case State::WaitingBarrier: {
      // Released already, the unit resumes from the release (SystemC has yet to run it);
      // before that, no earlier than the other units there.
      const CoreBarrier& b = *ctx_.barriers[static_cast<size_t>(blocked_barrier_)];
      h = b.released(barrier_arrival_) ? Horizon{std::max(free_, b.release_time())}
                                       : Horizon{free_, -1, blocked_barrier_};
      break;
    }
    default:
      break;
  }
  h.accepted = pending_floor();
  return h;
}

int64_t StreamUnit::min_future_seq() const {
  if (state_ == State::Done) return std::numeric_limits<int64_t>::max();
  if (!current_inst_) return 0;
  return std::min(pending_seq(), current_inst_->seq_at(current_future_base_, loop_ivs_.data(), *ctx_.program.kernel));
}

std::string StreamUnit::describe_wait() const {
  const SimProgram& p = ctx_.program;
  std::string what =
      p.units[static_cast<size_t>(index_)].name + " at " + (current_inst_ ? current_inst_->name : std::string("start"));
  switch (state_) {
    case State::WaitingData:
      return what + " waits for " + p.insts[blocked_on_->spec().src].name;
    case State::WaitingSpace:
      return what + " waits for " + p.insts[blocked_on_->spec().dst].name + " to consume";
    case State::WaitingBarrier:
      return what + " waits at barrier " + p.insts[blocked_barrier_].name;
    default:
      return what;
  }
}

}  // namespace tandem
