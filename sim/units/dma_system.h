// The DMA engines a core shares among its queues, as a SystemC module: the bandwidth model
// (DmaBandwidth) decides when each transfer lands; the module wakes when a chunk lands or a
// start is due, tells the client that started a landed transfer, and runs the hand-offs that
// made (sim/units/hand_off.h). While no unit waits in SystemC, nothing but the DMA system has
// anything to do before its next landing or start, so it runs ahead to it within the same
// wake instead of asking SystemC for another: the units it hands off to run with it, at its time
// (SimContext::now). A unit that must meet SystemC's time (a conflict port, a collective's
// data) waits for it there, and the DMA system stops running ahead until SystemC has caught up.
#pragma once

#include <vector>

#include <systemc>

#include "sim/units/dma_bandwidth.h"
#include "sim/units/sim_context.h"

namespace tandem {

// Who started a transfer: told when its last byte lands.
class DmaClient {
 public:
  // Called from the DMA system's process at `end` (now): a function call, not an event, so a
  // landing costs the SystemC kernel no process activation of its own.
  virtual void landed(Picos end) = 0;

 protected:
  ~DmaClient() = default;
};

class DmaSystem : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DmaSystem);
  DmaSystem(sc_core::sc_module_name name, const DmaModel& model, SimContext& ctx);

  // Starts moving `t` at `at` (not before now); `client->landed` is called when its last byte
  // lands (a transfer of no bytes: at `at`). `t` must live until then. A start in the future
  // is the DMA system's to make, so the client needs no wake-up of its own for it, and starts
  // due at the same time share one.
  void start(const DmaTransfer& t, Picos at, DmaClient* client);
  // Lists the DMA system's state (sim/units/unit_state.h): a transfer by its client.
  void visit_state(StateVisitor& v);

 private:
  struct Pending {
    Picos at;
    int64_t order;  // starts due at the same time go in the order they were asked for
    const DmaTransfer* transfer;
    DmaClient* client;
  };
  // The order of pending starts: the earlier, then the first asked for.
  static bool before(const Pending& a, const Pending& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; }
  void begin(const DmaTransfer& t, DmaClient* client, double now);
  [[noreturn, gnu::cold]] static void causality_error();
  // The next landing or start after `now`, max when none.
  Picos next_event(double now) const;
  // Asks SystemC for a wake at the next event.
  void reschedule(double now);
  void wake();
  [[gnu::always_inline]] inline void step(double now);  // what a wake at `now` does (inline in wake())

  DmaBandwidth bandwidth_;
  SimContext& ctx_;
  std::vector<DmaClient*> clients_;  // per transfer id
  std::vector<int> done_;
  std::vector<DmaClient*> landing_;  // the clients of done_
  // Starts not yet due, the latest first and the earliest last. A unit has at most one waiting
  // (a queue moves one transfer at a time, an engine runs one collective), so there are few, and
  // a new one is usually the latest: a sorted vector inserts it at the front in a step or two
  // and pops the earliest from the back, with less work per transfer than a heap.
  std::vector<Pending> pending_;
  int64_t next_order_ = 0;
  sc_core::sc_event wake_;
  Picos wake_at_ = -1;  // the wake reschedule() last asked for; -1 from a wake's start until it asks
  // When SystemC holds a notification of wake_ (it has not fired), -1 when it holds none.
  Picos notified_at_ = -1;
  // Within a wake (SimContext::dma_time set): a start is begun or queued, and the wake
  // reschedules once, at its end.
  bool waking() const { return ctx_.dma_time >= 0; }
};

// Inline: a DMA queue starts each transfer from its issue or a landing, and most starts only
// queue, which must not pay a call frame.
inline void DmaSystem::start(const DmaTransfer& t, Picos at, DmaClient* client) {
  const double now = static_cast<double>(ctx_.now());
  if (static_cast<double>(at) < now) causality_error();
  if (static_cast<double>(at) == now && t.bytes > 0) {
    begin(t, client, now);
  } else {
    const Pending p{at, next_order_++, &t, client};
    size_t i = pending_.size();
    pending_.emplace_back();
    for (; i > 0 && before(pending_[i - 1], p); --i) pending_[i] = pending_[i - 1];
    pending_[i] = p;
    // A wake still to come, no later than this start, is the earliest of the landings and the
    // starts, and the bandwidth has not changed since it was asked for: it stays, and a second
    // queue starting with the first costs no reschedule.
    if (!waking() && static_cast<double>(wake_at_) > now && at >= wake_at_) return;
  }
  if (!waking()) reschedule(now);
}

}  // namespace tandem
