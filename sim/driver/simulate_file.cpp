#include "sim/driver/simulate_file.h"

#include <iostream>

#include "sched/passes/schedule_file.h"
#include "sched/support/log.h"
#include "sched/target/target.h"
#include "sim/lower/program.h"

namespace tandem {

namespace {
bool needs_engines(const Kernel& k) {
  for (const Instruction& in : k.insts)
    if (!in.erased && in.engine.empty() && !k.target->opcode(in.opcode)->engines.empty()) return true;
  return false;
}
}  // namespace

SimResult schedule_and_simulate(const std::string& file, const std::string& hw, const std::string& passes,
                                const RunOptions& run_options, const SimOptions& sim_options) {
  KernelInput in = read_and_schedule(file, hw, passes, run_options);
  if (needs_engines(in.kernel)) {
    logger("sim")->info("assigning engines and queues where the kernel names none");
    run_pipeline(in.kernel, in.deps, parse_pipeline("assign-engines"), run_options, std::cerr);
  }
  // The kernel's target is the model (`hw` replaced it when the kernel was read).
  SimProgram program = lower_for_simulation(in.kernel, in.deps);
  return simulate(program, sim_options);
}

}  // namespace tandem
