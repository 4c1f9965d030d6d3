// tandem opt: run a pass pipeline over a kernel and print the result.
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/ir/printer.h"
#include "sched/passes/pass_manager.h"
#include "sched/support/output.h"
#include "sched/target/target.h"
#include "tools/commands.h"

namespace tandem::cli {

namespace {

struct OptArgs {
  std::string file;
  std::string passes;
  std::string hw;
  std::string out;
  std::vector<std::string> print_after;
  bool print_deps = false;
  bool stats = false;
};

int run_opt(const OptArgs& a) {
  ParseOptions popts;
  if (!a.hw.empty()) popts.target_override = load_target(a.hw);
  // Check the pipeline before reading the kernel: a typo in --passes should not wait.
  std::vector<PipelineStep> steps = parse_pipeline(a.passes);
  RunOptions ropts;
  ropts.stats = a.stats;
  for (const auto& p : a.print_after) {
    if (!find_pass(p)) throw Error("--print-after names unknown pass '" + p + "'");
    ropts.print_after.insert(p);
  }

  Kernel k = parse_kernel_file(a.file, popts);
  DepGraph g = build_dep_graph(k);
  run_pipeline(k, g, steps, ropts, std::cerr);

  std::string text = print_kernel(k, &g);
  if (a.print_deps) text += print_deps(k, g);
  if (a.out.empty())
    std::cout << text;
  else
    write_file_atomic(a.out, text);
  return 0;
}

}  // namespace

void add_opt_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<OptArgs>();
  CLI::App* cmd = root.add_subcommand("opt", "Run a pass pipeline over a kernel and print the resulting kernel.");
  cmd->footer("\nPipelines are comma-separated passes with options: "
              "--passes='assign-engines{queues=4,policy=balance}'.\n\n" +
              describe_passes());
  cmd->add_option("file", args->file, "kernel in the .kir text format")->required();
  cmd->add_option("--passes", args->passes, "pass pipeline to run (`none` runs no pass)")->required();
  cmd->add_flag("--print-deps", args->print_deps,
                "after the kernel, print every dependence edge: dep %src -> %dst KIND [distance=N]");
  cmd->add_option("--print-after", args->print_after, "print the kernel to stderr after this pass (repeatable)");
  cmd->add_flag("--stats", args->stats, "print each pass's statistics and skip reasons to stderr");
  cmd->add_option("--hw", args->hw, "hardware model file to use instead of the kernel's target");
  cmd->add_option("-o,--output", args->out, "write the result here (atomically) instead of stdout");
  cmd->callback([args, &exit_code] { exit_code = run_opt(*args); });
}

}  // namespace tandem::cli
