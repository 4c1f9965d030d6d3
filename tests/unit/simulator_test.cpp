// The SystemC simulator against the plain event loop of tests/oracle/ (an independent
// implementation of the same timing rules without SystemC): both must compute the same
// schedule. SystemC elaborates once per process, so each test case simulates once; ctest
// runs every case in its own process.
#include <catch2/catch.hpp>

#include <iostream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sim/driver/simulator.h"
#include "sim/units/dma_bandwidth.h"
#include "tests/oracle/event_loop.h"

using namespace tandem;

namespace {

void same_schedule(const std::string& workload) {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/" + workload);
  DepGraph g = build_dep_graph(k);
  run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
  SimProgram p = lower_for_simulation(k, g);
  const BaselineResult base = run_event_loop_baseline(p);
  const SimResult sim = simulate(p);
  CHECK(sim.total_ps == base.total_ps);
  CHECK(base.instances == p.dynamic_instructions);
  // simulate() itself refuses a total below the bound; here the bound must have been worked out.
  CHECK(sim.lower_bound_ps > 0);
  // A unit is busy, stalled or idle at any time: its busy and stall time fit in the run. (A
  // DMA queue stalls only while it moves no data: its issue runs ahead of its data phases.)
  for (const UnitResult& u : sim.units) {
    Picos stalled = 0;
    for (Picos s : u.stall_ps) stalled += s;
    INFO(u.name << ": busy " << u.busy_ps << " + stalled " << stalled << " ps, run " << sim.total_ps << " ps");
    CHECK(u.busy_ps + stalled <= sim.total_ps);
  }
  // Exposed DMA is wall time within the run.
  for (const LoopResult& l : sim.loops) CHECK(l.exposed_dma_ps <= sim.total_ps);
}

}  // namespace

TEST_CASE("simulator and event loop agree on the GEMM K loop", "[sim]") { same_schedule("trn/gemm_k.kir"); }
TEST_CASE("simulator and event loop agree on the two-stage loop", "[sim]") { same_schedule("trn/two_stage.kir"); }
TEST_CASE("simulator and event loop agree on the tiled matmul", "[sim]") { same_schedule("trn/matmul_tiled.kir"); }
TEST_CASE("simulator and event loop agree on attention", "[sim]") { same_schedule("trn/attention.kir"); }
TEST_CASE("simulator and event loop agree on the gather", "[sim]") { same_schedule("trn/gather.kir"); }
TEST_CASE("simulator and event loop agree on the all-reduce", "[sim]") { same_schedule("trn/allreduce.kir"); }
TEST_CASE("simulator and event loop agree on the v2 calibration matmul", "[sim]") {
  same_schedule("trn/calibration/matmul_v2_tiled.kir");
}
// The lhsT strip's 64 loads in a row on one queue are bound by its serial setup stage (880 ns
// against 318 ns of engine work each), beside the rhs queues and the matmuls.
TEST_CASE("simulator and event loop agree on the v3 calibration matmul", "[sim]") {
  same_schedule("trn/calibration/matmul_v3_hoisted.kir");
}
TEST_CASE("simulator and event loop agree on the GPU WMMA loop", "[sim]") { same_schedule("gpu/wmma_loop.kir"); }

TEST_CASE("DMA engines share bandwidth equally among the chunks they move", "[dma]") {
  DmaModel m;
  m.engines = 4;
  m.bandwidth_bytes_per_ns = 1;  // 0.001 bytes per ps per engine
  DmaBandwidth bw(m);
  std::vector<int> done;
  // 4000 bytes over all four engines alone: 1000 bytes per engine at 1 byte/ns.
  const int all = bw.start({4000, 0, 4, 1.0}, 0);
  CHECK(bw.next_completion() == Approx(1e6));
  // At 500 ns a 500-byte transfer on engine 2 arrives: engine 2 now moves two chunks at half
  // rate each; engines 0, 1 and 3 go on alone.
  bw.complete_until(5e5, done);
  CHECK(done.empty());
  const int one = bw.start({500, 2, 1, 1.0}, 5e5);
  // Engine 2: 500 bytes of each chunk left at 0.5 bytes/ns: both land at 1500 ns.
  CHECK(bw.next_completion() == Approx(1e6));  // engines 0, 1, 3 finish their part first
  bw.complete_until(1e6, done);
  CHECK(done.empty());  // `all` still has its chunk on engine 2
  CHECK(bw.next_completion() == Approx(1.5e6));
  bw.complete_until(1.5e6, done);
  REQUIRE(done.size() == 2);
  CHECK(((done[0] == all && done[1] == one) || (done[0] == one && done[1] == all)));
}

TEST_CASE("efficiency scales a transfer's share of an engine", "[dma]") {
  DmaModel m;
  m.engines = 1;
  m.bandwidth_bytes_per_ns = 2;
  DmaBandwidth bw(m);
  bw.start({1000, 0, 1, 0.5}, 0);  // 1 byte/ns effective
  CHECK(bw.next_completion() == Approx(1e6));
}

// The least program position a unit can still record (the race checker's min_seq) moves
// within a straight run, in the unit's walk order: list-schedule may reorder a run, so it is
// the least seq_base of the current instruction and those after it in the walk. Held at the
// run's start, it would keep every read and write of a straight-line kernel to the end:
// quadratic.
TEST_CASE("a unit's walk carries the least program position still to come in its run", "[sim]") {
  Kernel k = parse_kernel(R"(kernel @k target = "trn2" {
  tensor %t : sbuf[128, 256] f32
  tensor %u : sbuf[128, 256] f32
  tensor %v : sbuf[128, 256] f32
  %a = activation %t <- %t {func = "exp", order = 0}
  %b = activation %u <- %u {func = "exp", order = 2}
  %c = activation %v <- %v {func = "exp", order = 1}
})",
                          "walk.kir");
  DepGraph g = build_dep_graph(k);
  run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
  SimProgram p = lower_for_simulation(k, g);
  const int unit = p.insts[0].units[0];
  const std::vector<WalkNode>& walk = p.walks[static_cast<size_t>(unit)];
  // Walk order by `order`: a (seq 0), c (seq 2), b (seq 1); least of each suffix: 0, 1, 1.
  REQUIRE(walk.size() == 3);
  CHECK(walk[0].id == 0);
  CHECK(walk[1].id == 2);
  CHECK(walk[2].id == 1);
  CHECK(walk[0].future_seq_base == 0);
  CHECK(walk[1].future_seq_base == 1);
  CHECK(walk[2].future_seq_base == 1);
}
