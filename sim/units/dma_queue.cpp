#include "sim/units/dma_queue.h"

#include <algorithm>

#include "sim/units/dma_system.h"
#include "sim/units/observer.h"

namespace tandem {

DmaQueue::DmaQueue(sc_core::sc_module_name name, SimContext& ctx, int index)
    : StreamUnit(name, ctx, index),
      data_phase_(ctx.ready, *this),
      spread_counts_(loop_counts_.size()),
      spread_ivs_(loop_ivs_.size()) {}

void DmaQueue::resume() { resume_stream<DmaQueue>(); }

void DmaQueue::keep(const SimInst& inst, NestValues& at) const {
  for (const LoopId l : inst.nest) at.counts.push_back(loop_counts_[l]), at.ivs.push_back(loop_ivs_[l]);
}

void DmaQueue::spread(const SimInst& inst, const NestValues& at) {
  for (size_t i = 0; i < inst.nest.size(); ++i)
    spread_counts_[inst.nest[i]] = at.counts[i], spread_ivs_[inst.nest[i]] = at.ivs[i];
}

bool DmaQueue::execute(const SimInst& inst, InstanceRecord& r) {
  if (step_ == kInputs) {
    if (!wait_inputs(inst, r)) return false;
    issue_ = std::max(free_, ready_);
    input_reason_ = input_stall_reason(r);
    // The waits go into the slot's copy of the record, not into `r` first: a copy of `r` just
    // after an 8-byte store into it stalled on store forwarding (a third of execute's time).
    input_wait_ = ready_ > free_ ? ready_ - free_ : 0;
    room_wait_ = 0;
    // The queue is full: the issue waits for the oldest transfer to land.
    if (issued_ >= kDepth) pending_start_ = issue_;
    step_ = issued_ >= kDepth ? kRoom : kIssue;
  }
  if (step_ == kRoom) {
    if (issued_ >= kDepth) {
      issue_waiting_ = true;
      wait_for_hand_off();
      return false;
    }
    issue_waiting_ = false;
    state_ = State::Running;
    const Picos now = ctx_.now();
    if (now > issue_) room_wait_ = now - issue_;
    issue_ = std::max(issue_, now);
    pending_start_ = std::numeric_limits<Picos>::max();
    step_ = kIssue;
  }
  if (step_ == kIssue) {
    const double f = jitter(inst);
    if (slots_.empty()) {
      slots_.resize(kDepth);
      for (size_t i = kDepth; i > 0; --i) spare_.push_back(static_cast<uint16_t>(i - 1));
    }
    order_[(front_ + issued_) % kDepth] = spare_.back();
    spare_.pop_back();
    Issued& t = slot(issued_);
    t.inst = &inst;
    t.r = r;
    if (t.counts.size() != loop_counts_.size()) t.counts.resize(loop_counts_.size()), t.ivs.resize(loop_ivs_.size());
    // One loop for both: a library call per array cost more than the copy.
    for (const LoopId l : inst.nest) t.counts[l] = loop_counts_[l], t.ivs[l] = loop_ivs_[l];
    t.first_byte = issue_ + static_cast<Picos>(static_cast<double>(inst.cycles_ps) * f);
    t.transfer = inst.dma;
    t.future_base = current_future_base_;
    t.input_reason = input_reason_;
    t.barrier_waits.clear();
    t.r.start = issue_;
    // `r`'s stall slots are still 0 (InstanceRecord::begin); the input reason is never Queue.
    t.r.stall[static_cast<size_t>(input_reason_)] = input_wait_;
    t.r.stall[static_cast<size_t>(StallReason::Queue)] = room_wait_;
    if (f != 1.0) t.transfer.efficiency /= f;  // a slower transfer: the same bytes at a lower rate
    step_ = kPublishOrdered;
  }
  // An order without data holds from the issue: publish it now, not when the data lands.
  if (!publish_outputs(inst, issue_, issue_, issue_, Publish::Ordered)) return false;
  free_ = slot(issued_).first_byte;  // the setup stage takes one transfer at a time
  // Nothing moving (every earlier transfer has landed): this one moves next.
  if (++issued_ == landed_ + 1) begin_next();
  return true;
}

void DmaQueue::begin_next() {
  Issued& t = slot(landed_);
  // Its first byte may wait for the previous transfer's last (the queue is busy then), and
  // never lies in SystemC's past: an issue held up by a full output semaphore (the
  // simulator's window, not the hardware) starts its data when it could be issued.
  data_start_ = std::max({t.first_byte, data_free_, ctx_.now()});
  ctx_.dma->start(t.transfer, data_start_, this);
}

void DmaQueue::landed(Picos end) {
  try {
    Issued& t = slot(landed_);
    t.r.busy_start = data_start_;
    t.r.busy_end = t.r.complete = end;
    t.r.loop_counts = t.counts.data();
    t.r.loop_ivs = t.ivs.data();
    data_free_ = end;
    // Its issue waited from `free` to `start`: for inputs first, then for room. Every
    // transfer before it has landed, so the queue's data phases in that time are known, and
    // so are those of the waits at barriers right after it.
    Picos& input = t.r.stall[static_cast<size_t>(t.input_reason)];
    Picos& room = t.r.stall[static_cast<size_t>(StallReason::Queue)];
    const Picos inputs_end = t.r.free + input;
    input -= busy_within(t.r.free, inputs_end);
    room -= busy_within(inputs_end, t.r.start);
    busy_.emplace_back(data_start_, end);
    ctx_.observer->record(t.r);
    for (const BarrierWait& w : t.barrier_waits) report(w);
    ++landed_;
    // The next transfer moves whether or not this one's outputs have room yet.
    if (landed_ < issued_) begin_next();
    retire_landed();
  } catch (...) {
    fail();
  }
}

void DmaQueue::retire_landed() {
  for (; landed_ > 0; --landed_) {
    Issued& t = front();
    if (try_publish(*t.inst, t.r.start, t.r.complete, t.r.complete, t.counts.data(), t.ivs.data(), Publish::Data,
                    data_publish_next_, &data_phase_))
      return;
    data_publish_next_ = 0;
    spare_.push_back(order_[front_]);
    front_ = (front_ + 1) % kDepth;
    --issued_;
    // Later waits start no earlier than the next transfer's (the queue's time only grows).
    const Picos oldest = issued_ == 0 ? free_ : std::min(free_, front().r.free);
    while (!busy_.empty() && busy_.front().second <= oldest) busy_.pop_front();
    if (issue_waiting_) wake();
  }
}

void DmaQueue::DataPhase::resume() {
  try {
    queue.retire_landed();
  } catch (...) {
    queue.fail();
  }
}

bool DmaQueue::drain() {
  if (issued_ > 0) {
    issue_waiting_ = true;
    wait_for_hand_off();
    return false;
  }
  issue_waiting_ = false;
  state_ = State::Running;
  return true;
}

void DmaQueue::report_barrier_wait(const InstanceRecord& r, Picos from, Picos to, bool released_by_dma) {
  if (issued_ == landed_) {  // everything issued before it has landed: `r` has the loop counters as they are
    ctx_.observer->barrier_wait(r, to - from - busy_within(from, to), released_by_dma);
    return;
  }
  BarrierWait w{r, {}, from, to, released_by_dma};
  keep(ctx_.program.insts[static_cast<size_t>(r.inst)], w.at);
  back().barrier_waits.push_back(std::move(w));
}

void DmaQueue::report(const BarrierWait& w) {
  spread(ctx_.program.insts[static_cast<size_t>(w.r.inst)], w.at);
  InstanceRecord r = w.r;
  r.loop_counts = spread_counts_.data();
  r.loop_ivs = spread_ivs_.data();
  ctx_.observer->barrier_wait(r, w.to - w.from - busy_within(w.from, w.to), w.released_by_dma);
}

Picos DmaQueue::busy_within(Picos a, Picos b) const {
  Picos t = 0;
  if (a >= b) return t;  // an empty wait (the usual one) overlaps nothing
  // The phases are disjoint and in order: none from the first starting at or after b on.
  for (const auto& [s, e] : busy_) {
    if (s >= b) break;
    t += std::max<Picos>(0, std::min(b, e) - std::max(a, s));
  }
  return t;
}

Picos DmaQueue::pending_floor() const {
  return issued_ == landed_ ? std::numeric_limits<Picos>::max() : slot(landed_).r.start;
}

int64_t DmaQueue::pending_seq() const {
  // Each transfer's seq is the least position of its run's rest in the queue's order, which
  // never decreases along the walk: the oldest unrecorded transfer's bounds the others.
  if (issued_ == landed_) return std::numeric_limits<int64_t>::max();
  const Issued& t = slot(landed_);
  return t.inst->seq_at(t.future_base, t.ivs.data(), *ctx_.program.kernel);
}

void DmaQueue::visit_state(StateVisitor& v) {
  StreamUnit::visit_state(v);
  v.exact(static_cast<int64_t>(issued_));
  v.exact(static_cast<int64_t>(landed_));
  for (size_t i = 0; i < issued_; ++i) {
    Issued& t = slot(i);
    v.exact(t.inst->id);
    v.record(t.r);
    for (const LoopId l : t.inst->nest) {
      v.count(t.counts[static_cast<size_t>(l)]);
      v.count(t.ivs[static_cast<size_t>(l)]);
    }
    v.time(t.first_byte);
    v.real(t.transfer.efficiency);
    v.exact(t.future_base);
    v.exact(static_cast<int64_t>(t.input_reason));
    v.exact(static_cast<int64_t>(t.barrier_waits.size()));
    for (BarrierWait& w : t.barrier_waits) {
      v.record(w.r);
      for (int64_t& c : w.at.counts) v.count(c);
      for (int64_t& c : w.at.ivs) v.count(c);
      v.time(w.from);
      v.time(w.to);
      v.exact(w.released_by_dma);
    }
  }
  v.time(data_start_);
  v.exact(static_cast<int64_t>(data_publish_next_));
  v.exact(static_cast<int64_t>(busy_.size()));
  for (auto& [from, to] : busy_) {
    v.time(from);
    v.time(to);
  }
  v.time(data_free_);
  v.exact(issue_waiting_);
  v.time(issue_);
  v.exact(input_wait_);
  v.exact(room_wait_);
  v.exact(static_cast<int64_t>(input_reason_));
}

}  // namespace tandem
