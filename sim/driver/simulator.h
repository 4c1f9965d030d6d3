// Runs one simulation: elaborates the SystemC modules for a lowered program, runs them to
// completion and returns the ledger's result. SystemC allows one elaboration per process, so
// simulate() runs once per process; tools that need several simulations (A/B runs, sweeps)
// run each in a child process (docs/metrics.md, "One simulation per process").
#pragma once

#include "sim/lower/program.h"
#include "sim/observe/sim_result.h"
#include "sim/observe/trace_writer.h"

namespace tandem {

struct SimOptions {
  size_t iterations_kept = 10000;  // per loop; beyond it, the first and last half are kept
  size_t window = 256;             // keys a semaphore buffers beyond its distance
  std::string trace_path;          // write a Trace Event JSON file here, if set
  TraceFilter trace_filter;        // what the trace keeps
  bool check_races = true;         // run the race checker (docs/checker.md)
  // Skip whole periods of steady loops (sim/units/fast_forward.h): the results (and a trace)
  // stay those of instance-by-instance simulation. Off with a perturbation, and without DMA.
  bool fast_forward = true;
  bool capture_timeline = false;  // keep the main loop's first, middle and last iterations (reports)
  // Jitter every duration by a factor in [1 - spread, 1 + spread], drawn per dynamic
  // instance from `perturb_seed` (0: no jitter). The same seed gives the same run.
  uint64_t perturb_seed = 0;
  double perturb_spread = 0.5;
  // Refuse a kernel that runs more dynamic instructions (0: no limit; `tandem sim --max-instances`).
  int64_t max_instances = 0;
  // A progress line on stderr while it runs (`tandem sim --progress`; on by itself for long
  // runs on a terminal).
  bool progress = false;
};

// Throws Error when the schedule deadlocks (in-order units waiting on each other).
SimResult simulate(const SimProgram& program, const SimOptions& options = {});

}  // namespace tandem
