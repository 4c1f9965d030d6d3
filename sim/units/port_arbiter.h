// Access conflicts between engines (ARCH-v2: DVE and POOL cannot use SBUF at the same time):
// each conflict is a port that one instruction holds while it runs. Requests made at one
// simulated time are granted together, in unit order, so that the outcome does not depend on
// the order in which SystemC happens to run the engines.
#pragma once

#include <vector>

#include <systemc>

#include "sim/lower/program.h"
#include "sim/units/unit_state.h"

namespace tandem {

class PortArbiter : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(PortArbiter);
  PortArbiter(sc_core::sc_module_name name, size_t ports);

  // Called at simulated time `now` == the instruction's earliest start; `granted` fires once
  // the ports are reserved for `duration` from `*grant`.
  void request(int unit, const std::vector<int>& ports, Picos duration, sc_core::sc_event* granted, Picos* grant);
  // Lists the ports' state (sim/units/unit_state.h): a request not granted yet is SystemC's.
  void visit_state(StateVisitor& v) {
    if (!pending_.empty()) return v.refuse();
    for (Picos& t : busy_until_) v.time(t);
  }

 private:
  struct Request {
    int unit;
    const std::vector<int>* ports;
    Picos duration;
    sc_core::sc_event* granted;
    Picos* grant;
  };
  void arbitrate();

  std::vector<Picos> busy_until_;
  std::vector<Request> pending_;
  sc_core::sc_event wake_;
};

}  // namespace tandem
