// tandem opt: run a pass pipeline over a kernel and print the result.
#include <iostream>

#include <CLI/CLI.hpp>

#include "sched/driver/schedule_file.h"
#include "sched/ir/printer.h"
#include "sched/support/error.h"
#include "tools/commands.h"
#include "tools/output.h"

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
  bool list_passes = false;
  bool verify = false;
  bool time_passes = false;
};

int run_opt(const OptArgs& a) {
  if (a.list_passes) {
    std::cout << describe_passes();
    return 0;
  }
  if (a.file.empty() || a.passes.empty())
    throw Error("tandem opt needs a kernel file and --passes (see tandem opt --help)");
  RunOptions ropts;
  ropts.stats = a.stats;
  ropts.verify = a.verify;
  ropts.time_passes = a.time_passes;
  ropts.print_after.insert(a.print_after.begin(), a.print_after.end());
  KernelInput in = read_and_schedule(a.file, a.hw, a.passes, ropts);
  std::string text = print_kernel(in.kernel, &in.deps);
  if (a.print_deps) text += print_deps(in.kernel, in.deps);
  emit(text, a.out);
  return 0;
}

}  // namespace

void add_opt_command(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<OptArgs>();
  CLI::App* cmd = root.add_subcommand("opt", "Run a pass pipeline over a kernel and print the resulting kernel.");
  cmd->footer(
      "\nPipelines are comma-separated passes with options: "
      "--passes='assign-engines{queues=4,policy=balance}'.\n\n" +
      describe_passes());
  cmd->add_option("file", args->file, "kernel in the .kir text format");
  cmd->add_option("--passes", args->passes,
                  "pass pipeline to run: `default` (the pass specification's composition), `auto` (buffers from the "
                  "model), `none` (no "
                  "pass), or passes separated by commas");
  cmd->add_flag("--list-passes", args->list_passes, "print the pass table (passes, options, defaults) and exit");
  cmd->add_flag("--print-deps", args->print_deps,
                "after the kernel, print every dependence edge: dep %src -> %dst KIND [distance=N]");
  cmd->add_option("--print-after", args->print_after, "print the kernel to stderr after this pass (repeatable)");
  cmd->add_flag("--stats", args->stats, "print each pass's statistics and skip reasons to stderr");
  cmd->add_flag("--verify", args->verify,
                "after each pass, check by symbolic execution that the kernel still computes what the input did "
                "(docs/checker.md); name the first pass that changed it");
  cmd->add_flag("--time-passes", args->time_passes,
                "print each pass's wall time, and the checks' between passes, to stderr after the pipeline");
  cmd->add_option("--hw", args->hw, kHwHelp);
  cmd->add_option("-o,--output", args->out, "write the result here (atomically) instead of stdout");
  cmd->callback([args, &exit_code] { exit_code = run_opt(*args); });
}

}  // namespace tandem::cli
