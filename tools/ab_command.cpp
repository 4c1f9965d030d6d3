// tandem ab: the same kernel under two pipelines, simulated each in its own process.
#include <CLI/CLI.hpp>

#include "sched/support/output.h"
#include "sim/report/ab_report.h"
#include "sim/report/html_report.h"
#include "sim/driver/isolated.h"
#include "sim/report/report.h"
#include "sim/driver/simulate_file.h"
#include "tools/commands.h"
#include "tools/output.h"

namespace tandem::cli {

namespace {

struct AbArgs {
  std::string file;
  std::string a;
  std::string b;
  std::string hw;
  std::string out;
  std::string report;
  bool json = false;
};

int run_ab(const AbArgs& args) {
  // Check both pipelines before simulating either.
  parse_pipeline(args.a);
  parse_pipeline(args.b);
  SimOptions sopts;
  sopts.capture_timeline = !args.report.empty();
  auto run = [&](const std::string& passes) {
    return run_isolated([&] { return format_json(schedule_and_simulate(args.file, args.hw, passes, RunOptions{}, sopts)); });
  };
  const AbInput a{args.a, run(args.a)};
  const AbInput b{args.b, run(args.b)};
  if (!args.report.empty())
    write_file_atomic(args.report, html_ab_report(a.pipeline, a.sim_json, b.pipeline, b.sim_json, format_ab_summary(a, b)));
  emit(args.json ? format_ab_json(a, b) : format_ab_summary(a, b), args.out);
  return 0;
}

}  // namespace

void add_ab_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<AbArgs>();
  CLI::App* cmd = root.add_subcommand("ab", "Simulate one kernel under two pass pipelines and compare them side by side.");
  cmd->footer("\nEach run is a separate simulation (docs/metrics.md); differences are B - A and ratios B / A.");
  cmd->add_option("file", args->file, "kernel in the .kir text format")->required();
  cmd->add_option("--a", args->a, "pipeline A (e.g. none)")->required();
  cmd->add_option("--b", args->b, "pipeline B (e.g. default)")->required();
  cmd->add_option("--hw", args->hw, "hardware model file (default: models/<the kernel's target>.yaml)");
  cmd->add_flag("--json", args->json, "print the tandem.ab/1 JSON document: both results and the differences");
  cmd->add_option("-o,--output", args->out, "write the report here (atomically) instead of stdout");
  cmd->add_option("--report", args->report, "write a self-contained HTML report with both runs side by side");
  cmd->callback([args, &exit_code] { exit_code = run_ab(*args); });
}

}  // namespace tandem::cli
