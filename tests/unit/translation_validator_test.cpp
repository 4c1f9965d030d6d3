#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/translation_validator.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"

using namespace tandem;

namespace {

std::string read_workload(const std::string& path) {
  std::ifstream in(std::string(TANDEM_SOURCE_DIR) + "/workloads/" + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::string> difference(const std::string& a, const std::string& b) {
  return find_translation_difference(parse_kernel(a, "a.kir"), parse_kernel(b, "b.kir"));
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

const std::string kTwo =
    "kernel @k target = \"trn2\" {\n"
    "  tensor %A : dram[128, 64] f32\n  tensor %B : dram[128, 64] f32\n  tensor %C : dram[128, 64] f32\n"
    "  tensor %a : sbuf[128, 64] f32\n  tensor %b : sbuf[128, 64] f32\n  tensor %c : sbuf[128, 64] f32\n"
    "  %la = load %a <- %A\n  %lb = load %b <- %B\n"
    "  %x = tensor_tensor %c <- %a, %b {op = \"add\"}\n  %st = save %C <- %c\n}\n";

}  // namespace

TEST_CASE("a kernel computes what it computes", "[validator]") {
  CHECK_FALSE(difference(kTwo, kTwo));
  const std::string gemm = read_workload("trn/gemm_k.kir");
  CHECK_FALSE(difference(gemm, gemm));
}

TEST_CASE("reordering independent instructions and scheduling attributes keep the meaning", "[validator]") {
  const std::string swapped = replace(kTwo, "  %la = load %a <- %A\n  %lb = load %b <- %B\n",
                                      "  %lb = load %b <- %B on q3 {order = 0}\n  %la = load %a <- %A {order = 1}\n");
  CHECK_FALSE(difference(kTwo, swapped));
}

TEST_CASE("operands, opcodes, attributes and program order are meaning", "[validator]") {
  CHECK(difference(kTwo, replace(kTwo, "<- %a, %b", "<- %b, %a")) ==
        std::string("%C[0:128, 0:64] holds different values"));
  CHECK(difference(kTwo, replace(kTwo, "{op = \"add\"}", "{op = \"mul\"}")));
  // The store before the add: it writes what the tile held before.
  CHECK(difference(kTwo, replace(replace(kTwo, "  %st = save %C <- %c\n", ""), "  %x = tensor_tensor",
                                 "  %st = save %C <- %c\n  %x = tensor_tensor")));
}

TEST_CASE("a matmul that starts its accumulation group drops what the tile held", "[validator]") {
  // `start` at %k = 0 replaces the memset: the result no longer depends on the memset, and
  // differs from accumulating onto it (docs/ir.md, Accumulation groups).
  const std::string gemm = read_workload("trn/gemm_k.kir");
  const std::string started = replace(gemm, "{accumulate}", "{accumulate, start = \"%k\"}");
  CHECK(difference(gemm, started));
  const std::string no_memset = replace(started, "%z = memset %acc {value = 0}", "");
  CHECK_FALSE(difference(started, no_memset));
}

TEST_CASE("a prefetch migrated with the wrong stride is caught", "[validator]") {
  // workloads/gpu/wmma_loop.kir: the body's A0 copy reads one 512-byte stride ahead of the preheader's. Reading
  // 520 bytes ahead feeds the next iteration's WMMA other data: the accumulators differ.
  const std::string loop = read_workload("gpu/wmma_loop.kir");
  CHECK_FALSE(difference(loop, loop));
  const std::string wrong = replace(loop, "%l0a = ds_load_b128 v[20:23] <- %lds[v10 + 512]",
                                    "%l0a = ds_load_b128 v[20:23] <- %lds[v10 + 520]");
  CHECK(difference(loop, wrong) == std::string("v[100:131] holds different values"));
  // The address register's advance is meaning too: advancing by 256 instead of 512 makes
  // every later iteration read other data.
  const std::string advance = replace(loop, "{advance = \"v10 += 512\"}", "{advance = \"v10 += 256\"}");
  CHECK(difference(loop, advance));
}

namespace {
// A deliberately wrong pass: swaps the two operands of every tensor_tensor.
class SwapOperands : public Pass {
 public:
  void run(PassContext& ctx) override {
    for (Instruction& in : ctx.kernel.insts)
      if (in.opcode == "tensor_tensor" && in.reads.size() == 2) std::swap(in.reads[0], in.reads[1]);
  }
};
}  // namespace

TEST_CASE("with verify, the pipeline names the first pass that changed what the kernel computes", "[validator]") {
  Kernel k = parse_kernel(kTwo, "k.kir");
  DepGraph g = build_dep_graph(k);
  PassInfo swap{"swap-operands", "test", {}, [](const PassOptions&) { return std::make_unique<SwapOperands>(); }};
  std::vector<PipelineStep> steps = parse_pipeline("assign-engines");
  steps.push_back({&swap, PassOptions{}, "swap-operands"});
  steps.push_back(parse_pipeline("list-schedule")[0]);
  RunOptions opts;
  opts.verify = true;
  std::ostringstream diag;
  CHECK_THROWS_WITH(run_pipeline(k, g, steps, opts, diag),
                    "error: --verify: pass swap-operands changed what the kernel computes: %C[0:128, 0:64] holds "
                    "different values");
}

TEST_CASE("a spill's save and reload are copies, checked like any value", "[validator]") {
  // %a saved to DRAM and reloaded into a tensor of its own, which the add reads.
  const std::string spilled = replace(
      replace(replace(kTwo, "tensor %c : sbuf[128, 64] f32\n",
                      "tensor %c : sbuf[128, 64] f32\n  tensor %a.spill : dram[128, 64] f32\n"
                      "  tensor %a.reload : sbuf[128, 64] f32\n"),
              "  %lb = load %b <- %B\n",
              "  %s = save %a.spill <- %a {spill}\n  %lb = load %b <- %B\n  %r = load %a.reload <- %a.spill {spill}\n"),
      "<- %a, %b", "<- %a.reload, %b");
  CHECK_FALSE(difference(kTwo, spilled));
  // Reloaded before the save: the reload holds the DRAM tensor's input, not %a.
  CHECK(difference(kTwo, replace(replace(spilled, "  %r = load %a.reload <- %a.spill {spill}\n", ""), "  %s = save",
                                 "  %r = load %a.reload <- %a.spill {spill}\n  %s = save")));
  // Without the flag a transfer is an instruction like the others: its result is a new value.
  CHECK(difference(kTwo, replace(replace(spilled, "%a {spill}", "%a"), "%a.spill {spill}", "%a.spill")));
}
