#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// A list scheduler over each straight run of instructions (a loop body between nested
// loops, or the kernel body): repeatedly issues the ready instruction of highest priority,
// never before a predecessor at distance 0. The resulting order, written as each
// instruction's `order` attribute where it differs from program order, is the order in
// which each engine and DMA queue runs its share of the run. No latency model: priority is
// the longest path to the end of the run counted in instructions (or program order).
class ListSchedulePass : public Pass {
 public:
  static constexpr const char* kHelp =
      "order each engine's and DMA queue's instruction stream by a list schedule of the dependence graph";
  struct Options {
    bool program_order;  // priority: program order, not the critical path
    void check() const {}
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit ListSchedulePass(const Options& o) : o_(o) {}
  void run(PassContext& ctx) override;

 private:
  const Options o_;
};

}  // namespace tandem
