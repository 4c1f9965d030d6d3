// Pipeline strings (--passes): parse, then run on a small bundled kernel with the structural
// verifier after every pass, as `tandem opt` does.
#include "fuzz_input.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tandem::Kernel base =
      tandem::parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  try {
    const auto steps = tandem::parse_pipeline(std::string(reinterpret_cast<const char*>(data), size));
    tandem::Kernel k = base;
    tandem::DepGraph g = tandem::build_dep_graph(k);
    std::ostringstream log;
    tandem::run_pipeline(k, g, steps, {}, log);
  } catch (const tandem::Error&) {
  }
  return 0;
}
