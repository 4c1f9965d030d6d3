// tandem sim: schedule a kernel, simulate it on a hardware model and report.
#include <iostream>

#include <CLI/CLI.hpp>

#include "sim/report.h"
#include "tools/commands.h"
#include "tools/kernel_input.h"

namespace tandem::cli {

namespace {

struct SimArgs {
  std::string file;
  std::string hw;
  std::string passes = "none";
  std::string out;
  std::string trace;
  bool json = false;
  bool stats = false;
  bool no_race_check = false;
  size_t iterations_kept = 10000;
};

int run_sim(const SimArgs& a) {
  RunOptions ropts;
  ropts.stats = a.stats;
  SimOptions sopts;
  sopts.iterations_kept = a.iterations_kept;
  sopts.trace_path = a.trace;
  sopts.check_races = !a.no_race_check;
  SimResult result = schedule_and_simulate(a.file, a.hw, a.passes, ropts, sopts);
  std::string text = a.json ? format_json(result) : format_summary(result);
  emit(text, a.out);
  return result.hazards.empty() ? 0 : 3;
}

}  // namespace

void add_sim_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* cmd = root.add_subcommand(
      "sim", "Schedule a kernel with a pass pipeline, simulate it on a hardware model and report cycles and overlap.");
  cmd->footer(
      "\nInstructions without an engine or DMA queue get one from assign-engines after the pipeline.\n"
      "Metrics and the JSON schema (tandem.sim/1) are defined in docs/metrics.md.\n"
      "Exit codes: 0 clean; 1 bad input; 2 internal error; 3 the race checker found races (docs/checker.md).");
  cmd->add_option("file", args->file, "kernel in the .kir text format")->required();
  cmd->add_option("--hw", args->hw, "hardware model file (default: models/<the kernel's target>.yaml)");
  cmd->add_option("--passes", args->passes, "pass pipeline to run before simulating")->capture_default_str();
  cmd->add_flag("--json", args->json, "print the tandem.sim/1 JSON document instead of the summary");
  cmd->add_flag("--stats", args->stats, "print each pass's statistics to stderr");
  cmd->add_flag("--no-race-check", args->no_race_check, "skip the race checker (faster on long runs)");
  cmd->add_option("--trace", args->trace, "write a Trace Event JSON timeline (open it in ui.perfetto.dev)");
  cmd->add_option("--iterations-kept", args->iterations_kept,
                  "iterations per loop kept in the report; longer loops keep their first and last halves")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000000));
  cmd->add_option("-o,--output", args->out, "write the report here (atomically) instead of stdout");
  cmd->callback([args, &exit_code] { exit_code = run_sim(*args); });
}

}  // namespace tandem::cli
