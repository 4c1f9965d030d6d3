// The test oracle and the benchmark's reference point: the same scheduling work as the
// simulator (the same program, semaphore keys, DMA bandwidth model and publish rules) done by
// a plain priority-queue event loop, one event per instance start, semaphore signal and transfer.
// It supports what the benchmark kernels use: compute engines and DMA queues (no barriers
// or conflict ports).
#pragma once

#include "sim/lower/program.h"

namespace tandem {

struct BaselineResult {
  Picos total_ps = 0;
  int64_t instances = 0;
  int64_t events = 0;
};

BaselineResult run_event_loop_baseline(const SimProgram& p);

}  // namespace tandem
