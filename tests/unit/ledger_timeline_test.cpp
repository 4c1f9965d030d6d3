// Which iterations the ledger keeps in the report's timeline: the first, a window of four
// consecutive iterations from the middle and the last of the loop with the most iterations
// (docs/metrics.md), for loops short enough that these overlap and for a long one.
#include <catch2/catch.hpp>

#include <iostream>
#include <set>
#include <string>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sim/driver/isolated.h"
#include "sim/driver/simulator.h"

using namespace tandem;

namespace {

// The iterations the timeline of a GEMM K loop of `trips` iterations holds, then how many
// spans: "0 1 2 | 9" (simulated in a child process: SystemC elaborates once per process).
std::string timeline_iterations(int64_t trips) {
  const std::string source = R"(kernel @k target = "trn2" {
  tensor %A : dram[128, 8192] bf16
  tensor %B : dram[8192, 512] bf16
  tensor %a : sbuf[128, 128] bf16
  tensor %b : sbuf[128, 512] bf16
  tensor %acc : psum[128, 512] f32
  %z = memset %acc {value = 0}
  loop %k = 0 to )" + std::to_string(trips) +
                             R"( {
    %la = load %a <- %A[0:128, %k*128 : %k*128 + 128]
    %lb = load %b <- %B[%k*128 : %k*128 + 128, 0:512]
    %mm = matmul %acc <- %a, %b {accumulate}
  }
}
)";
  return run_isolated([&] {
    Kernel k = parse_kernel(source, "timeline.kir");
    DepGraph g = build_dep_graph(k);
    run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
    SimOptions options;
    options.capture_timeline = true;
    const SimResult r = simulate(lower_for_simulation(k, g), options);
    std::set<int64_t> iterations;
    for (const TimelineSpan& s : r.timeline) iterations.insert(s.iteration);
    std::string out = r.timeline_loop + ":";
    for (const int64_t i : iterations) out += " " + std::to_string(i);
    return out + " | " + std::to_string(r.timeline.size());
  });
}

}  // namespace

TEST_CASE("the timeline keeps the first, four middle and the last iterations", "[ledger]") {
  // Each iteration's spans: both loads and the matmul.
  CHECK(timeline_iterations(1) == "%k: 0 | 3");
  CHECK(timeline_iterations(2) == "%k: 0 1 | 6");
  CHECK(timeline_iterations(5) == "%k: 0 1 2 3 4 | 15");
  CHECK(timeline_iterations(8) == "%k: 0 3 4 5 6 7 | 18");
  CHECK(timeline_iterations(9) == "%k: 0 3 4 5 6 8 | 18");
  CHECK(timeline_iterations(64) == "%k: 0 31 32 33 34 63 | 18");
}
