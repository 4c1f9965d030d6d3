// Pipeline strings (--passes): parse, then run on a small bundled kernel with the structural
// verifier after every pass, as `tandem opt` does. A pipeline that runs prefetch-schedule more
// than once also runs on the gather kernel, whose indirect loads the later runs reorder.
#include "fuzz_input.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"

#include <algorithm>
#include <sstream>

namespace {

void run_on(const tandem::Kernel& base, const std::vector<tandem::PipelineStep>& steps) {
  tandem::Kernel k = base;
  tandem::DepGraph g = tandem::build_dep_graph(k);
  std::ostringstream log;
  tandem::run_pipeline(k, g, steps, {}, log);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tandem::Kernel gemm =
      tandem::parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  static const tandem::Kernel gather =
      tandem::parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gather.kir");
  try {
    const auto steps = tandem::parse_pipeline(std::string(reinterpret_cast<const char*>(data), size));
    run_on(gemm, steps);
    const auto prefetches = std::count_if(steps.begin(), steps.end(), [](const tandem::PipelineStep& s) {
      return s.pass && s.pass->name == "prefetch-schedule";
    });
    if (prefetches > 1) run_on(gather, steps);
  } catch (const tandem::Error&) {
  }
  return 0;
}
