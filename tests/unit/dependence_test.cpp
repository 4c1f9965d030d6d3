#include <catch2/catch.hpp>

#include "sched/analysis/tile_dependence.h"
#include "test_util.h"

using namespace tandem;
using tandem::test::edge;
using tandem::test::parse;

TEST_CASE("a doubled edge keeps the stronger kind", "[deps]") {
  DepGraph g(2);
  CHECK(g.add(0, 1, DepKind::Anti));
  CHECK_FALSE(g.add(0, 1, DepKind::Ordered));
  CHECK(g.find(0, 1)->kind == DepKind::Anti);
  CHECK(g.add(0, 1, DepKind::Flow));
  CHECK(g.find(0, 1)->kind == DepKind::Flow);
  CHECK(g.num_edges() == 1);
  // The same pair at another distance is another dependence.
  CHECK(g.add(0, 1, DepKind::Ordered, 1, 0));
  CHECK(g.num_edges() == 2);
  CHECK(g.remove(0, 1));
  CHECK(g.num_edges() == 1);
  CHECK(g.find(0, 1, 1, 0)->kind == DepKind::Ordered);
}

TEST_CASE("removing edges keeps the order of the others at both ends, also after growing and moving", "[deps]") {
  DepGraph g(4);
  auto dsts = [&](InstId v) {
    std::vector<InstId> out;
    for (const DepEdgeRef& e : g.outgoing(v)) out.push_back(e.dst);
    return out;
  };
  auto srcs = [&](InstId v) {
    std::vector<InstId> out;
    for (const DepEdgeRef& e : g.incoming(v)) out.push_back(e.src);
    return out;
  };
  g.add(0, 3, DepKind::Flow);
  g.add(0, 1, DepKind::Anti);
  g.add(0, 2, DepKind::Flow);
  g.add(0, 1, DepKind::Output, 1, 0);  // another edge: its own distance
  g.add(2, 1, DepKind::Flow);
  CHECK(g.remove(0, 3));
  CHECK_FALSE(g.remove(0, 3));
  CHECK(g.remove(0, 2));
  CHECK(dsts(0) == std::vector<InstId>{1, 1});
  CHECK(srcs(1) == std::vector<InstId>{0, 0, 2});
  CHECK(g.num_edges() == 3);
  CHECK(g.remove(0, 1));  // the distance-0 one only
  g.grow(5);
  DepGraph moved = std::move(g);
  g = std::move(moved);  // a move takes the graph whole
  CHECK(g.num_vertices() == 5);
  CHECK(g.num_edges() == 2);
  CHECK(srcs(1) == std::vector<InstId>{0, 2});
  REQUIRE(g.find(0, 1, 1, 0));
  CHECK(g.find(0, 1, 1, 0)->kind == DepKind::Output);
  CHECK_FALSE(g.find(0, 1));
  std::vector<std::pair<InstId, InstId>> all;
  g.for_each_edge([&](const DepEdgeRef& e) { all.emplace_back(e.src, e.dst); });
  CHECK(all == std::vector<std::pair<InstId, InstId>>{{0, 1}, {2, 1}});
  g.add(4, 0, DepKind::Flow);
  CHECK(srcs(0) == std::vector<InstId>{4});
  CHECK(g.edges().size() == 3);
}

TEST_CASE("the GEMM K loop has its flow, carried anti and accumulator edges", "[deps]") {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  DepGraph g = build_dep_graph(k);
  REQUIRE(edge(k, g, "la", "mm"));
  CHECK(edge(k, g, "la", "mm")->kind == DepKind::Flow);
  REQUIRE(edge(k, g, "mm", "la", 1));
  CHECK(edge(k, g, "mm", "la", 1)->kind == DepKind::Anti);
  CHECK(edge(k, g, "mm", "la", 1)->loop == 0);
  CHECK(edge(k, g, "mm", "lb", 1)->kind == DepKind::Anti);
  CHECK(edge(k, g, "mm", "mm", 1)->kind == DepKind::Flow);
  CHECK(edge(k, g, "z", "mm")->kind == DepKind::Flow);
  CHECK_FALSE(edge(k, g, "mm", "la"));     // not at distance 0
  CHECK_FALSE(edge(k, g, "la", "mm", 1));  // hidden by la of the same iteration
  CHECK(g.num_edges() == 10);
}

TEST_CASE("carried distances are the smallest gap at which accesses overlap", "[deps]") {
  Kernel k = parse(
      "  tensor %t : sbuf[128, 64] f32\n"
      "  tensor %u : sbuf[128, 4] f32\n"
      "  loop %i = 3 to 60 {\n"
      "    %w = memset %t[0:128, %i]\n"
      "    %r = activation %u <- %t[0:128, %i - 3 : %i + 1]\n"
      "  }\n");
  DepGraph g = build_dep_graph(k);
  // %r reads columns i-3..i: written this iteration (distance 0) and by the previous three.
  CHECK(edge(k, g, "w", "r")->kind == DepKind::Flow);
  CHECK(edge(k, g, "w", "r", 1)->kind == DepKind::Flow);
  CHECK_FALSE(edge(k, g, "w", "r", 2));  // only the smallest distance is recorded
  CHECK_FALSE(edge(k, g, "r", "w", 1));  // %r never reads a column %w writes later
}

TEST_CASE("a loop whose accesses never meet across iterations has no carried edge", "[deps]") {
  Kernel k = parse(
      "  tensor %A : dram[128, 1024] bf16\n"
      "  tensor %B : dram[128, 1024] bf16\n"
      "  loop %i = 0 to 8 {\n"
      "    %c = dma_copy %B[0:128, %i*128 : %i*128 + 128] <- %A[0:128, %i*128 : %i*128 + 128]\n"
      "  }\n");
  DepGraph g = build_dep_graph(k);
  CHECK(g.num_edges() == 0);
}

TEST_CASE("writes that together cover a read hide older writers", "[deps]") {
  Kernel k = parse(
      "  tensor %lds : lds[65536] u8\n"
      "  loop %i = 0 to 4 {\n"
      "    %a = ds_load_b128 v[36:39] <- %lds[v10 + 0]\n"
      "    %b = ds_load_b128 v[40:43] <- %lds[v10 + 16]\n"
      "    %w = v_wmma_f32_16x16x32_bf16 v[100:107] <- v[36:43], v[60:67], v[100:107]\n"
      "  }\n",
      "gpu-cu");
  DepGraph g = build_dep_graph(k);
  CHECK(edge(k, g, "a", "w")->kind == DepKind::Flow);
  CHECK(edge(k, g, "b", "w")->kind == DepKind::Flow);
  CHECK_FALSE(edge(k, g, "a", "w", 1));
  CHECK_FALSE(edge(k, g, "b", "w", 1));
  CHECK(edge(k, g, "w", "a", 1)->kind == DepKind::Anti);
}

TEST_CASE("consecutive transfers on one DMA queue are Ordered, also around the loop", "[deps]") {
  Kernel k = parse(
      "  tensor %A : dram[128, 1024] bf16\n"
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  tensor %b : sbuf[128, 128] bf16\n"
      "  loop %i = 0 to 8 {\n"
      "    %x = load %a <- %A[0:128, %i*128 : %i*128 + 128] on q2\n"
      "    %y = load %b <- %A[0:128, 0:128] on q2\n"
      "  }\n");
  DepGraph g = build_dep_graph(k);
  CHECK(edge(k, g, "x", "y")->kind == DepKind::Ordered);
  CHECK(edge(k, g, "y", "x", 1)->kind == DepKind::Ordered);
  CHECK(edge(k, g, "x", "x", 1)->kind == DepKind::Output);  // stronger than the queue order
}

TEST_CASE("explicit edges add to analysis, or replace it when deps are listed", "[deps]") {
  const std::string body =
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  tensor %b : sbuf[128, 128] bf16\n"
      "  %x = memset %a\n"
      "  %y = memset %b\n"
      "  %r = activation %b <- %a\n"
      "  dep %x -> %y ordered\n";
  Kernel derived = parse(body);
  DepGraph g = build_dep_graph(derived);
  CHECK(edge(derived, g, "x", "y")->is_explicit);
  CHECK(edge(derived, g, "x", "r")->kind == DepKind::Flow);

  Kernel listed = parse_kernel("kernel @t target = \"trn2\" {deps_listed} {\n" + body + "}\n", "t.kir");
  DepGraph gl = build_dep_graph(listed);
  CHECK(gl.num_edges() == 1);
  CHECK(edge(listed, gl, "x", "y"));
}

TEST_CASE("a cycle at distance 0 is reported at the dep line that closes it", "[deps]") {
  Kernel k = parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  %x = memset %a\n"
      "  %y = activation %a <- %a\n"
      "  dep %y -> %x ordered\n");
  try {
    build_dep_graph(k);
    FAIL("expected a cycle error");
  } catch (const Error& e) {
    CHECK(e.loc().line == 5);
    CHECK(e.message() == "dependence cycle: %x -> %y -> %x");
  }
}

TEST_CASE("per-tile maps between sibling loops", "[deps]") {
  // A load loop of 4 tiles, then a loop reading tile `IDX` (sched/analysis/tile_dependence.h).
  auto kernel = [](const std::string& idx) {
    return parse(
        "  tensor %B : dram[128, 32] bf16\n  tensor %s : sbuf[128, 4, 8] bf16\n  tensor %o : sbuf[128, 8] bf16\n"
        "  loop %r = 0 to 2 {\n"
        "    loop %i = 0 to 4 {\n      %ld = load %s[0:128, %i, 0:8] <- %B[0:128, %i*8 : %i*8 + 8]\n    }\n"
        "    loop %k = 0 to 4 {\n      %use = tensor_copy %o <- %s[0:128, " +
        idx +
        ", 0:8]\n    }\n"
        "  }\n");
  };
  Kernel fwd = kernel("%k");
  auto m = tile_map(fwd, fwd.find_inst("ld"), fwd.find_inst("use"));
  REQUIRE(m);
  CHECK(m->wait_for == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(m->src_instances == 4);
  CHECK(fwd.loops[m->common].iv == "%r");
  // Every reader reads tile 1: each waits for load 1 only, not for loads 2 and 3.
  Kernel odd = kernel("1");
  auto one = tile_map(odd, odd.find_inst("ld"), odd.find_inst("use"));
  REQUIRE(one);
  CHECK(one->wait_for == std::vector<int64_t>{1, 1, 1, 1});
  // Read in reverse, the first reader needs the last tile: whole-loop.
  Kernel rev = kernel("-%k + 3");
  CHECK_FALSE(tile_map(rev, rev.find_inst("ld"), rev.find_inst("use")));
}

TEST_CASE("per-tile maps for loop-carried edges", "[deps]") {
  // Block %r + 1's loads overwrite the strip block %r's readers read: the carried anti edge
  // maps load i of the next block to the reader of tile i (`LD` and `USE`: the tile indices).
  auto kernel = [](const std::string& ld, const std::string& use) {
    return parse(
        "  tensor %B : dram[128, 64] bf16\n  tensor %s : sbuf[128, 5, 8] bf16\n  tensor %o : sbuf[128, 8] bf16\n"
        "  loop %r = 0 to 2 {\n"
        "    loop %i = 0 to 4 {\n      %ld = load %s[0:128, " +
        ld +
        ", 0:8] <- %B[0:128, %r*32 + %i*8 : %r*32 + %i*8 + 8]\n    }\n"
        "    loop %k = 0 to 4 {\n      %use = tensor_copy %o <- %s[0:128, " +
        use +
        ", 0:8]\n    }\n"
        "  }\n");
  };
  Kernel fwd = kernel("%i", "%k");
  const LoopId r = 0;
  REQUIRE(fwd.loops[r].iv == "%r");
  DepGraph g = build_dep_graph(fwd);
  REQUIRE(edge(fwd, g, "use", "ld", 1));
  CHECK(edge(fwd, g, "use", "ld", 1)->kind == DepKind::Anti);
  CHECK(edge(fwd, g, "use", "ld", 1)->loop == r);
  auto m = tile_map(fwd, fwd.find_inst("use"), fwd.find_inst("ld"), 1, r);
  REQUIRE(m);
  CHECK(m->wait_for == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(m->common == r);
  CHECK(m->src_instances == 4);
  // The load's own carried output edge: load i waits for the previous block's load i.
  auto self = tile_map(fwd, fwd.find_inst("ld"), fwd.find_inst("ld"), 1, r);
  REQUIRE(self);
  CHECK(self->wait_for == std::vector<int64_t>{0, 1, 2, 3});
  // The strip slides by one tile per block: load i of block r + 1 writes tile r + 1 + i, which
  // block r's reader i + 1 read (the shift by the distance); the last load, nothing.
  Kernel slide = kernel("%r + %i", "%r + %k");
  auto s = tile_map(slide, slide.find_inst("use"), slide.find_inst("ld"), 1, r);
  REQUIRE(s);
  CHECK(s->wait_for == std::vector<int64_t>{1, 2, 3, 3});
  // Read in reverse, the first load of the next block overwrites what the last reader read:
  // whole-loop.
  Kernel rev = kernel("%i", "-%k + 3");
  CHECK_FALSE(tile_map(rev, rev.find_inst("use"), rev.find_inst("ld"), 1, r));
  // The two sides move differently with %r: the map would change from block to block.
  Kernel moving = kernel("%i", "%r + %k");
  CHECK_FALSE(tile_map(moving, moving.find_inst("use"), moving.find_inst("ld"), 1, r));
  // A distance the loop never reaches has no map.
  CHECK_FALSE(tile_map(fwd, fwd.find_inst("use"), fwd.find_inst("ld"), 2, r));
  // The simulator holds distance + 2 iterations of source keys: at most 2^18 (4 per iteration).
  Kernel far = parse(
      "  tensor %B : dram[128, 32] bf16\n  tensor %s : sbuf[128, 4, 8] bf16\n  tensor %o : sbuf[128, 8] bf16\n"
      "  loop %r = 0 to 70000 {\n"
      "    loop %i = 0 to 4 {\n      %ld = load %s[0:128, %i, 0:8] <- %B[0:128, %i*8 : %i*8 + 8]\n    }\n"
      "    loop %k = 0 to 4 {\n      %use = tensor_copy %o <- %s[0:128, %k, 0:8]\n    }\n"
      "  }\n");
  CHECK(tile_map(far, far.find_inst("use"), far.find_inst("ld"), 65534, r));
  CHECK_FALSE(tile_map(far, far.find_inst("use"), far.find_inst("ld"), 65535, r));
}
