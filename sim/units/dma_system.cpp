#include "sim/units/dma_system.h"

#include <cmath>

namespace tandem {

namespace {
double now_ps() { return static_cast<double>(sc_core::sc_time_stamp().value()); }
}  // namespace

DmaSystem::DmaSystem(sc_core::sc_module_name name, const DmaModel& model) : sc_module(name), bandwidth_(model) {
  SC_METHOD(wake);
  sensitive << wake_;
  dont_initialize();
}

void DmaSystem::start(const DmaTransfer& t, DmaClient* client) {
  const double now = now_ps();
  const int id = bandwidth_.start(t, now);
  if (static_cast<size_t>(id) >= clients_.size()) clients_.resize(static_cast<size_t>(id) + 1);
  clients_[static_cast<size_t>(id)] = client;
  reschedule(now);
}

void DmaSystem::reschedule(double now) {
  const double next = bandwidth_.next_completion();
  if (std::isinf(next)) return;
  const double delay = std::max(0.0, std::ceil(next - 1e-9) - now);
  const Picos at = static_cast<Picos>(now) + static_cast<Picos>(delay);
  if (at == wake_at_) return;  // already due then: keep that notification
  wake_.cancel();
  wake_.notify(sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(delay)));
  wake_at_ = at;
}

void DmaSystem::wake() {
  const double now = now_ps();
  wake_at_ = -1;
  done_.clear();
  bandwidth_.complete_until(now, done_);
  // A client may start its next transfer from landed(), which may reuse a landed id: look the
  // clients up first. (Its start reschedules; the reschedule below sees it.)
  landing_.clear();
  for (int id : done_) landing_.push_back(clients_[static_cast<size_t>(id)]);
  for (DmaClient* c : landing_) c->landed(static_cast<Picos>(now));
  reschedule(now);
}

}  // namespace tandem
