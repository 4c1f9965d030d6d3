#include <catch2/catch.hpp>

#include "sched/ir/kernel_queries.h"
#include "test_util.h"

using namespace tandem;
using tandem::test::parse;

namespace {

const char* kNest =
    "  tensor %A : dram[128, 1024] bf16\n"
    "  tensor %a : sbuf[128, 64] bf16\n"
    "  tensor %p : psum[128, 512] f32\n"
    "  loop %i = 0 to 4 {\n"
    "    loop %j = 2 to 5 {\n"
    "      %la = load %a <- %A[0:128, %i*256 + %j*64 - 128 : %i*256 + %j*64 - 64]\n"
    "      %cp = tensor_copy %a <- %a\n"
    "      %mm = matmul %p <- %a, %a on pe\n"
    "    }\n"
    "  }\n"
    "  %bar = core_barrier\n";

}  // namespace

TEST_CASE("engine choices: its own, else its opcode's engines, else every DMA queue", "[queries]") {
  Kernel k = parse(kNest);
  // trn2: tensor_copy on dve, act, pool (preferred first); load on dma; core_barrier on none.
  CHECK(engine_choices(k, k.find_inst("cp")) == std::vector<std::string>{"dve", "act", "pool"});
  CHECK(known_engine(k, k.find_inst("cp")).empty());
  CHECK(preferred_engine(k, k.find_inst("cp")) == "dve");
  CHECK(engine_choices(k, k.find_inst("mm")) == std::vector<std::string>{"pe"});
  CHECK(known_engine(k, k.find_inst("mm")) == "pe");
  CHECK(engine_choices(k, k.find_inst("la")).size() == 16);  // trn2 has 16 queues
  CHECK(preferred_engine(k, k.find_inst("la")) == "q0");
  CHECK(engine_choices(k, k.find_inst("bar")).empty());
}

TEST_CASE("sizes, dynamic counts and positions", "[queries]") {
  Kernel k = parse(kNest);
  const Tensor& a = k.tensors[static_cast<size_t>(k.find_tensor("a"))];
  const Tensor& big = k.tensors[static_cast<size_t>(k.find_tensor("A"))];
  CHECK(partitions_of(k, a) == 128);
  CHECK(bytes_per_partition(k, a) == 64 * 2);  // bf16
  CHECK(partitions_of(k, big) == 1);           // DRAM has no partitions: one row of the whole
  CHECK(bytes_per_partition(k, big) == 128 * 1024 * 2);
  const InstId la = k.find_inst("la");
  const LoopId i = k.loops[static_cast<size_t>(k.insts[static_cast<size_t>(la)].loop)].parent;
  CHECK(dynamic_count(k, la) == 4 * 3);
  CHECK(instances_within(k, k.insts[static_cast<size_t>(la)].loop, i) == 3);
  CHECK(instances_within(k, i) == 4);
  CHECK(dynamic_count(k, k.find_inst("bar")) == 1);
  const std::vector<int> pos = program_positions(k);
  CHECK(pos[static_cast<size_t>(la)] == 0);
  CHECK(pos[static_cast<size_t>(k.find_inst("bar"))] == 3);
}

TEST_CASE("ranges and boxes of an access", "[queries]") {
  Kernel k = parse(kNest);
  const Instruction& la = k.insts[static_cast<size_t>(k.find_inst("la"))];
  const AffineExpr& lo = la.reads[0].dims[1].lo;  // %i*256 + %j*64 - 128, %i in [0, 3], %j in [2, 4]
  CHECK(value_range(k, lo) == std::make_pair<int64_t, int64_t>(0, 3 * 256 + 4 * 64 - 128));
  CHECK(lo.eval([](const AffineTerm& t) -> std::optional<int64_t> { return t.symbol == "%i" ? 1 : 3; }) ==
        256 + 3 * 64 - 128);
  const Tensor& A = k.tensors[static_cast<size_t>(la.reads[0].tensor_id)];
  Box box;
  REQUIRE(box_of(
      A, la.reads[0], [](const AffineTerm& t) -> std::optional<int64_t> { return t.symbol == "%i" ? 1 : 3; }, box));
  CHECK(box == Box{{0, 128}, {320, 384}});
  // A variable without a value: no box. A whole access: the tensor's extent.
  CHECK_FALSE(box_of(
      A, la.reads[0], [](const AffineTerm&) -> std::optional<int64_t> { return std::nullopt; }, box));
  const Tensor& a = k.tensors[static_cast<size_t>(la.writes[0].tensor_id)];
  REQUIRE(box_of(
      a, la.writes[0], [](const AffineTerm&) -> std::optional<int64_t> { return std::nullopt; }, box));
  CHECK(box == Box{{0, 128}, {0, 64}});
}

TEST_CASE("the load stage is the loop's own loads its barrier waits for", "[queries]") {
  Kernel k = parse(
      "  tensor %A : dram[128, 1024] bf16\n"
      "  tensor %W : dram[128, 64] bf16\n"
      "  tensor %a : sbuf[128, 64] bf16\n"
      "  tensor %w : sbuf[128, 64] bf16\n"
      "  tensor %d : sbuf[128, 64] bf16\n"
      "  %lw = load %w <- %W\n"
      "  loop %i = 0 to 4 {\n"
      "    %la = load %a <- %A[0:128, %i*64 : %i*64 + 64]\n"
      "    %cp = tensor_copy %d <- %w\n"
      "    %b = core_barrier {separation_barrier}\n"
      "    %t = tensor_tensor %d <- %a, %w\n"
      "  }\n");
  const InstId b = k.find_inst("b");
  DepGraph g(k.insts.size());
  g.add(k.find_inst("lw"), b, DepKind::Flow);  // outside the loop
  g.add(k.find_inst("cp"), b, DepKind::Flow);  // not a load
  g.add(k.find_inst("la"), b, DepKind::Anti);  // not Flow
  LoadStage none = load_stage(k, g, 0);
  CHECK(none.barrier == b);
  CHECK(none.loads.empty());
  g.add(k.find_inst("la"), b, DepKind::Flow);
  CHECK(load_stage(k, g, 0).loads == std::vector<InstId>{k.find_inst("la")});
}
