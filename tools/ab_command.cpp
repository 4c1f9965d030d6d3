// tandem ab: options only; the work is run_ab (sim/driver/ab_run.h).
#include <memory>

#include <CLI/CLI.hpp>

#include "sim/driver/ab_run.h"
#include "tools/commands.h"
#include "tools/output.h"

namespace tandem::cli {

void add_ab_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<AbRun>();
  auto out = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "ab", "Simulate one kernel under two pass pipelines, or on two hardware models, and compare them side by side.");
  auto passes = std::make_shared<std::string>("default");
  auto hw = std::make_shared<std::string>();
  cmd->footer(
      "\nEach run is a separate simulation (docs/metrics.md); differences are B - A and ratios B / A.\n"
      "Exit codes: 0 both sides clean; 1 bad input, or a side failed --verify; 2 internal error; 3 a side races "
      "(the table says which, and its figures are not a valid result).");
  cmd->add_option("file", args->file, "kernel in the .kir text format")->required();
  cmd->add_option("--a", args->a, "pipeline A (e.g. none; default: --passes)");
  cmd->add_option("--b", args->b, "pipeline B (e.g. default; default: --passes)");
  cmd->add_option("--passes", *passes, "the pipeline of a side that names none (a hardware A/B)")
      ->capture_default_str();
  cmd->add_option("--hw", *hw, std::string(kHwHelp) + "; both sides");
  cmd->add_option("--hw-a", args->hw_a, "model A, a name or a file (default: --hw): a hardware A/B");
  cmd->add_option("--hw-b", args->hw_b, "model B (default: --hw)");
  cmd->add_flag("--json", args->json, "print the tandem.ab/1 JSON document: both results and the differences");
  cmd->add_flag("--verify", args->verify,
                "check each side's pipeline with the translation validator (tandem opt --verify): a pass that "
                "changes what the kernel computes is an error naming it");
  cmd->add_option("-o,--output", *out, "write the report here (atomically) instead of stdout");
  cmd->add_option("--report", args->report, "write a self-contained HTML report with both runs side by side");
  cmd->callback([args, out, passes, hw, &exit_code] {
    AbRun run = *args;
    if (run.a.empty()) run.a = *passes;
    if (run.b.empty()) run.b = *passes;
    if (run.hw_a.empty()) run.hw_a = *hw;
    if (run.hw_b.empty()) run.hw_b = *hw;
    const AbOutcome o = run_ab(run);
    emit(o.text, *out);
    exit_code = o.exit_code;
  });
}

}  // namespace tandem::cli
