#include "sim/units/dma_system.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/units/fast_forward.h"

namespace tandem {

DmaSystem::DmaSystem(sc_core::sc_module_name name, const DmaModel& model, SimContext& ctx)
    : sc_module(name), bandwidth_(model), ctx_(ctx) {
  SC_METHOD(wake);
  sensitive << wake_;
  dont_initialize();
}

inline Picos DmaSystem::next_event(double now) const {
  const double next = bandwidth_.next_completion();  // whole picoseconds
  Picos at = std::isinf(next) ? std::numeric_limits<Picos>::max()
                              : std::max(static_cast<Picos>(now), static_cast<Picos>(next));
  if (!pending_.empty()) at = std::min(at, pending_.back().at);
  return at;
}

void DmaSystem::reschedule(double now) {
  const Picos at = next_event(now);
  if (at == std::numeric_limits<Picos>::max() || at == wake_at_) return;  // nothing due, or due then already
  // A pending notification later than `at` gives way to the new one by itself (SystemC keeps
  // the earlier): only an earlier one needs cancelling.
  if (notified_at_ >= 0 && at > notified_at_) wake_.cancel();
  const Picos systemc = static_cast<Picos>(sc_core::sc_time_stamp().value());  // behind `now` after running ahead
  wake_.notify(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(at - systemc)));
  wake_at_ = notified_at_ = at;
}

void DmaSystem::causality_error() { throw std::logic_error("causality: a transfer's data would start in the past"); }

void DmaSystem::begin(const DmaTransfer& t, DmaClient* client, double now) {
  const int id = bandwidth_.start(t, now);
  if (static_cast<size_t>(id) >= clients_.size()) clients_.resize(static_cast<size_t>(id) + 1);
  clients_[static_cast<size_t>(id)] = client;
}

void DmaSystem::wake() {
  Picos now = static_cast<Picos>(sc_core::sc_time_stamp().value());
  // The notification that ran this wake has fired; one made since (by a start between its
  // firing and now) is later and still pending.
  if (notified_at_ <= now) notified_at_ = -1;
  for (;;) {
    ctx_.dma_time = now;
    step(static_cast<double>(now));
    Picos next = next_event(static_cast<double>(now));
    // Run ahead to the next landing or start while no other process has anything to do before
    // it: the units it hands off to run with it, at its time. One that must wait in SystemC (for
    // a port, a collective's start) stops it; SystemC's time then catches up.
    if (next == std::numeric_limits<Picos>::max() || ctx_.units_in_systemc > 0 || ctx_.failure) break;
    if (notified_at_ >= 0) {  // a start asked for a wake SystemC holds: this one runs past it
      wake_.cancel();
      notified_at_ = -1;
    }
    if (ctx_.fast_forward) {  // it may move the whole state on by whole periods
      const Picos moved = ctx_.fast_forward->at_step(now);
      if (moved != now) {
        now = ctx_.dma_time = moved;
        next = next_event(static_cast<double>(now));
      }
    }
    now = next;
  }
  ctx_.dma_time = -1;
  reschedule(static_cast<double>(now));
}

void DmaSystem::step(double now) {
  wake_at_ = -1;
  done_.clear();
  bandwidth_.complete_until(now, done_);
  // A client may start its next transfer from landed(), which may reuse a landed id: look the
  // clients up first.
  if (done_.size() == 1) {  // the usual landing: one transfer, its client looked up first
    clients_[static_cast<size_t>(done_[0])]->landed(static_cast<Picos>(now));
  } else if (!done_.empty()) {
    landing_.clear();
    for (int id : done_) landing_.push_back(clients_[static_cast<size_t>(id)]);
    for (DmaClient* c : landing_) c->landed(static_cast<Picos>(now));
  }
  // Then the starts due now, after the bytes that landed now have freed their engines.
  while (!pending_.empty() && static_cast<double>(pending_.back().at) <= now) {
    const Pending p = pending_.back();
    pending_.pop_back();
    if (p.transfer->bytes > 0)
      begin(*p.transfer, p.client, now);
    else
      p.client->landed(static_cast<Picos>(now));
  }
  ctx_.ready.run();  // the units the landings handed off to: they may start transfers
}

void DmaSystem::visit_state(StateVisitor& v) {
  if (notified_at_ >= 0 || wake_at_ >= 0) return v.refuse();  // SystemC holds a wake
  v.exact(static_cast<int64_t>(pending_.size()));
  for (Pending& p : pending_) {  // in the order they start: `order` is a label
    v.time(p.at);
    v.identity(p.client);
  }
  bandwidth_.visit_state(v, [&](int id) { v.identity(clients_[static_cast<size_t>(id)]); });
}

}  // namespace tandem
