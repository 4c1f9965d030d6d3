// tandem sim --advise: the changes that could move a run's binding bound, each one a pipeline
// or model change simulated on its own (race-checked, the pipeline verified), best first, with
// the command that reproduces it; what only a rewrite of the kernel could do is a hint, marked
// as not simulated (docs/usage.md, Advice).
#pragma once

#include <string>
#include <vector>

#include "sched/target/model_edit.h"
#include "sim/observe/sim_result.h"

namespace tandem {

// The run the advice is for, as `tandem sim` was given it.
struct AdvisedRun {
  std::string file;
  std::string hw;                // "" = the kernel's target
  std::vector<ModelEdit> edits;  // --set
  std::string passes;
};

// Simulates every change that applies to `run` (whose result is `baseline`) in its own
// process, two at a time, and returns the advice: simulated changes that gain first (best
// first), then those that do not or could not run (with why), then the hints.
std::vector<Advice> advise(const AdvisedRun& run, const SimResult& baseline);

// The advice as the summary prints it.
std::string format_advice(const std::vector<Advice>& advice, const SimResult& baseline);

}  // namespace tandem
