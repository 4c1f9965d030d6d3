#include "sched/passes/prefetch_schedule.h"

namespace tandem {

std::vector<PassOptionSpec> PrefetchSchedulePass::options() {
  return {{"after", PassOptionSpec::Flag, "", "the run after the list scheduler", {}}};
}

void PrefetchSchedulePass::run(PassContext& ctx) {
  ctx.skip(std::string("placeholder (") + (after_ ? "after" : "before") +
           " the scheduler): prefetch scheduling is not implemented yet");
}

}  // namespace tandem
