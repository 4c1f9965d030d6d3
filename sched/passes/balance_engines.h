#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// Moves work that more than one engine may run (an opcode the target lists on several
// engines: copies, memsets, element-wise work) off a loop's busiest compute engine, where the
// move lowers the loop's resource bound per iteration (loop_bounds.h, the bound address-rotation
// sizes its rings by) and raises the bound of no loop around or inside it. An instruction it
// does not move keeps no engine, so assign-engines places it as before.
class BalanceEnginesPass : public Pass {
 public:
  static constexpr const char* kHelp =
      "move work more than one engine may run off a loop's busiest engine where that lowers the loop's resource "
      "bound per iteration";
  struct Options {
    void check() const {}
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit BalanceEnginesPass(const Options&) {}
  void run(PassContext& ctx) override;
};

}  // namespace tandem
