// The bounds analysis (sched/analysis/loop_bounds.h) on a hand-costed loop.
#include <catch2/catch.hpp>

#include <iostream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/loop_bounds.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sim/driver/simulator.h"
#include "sim/lower/program.h"
#include "tests/unit/test_util.h"

using namespace tandem;

TEST_CASE("loop bounds: the busiest resource and the recurrence that sets the II", "[bounds]") {
  Kernel k = test::parse(
      "  tensor %X : dram[128, 2048] bf16\n"
      "  tensor %t : sbuf[128, 512] bf16\n"
      "  tensor %u : sbuf[128, 512] bf16\n"
      "  loop %i = 0 to 4 {\n"
      "    %ld = load %t <- %X[0:128, %i*512 : %i*512 + 512] on q0\n"
      "    %ad = tensor_tensor %u <- %u, %t on dve\n"
      "  }\n");
  const InstId ld = k.find_inst("ld"), ad = k.find_inst("ad");
  const LoopId i = k.insts[ld].loop;
  BoundsInput in;
  in.kernel = &k;
  in.units = {"dve", "q0"};
  in.unit_is_queue = {false, true};
  in.insts.resize(k.insts.size());
  BoundsInst& l = in.insts[ld];
  l = {ld, "%ld", {1}, false, 100000, 400000, 300000, true, {}, -1, 0, {i}, 4};
  // 2300 bytes on one engine of 23 bytes/ns: 100 ns of engine work.
  l.dma = {2300, 0, 1, 1.0, 0};
  in.insts[ad] = {ad, "%ad", {0}, false, 200000, 200000, 0, false, {}, -1, 0, {i}, 4};
  // The load feeds the add; the add's read of %t holds the next load (one buffer).
  in.edges = {{ld, ad, DepKind::Flow, 0, i}, {ad, ld, DepKind::Anti, 1, i}};
  in.streams = {{{ad}}, {{ld}}};
  const LoopBounds b = loop_bounds(in, i);
  // Resource: dve 200 ns, q0 max(setup 100, data 300) = 300 ns, DMA engine 0 100 ns.
  CHECK(b.resource.ps == 300000);
  CHECK(b.resource.resource == "q0");
  CHECK(b.resource.dma_engine_ps == 100000);
  // Recurrence: load latency 400 + the add's 200 (an Anti edge from a compute engine is
  // released once it has consumed its inputs), over one iteration.
  CHECK(b.recurrence_ps == 600000);
  CHECK(b.recurrence_cause == "%ld -> %ad -> %ld");
  // The kernel: four iterations of each.
  const ResourceBound whole = kernel_resource_bound(in);
  CHECK(whole.ps == 4 * 300000);
  CHECK(whole.dma_total_ps == 4 * 100000);
}

namespace {

// The passes' input (before assign-engines) gives the bounds the simulator reports after it:
// assign-engines' default placement, and the lowering's costs. (SystemC elaborates once per
// process: one simulation per test case.)
void same_bounds_before_assignment(const std::string& workload) {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/" + workload);
  DepGraph g = build_dep_graph(k);
  std::vector<ResourceBound> before;
  {
    const BoundsInput in = bounds_input(k, g);
    for (LoopId l = 0; l < static_cast<LoopId>(k.loops.size()); ++l) before.push_back(loop_resource_bound(in, l));
  }
  run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
  const SimResult sim = simulate(lower_for_simulation(k, g));
  REQUIRE(!sim.loops.empty());
  for (const LoopResult& l : sim.loops) {
    INFO("loop " << k.loops[static_cast<size_t>(l.id)].iv);
    CHECK(before[static_cast<size_t>(l.id)].ps == l.resource_bound_ps);
    CHECK(before[static_cast<size_t>(l.id)].resource == l.bound_resource);
  }
}

}  // namespace

TEST_CASE("loop bounds before assignment: gemm_k (DMA-bound)", "[bounds]") {
  same_bounds_before_assignment("trn/gemm_k.kir");
}
TEST_CASE("loop bounds before assignment: gather", "[bounds]") { same_bounds_before_assignment("trn/gather.kir"); }
TEST_CASE("loop bounds before assignment: layernorm rows (two compute engines)", "[bounds]") {
  same_bounds_before_assignment("trn/user/layernorm_rows.kir");
}
TEST_CASE("loop bounds before assignment: two_stage", "[bounds]") {
  same_bounds_before_assignment("trn/two_stage.kir");
}
// A collective holds its engine through the link transfer and crosses every DMA engine.
TEST_CASE("loop bounds before assignment: allreduce (a collective)", "[bounds]") {
  same_bounds_before_assignment("trn/allreduce.kir");
}
