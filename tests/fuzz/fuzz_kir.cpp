// .kir kernels: parse, derive the dependences, check the capacity and lower for the simulator
// (everything `tandem sim` does before simulating).
#include "fuzz_input.h"
#include "sched/analysis/allocator.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sim/lower/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tandem::Kernel k = tandem::parse_kernel(std::string(reinterpret_cast<const char*>(data), size), "fuzz.kir");
    tandem::DepGraph g = tandem::build_dep_graph(k);
    (void)tandem::find_capacity_problem(k);
    (void)tandem::lower_for_simulation(k, g);
  } catch (const tandem::Error&) {
  }
  return 0;
}
