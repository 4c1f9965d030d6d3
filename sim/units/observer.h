// What the units tell the rest of the simulation about each dynamic instance they run. The
// units know nothing of who listens (sim/observe/: the ledger, which fans out to the race
// checker and the trace writer); this interface is the only way up.
#pragma once

#include <vector>

#include "sim/units/instance_record.h"
#include "sim/units/unit_bounds.h"
#include "sim/units/unit_state.h"

namespace tandem {

class InstanceObserver {
 public:
  virtual ~InstanceObserver() = default;
  // An instance has run (a barrier's record has unit -1).
  virtual void record(const InstanceRecord& r) = 0;
  // A unit waited `ps` at a CoreBarrier (`r`: the unit's view of the barrier instance);
  // `released_by_dma`: a transfer set the release time.
  virtual void barrier_wait(const InstanceRecord& r, Picos ps, bool released_by_dma) = 0;
  // A unit has run its whole stream.
  virtual void unit_done() = 0;
  // While fast-forward gives the observer the records of periods it skips, the units are
  // already past them: until it passes null, `bounds` stands for the units where the observer
  // asks how far they have come (sim/units/fast_forward.h).
  virtual void stand_in(const UnitBounds* bounds) = 0;

  // Fast-forward can move the observer on with the units instead of giving it every record
  // of the periods it skips, when the observer lists its state (sim/units/unit_state.h;
  // refusing makes fast-forward replay the records):
  // Brings its state to what it is at this moment whatever came before (before a listing).
  virtual void settle() {}
  virtual void visit_state(StateVisitor& v) { v.refuse(); }
  // Whole periods it can skip when each period starts `count_shift[l]` iterations of loop l
  // and the units have started `started[l]` of them: 0 when it cannot (its records are
  // replayed instead), -1 when it can later (nothing is skipped yet).
  virtual int64_t periods_allowed(const std::vector<int64_t>& /*count_shift*/,
                                  const std::vector<int64_t>& /*started*/) {
    return 0;
  }
  // What still needs each record of a skipped period (the race checker): its state, listed
  // after the observer's (when it repeats with it, the checks move on too and need no record);
  // else its record, and at each stand-in how far the units have come.
  virtual bool checks_records() const { return false; }
  virtual void visit_checks(StateVisitor& /*v*/) {}
  // Fast-forward marks its periods by the iterations of `loop` (once, before any listing).
  // What the checks then leave out of their state (what nothing in the loop reads) still gets
  // each write of a skipped period, and at each stand-in how far the units have come.
  virtual void steady_loop(LoopId /*loop*/) {}
  virtual bool checks_writes() const { return false; }
  virtual void check_write(const InstanceRecord& /*r*/) {}
  virtual void check_writes_progress() {}
  virtual void check_record(const InstanceRecord& /*r*/) {}
  virtual void check_progress() {}
};

}  // namespace tandem
