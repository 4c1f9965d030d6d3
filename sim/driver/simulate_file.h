// A kernel file scheduled and simulated: read_and_schedule (on the model file `hw`, default:
// the kernel's target), then assign-engines where an instruction names no engine or queue,
// then the simulator on that same model. Once per process (SystemC).
#pragma once

#include <string>

#include "sched/passes/pass_manager.h"
#include "sim/driver/simulator.h"

namespace tandem {

SimResult schedule_and_simulate(const std::string& file, const std::string& hw, const std::string& passes,
                                const RunOptions& run_options, const SimOptions& sim_options);

}  // namespace tandem
