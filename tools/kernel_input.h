// Shared by the commands: read a kernel against a target (or a --hw model file), derive its
// dependences and run a pass pipeline over it.
#pragma once

#include <string>

#include "sched/analysis/dep_graph.h"
#include "sched/ir/kernel.h"
#include "sched/passes/pass_manager.h"
#include "sim/simulator.h"

namespace tandem::cli {

struct KernelInput {
  Kernel kernel;
  DepGraph deps;
};

// Writes `text` to stdout, or atomically to `path` when one is given.
void emit(const std::string& text, const std::string& path);

KernelInput read_and_schedule(const std::string& file, const std::string& hw, const std::string& passes,
                              const RunOptions& run_options);

// read_and_schedule, then assign-engines where an instruction names no engine or queue, then
// simulate on `hw` (default: the kernel's target model). Once per process (SystemC).
SimResult schedule_and_simulate(const std::string& file, const std::string& hw, const std::string& passes,
                                const RunOptions& run_options, const SimOptions& sim_options);

}  // namespace tandem::cli
