#include "sim/units/stream_unit.h"

#include <algorithm>
#include <stdexcept>

#include "sched/support/error.h"
#include "sim/units/core_barrier.h"
#include "sim/units/observer.h"

namespace tandem {

namespace {
constexpr Picos kNever = std::numeric_limits<Picos>::max();
}

StreamUnit::StreamUnit(sc_core::sc_module_name name, SimContext& ctx, int index)
    : sc_module(name),
      ctx_(ctx),
      index_(index),
      loop_counts_(ctx.program.kernel->loops.size(), 0),
      loop_ivs_(ctx.program.kernel->loops.size(), 0) {
  SC_THREAD(thread);
}

void StreamUnit::thread() {
  try {
    walk(ctx_.program.walks[static_cast<size_t>(index_)]);
    drain();
  } catch (const sc_core::sc_unwind_exception&) {
    throw;  // SystemC's own unwinding of a killed process
  } catch (...) {
    fail();
    return;
  }
  state_ = State::Done;
  // Nothing this unit's instructions would read can matter any more.
  for (auto& s : ctx_.semaphores) {
    const SimInst& dst = ctx_.program.insts[s->spec().dst];
    if (!dst.is_barrier && dst.units[0] == index_) s->close();
  }
  ctx_.observer->unit_done();
}

void StreamUnit::walk(const std::vector<WalkNode>& nodes) {
  const Kernel& k = *ctx_.program.kernel;
  for (const WalkNode& n : nodes) {
    if (n.is_loop) {
      const Loop& l = k.loops[n.id];
      for (int64_t iv = l.lo; iv < l.hi; ++iv) {
        loop_ivs_[n.id] = iv;
        ++loop_counts_[n.id];
        walk(n.children);
      }
      continue;
    }
    const SimInst& inst = ctx_.program.insts[n.id];
    current_ = n.id;
    current_future_base_ = n.future_seq_base;
    InstanceRecord r;
    r.inst = n.id;
    r.unit = index_;
    r.free = free_;
    r.loop_counts = loop_counts_.data();
    r.loop_ivs = loop_ivs_.data();
    if (inst.is_barrier)
      run_barrier(inst, r);
    else
      execute(inst, r);
  }
}

Picos StreamUnit::wait_inputs(const SimInst& inst, InstanceRecord& r) {
  Picos ready = 0;
  for (int ch : inst.in_channels) {
    Semaphore& s = *ctx_.semaphores[static_cast<size_t>(ch)];
    bool needed = false;
    const int64_t key =
        channel_needed_key(s.spec(), *ctx_.program.kernel, loop_counts_.data(), loop_ivs_.data(), &needed);
    if (s.spec().key_loop != kNoId || !s.spec().tile_key.empty()) s.release_below(key);
    if (!needed) continue;
    while (!s.available(key)) {
      if (s.producer_unit() == index_ && !producing())  // it would wait for itself: the same deadlock the ledger reports
        throw Error("the schedule deadlocks: " + ctx_.program.units[static_cast<size_t>(index_)].name + " at " +
                    inst.name + " waits for " + ctx_.program.insts[static_cast<size_t>(s.spec().src)].name +
                    ", which the same unit runs only after it");
      state_ = State::WaitingData;
      blocked_on_ = &s;
      blocked_key_ = key;
      s.consumer_waiting_ = true;
      ++ctx_.kernel_waits;
      wait(s.data_event);
    }
    s.consumer_waiting_ = false;
    state_ = State::Running;
    const Picos v = s.value(key);
    if (v > ready) {
      ready = v;
      r.binding_channel = ch;
      r.binding_signal = v;
    }
  }
  if (r.binding_channel >= 0) r.waited_on_dma = ctx_.program.channels[static_cast<size_t>(r.binding_channel)].src_dma;
  return ready;
}

void StreamUnit::fail() {
  if (!ctx_.failure) ctx_.failure = std::current_exception();
  sc_core::sc_stop();
}

double StreamUnit::jitter(const SimInst& inst) const {
  if (ctx_.perturb_seed == 0) return 1.0;
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

StallReason StreamUnit::input_stall_reason(const InstanceRecord& r) const {
  if (r.binding_channel < 0) return StallReason::Semaphore;
  return ctx_.program.channels[static_cast<size_t>(r.binding_channel)].cross_unit ? StallReason::Semaphore
                                                                                  : StallReason::Dependency;
}

void StreamUnit::publish_outputs(const SimInst& inst, Picos start, Picos read_done, Picos complete, Publish which) {
  size_t next = 0;
  while (Semaphore* full =
             try_publish(inst, start, read_done, complete, loop_counts_.data(), loop_ivs_.data(), which, next)) {
    state_ = State::WaitingSpace;
    blocked_on_ = full;
    ++ctx_.kernel_waits;
    wait(full->space_event);
  }
  state_ = State::Running;
}

Semaphore* StreamUnit::try_publish(const SimInst& inst, Picos start, Picos read_done, Picos complete,
                                   const int64_t* counts, const int64_t* ivs, Publish which, size_t& next) {
  const std::vector<int>& channels = which == Publish::All       ? inst.out_channels
                                     : which == Publish::Ordered ? inst.ordered_out_channels
                                                                 : inst.data_out_channels;
  for (; next < channels.size(); ++next) {
    Semaphore& s = *ctx_.semaphores[static_cast<size_t>(channels[next])];
    bool produce = false;
    const int64_t key = channel_produced_key(s.spec(), *ctx_.program.kernel, counts, ivs, &produce);
    if (!produce) continue;
    if (key != s.next_key()) throw std::logic_error("semaphore keys out of order at " + inst.name);
    if (!s.has_space()) {
      s.producer_waiting_ = true;
      return &s;
    }
    s.producer_waiting_ = false;
    const DepKind kind = s.spec().kind;
    s.publish(kind == DepKind::Ordered ? start : kind == DepKind::Anti ? read_done : complete);
  }
  return nullptr;
}

Picos StreamUnit::wait_until(Picos t) {
  const Picos now = static_cast<Picos>(sc_core::sc_time_stamp().value());
  if (t <= now) return now;
  state_ = State::WaitingTime;
  pending_start_ = std::min(pending_start_, t);
  ++ctx_.kernel_waits;
  wait(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(t - now)));
  state_ = State::Running;
  return t;
}

void StreamUnit::wait_for_event(sc_core::sc_event& e) {
  state_ = State::WaitingTime;
  ++ctx_.kernel_waits;
  wait(e);
  state_ = State::Running;
}

void StreamUnit::run_barrier(const SimInst& inst, InstanceRecord& r) {
  CoreBarrier& b = *ctx_.barriers[static_cast<size_t>(inst.id)];
  const bool queue = ctx_.program.units[static_cast<size_t>(index_)].kind == UnitKind::DmaQueue;
  // A unit whose SystemC time ran past its own (a queue that waited for a full queue to
  // drain) arrives no earlier than that: the release never lies in SystemC's past.
  free_ = std::max(free_, static_cast<Picos>(sc_core::sc_time_stamp().value()));
  const CoreBarrier::Arrival arrival = b.arrive(free_, queue);
  if (!arrival.last) {
    state_ = State::WaitingBarrier;
    blocked_barrier_ = inst.id;
    barrier_arrival_ = arrival;
    ++ctx_.kernel_waits;
    b.wait_release(arrival);
    state_ = State::Running;
  } else {
    InstanceRecord br = r;
    br.unit = -1;
    const Picos ready = wait_inputs(inst, br);
    br.free = b.latest_arrival();
    const Picos release = b.release(ready, br.waited_on_dma);
    br.start = br.busy_start = br.busy_end = br.complete = release;
    ctx_.observer->record(br);
    publish_outputs(inst, release, release, release);
  }
  report_barrier_wait(r, free_, b.release_time(), b.released_by_dma());
  free_ = std::max(free_, b.release_time());
}

void StreamUnit::report_barrier_wait(const InstanceRecord& r, Picos from, Picos to, bool released_by_dma) {
  ctx_.observer->barrier_wait(r, to - from, released_by_dma);
}

StreamUnit::Horizon StreamUnit::horizon() const {
  Horizon h{free_};
  switch (state_) {
    case State::Done: h = {kNever}; break;
    case State::WaitingTime: h = {pending_start_}; break;
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
    default: break;
  }
  h.accepted = pending_floor();
  return h;
}

int64_t StreamUnit::min_future_seq() const {
  if (state_ == State::Done) return std::numeric_limits<int64_t>::max();
  if (current_ == kNoId) return 0;
  return std::min(pending_seq(), ctx_.program.insts[static_cast<size_t>(current_)].seq_at(
                                     current_future_base_, loop_ivs_.data(), *ctx_.program.kernel));
}

std::string StreamUnit::describe_wait() const {
  const SimProgram& p = ctx_.program;
  std::string what = p.units[static_cast<size_t>(index_)].name + " at " +
                     (current_ == kNoId ? std::string("start") : p.insts[current_].name);
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
