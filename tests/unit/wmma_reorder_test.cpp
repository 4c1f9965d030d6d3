// wmma-reorder: the plan and the pass over every order of workloads/gpu/wmma_loop.kir, the
// invariants (the body is only permuted, edits happen in the preheader), refusals, and the
// translation validator catching a wrongly migrated prefetch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <numeric>

#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/translation_validator.h"
#include "sched/analysis/wmma_reorder_plan.h"
#include "sched/ir/parser.h"
#include "sched/ir/printer.h"
#include "sched/passes/pass_manager.h"

using namespace tandem;

namespace {

Kernel load(const std::string& path) { return parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/" + path); }

const char* kSeed = "workloads/gpu/wmma_loop.kir";

void run(Kernel& k, const std::string& pipeline) {
  DepGraph g = build_dep_graph(k);
  run_pipeline(k, g, parse_pipeline(pipeline), RunOptions{}, std::cerr);
}

std::vector<InstId> sorted_body(const Kernel& k, LoopId loop) {
  std::vector<InstId> ids;
  for (const Stmt& s : k.loops[loop].body) ids.push_back(s.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string join(const std::vector<int>& perm) {
  std::string s;
  for (int p : perm) s += (s.empty() ? "" : ":") + std::to_string(p);
  return s;
}

}  // namespace

TEST_CASE("every order and distance only permutes the body and keeps what the kernel computes", "[wmma]") {
  const Kernel original = load(kSeed);
  std::vector<int> perm(4);
  std::iota(perm.begin(), perm.end(), 0);
  int changed = 0;
  do {
    for (int distance = 0; distance <= 4; ++distance) {
      Kernel k = original;
      const std::string pipeline =
          "wmma-reorder{mode=explicit,order=" + join(perm) + ",distance=" + std::to_string(distance) + "}";
      INFO(pipeline);
      run(k, pipeline);
      CHECK(sorted_body(k, 0) == sorted_body(original, 0));  // same instructions, same count
      CHECK(k.loops[0].body.size() == original.loops[0].body.size());
      CHECK_FALSE(find_translation_difference(original, k));
      changed += print_kernel(k) != print_kernel(original);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  CHECK(changed > 100);  // of 120 runs; the identity order at distance 2 is the input itself
}

TEST_CASE("the plan is a pure function of the kernel", "[wmma]") {
  const Kernel k = load(kSeed);
  const std::string before = print_kernel(k);
  DepGraph g = build_dep_graph(k);
  auto reverse = make_wmma_order("reverse", "");
  const WmmaReorderPlan a = plan_wmma_reorder(k, 0, g, *reverse, 2);
  const WmmaReorderPlan b = plan_wmma_reorder(k, 0, g, *reverse, 2);
  CHECK(print_kernel(k) == before);
  CHECK(a.body == b.body);
  CHECK(a.skip_reason.empty());
  REQUIRE(a.stride);
  CHECK(*a.stride == 512);
  CHECK(a.prefetches_added == 4);
  CHECK(a.prefetches_removed == 4);
  // The hard rule: a wrapped load comes after every WMMA reading its registers.
  for (const LoadPlacement& lp : a.loads)
    if (lp.wrapped)
      for (InstId c : lp.consumers) {
        const auto pos = [&](InstId id) { return std::find(a.body.begin(), a.body.end(), id) - a.body.begin(); };
        CHECK(pos(c) < pos(lp.load));
      }
}

TEST_CASE("a refused loop is left byte-identical", "[wmma]") {
  Kernel k = load("tests/lit/passes/wmma/Inputs/no_slot.kir");
  const std::string before = print_kernel(k);
  run(k, "wmma-reorder{mode=reverse,distance=2}");
  CHECK(print_kernel(k) == before);
}

TEST_CASE("virtual registers already in the kernel keep their numbers", "[wmma]") {
  // Hoisting %tb over %w0 moves it to vreg0; a second run hoists %tc over %w1 and must not
  // reuse vreg0, which still holds %tb's value.
  Kernel k = load("tests/lit/passes/wmma/Inputs/three_producers.kir");
  const Kernel original = k;
  run(k, "wmma-reorder{mode=explicit,order=0:1:2,distance=1}");
  run(k, "wmma-reorder{mode=explicit,order=0:1:2,distance=2}");
  const auto file_of = [&](const char* inst) { return k.tensors[k.insts[k.find_inst(inst)].writes[0].tensor_id].name; };
  CHECK(file_of("tb0") == "vreg0");
  CHECK(file_of("tc0") == "vreg1");
  CHECK_FALSE(find_translation_difference(original, k));
}

TEST_CASE("the validator catches a prefetch migrated with a wrong stride or before its last reader", "[wmma]") {
  const Kernel original = load(kSeed);
  Kernel good = original;
  run(good, "wmma-reorder{mode=reverse,distance=2}");
  REQUIRE_FALSE(find_translation_difference(original, good));

  Kernel wrong_stride = good;
  Access& a = wrong_stride.insts[wrong_stride.find_inst("l3a")].reads[0];
  REQUIRE(a.dims[0].lo.constant == 608);
  a.dims[0].lo = a.dims[0].lo + -256;  // one 256-byte stride ahead instead of 512
  a.dims[0].hi = a.dims[0].hi + -256;
  CHECK(find_translation_difference(original, wrong_stride));

  Kernel too_early = good;
  too_early.move_before(too_early.find_inst("l3a"), too_early.find_inst("w3"));  // clobbers A3 before %w3 reads it
  CHECK(find_translation_difference(original, too_early));
}

TEST_CASE("colliding producers of one register group move to a virtual register; distinct ones never do", "[wmma]") {
  Kernel k = load("tests/lit/passes/wmma/Inputs/double_buffer.kir");
  const Kernel original = k;
  run(k, "wmma-reorder{mode=reverse,distance=1}");
  const auto tensor_of = [&](const char* inst, bool write, size_t i = 0) {
    const Instruction& in = k.insts[k.find_inst(inst)];
    return k.tensors[(write ? in.writes : in.reads)[i].tensor_id].name;
  };
  CHECK(tensor_of("lb0", true) == "vreg0");
  CHECK(tensor_of("lb1", true) == "vreg0");
  CHECK(tensor_of("w1", false, 0) == "vreg0");
  CHECK(tensor_of("la0", true) == "v");
  CHECK(tensor_of("w0", false, 0) == "v");
  CHECK_FALSE(find_translation_difference(original, k));

  Kernel seed = load(kSeed);
  run(seed, "wmma-reorder{mode=reverse,distance=2}");
  for (const Instruction& in : seed.insts)
    for (const Access& acc : in.writes) CHECK(seed.tensors[acc.tensor_id].name.find("reg") == std::string::npos);
}

TEST_CASE("the vgpr mode orders for the least live operand registers and declines without grouping", "[wmma]") {
  Kernel tiles = load("tests/lit/passes/wmma/Inputs/tiles.kir");
  DepGraph g = build_dep_graph(tiles);
  auto vgpr = make_wmma_order("vgpr", "");
  const WmmaReorderPlan plan = plan_wmma_reorder(tiles, 0, g, *vgpr, 1);
  REQUIRE(plan.skip_reason.empty());
  std::vector<std::string> names;
  for (InstId w : plan.wmmas) names.push_back(tiles.insts[w].name);
  CHECK(names == std::vector<std::string>{"w00", "w01", "w11", "w10"});

  const Kernel seed = load(kSeed);
  const WmmaReorderPlan declined = plan_wmma_reorder(seed, 0, build_dep_graph(seed), *vgpr, 1);
  CHECK(declined.skip_reason == "WMMA %w0 carries no operand grouping (a_tile/b_tile)");
}
