// Questions about a kernel that the parser, the analyses, the passes, the lowering and the
// observers all ask, each answered once here (docs/layout.md lists them): which engines an
// instruction may run on, a tensor's bytes per partition, dynamic instance counts, program
// positions, the range of an index expression, the box an access touches, and the load stage
// of a split loop. Affine evaluation itself is AffineExpr::eval (sched/ir/affine.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"
#include "sched/support/box.h"
#include "sched/target/target.h"

namespace tandem {

// --- Engines -------------------------------------------------------------------------------

// The engines or DMA queues `id` may run on: the one it names; unassigned, every one
// assign-engines may give it (its opcode's compute engines, or every DMA queue for an opcode
// that runs on `dma`), preferred first. Empty for what takes no engine (barriers, branches).
std::vector<std::string> engine_choices(const Kernel& k, InstId id);

// The engine or queue `id` runs on when nothing is left to choose (it names one, or it has
// one choice); "" otherwise.
std::string known_engine(const Kernel& k, InstId id);

// The engine `id` runs on under assign-engines' default policy (its own, or its first
// choice); "" when it takes none. For estimates only: a balancing policy may choose another.
std::string preferred_engine(const Kernel& k, InstId id);

// --- Sizes ---------------------------------------------------------------------------------

// Partitions `t` spans: its first dimension in a partitioned space (SBUF, PSUM), else 1.
int64_t partitions_of(const Kernel& k, const Tensor& t);
// Bytes one partition of `t` holds (the whole tensor in a space without partitions).
int64_t bytes_per_partition(const Kernel& k, const Tensor& t);

// --- Dynamic counts and positions -----------------------------------------------------------

// Iterations of `inner` per iteration of `outer`, counting the loops from `inner` out to, not
// including, `outer` (kNoId: every enclosing loop; `inner` kNoId: 1). `outer` encloses `inner`.
int64_t instances_within(const Kernel& k, LoopId inner, LoopId outer = kNoId);
// Dynamic instances of an instruction: the trip counts of its enclosing loops multiplied.
int64_t dynamic_count(const Kernel& k, InstId id);

// Each instruction's position in program order (Kernel::program_order), -1 for an erased one.
std::vector<int> program_positions(const Kernel& k);

// --- Index expressions and boxes -------------------------------------------------------------

// Smallest and largest value of `e` over the iterations of its loops. An address register's
// value is not known before the run: its terms count 0 (callers that care check
// uses_register() first).
std::pair<int64_t, int64_t> value_range(const Kernel& k, const AffineExpr& e);
// The smallest hi - lo of `r` over the iterations of its loops (<= 0: an empty range).
int64_t least_extent(const Kernel& k, const IndexRange& r);
// The indices a strided pattern visits: the product of its counts.
int64_t pattern_count(const std::vector<StrideTerm>& pattern);
// Whether `pattern` visits each of `extent` consecutive indices exactly once.
bool pattern_dense(std::vector<StrideTerm> pattern, int64_t extent);

// The index box `a` touches in tensor `t`: its full extent for a whole access, otherwise each
// dimension's [lo, hi) with `value(term)` giving the variables (AffineExpr::eval). False, and
// `out` incomplete, when a value is not known. `out` is reused: the race checker asks per instance.
template <class TermValue>
bool box_of(const Tensor& t, const Access& a, TermValue value, Box& out) {
  out.clear();
  if (a.whole()) {
    for (int64_t d : t.shape) out.push_back({0, d});
    return true;
  }
  for (const IndexRange& r : a.dims) {
    const std::optional<int64_t> lo = r.lo.eval(value), hi = r.hi.eval(value);
    if (!lo || !hi) return false;
    out.push_back({*lo, *hi});
  }
  return true;
}

// --- Accumulation ----------------------------------------------------------------------------

// `{accumulate, start = "%k"}`: the enclosing loop whose first iteration starts `id`'s
// accumulation group (those instances overwrite what they write); kNoId without `start`, or
// when it names no enclosing loop (the parser and the structural verifier refuse that).
LoopId accumulation_start(const Kernel& k, InstId id);
// Does this instance of `id` read what it writes: `{accumulate}`, and not an instance that
// starts its group? `ivs` by loop id.
bool reads_accumulator(const Kernel& k, InstId id, const int64_t* ivs);
// What is wrong with `id`'s `start` attribute, "" when nothing (or it has none): it must name
// an enclosing loop as a string, come with `{accumulate}`, and the written accesses must not
// move with that loop (every iteration adds to the group its first one started).
std::string start_problem(const Kernel& k, InstId id);

// --- The split's stages ----------------------------------------------------------------------

// The load stage of a loop separate-load-compute split: its barrier (the loop's own
// instruction marked separation_barrier, kNoId when it was not split) and the loads the
// barrier waits for. A load of the stage is a load-class instruction (load or indirect load)
// of the loop's own body with a distance-0 Flow edge into the barrier; an edge from anything
// else (an instruction of another loop, a compute instruction) orders it before the barrier
// without making it part of the stage.
struct LoadStage {
  InstId barrier = kNoId;
  std::vector<InstId> loads;  // in the barrier's in-edge order
};
LoadStage load_stage(const Kernel& k, const DepGraph& g, LoopId loop);

// Is `id` a load-class instruction (load or indirect load)?
bool is_load(const Kernel& k, InstId id);

// Each instruction's opcode class (nullopt: an opcode the target lacks), looked up in the
// target once per instruction and kept, for a pass or analysis that asks it of every
// instruction many times. Instructions added later are looked up when first asked; an
// instruction's opcode must not change while this is in use.
class OpClassOf {
 public:
  explicit OpClassOf(const Kernel& k) : k_(k), known_(k.insts.size(), 0) {}
  std::optional<OpClass> operator()(InstId id) {
    const size_t i = static_cast<size_t>(id);
    if (i >= known_.size() || known_[i] == 0) look_up(i);
    if (known_[i] < 0) return std::nullopt;
    return static_cast<OpClass>(known_[i] - 1);
  }

 private:
  void look_up(size_t i);

  const Kernel& k_;
  std::vector<int8_t> known_;  // by instruction: 0 not asked yet, -1 no such opcode, else 1 + the class
};

}  // namespace tandem
