// The state of the simulation's modules as a list of words, each module listing its fields in
// the same order every time, for the fast-forward of steady loops (sim/units/fast_forward.h).
// A word is one of:
//  - exact: equal from one period to the next (a step, a position in a walk, how many things
//    are held, which module a pointer names);
//  - time or count: may move by a fixed amount per period (a time, a loop counter, a
//    semaphore key); fast-forward moves it by that amount for each period it skips;
//  - real: a double that must be equal bit for bit (the bytes a DMA chunk has left, its rate).
// Only what can change what the simulation does later is listed; storage positions (a ring's
// head, a slot's index, a transfer's id) are labels, listed by what they hold.
#pragma once

#include <cmath>
#include <cstdint>

#include "sim/units/instance_record.h"

namespace tandem {

class StateVisitor {
 public:
  enum class Kind : uint8_t { Exact, Time, Count, Real };

  virtual void exact(int64_t v) = 0;
  virtual void linear(int64_t& v, Kind kind) = 0;  // Time or Count
  virtual void real(double v) = 0;
  // The module `p` is (a unit, a queue's data phase): an exact word.
  virtual void identity(const void* p) = 0;
  // The state holds something fast-forward cannot shift: the visit is void.
  virtual void refuse() = 0;
  // The visit moves the state on (fast-forward's shift), rather than listing it.
  virtual bool moves() const { return false; }

  void time(Picos& t) { linear(t, Kind::Time); }
  void count(int64_t& c) { linear(c, Kind::Count); }
  // A time or a count held in a double, a whole number (the DMA model's times in picoseconds,
  // sim/units/dma_bandwidth.h; the ledger's bytes).
  void time(double& t) { linear(t, Kind::Time); }
  void count(double& c) { linear(c, Kind::Count); }
  void linear(double& x, Kind kind) {
    if (!(std::fabs(x) < 0x1p62)) return refuse();
    auto whole = static_cast<int64_t>(x);
    if (static_cast<double>(whole) != x) return refuse();
    linear(whole, kind);
    x = static_cast<double>(whole);
  }
  // An instance in flight: its times move with the period, its stalls do not.
  void record(InstanceRecord& r) {
    exact(r.inst);
    exact(r.unit);
    time(r.free);
    time(r.start);
    time(r.busy_start);
    time(r.busy_end);
    time(r.complete);
    for (Picos s : r.stall) exact(s);
    exact(r.waited_on_dma);
    exact(r.binding_channel);
    time(r.binding_signal);
  }

 protected:
  ~StateVisitor() = default;
};

}  // namespace tandem
