#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// Loop-invariant code motion, as a compiler does before a kernel runs (docs/passes.md,
// hoist-invariants): a compute instruction (or memset) whose every iteration of its loop
// computes the same thing moves in front of the loop, and runs once per entry instead of
// once per iteration. It may move when, in its loop L:
//   - its accesses do not move with L (no index names L's variable, none names a register),
//     it does not accumulate, and none of its tensors is a ring;
//   - nothing in L writes what it reads (itself included), nor what it writes;
//   - nothing in L reads what it writes before it does in program order.
// (Every loop runs at least once: the parser refuses an empty one.)
// It then goes on outwards while the same holds in the next loop. Accesses overlap when the
// boxes they may touch over all iterations meet (conservative: a doubt keeps it in place). The
// moves must keep the kernel's on-chip tensors fitting; one that would not is undone.
class HoistInvariantsPass : public Pass {
 public:
  static constexpr const char* kHelp =
      "move compute work that every iteration of its loop repeats unchanged in front of the loop (loop-invariant "
      "code motion)";
  struct Options {
    void check() const {}
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit HoistInvariantsPass(const Options&) {}
  void run(PassContext& ctx) override;
};

}  // namespace tandem
