// tandem sweep: options only; the work is run_sweep (sim/driver/sweep/sweep_runner.h).
#include <memory>

#include <CLI/CLI.hpp>

#include "sim/driver/sweep/sweep_runner.h"
#include "tools/commands.h"

namespace tandem::cli {

void add_sweep_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<SweepRun>();
  CLI::App* cmd = root.add_subcommand("sweep", "Simulate every kernel at every point of a sweep file and write a CSV.");
  cmd->footer(
      "\nThe sweep file names kernels, a base model and pipeline, the parameters to vary (model fields by path, "
      "pass options as pass.option, whole pipelines) and the metrics (docs/sweeps.md). Each point runs in its own "
      "process; rows are appended as points finish and sorted by point at the end. A failed point gets a row with "
      "its error and the sweep goes on. A point that races gets status racy and is never the best point.\n"
      "Exit codes: 0 every point ok or error; 1 bad sweep file, or a point failed --verify; 2 a point failed with an "
      "internal error; 3 a point raced.");
  cmd->add_option("file", args->file, "the sweep file (YAML)")->required();
  cmd->add_option("-o,--output", args->out, "the CSV (default: the sweep file's name with .csv, here)");
  cmd->add_option("-j,--jobs", args->jobs, "points simulated at once")->capture_default_str();
  cmd->add_flag("--resume", args->resume, "keep the rows already in the CSV and run only the missing points");
  cmd->add_flag("--progress", args->progress, "print progress lines even when stderr is not a terminal");
  cmd->add_flag("--verify", args->verify,
                "check every point's pipeline with the translation validator (tandem opt --verify; also `verify: true` "
                "in the sweep file): a point whose pipeline changes what the kernel computes gets status miscompiled");
  cmd->add_option("--point-timeout", args->point_timeout,
                  "seconds one point may run before it is killed and recorded with status timeout (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--report", args->report,
                  "also write a self-contained HTML report: each metric against each parameter, and the best point");
  cmd->callback([args, &exit_code] { exit_code = run_sweep(*args); });
}

}  // namespace tandem::cli
