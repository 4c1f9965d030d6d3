// What the simulator reports about each dynamic instance, streamed to the ledger and trace.
#pragma once

#include <array>
#include <cstdint>

#include "sim/lower/program.h"

namespace tandem {

// Why an instance started later than its unit was free (docs/metrics.md).
// Semaphore: waiting for another unit; Dependency: for an earlier instruction of the same
// unit (a register scoreboard); Barrier; Queue: a DMA queue full of transfers not landed;
// Conflict: a shared port held by another engine. A DMA queue's stalls leave out the time it
// moved data meanwhile (DmaQueue).
enum class StallReason : uint8_t { Semaphore, Dependency, Barrier, Queue, Conflict, Count };

const char* stall_reason_name(StallReason r);

struct InstanceRecord {
  InstId inst = kNoId;
  int unit = -1;         // -1: a barrier (it occupies no unit)
  Picos free = 0;        // when the unit could have started it
  Picos start = 0;       // issue (DMA) or start (compute)
  Picos busy_start = 0;  // DMA: first byte; compute: start
  Picos busy_end = 0;    // the unit is free again (compute) / last byte (DMA)
  Picos complete = 0;    // results visible to dependants
  std::array<Picos, static_cast<size_t>(StallReason::Count)> stall{};
  bool waited_on_dma = false;            // the binding dependence was a DMA transfer
  int binding_channel = -1;              // the channel whose value set the start, if any
  Picos binding_signal = 0;              // when that channel's source completed
  const int64_t* loop_counts = nullptr;  // per LoopId: iterations started so far (current = count - 1)
  const int64_t* loop_ivs = nullptr;     // per LoopId: current induction variable value

  // The unit's fields, once: a unit's record keeps them for all its instances.
  void bind(int u, const int64_t* counts, const int64_t* ivs) {
    unit = u;
    loop_counts = counts;
    loop_ivs = ivs;
  }
  // A new instance of the bound unit: the fields a unit may leave unwritten set one by one (the
  // whole record assigned at once compiles to a `rep stos`, slow to start, and a unit starts a
  // record per instance). start, busy_start, busy_end and complete are left: every unit writes
  // all four before it passes the record on (a barrier's arrivals pass only inst, unit and the
  // loop pointers, to Observer::barrier_wait). Keep it in step with the fields above.
  void begin(InstId i, Picos f) {
    inst = i;
    free = f;
    stall.fill(0);
    waited_on_dma = false;
    binding_channel = -1;
    binding_signal = 0;
  }
};

}  // namespace tandem
