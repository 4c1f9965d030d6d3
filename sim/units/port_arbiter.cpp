#include "sim/units/port_arbiter.h"

#include <algorithm>

namespace tandem {

PortArbiter::PortArbiter(sc_core::sc_module_name name, size_t ports) : sc_module(name), busy_until_(ports, 0) {
  SC_METHOD(arbitrate);
  sensitive << wake_;
  dont_initialize();
}

void PortArbiter::request(int unit, const std::vector<int>& ports, Picos duration, sc_core::sc_event* granted,
                          Picos* grant) {
  pending_.push_back({unit, &ports, duration, granted, grant});
  wake_.notify(sc_core::SC_ZERO_TIME);
}

void PortArbiter::arbitrate() {
  const Picos now = static_cast<Picos>(sc_core::sc_time_stamp().value());
  std::sort(pending_.begin(), pending_.end(), [](const Request& a, const Request& b) { return a.unit < b.unit; });
  for (const Request& r : pending_) {
    Picos start = now;
    for (int p : *r.ports) start = std::max(start, busy_until_[static_cast<size_t>(p)]);
    for (int p : *r.ports) busy_until_[static_cast<size_t>(p)] = start + r.duration;
    *r.grant = start;
    r.granted->notify(sc_core::SC_ZERO_TIME);
  }
  pending_.clear();
}

}  // namespace tandem
