// Read a kernel file against its target (or a model file given instead), derive its
// dependences and run a pass pipeline over it: what `tandem opt` does, and the first half of
// every simulation.
#pragma once

#include <string>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"
#include "sched/passes/pass_manager.h"

namespace tandem {

struct KernelInput {
  Kernel kernel;
  DepGraph deps;
};

// A kernel as read, ready for a pipeline: spilled where it overflows and asks to be (the flag
// `spill`, spill.h), its dependences derived.
KernelInput prepare_kernel(Kernel kernel);

// `hw` empty: the kernel's own target. The pipeline is checked before the kernel is read.
KernelInput read_and_schedule(const std::string& file, const std::string& hw, const std::string& passes,
                              const RunOptions& run_options);

// What simulation needs of a scheduled kernel: every instruction on an engine or DMA queue.
// Runs assign-engines (announced on the `sim` log) when some instruction names none and
// could run somewhere; returns whether it ran.
bool place_unplaced(Kernel& kernel, DepGraph& deps, const RunOptions& run_options);

}  // namespace tandem
