// The one DMA cost function (sched/target/dma_cost.h) and its users: the lowering for
// simulation and the prefetch depth must count a transfer alike.
#include <catch2/catch.hpp>

#include <iostream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/prefetch_depth.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sched/target/dma_cost.h"
#include "sim/lower/program.h"

using namespace tandem;

TEST_CASE("a transfer's engines, efficiency and overheads come from its shape", "[dma]") {
  DmaModel m;
  m.engines = 16;
  m.partitions_per_engine = 8;
  m.bandwidth_bytes_per_ns = 1;
  m.engine_overhead_ns = 100;
  m.descriptor_overhead_ns = 5;
  // 128 partitions of 256 bytes from partition 0, one run each: 16 engines from engine 0;
  // each moves 32768 / 16 = 2048 bytes plus 100 + (128 x 1 / 16) x 5 = 140 ns of fixed work.
  DmaTransfer all = dma_transfer(m, {32768, 128, 0, 1});
  CHECK(all.first_engine == 0);
  CHECK(all.engine_count == 16);
  CHECK(all.overhead_bytes == Approx(140));
  CHECK(dma_data_ns(m, all) == Approx(2048 + 140));
  // 16 partitions from partition 12 span partitions 12..27: engines 1, 2 and 3; 4 runs per
  // partition give 64 descriptors over 3 engines.
  DmaTransfer some = dma_transfer(m, {4096, 16, 12, 4});
  CHECK(some.first_engine == 1);
  CHECK(some.engine_count == 3);
  CHECK(some.overhead_bytes == Approx(100 + 64.0 / 3 * 5));
  // A descriptor count given whole (an off-chip side with more runs than partitions): 512 runs
  // of 64 partitions over their 8 engines, 64 each: 100 + 64 x 5 = 420 ns of fixed work.
  DmaTransfer window = dma_transfer(m, {16384, 64, 0, 1, 512});
  CHECK(window.engine_count == 8);
  CHECK(window.overhead_bytes == Approx(420));
  // No partitioned side: every engine, one row each.
  DmaTransfer flat = dma_transfer(m, {1600, 0, 0, 1});
  CHECK(flat.engine_count == 16);
  CHECK(flat.overhead_bytes == Approx(105));
  // Efficiency by bytes per partition: 256 bytes per partition at half the bandwidth.
  m.efficiency = {{0, 0.5}, {512, 0.5}, {1024, 1.0}};
  CHECK(dma_transfer(m, {32768, 128, 0, 1}).efficiency == Approx(0.5));
  CHECK(dma_data_ns(m, dma_transfer(m, {32768, 128, 0, 1})) == Approx((2048 + 140) / 0.5));
}

TEST_CASE("the prefetch depth times a load as the simulator does", "[dma]") {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  DepGraph g = build_dep_graph(k);
  run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
  const SimProgram p = lower_for_simulation(k, g);
  const InstId la = k.find_inst("la"), mm = k.find_inst("mm");
  const auto depth = prefetch_depth(bounds_input(k, g), k.insts[la].loop, k.find_tensor("a"), {la}, {mm});
  REQUIRE(depth);
  // %la's latency, issue to last byte: the fixed cost plus its data time, overheads included
  // (trn2: 880 + (32768 / 16 + (100 + 8 x 5) x 23) / 23 = 880 + 229.0 ns).
  const SimInst& s = p.insts[static_cast<size_t>(la)];
  CHECK(depth->load_latency_ns == Approx(static_cast<double>(s.latency_ps) / 1000).margin(0.001));
  CHECK(depth->load_latency_ns == Approx(880 + (2048 + 140 * 23) / 23.0).margin(0.001));
}
