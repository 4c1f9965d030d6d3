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
  CostedProgram costed;
  costed.kernel = &k;
  costed.units = {{"dve", UnitKind::Compute}, {"q0", UnitKind::DmaQueue}};
  costed.insts.resize(k.insts.size());
  CostedInst& l = costed.insts[ld];
  l.id = ld;
  l.name = "%ld";
  l.units = {1};
  l.cycles_ps = 100000;
  l.latency_ps = 400000;
  l.data_ps = 300000;
  l.moves_dma = true;
  l.nest = {i};
  l.dynamic_count = 4;
  // 2300 bytes on one engine of 23 bytes/ns: 100 ns of engine work.
  l.dma = {2300, 0, 1, 1.0, 0};
  CostedInst& a = costed.insts[ad];
  a.id = ad;
  a.name = "%ad";
  a.units = {0};
  a.cycles_ps = a.latency_ps = 200000;
  a.nest = {i};
  a.dynamic_count = 4;
  BoundsInput in = bounds_view(costed);
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

namespace {

// Every field of two costed records.
void check_same_record(const CostedInst& a, const CostedInst& b) {
  INFO(a.name);
  CHECK(a.id == b.id);
  CHECK(a.name == b.name);
  CHECK(a.op_class == b.op_class);
  CHECK(a.units == b.units);
  CHECK(a.is_barrier == b.is_barrier);
  CHECK(a.wmma == b.wmma);
  CHECK(a.cycles_ps == b.cycles_ps);
  CHECK(a.latency_ps == b.latency_ps);
  CHECK(a.data_ps == b.data_ps);
  CHECK(a.dma.bytes == b.dma.bytes);
  CHECK(a.dma.first_engine == b.dma.first_engine);
  CHECK(a.dma.engine_count == b.dma.engine_count);
  CHECK(a.dma.efficiency == b.dma.efficiency);
  CHECK(a.dma.overhead_bytes == b.dma.overhead_bytes);
  CHECK(a.moves_dma == b.moves_dma);
  CHECK(a.collective == b.collective);
  CHECK(a.link_ps == b.link_ps);
  CHECK(a.ports == b.ports);
  CHECK(a.pipe == b.pipe);
  CHECK(a.pipe_ps == b.pipe_ps);
  CHECK(a.nest == b.nest);
  CHECK(a.dynamic_count == b.dynamic_count);
}

// The passes' reading of a kernel not yet assigned (Placement::Defaulted) and the simulator's
// reading after assign-engines (the lowering's records) agree on every unit and every field
// of every instruction, the register-load pipe included.
// Returns the pipes the kernel uses.
size_t same_records_before_assignment(const std::string& workload) {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/" + workload);
  DepGraph g = build_dep_graph(k);
  const CostedProgram before = cost_program(k, Placement::Defaulted);
  run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
  const SimProgram lowered = lower_for_simulation(k, g);
  REQUIRE(before.units.size() == lowered.units.size());
  for (size_t u = 0; u < before.units.size(); ++u) CHECK(before.units[u].name == lowered.units[u].name);
  CHECK(before.pipes == lowered.pipes);
  CHECK(before.ports == lowered.ports);
  CHECK(before.dma_fixed_ps == lowered.dma_fixed_ps);
  REQUIRE(before.insts.size() == lowered.insts.size());
  for (size_t i = 0; i < before.insts.size(); ++i) check_same_record(before.insts[i], lowered.insts[i]);
  return lowered.pipes.size();
}

}  // namespace

TEST_CASE("costed records before assignment and as lowered: gemm_k", "[bounds]") {
  same_records_before_assignment("trn/gemm_k.kir");
}
TEST_CASE("costed records before assignment and as lowered: attention", "[bounds]") {
  same_records_before_assignment("trn/attention.kir");
}
TEST_CASE("costed records before assignment and as lowered: allreduce", "[bounds]") {
  same_records_before_assignment("trn/allreduce.kir");
}
// The LDS register pipe and the conflict ports of the GPU model.
TEST_CASE("costed records before assignment and as lowered: wmma_loop", "[bounds]") {
  CHECK(same_records_before_assignment("gpu/wmma_loop.kir") == 1);
}
