#include "sched/driver/schedule_file.h"

#include <iostream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/driver/spill.h"
#include "sched/ir/kernel_queries.h"
#include "sched/ir/parser.h"
#include "sched/support/log.h"
#include "sched/target/target.h"

namespace tandem {

KernelInput prepare_kernel(Kernel kernel) {
  KernelInput in{std::move(kernel), DepGraph()};
  if (in.kernel.attrs.has(attr::kSpill))
    for (const std::string& note : spill_to_fit(in.kernel)) logger("sched.spill")->info("{}", note);
  in.deps = build_dep_graph(in.kernel);
  return in;
}

KernelInput read_and_schedule(const std::string& file, const std::string& hw, const std::string& passes,
                              const RunOptions& run_options) {
  ParseOptions popts;
  if (!hw.empty()) popts.target_override = resolve_model(hw);
  // Check the pipeline before reading the kernel: a typo in --passes should not wait.
  std::vector<PipelineStep> steps = parse_pipeline(passes);
  for (const auto& p : run_options.print_after)
    if (!find_pass(p)) throw Error("--print-after names unknown pass '" + printable(p) + "'");
  KernelInput in = prepare_kernel(parse_kernel_file(file, popts));
  run_pipeline(in.kernel, in.deps, steps, run_options, std::cerr);
  return in;
}

bool place_unplaced(Kernel& kernel, DepGraph& deps, const RunOptions& run_options) {
  bool unplaced = false;
  for (InstId id = 0; id < static_cast<InstId>(kernel.insts.size()) && !unplaced; ++id)
    unplaced = !kernel.insts[id].erased && kernel.insts[id].engine.empty() && !engine_choices(kernel, id).empty();
  if (!unplaced) return false;
  logger("sim")->info("assigning engines and queues where the kernel names none");
  run_pipeline(kernel, deps, parse_pipeline("assign-engines"), run_options, std::cerr);
  return true;
}

}  // namespace tandem
