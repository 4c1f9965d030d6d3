// Which channels the units may leave out (sim/lower/implied_channels.h): on the GEMM K loop
// without passes, each load's output edge to its own next iteration is implied by the load's
// flow into the matmul and the matmul's anti edge back; nothing else is. Variants of the same
// program that only look alike (distances that do not add up, an Ordered edge, a per-tile
// edge, a matmul that may take no time) keep every channel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sim/lower/implied_channels.h"
#include "sim/lower/program.h"

using namespace tandem;

namespace {

struct Gemm {
  Kernel k;
  DepGraph g;
  SimProgram p;
  Gemm() {
    k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
    g = build_dep_graph(k);
    run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
    p = lower_for_simulation(k, g);
  }
  // The channel src -> dst at `distance`.
  SimChannel& channel(const std::string& src, const std::string& dst, int distance) {
    for (SimChannel& c : p.channels)
      if (p.insts[static_cast<size_t>(c.src)].name == src && p.insts[static_cast<size_t>(c.dst)].name == dst &&
          c.distance == distance)
        return c;
    throw std::runtime_error("no channel " + src + " -> " + dst + " at distance " + std::to_string(distance));
  }
  // The channels left out, as "src->dst/distance".
  std::vector<std::string> dropped(double spread = 0) const {
    std::vector<bool> implied = implied_channels(p, spread);
    std::vector<std::string> out;
    for (size_t i = 0; i < implied.size(); ++i)
      if (implied[i])
        out.push_back(p.insts[static_cast<size_t>(p.channels[i].src)].name + "->" +
                      p.insts[static_cast<size_t>(p.channels[i].dst)].name + "/" +
                      std::to_string(p.channels[i].distance));
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

TEST_CASE("a load's output edge to its next iteration is implied by the matmul between", "[sim][implied]") {
  Gemm gemm;
  // The edges the rule reads, as the analysis gives them.
  CHECK(gemm.channel("%la", "%la", 1).kind == DepKind::Output);
  CHECK(gemm.channel("%la", "%mm", 0).kind == DepKind::Flow);
  CHECK(gemm.channel("%mm", "%la", 1).kind == DepKind::Anti);
  CHECK(gemm.dropped() == std::vector<std::string>{"%la->%la/1", "%lb->%lb/1"});
  // Jitter that cannot take the matmul's time to zero changes nothing.
  CHECK(gemm.dropped(0.5) == std::vector<std::string>{"%la->%la/1", "%lb->%lb/1"});
}

TEST_CASE("a path whose distances do not add up implies nothing", "[sim][implied]") {
  Gemm gemm;
  gemm.channel("%la", "%la", 1).distance = 2;
  CHECK(gemm.dropped() == std::vector<std::string>{"%lb->%lb/1"});
}

TEST_CASE("an Ordered edge implies no later time", "[sim][implied]") {
  SECTION("from b: it carries b's start, which a's channel may equal (and then bind)") {
    Gemm gemm;
    gemm.channel("%mm", "%la", 1).kind = DepKind::Ordered;
    CHECK(gemm.dropped() == std::vector<std::string>{"%lb->%lb/1"});
  }
  SECTION("from a: it carries a's start, earlier than the completion a -> c carries") {
    Gemm gemm;
    gemm.channel("%la", "%mm", 0).kind = DepKind::Ordered;
    CHECK(gemm.dropped() == std::vector<std::string>{"%lb->%lb/1"});
  }
}

TEST_CASE("a per-tile edge implies nothing", "[sim][implied]") {
  Gemm gemm;
  SimChannel& c = gemm.channel("%la", "%mm", 0);
  c.tile_key = {0};
  c.src_tile = c.dst_tile = {};
  CHECK(gemm.dropped() == std::vector<std::string>{"%lb->%lb/1"});
}

TEST_CASE("a b that may take no time implies nothing", "[sim][implied]") {
  Gemm gemm;
  SimInst& mm = gemm.p.insts[static_cast<size_t>(gemm.channel("%mm", "%la", 1).src)];
  mm.cycles_ps = 2;
  CHECK(gemm.dropped() == std::vector<std::string>{"%la->%la/1", "%lb->%lb/1"});
  // A spread of 0.75 may take its 2 ps to 0.5, floored to none at all.
  CHECK(gemm.dropped(0.75).empty());
  mm.cycles_ps = 0;
  CHECK(gemm.dropped().empty());
}
