#include "sim/driver/simulate_file.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "sched/driver/schedule_file.h"
#include "sched/ir/parser.h"
#include "sched/support/provenance.h"
#include "sched/target/target.h"
#include "sim/driver/isolated.h"
#include "sim/lower/program.h"
#include "sim/report/report.h"

namespace tandem {

namespace {
// A simulation of this many instances or more runs long enough to be announced, with a
// progress line, on a terminal.
constexpr int64_t kAnnouncedInstances = 20000000;
}  // namespace

EditedModel::EditedModel(const std::string& kernel_file, const std::string& hw, std::vector<ModelEdit> edits)
    : hw_(hw), edits_(std::move(edits)) {
  if (edits_.empty()) return;
  base_ = hw.empty() ? parse_kernel_file(kernel_file).target->file : resolve_model_file(hw);
  scratch_ = std::make_unique<ScratchFile>(temporary_path("tandem-model-" + std::to_string(::getpid()) + ".yaml"),
                                           edited_model_yaml(base_, edits_));
}

void EditedModel::name_in(SimResult& r) const {
  if (!scratch_) return;
  std::error_code ec;
  const std::filesystem::path from = std::filesystem::weakly_canonical(base_, ec);
  r.provenance.model_file = ec ? base_ : from.string();
  r.provenance.model_edits = set_options(edits_);
}

void EditedModel::rethrow(const Error& e) const {
  if (scratch_ && e.loc().file && e.loc().file == scratch_->path())
    throw Error(base_ + " with" + set_options(edits_) + ": " + e.message());
  throw;  // called from a handler: the error as it was, its type kept
}

SimProgram lower_scheduled(Kernel& kernel, DepGraph& deps, const RunOptions& run_options) {
  place_unplaced(kernel, deps, run_options);
  return lower_for_simulation(kernel, deps);
}

SimResult schedule_and_simulate(const std::string& file, const std::string& hw, const std::string& passes,
                                const RunOptions& run_options, const SimOptions& sim_options) {
  KernelInput in = read_and_schedule(file, hw, passes, run_options);
  // The kernel's target is the model (`hw` replaced it when the kernel was read).
  SimProgram program = lower_scheduled(in.kernel, in.deps, run_options);
  const int64_t n = program.dynamic_instructions;
  if (sim_options.max_instances > 0 && n > sim_options.max_instances)
    throw Error(in.kernel.loc, "the kernel runs " + std::to_string(n) +
                                   " dynamic instructions, more than --max-instances " +
                                   std::to_string(sim_options.max_instances));
  // On a terminal, a long run is announced and shows its progress (not in pipes and tests,
  // whose stderr is the error channel, unless asked for with --progress).
  SimOptions options = sim_options;
  if (n >= kAnnouncedInstances && isatty(STDERR_FILENO)) {
    std::cerr << "tandem sim: " << n << " dynamic instructions to simulate, which can take " << n / 1000000
              << " s or more (Ctrl-C stops it; --max-instances N refuses such kernels)\n";
    options.progress = true;
  }
  SimResult r = simulate(program, options);
  // The file itself, links resolved: the build tree's models/ is a link to its checkout's.
  std::error_code ec;
  const std::filesystem::path model = std::filesystem::weakly_canonical(in.kernel.target->file, ec);
  r.provenance = {tandem_version(), ec ? in.kernel.target->file : model.string(), in.kernel.target->file_hash, passes,
                  ""};
  return r;
}

SimResult simulate_with_perturbed_runs(const std::string& file, const std::string& hw, const std::string& passes,
                                       const RunOptions& run_options, const SimOptions& sim_options,
                                       int perturbed_runs) {
  auto known = [](const std::vector<HazardReport>& list, const HazardReport& h) {
    return std::any_of(list.begin(), list.end(), [&](const HazardReport& o) {
      return o.kind == h.kind && o.first == h.first && o.second == h.second;
    });
  };
  std::vector<HazardReport> latent;
  for (int seed = 1; seed <= perturbed_runs; ++seed) {
    SimOptions jittered = sim_options;
    jittered.perturb_seed = static_cast<uint64_t>(seed);
    jittered.trace_path.clear();
    jittered.capture_timeline = false;  // only the reported run feeds the HTML report
    jittered.progress = false;
    const std::string json =
        run_isolated([&] { return format_json(schedule_and_simulate(file, hw, passes, RunOptions{}, jittered)); });
    for (HazardReport h : parse_sim_json(json).hazards) {
      if (known(latent, h)) continue;
      h.message += " [perturbed run, seed " + std::to_string(seed) + "]";
      latent.push_back(h);
    }
  }
  SimResult result = schedule_and_simulate(file, hw, passes, run_options, sim_options);
  for (const HazardReport& h : latent)
    if (!known(result.hazards, h)) result.hazards.push_back(h);
  result.perturbed_runs = perturbed_runs;
  result.perturb_spread = sim_options.perturb_spread;
  return result;
}

}  // namespace tandem
