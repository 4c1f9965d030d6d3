// tandem tune: options only; the work is run_tune (sim/tune/tune_runner.h).
#include <memory>

#include <CLI/CLI.hpp>

#include "sim/tune/tune_runner.h"
#include "tools/commands.h"

namespace tandem::cli {

void add_tune_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<TuneRun>();
  CLI::App* cmd =
      root.add_subcommand("tune", "Search pass options and pipelines for the fastest clean schedule of a kernel.");
  cmd->footer(
      "\nThe space is derived from the kernel: the seed pipelines (auto when registered, default, none) and the pass "
      "options that change its schedule (buffers per rotated tile, prefetch distance, collective alignment, "
      "list-schedule "
      "priority, engine policy, WMMA order and distance); --space narrows or widens it (docs/tune.md). Up to " +
      std::to_string(kTuneExhaustiveLimit) +
      " points (or --budget N when larger) it tries every point; above, coordinate descent from each seed, then from "
      "the best point, with "
      "random restarts (fixed seed) while a budget is left. Each point runs in its own process with --verify; only "
      "race-free points that pass it count, and the best is confirmed race-free under perturbed timing. Prints the "
      "best pipeline (tandem sim --passes='BEST' reproduces its time), its time against the lower bound, the seeds' "
      "times and the top points. Under mpirun, points spread over the ranks.\n"
      "Exit codes: 0 found; 1 bad input, or no clean point; 130 interrupted (Ctrl-C), after printing and writing "
      "the best found so far.");
  cmd->add_option("kernel", args->kernel, "kernel in the .kir text format")->required();
  cmd->add_option("--hw", args->hw, kHwHelp);
  cmd->add_option("--space", args->space, "a space file (YAML, docs/tune.md) that narrows or widens the derived space");
  cmd->add_option("-j,--jobs", args->jobs, "points simulated at once")->capture_default_str();
  cmd->add_option("--budget", args->budget, "stop after N points, or after a time: 30s, 2m, 1h (default: no limit)");
  cmd->add_option("--top", args->top, "configurations listed")->capture_default_str();
  cmd->add_option("--point-timeout", args->point_timeout,
                  "seconds one point may run before it is killed and rejected as timeout (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--log", args->log, "append every evaluated point to this file, batch by batch (for --resume)");
  cmd->add_flag("--resume", args->resume,
                "take the points already in --log as evaluated (same kernel, model and space): an interrupted search "
                "goes on where it stopped");
  cmd->add_flag("--json", args->json,
                "print the tandem.tune/1 JSON document (docs/tune.md) instead of the text: the space, what was "
                "rejected and why, the best point against its bound, the seeds, the top points");
  cmd->add_flag("--explain-space", args->explain_space,
                "also print each dimension's values and the dimensions left out");
  cmd->add_flag("--list-points", args->list_points,
                "print every point's pipeline, one a line (the space in point order), and search nothing");
  cmd->add_option("--report", args->report,
                  "also write a self-contained HTML report: the best time against the points evaluated, and the best "
                  "point's simulation beside the seeds'");
  cmd->add_option("-o,--output", args->out, "write the best scheduled kernel here (as tandem opt prints it)");
  cmd->callback([args, &exit_code] { exit_code = run_tune(*args); });
}

}  // namespace tandem::cli
