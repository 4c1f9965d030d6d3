#include "sim/units/dma_queue.h"

#include <algorithm>

#include "sim/units/dma_system.h"
#include "sim/units/observer.h"

namespace tandem {

DmaQueue::DmaQueue(sc_core::sc_module_name name, SimContext& ctx, int index) : StreamUnit(name, ctx, index) {
  SC_THREAD(data_thread);
}

void DmaQueue::execute(const SimInst& inst, InstanceRecord& r) {
  const Picos ready = wait_inputs(inst, r);
  Picos issue = std::max(free_, ready);
  if (ready > free_) r.stall[static_cast<size_t>(input_stall_reason(r))] = ready - free_;
  if (issued_ >= kDepth) {
    // The queue is full: the issue waits for the oldest transfer to land.
    pending_start_ = issue;
    while (issued_ >= kDepth) wait_for_event(landed_event_);
    const Picos now = static_cast<Picos>(sc_core::sc_time_stamp().value());
    if (now > issue) r.stall[static_cast<size_t>(StallReason::Queue)] += now - issue;
    issue = std::max(issue, now);
    pending_start_ = std::numeric_limits<Picos>::max();
  }
  const double f = jitter(inst);
  if (ring_.empty()) ring_.resize(kDepth);
  Issued& t = ring_[(front_ + issued_) % kDepth];
  t.inst = &inst;
  t.r = r;
  t.counts.assign(loop_counts_.begin(), loop_counts_.end());
  t.ivs.assign(loop_ivs_.begin(), loop_ivs_.end());
  t.first_byte = issue + static_cast<Picos>(static_cast<double>(inst.cycles_ps) * f);
  t.transfer = inst.dma;
  t.seq = inst.seq_at(current_future_base_, loop_ivs_.data(), *ctx_.program.kernel);
  t.r.start = issue;
  t.transfer.efficiency /= f;  // a slower transfer: the same bytes at a lower rate
  // An order without data holds from the issue: publish it now, not when the data lands.
  publish_at(inst, issue, issue, issue, loop_counts_.data(), loop_ivs_.data(), true, Publish::Ordered);
  free_ = t.first_byte;  // the setup stage takes one transfer at a time
  ++issued_;
  issued_event_.notify(sc_core::SC_ZERO_TIME);
}

void DmaQueue::data_thread() {
  try {
    for (;;) {
      while (issued_ == 0) {
        if (walked_) return;
        sc_core::wait(issued_event_);
      }
      Issued& t = front();
      const Picos data_start = std::max(t.first_byte, data_free_);
      if (data_free_ > t.first_byte) t.r.stall[static_cast<size_t>(StallReason::Queue)] += data_free_ - t.first_byte;
      const Picos now = static_cast<Picos>(sc_core::sc_time_stamp().value());
      if (data_start < now) throw std::logic_error("causality: a transfer's data would start in the past");
      if (data_start > now) sc_core::wait(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(data_start - now)));
      Picos end = data_start;
      ctx_.dma->start(t.transfer, &done_, &end);
      sc_core::wait(done_);
      t.r.busy_start = data_start;
      t.r.busy_end = t.r.complete = end;
      t.r.loop_counts = t.counts.data();
      t.r.loop_ivs = t.ivs.data();
      data_free_ = end;
      ctx_.observer->record(t.r);
      publish_at(*t.inst, t.r.start, end, end, t.counts.data(), t.ivs.data(), false, Publish::Data);
      front_ = (front_ + 1) % kDepth;
      --issued_;
      landed_event_.notify(sc_core::SC_ZERO_TIME);
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;
  } catch (...) {
    if (!ctx_.failure) ctx_.failure = std::current_exception();
    sc_core::sc_stop();
  }
}

void DmaQueue::drain() {
  walked_ = true;
  issued_event_.notify(sc_core::SC_ZERO_TIME);
  while (issued_ > 0) wait_for_event(landed_event_);
}

Picos DmaQueue::pending_floor() const {
  return issued_ == 0 ? std::numeric_limits<Picos>::max() : front().r.start;
}

int64_t DmaQueue::pending_seq() const {
  // Each transfer's seq is the least position of its run's rest in the queue's order, which
  // never decreases along the walk: the oldest transfer's bounds the others.
  return issued_ == 0 ? std::numeric_limits<int64_t>::max() : front().seq;
}

}  // namespace tandem
