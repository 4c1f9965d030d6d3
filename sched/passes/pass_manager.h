// Pipelines (`a,b{key=value,flag},c`), the pass table, and running a pipeline over a kernel.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sched/passes/pass.h"
#include "sched/support/error.h"

namespace tandem {

struct PassInfo {
  std::string name;
  std::string help;
  std::vector<PassOptionSpec> options;
  std::function<std::unique_ptr<Pass>(const PassOptions&)> create;
};

// Every pass of pass_registry.def, in table order.
const std::vector<PassInfo>& pass_registry();
const PassInfo* find_pass(const std::string& name);

// Named pipelines: `none` keeps program order and every dependence.
struct NamedPipeline {
  std::string name;
  std::string expansion;
  std::string help;
};
const std::vector<NamedPipeline>& named_pipelines();

struct PipelineStep {
  const PassInfo* pass = nullptr;
  PassOptions options;
  std::string text;  // the step as written, for messages
};

// Parses and checks a pipeline string; errors are located as `--passes:1:COL`.
std::vector<PipelineStep> parse_pipeline(const std::string& text);

// The pipeline string of `steps` (named pipelines expanded): parse_pipeline reads it back.
std::string format_pipeline(const std::vector<PipelineStep>& steps);

// One paragraph per pass and named pipeline, for --help and docs/passes.md.
std::string describe_passes();

// --verify found a pass that changed what the kernel computes. A user-visible Error (exit 1
// in tandem opt and tandem ab); a sweep records the point as `miscompiled`.
class MiscompileError : public Error {
 public:
  using Error::Error;
};

struct RunOptions {
  bool stats = false;
  bool verify =
      false;  // check the result still computes what the input did; if not, name the first pass that changed it
  std::set<std::string> print_after;  // pass names
  bool time_passes = false;           // after the pipeline, each pass's wall time and the checks' (to diag)
};

// Runs `steps` in order. Statistics and --print-after output go to `diag`.
void run_pipeline(Kernel& k, DepGraph& g, const std::vector<PipelineStep>& steps, const RunOptions& opts,
                  std::ostream& diag);

}  // namespace tandem
