// A kernel file scheduled and simulated: read_and_schedule (on the model file `hw`, default:
// the kernel's target), then assign-engines where an instruction names no engine or queue,
// then the simulator on that same model. Once per process (SystemC).
#pragma once

#include <string>

#include "sched/passes/pass_manager.h"
#include "sim/driver/simulator.h"
#include "sim/lower/program.h"

namespace tandem {

// A scheduled kernel lowered as `tandem sim` lowers it: placed first (place_unplaced,
// sched/driver/schedule_file.h) where an instruction names no engine or queue.
SimProgram lower_scheduled(Kernel& kernel, DepGraph& deps, const RunOptions& run_options);

SimResult schedule_and_simulate(const std::string& file, const std::string& hw, const std::string& passes,
                                const RunOptions& run_options, const SimOptions& sim_options);

// What `tandem sim` reports: `perturbed_runs` perturbed runs first (seeds 1..K, each in its own
// process, without trace or timeline), then the run here; every race a perturbed run finds
// and this run does not is added, marked with its seed, once however many runs find it. The
// result says how many perturbed runs were tried (SimResult::perturbed_runs).
SimResult simulate_with_perturbed_runs(const std::string& file, const std::string& hw, const std::string& passes,
                                       const RunOptions& run_options, const SimOptions& sim_options,
                                       int perturbed_runs);

}  // namespace tandem
