#include <catch2/catch.hpp>

#include "sched/target/target.h"
#include "test_util.h"

using namespace tandem;
using tandem::test::parse;

TEST_CASE("the GEMM K loop parses into tensors, a loop and instructions", "[parser]") {
  Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/trn/gemm_k.kir");
  CHECK(k.name == "gemm_k");
  CHECK(k.target->name == "trn2");
  CHECK(k.tensors.size() == 7);
  REQUIRE(k.loops.size() == 1);
  const Loop& l = k.loops[0];
  CHECK(l.iv == "%k");
  CHECK(l.trip_count() == 64);
  CHECK(l.attrs.has("prefetch_one_iteration_ahead"));
  CHECK(l.body.size() == 3);

  InstId la = k.find_inst("la");
  REQUIRE(la != kNoId);
  const Instruction& in = k.insts[la];
  CHECK(in.opcode == "load");
  CHECK(in.loop == 0);
  REQUIRE(in.reads.size() == 1);
  const Access& a = in.reads[0];
  CHECK(a.tensor == "A");
  REQUIRE(a.dims.size() == 2);
  CHECK(a.dims[1].lo.coeff_of_loop(0) == 128);
  CHECK(a.dims[1].hi.constant == 128);
  CHECK(k.insts[k.find_inst("mm")].attrs.has("accumulate"));

  std::vector<InstId> order = k.program_order();
  REQUIRE(order.size() == 6);
  CHECK(k.insts[order[0]].name == "z");
  CHECK(k.insts[order[5]].name == "st");
  CHECK(k.preheader(0) == std::vector<InstId>{k.find_inst("z")});
}

TEST_CASE("register groups are half-open ranges of the register file", "[parser]") {
  Kernel k = parse(
      "  tensor %lds : lds[65536] u8\n"
      "  %p = ds_load_b128 v[20:23] <- %lds[v10 + 16]\n"
      "  loop %i = 0 to 4 {\n"
      "    %w = v_wmma_f32_16x16x32_bf16 v[100:107] <- v[20:27], v[60:67], v[100:107]\n"
      "  }\n",
      "gpu-cu");
  const Instruction& p = k.insts[k.find_inst("p")];
  const Tensor& rf = k.tensors[p.writes[0].tensor_id];
  CHECK(rf.register_file);
  CHECK(rf.name == "v");
  CHECK(p.writes[0].dims[0].lo.constant == 20);
  CHECK(p.writes[0].dims[0].hi.constant == 24);
  CHECK(p.reads[0].dims[0].lo.uses_register());
  CHECK(p.reads[0].dims[0].lo.constant == 16);
  CHECK(k.preheader(0) == std::vector<InstId>{k.find_inst("p")});
}

TEST_CASE("parse errors carry file, line and column", "[parser]") {
  try {
    parse("  tensor %a : sbuf[128, 128] bf16\n  %x = activation %a <- %b\n");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.loc().file) == "test.kir");
    CHECK(e.loc().line == 3);
    CHECK(e.loc().col == 25);
    CHECK(e.message() == "unknown tensor '%b'");
    CHECK(std::string(e.what()) == "test.kir:3:25: error: unknown tensor '%b'");
  }
}

TEST_CASE("the partition dimension may not exceed the space's partitions", "[parser]") {
  CHECK_THROWS_WITH(parse("  tensor %a : sbuf[256, 128] bf16\n"),
                    Catch::Contains("tensor %a has 256 partitions but sbuf has 128"));
}

TEST_CASE("an induction variable is only usable inside its loop", "[parser]") {
  CHECK_THROWS_WITH(parse("  tensor %a : sbuf[128, 128] bf16\n"
                          "  loop %i = 0 to 4 {\n    %x = memset %a[0:128, %i]\n  }\n"
                          "  %y = memset %a[0:128, %i]\n"),
                    Catch::Contains("'%i' is not the induction variable of an enclosing loop"));
}

TEST_CASE("the target's model file decides the opcode table", "[parser][target]") {
  auto trn2 = find_target("trn2");
  REQUIRE(trn2->opcode("load"));
  CHECK(trn2->opcode("load")->op_class == OpClass::Load);
  CHECK(trn2->opcode("dma_copy")->op_class == OpClass::Load);
  CHECK(trn2->opcode("indirect_load")->op_class == OpClass::IndirectLoad);
  CHECK(trn2->opcode("collective_compute")->op_class == OpClass::Collective);
  CHECK(trn2->opcode("core_barrier")->op_class == OpClass::Barrier);
  CHECK(trn2->dma_queues.size() == 16);
  CHECK(trn2->can_run(*trn2->opcode("load"), "q15"));
  CHECK_FALSE(trn2->can_run(*trn2->opcode("matmul"), "act"));
  auto gpu = find_target("gpu-cu");
  CHECK(gpu->register_file("v"));
  CHECK(gpu->opcode("ds_load_b128"));
  CHECK_FALSE(gpu->opcode("matmul"));
}

TEST_CASE("a lexical error anywhere in the file is reported before an earlier parse error", "[parser]") {
  // The parser reads tokens as it goes; the rest of the text is still lexed before it reports.
  CHECK_THROWS_WITH(parse("  %x = bogus %a\n  tensor %a : sbuf[128] bf16 $\n"),
                    "test.kir:3:30: error: unexpected character '$'");
  CHECK_THROWS_WITH(parse("  tensor %a : sbuf[128] bf16\n  loop %i = 0 to 2 {\n    memset %zz\n  }\n  \"open\n"),
                    "test.kir:6:3: error: unterminated string");
  // Without one, the parse error.
  CHECK_THROWS_WITH(parse("  %x = bogus %a\n  tensor %a : sbuf[128] bf16\n"),
                    Catch::StartsWith("test.kir:2:8: error: unknown opcode 'bogus'"));
}

TEST_CASE("braces in strings and comments do not decide whether a '{' opens attributes", "[parser]") {
  // The first brace token after the loop header's '{' is the '}' closing it, followed by the
  // body's '{': attributes, however far the body goes.
  Kernel k = parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  loop %i = 0 to 2 {note = \"{\", quote = \"a\\\"{\"} {\n"
      "    %x = memset %a\n"
      "  }\n");
  REQUIRE(k.loops.size() == 1);
  CHECK(k.loops[0].attrs.get_string("note") == "{");
  CHECK(k.loops[0].attrs.get_string("quote") == "a\"{");
  // Here it is the loop's own '}', followed by the kernel's: a body, comment and all.
  Kernel b = parse(
      "  tensor %a : sbuf[128, 128] bf16\n"
      "  loop %i = 0 to 2 { # } {\n"
      "    %x = memset %a\n"
      "  }\n");
  REQUIRE(b.loops.size() == 1);
  CHECK(b.loops[0].attrs.empty());
  CHECK(b.loops[0].body.size() == 1);
}

TEST_CASE("an escaped newline in a string counts as a line", "[parser]") {
  try {
    parse("  tensor %a : sbuf[128, 128] bf16 {note = \"x\\\ny\"}\n  %x = activation %a <- %b\n");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "test.kir:4:25: error: unknown tensor '%b'");
  }
  Kernel k = parse("  tensor %a : sbuf[128, 128] bf16 {note = \"x\\\ny\\n\"}\n");
  CHECK(k.tensors.back().attrs.get_string("note") == "x\ny\n");
}
