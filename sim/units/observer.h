// What the units tell the rest of the simulation about each dynamic instance they run. The
// units know nothing of who listens (sim/observe/: the ledger, which fans out to the race
// checker and the trace writer); this interface is the only way up.
#pragma once

#include "sim/units/instance_record.h"

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
};

}  // namespace tandem
