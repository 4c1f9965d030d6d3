// The test oracle and the benchmark's reference point: the same scheduling work as the
// simulator (the same program, semaphore keys, DMA bandwidth model and publish rules) done by
// a plain priority-queue event loop, one event per instance start, semaphore signal and transfer.
// It supports what the benchmark kernels use: compute engines and DMA queues (no barriers
// or conflict ports).
#pragma once

#include "sim/lower/program.h"
#include "sim/units/instance_record.h"

namespace tandem {

struct BaselineResult {
  Picos total_ps = 0;
  int64_t instances = 0;
  int64_t events = 0;
};

// What the benchmark hangs on the loop so that it does the simulator's per-instance
// observation work too (the race checker): every instance's record, as the simulator's units
// report it, and, every Ledger::kFinalizeEvery records, how far the run has come (the
// arguments of RaceChecker::advance).
class BaselineObserver {
 public:
  virtual ~BaselineObserver() = default;
  virtual void record(const InstanceRecord& r) = 0;
  virtual void progress(Picos watermark, int64_t min_seq) = 0;
};

BaselineResult run_event_loop_baseline(const SimProgram& p, BaselineObserver* observer = nullptr);

}  // namespace tandem
