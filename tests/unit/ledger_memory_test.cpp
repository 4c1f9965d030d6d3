// The ledger's memory: the busy intervals and spans it still holds after a finalization
// (SimResult::ledger_peak_spans, the most over the run) are bounded by how far the units run
// ahead of each other, not by the instances of a loop nor of an outer loop's iteration. Robust reproducer
// 07-nested-loop-dma-slowdown.kir: a DMA load in an inner loop under an outer loop, where the
// outer iteration stays open while its inner loop runs; the part of that iteration's spans the
// watermark has passed is folded into sums, so the ledger holds no span of it.
#include <catch2/catch.hpp>

#include <iostream>
#include <string>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sim/driver/isolated.h"
#include "sim/driver/simulator.h"

using namespace tandem;

namespace {

// `body` inside `nest` (e.g. "loop %a = 0 to 4 {\nloop %d = 0 to 100 {"), closed; simulated in
// a child process (SystemC elaborates once per process): the ledger's peak and the total time.
std::pair<int64_t, int64_t> peak_spans(const std::string& nest, int loops, const std::string& body) {
  std::string source = R"(kernel @k target = "trn2" {
  tensor %X : dram[128, 1024] f32
  tensor %t : sbuf[128, 256] f32
)" + nest + "\n" + body;
  for (int i = 0; i < loops; ++i) source += "}\n";
  source += "}\n";
  const std::string out = run_isolated([&] {
    Kernel k = parse_kernel(source, "nested.kir");
    DepGraph g = build_dep_graph(k);
    run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
    // Every instance simulated: fast-forward holds up to a chunk of skipped periods as well.
    SimOptions o;
    o.fast_forward = false;
    const SimResult r = simulate(lower_for_simulation(k, g), o);
    return std::to_string(r.ledger_peak_spans) + " " + std::to_string(r.total_ps);
  });
  const size_t space = out.find(' ');
  return {std::stoll(out.substr(0, space)), std::stoll(out.substr(space + 1))};
}

const char* kLoadExp =
    "%l = load %t <- %X[0:128, 0:256]\n"
    "%e = activation %t <- %t {func = \"exp\"}\n";

}  // namespace

TEST_CASE("a DMA load in an inner loop: the ledger holds as much as for a flat loop", "[ledger]") {
  const auto flat = peak_spans("loop %d = 0 to 20000 {", 1, kLoadExp);
  const auto nested = peak_spans("loop %a = 0 to 2 {\nloop %d = 0 to 10000 {", 2, kLoadExp);
  const auto deeper = peak_spans("loop %a = 0 to 2 {\nloop %b = 0 to 2 {\nloop %d = 0 to 5000 {", 3, kLoadExp);
  INFO("flat " << flat.first << ", nested " << nested.first << ", three deep " << deeper.first);
  // The same instructions in the same order: the same time.
  CHECK(nested.second == flat.second);
  CHECK(deeper.second == flat.second);
  // Each outer iteration sees 10,000 transfers with gaps between them: held whole, 29,952
  // spans and intervals at the peak (39,920 three deep); a flat loop holds a handful.
  CHECK(flat.first < 100);
  CHECK(nested.first <= flat.first + 64);
  CHECK(deeper.first <= flat.first + 64);
}
