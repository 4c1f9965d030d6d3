// A kernel file scheduled and simulated: read_and_schedule (on the model file `hw`, default:
// the kernel's target), then assign-engines where an instruction names no engine or queue,
// then the simulator on that same model. Once per process (SystemC).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sched/passes/pass_manager.h"
#include "sched/support/error.h"
#include "sched/support/output.h"
#include "sched/target/model_edit.h"
#include "sim/driver/simulator.h"
#include "sim/lower/program.h"

namespace tandem {

// The model a run uses: `hw` (default: the kernel's target) with `edits` set (tandem sim
// --set), written to a scratch file for the lifetime of this object. Without edits, `hw`
// itself.
class EditedModel {
 public:
  EditedModel(const std::string& kernel_file, const std::string& hw, std::vector<ModelEdit> edits);
  // What to run on: the scratch file, or `hw` unedited.
  const std::string& hw() const { return scratch_ ? scratch_->path() : hw_; }
  const std::vector<ModelEdit>& edits() const { return edits_; }
  // The result names the model it derives from and the edits (its hash stays the edited
  // model's).
  void name_in(SimResult& r) const;
  // An error located in the scratch file, restated as the base model's with the edits.
  [[noreturn]] void rethrow(const Error& e) const;

 private:
  std::string hw_;
  std::string base_;
  std::vector<ModelEdit> edits_;
  std::unique_ptr<ScratchFile> scratch_;
};

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
