// The structural verifier after every pass: a pass that breaks the kernel in any of the ways
// it checks is an internal error (std::logic_error: `tandem` prints "internal error: ..." and
// exits 2) naming the pass, and a pass that keeps it well formed goes through.
#include <catch2/catch.hpp>

#include <functional>
#include <sstream>
#include <stdexcept>

#include "sched/analysis/structural_verifier.h"
#include "sched/passes/pass_manager.h"
#include "test_util.h"

using namespace tandem;

namespace {

const char* kLoop =
    "  tensor %X : dram[128, 1024] f32\n"
    "  tensor %Y : dram[128, 1024] f32\n"
    "  tensor %t : sbuf[128, 128] f32\n"
    "  tensor %u : sbuf[128, 128] f32\n"
    "  %z = memset %u {value = 0}\n"
    "  loop %i = 0 to 8 {\n"
    "    %ld = load %t <- %X[0:128, %i*128 : %i*128 + 128]\n"
    "    %cp = tensor_copy %u <- %t\n"
    "    %st = save %Y[0:128, %i*128 : %i*128 + 128] <- %u\n"
    "  }\n";

class LambdaPass : public Pass {
 public:
  explicit LambdaPass(std::function<void(PassContext&)> f) : f_(std::move(f)) {}
  void run(PassContext& ctx) override { f_(ctx); }

 private:
  std::function<void(PassContext&)> f_;
};

// Runs a one-step pipeline whose pass does `edit`; the internal error it raised, or "".
std::string run_pass(Kernel& k, DepGraph& g, const std::function<void(PassContext&)>& edit) {
  const PassInfo info{"break-it", "a pass that edits the kernel as the test says", {}, [edit](const PassOptions&) {
                        return std::unique_ptr<Pass>(new LambdaPass(edit));
                      }};
  PipelineStep step;
  step.pass = &info;
  step.text = "break-it{how=test}";
  std::ostringstream diag;
  try {
    run_pipeline(k, g, {step}, RunOptions{}, diag);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

std::string break_loop_kernel(const std::function<void(Kernel&, DepGraph&)>& edit) {
  Kernel k = test::parse(kLoop);
  DepGraph g = build_dep_graph(k);
  return run_pass(k, g, [&](PassContext& ctx) { edit(ctx.kernel, ctx.deps); });
}

const std::string kBroke = "pass 'break-it{how=test}' broke the kernel: ";

}  // namespace

TEST_CASE("a pass that keeps the kernel well formed passes the verifier", "[verifier]") {
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) {
          // A legal reordering of the loop body and a legal edge.
          const LoopId i = k.insts[k.find_inst("ld")].loop;
          k.reorder_block(i, {k.find_inst("ld"), k.find_inst("cp"), k.find_inst("st")});
        }) == "");
  // Every named pipeline on the bundled workloads (the lit and validation tests run more).
  for (const char* w : {"trn/gemm_k.kir", "trn/two_stage.kir", "gpu/wmma_loop.kir", "trn/gather.kir"}) {
    Kernel k = parse_kernel_file(std::string(TANDEM_SOURCE_DIR) + "/workloads/" + w);
    DepGraph g = build_dep_graph(k);
    std::ostringstream diag;
    CHECK_NOTHROW(run_pipeline(k, g, parse_pipeline("default"), RunOptions{}, diag));
    CHECK(find_structural_problems(k, g).empty());
  }
}

TEST_CASE("names must resolve", "[verifier]") {
  // An access to a tensor that does not exist.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].reads[0].tensor_id = 17; }) ==
        kBroke + "%cp accesses %t, which is not declared");
  // An access whose name and resolved tensor disagree.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].reads[0].tensor = "w"; }) ==
        kBroke + "%cp accesses 'w' resolved to %t");
  // Two instructions with one name, and an instruction named like a tensor.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].name = "ld"; }) ==
        kBroke + "two instructions are named %ld");
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].name = "u"; }) ==
        kBroke + "instruction %u has the name of a tensor");
  // An engine that cannot run the opcode, and an opcode the target lacks.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].engine = "pe"; }) ==
        kBroke + "%cp runs on 'pe', which cannot run 'tensor_copy'");
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].opcode = "frobnicate"; }) ==
        kBroke + "%cp has opcode 'frobnicate', which target 'trn2' does not have");
}

TEST_CASE("loop variables stay in scope", "[verifier]") {
  // A clone of the load placed before the loop still indexes with %i (wmma-reorder's defect 3).
  CHECK(break_loop_kernel([](Kernel& k, DepGraph& g) {
          const InstId ld = k.find_inst("ld");
          Instruction clone = k.insts[ld];
          clone.name = "ld.pre";
          const InstId id = k.add_inst(clone);
          k.insert_before_loop(k.insts[ld].loop, id);
          g.grow(k.insts.size());
        }) == kBroke + "%ld.pre names loop variable %i outside its loop (in its access to %X)");
  // An index term that names no loop at all.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) {
          k.insts[k.find_inst("ld")].reads[0].dims[1].lo.terms[0].symbol = "%q";
        }) == kBroke + "%ld names %q in its access to %X, which is no loop's variable");
  // Indices that leave the tensor.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("ld")].reads[0].dims[1].hi.constant += 1; }) ==
        kBroke + "%ld accesses %X out of bounds: dimension 1 reaches [0, 1025) but its size is 1024");
}

TEST_CASE("a reordered loop body is a permutation of the original", "[verifier]") {
  // One statement duplicated over another: %cp twice, %st gone.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) {
          std::vector<Stmt>& body = k.loops[k.insts[k.find_inst("ld")].loop].body;
          body[2] = body[1];
        }) ==
        kBroke + "the body of loop %i is not a permutation of its instructions: %cp appears 2 times, %st is missing");
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) {
          std::vector<Stmt>& body = k.loops[k.insts[k.find_inst("ld")].loop].body;
          body.push_back(body[0]);
        }) == kBroke + "the body of loop %i is not a permutation of its instructions: %ld appears 2 times");
  // Moved to another block without saying so, or erased but still placed.
  CHECK_THAT(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("cp")].loop = kNoId; }),
             Catch::StartsWith(kBroke + "%cp is in the body of loop %i but records the kernel body; and "));
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.insts[k.find_inst("z")].erased = true; }) ==
        kBroke + "%z is erased but still in the kernel body; and 1 more problem");
  // A loop dropped from its parent's body.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.body.pop_back(); }).rfind(kBroke, 0) == 0);
}

TEST_CASE("dependence edges point at existing instructions", "[verifier]") {
  CHECK(break_loop_kernel([](Kernel& k, DepGraph& g) { g.add(k.find_inst("cp"), 40, DepKind::Flow); }) ==
        kBroke + "the dependence graph has 41 vertices for 4 instructions; and 1 more problem");
  // An instruction erased with its edges left behind.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) { k.erase(k.find_inst("cp")); }) ==
        kBroke + "edge %cp -> %st flow: %cp is erased; and 5 more problems");
  // A carried edge whose loop does not enclose both ends.
  CHECK(break_loop_kernel([](Kernel& k, DepGraph& g) {
          g.add(k.find_inst("z"), k.find_inst("cp"), DepKind::Anti, 1, k.insts[k.find_inst("cp")].loop);
        }) == kBroke + "edge %z -> %cp anti is carried by loop %i, which does not enclose both");
  CHECK(break_loop_kernel([](Kernel& k, DepGraph& g) {
          g.add(k.find_inst("cp"), k.find_inst("st"), DepKind::Anti, 2, 5);
        }) == kBroke + "edge %cp -> %st anti at distance 2 has no carrying loop");
}

TEST_CASE("a pass must not make the tensors overflow their spaces", "[verifier]") {
  // Rotating %t over 16 buffers of 512 bytes is fine; 500 buffers are not (beside %u, live
  // through the loop: 500 x 512 + 512).
  CHECK(break_loop_kernel(
            [](Kernel& k, DepGraph&) { k.tensors[k.find_tensor("t")].attrs.set("buffers", int64_t{16}); }) == "");
  const std::string overflow =
      break_loop_kernel([](Kernel& k, DepGraph&) { k.tensors[k.find_tensor("t")].attrs.set("buffers", int64_t{500}); });
  CHECK(overflow.rfind(
            kBroke + "capacity: at %ld, the tensors live in sbuf need 256512 bytes per partition but sbuf has", 0) ==
        0);
  // An input that does not fit is the user's to fix (the lowering says so), not the pass's.
  Kernel k = test::parse("  tensor %big : sbuf[128, 100000] f32\n  %z = memset %big {value = 0}\n");
  DepGraph g = build_dep_graph(k);
  CHECK(run_pass(k, g, [](PassContext&) {}) == "");
}

TEST_CASE("the first problem is named, with how many more", "[verifier]") {
  CHECK(describe_structural_problems({}) == "");
  CHECK(describe_structural_problems({"a"}) == "a");
  CHECK(describe_structural_problems({"a", "b"}) == "a; and 1 more problem");
  CHECK(describe_structural_problems({"a", "b", "c"}) == "a; and 2 more problems");
}

TEST_CASE("start names an enclosing loop of an accumulating instruction", "[verifier]") {
  // A pass that moves `start` onto an instruction that does not accumulate, or to a loop
  // variable that encloses nothing (docs/ir.md, Accumulation groups).
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) {
          k.insts[k.find_inst("cp")].attrs.set("start", std::string("%i"));
        }) == kBroke + "%cp: start = \"%i\" needs {accumulate}: without it every instance overwrites what it writes");
  CHECK(break_loop_kernel([](Kernel& k, DepGraph&) {
          Instruction& cp = k.insts[k.find_inst("cp")];
          cp.attrs.set_flag("accumulate");
          cp.attrs.set("start", std::string("%j"));
        }) == kBroke + "%cp: start = \"%j\": no loop enclosing the instruction has the variable %j");
}

TEST_CASE("a dependence cycle is named after the pass that closed it", "[verifier]") {
  // Acyclicity is checked again only after a pass that added an edge (DepGraph::last_addition):
  // a pass that adds none comes between, and the graph may come back as a copy.
  auto pipeline = [](Kernel& k, DepGraph& g, const std::vector<std::function<void(PassContext&)>>& edits) {
    std::vector<PassInfo> infos;
    infos.reserve(edits.size());
    for (size_t i = 0; i < edits.size(); ++i)
      infos.push_back({"edit-" + std::to_string(i),
                       "a pass that edits the kernel as the test says",
                       {},
                       [edit = edits[i]](const PassOptions&) { return std::unique_ptr<Pass>(new LambdaPass(edit)); }});
    std::vector<PipelineStep> steps(edits.size());
    for (size_t i = 0; i < edits.size(); ++i) steps[i].pass = &infos[i], steps[i].text = infos[i].name;
    std::ostringstream diag;
    try {
      run_pipeline(k, g, steps, RunOptions{}, diag);
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const auto nothing = [](PassContext&) {};
  const auto close_cycle = [](PassContext& ctx) {  // %st -> %ld closes %ld -> %cp -> %st
    ctx.deps.add(ctx.kernel.find_inst("st"), ctx.kernel.find_inst("ld"), DepKind::Anti);
  };
  const auto harmless = [](PassContext& ctx) {
    ctx.deps.add(ctx.kernel.find_inst("z"), ctx.kernel.find_inst("st"), DepKind::Flow);
  };
  const std::string cycle = "broke the kernel: dependence cycle: %cp -> %st -> %ld -> %cp";
  Kernel k = test::parse(kLoop);
  const DepGraph analysed = build_dep_graph(k);
  DepGraph g = analysed;
  CHECK(pipeline(k, g, {nothing, harmless, nothing}) == "");
  g = analysed;
  CHECK(pipeline(k, g, {nothing, nothing, close_cycle}) == "pass 'edit-2' " + cycle);
  g = analysed;
  CHECK(pipeline(k, g, {harmless, nothing, close_cycle, nothing}) == "pass 'edit-2' " + cycle);
  // The pass hands back a copy it edited.
  g = analysed;
  CHECK(pipeline(k, g, {nothing, [&](PassContext& ctx) {
                          DepGraph copy = ctx.deps;
                          copy.add(ctx.kernel.find_inst("st"), ctx.kernel.find_inst("ld"), DepKind::Anti);
                          ctx.deps = copy;
                        }}) == "pass 'edit-1' " + cycle);
  // The first pass is always checked.
  g = analysed;
  CHECK(pipeline(k, g, {close_cycle}).rfind("pass 'edit-0' ", 0) == 0);
}
