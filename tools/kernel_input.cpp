#include "tools/kernel_input.h"

#include <iostream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/support/output.h"
#include "sched/support/log.h"
#include "sched/target/target.h"
#include "sim/model/hardware_model.h"
#include "sim/program.h"

namespace tandem::cli {

void emit(const std::string& text, const std::string& path) {
  if (path.empty())
    std::cout << text;
  else
    write_file_atomic(path, text);
}

KernelInput read_and_schedule(const std::string& file, const std::string& hw, const std::string& passes,
                              const RunOptions& run_options) {
  ParseOptions popts;
  if (!hw.empty()) popts.target_override = load_target(hw);
  // Check the pipeline before reading the kernel: a typo in --passes should not wait.
  std::vector<PipelineStep> steps = parse_pipeline(passes);
  for (const auto& p : run_options.print_after)
    if (!find_pass(p)) throw Error("--print-after names unknown pass '" + p + "'");
  KernelInput in{parse_kernel_file(file, popts), DepGraph()};
  in.deps = build_dep_graph(in.kernel);
  run_pipeline(in.kernel, in.deps, steps, run_options, std::cerr);
  return in;
}

}  // namespace tandem::cli

namespace tandem::cli {

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
  auto model = load_hardware_model(hw.empty() ? in.kernel.target->file : hw);
  SimProgram program = lower_for_simulation(in.kernel, in.deps, model);
  return simulate(program, sim_options);
}

}  // namespace tandem::cli
