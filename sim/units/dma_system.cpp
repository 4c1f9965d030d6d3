#include "sim/units/dma_system.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tandem {

namespace {
double now_ps() { return static_cast<double>(sc_core::sc_time_stamp().value()); }
}  // namespace

DmaSystem::DmaSystem(sc_core::sc_module_name name, const DmaModel& model, ReadyQueue& ready)
    : sc_module(name), bandwidth_(model), ready_(ready) {
  SC_METHOD(wake);
  sensitive << wake_;
  dont_initialize();
}

// Inline: one call per start and per wake, most of them short.
inline void DmaSystem::reschedule(double now) {
  const double next = bandwidth_.next_completion();
  Picos at = std::numeric_limits<Picos>::max();
  if (!std::isinf(next)) at = static_cast<Picos>(now) + static_cast<Picos>(std::max(0.0, std::ceil(next - 1e-9) - now));
  if (!pending_.empty()) at = std::min(at, pending_.front().at);
  if (at == std::numeric_limits<Picos>::max() || at == wake_at_) return;  // nothing due, or due then already
  // A pending notification later than `at` gives way to the new one by itself (SystemC keeps
  // the earlier): only an earlier one needs cancelling.
  if (notified_at_ >= 0 && at > notified_at_) wake_.cancel();
  wake_.notify(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(at - static_cast<Picos>(now))));
  wake_at_ = notified_at_ = at;
}

void DmaSystem::start(const DmaTransfer& t, Picos at, DmaClient* client) {
  const double now = now_ps();
  if (static_cast<double>(at) < now) throw std::logic_error("causality: a transfer's data would start in the past");
  if (static_cast<double>(at) == now && t.bytes > 0) {
    begin(t, client, now);
  } else {
    pending_.push_back({at, next_order_++, &t, client});
    std::push_heap(pending_.begin(), pending_.end(), Later());
    // A wake still to come, no later than this start, is the earliest of the landings and the
    // starts, and the bandwidth has not changed since it was asked for (within a wake it may
    // have): it stays, and a second queue starting with the first costs no reschedule.
    if (!waking_ && static_cast<double>(wake_at_) > now && at >= wake_at_) return;
  }
  reschedule(now);
}

void DmaSystem::begin(const DmaTransfer& t, DmaClient* client, double now) {
  const int id = bandwidth_.start(t, now);
  if (static_cast<size_t>(id) >= clients_.size()) clients_.resize(static_cast<size_t>(id) + 1);
  clients_[static_cast<size_t>(id)] = client;
}

void DmaSystem::wake() {
  const double now = now_ps();
  waking_ = true;
  wake_at_ = -1;
  // The notification that ran this wake has fired; one made since (by a start between its
  // firing and now) is later and still pending.
  if (static_cast<double>(notified_at_) <= now) notified_at_ = -1;
  done_.clear();
  bandwidth_.complete_until(now, done_);
  // A client may start its next transfer from landed(), which may reuse a landed id: look the
  // clients up first. (Its start reschedules; the reschedule below sees it.)
  landing_.clear();
  for (int id : done_) landing_.push_back(clients_[static_cast<size_t>(id)]);
  for (DmaClient* c : landing_) c->landed(static_cast<Picos>(now));
  // Then the starts due now, after the bytes that landed now have freed their engines.
  while (!pending_.empty() && static_cast<double>(pending_.front().at) <= now) {
    std::pop_heap(pending_.begin(), pending_.end(), Later());
    const Pending p = pending_.back();
    pending_.pop_back();
    if (p.transfer->bytes > 0)
      begin(*p.transfer, p.client, now);
    else
      p.client->landed(static_cast<Picos>(now));
  }
  waking_ = false;
  reschedule(now);
  ready_.run();  // the units the landings handed off to
}

}  // namespace tandem
