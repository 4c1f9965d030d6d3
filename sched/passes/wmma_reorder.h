#pragma once

#include <memory>

#include "sched/analysis/wmma_reorder_plan.h"
#include "sched/passes/pass.h"

namespace tandem {

// The WMMA reorder (docs/passes.md, wmma-reorder): rewrites a loop of ds_loads and WMMAs to a new WMMA issue order and
// repairs the LDS software pipeline across the back edge. The loop body is only permuted; prefetches are added to and
// removed from the preheader. The analysis is plan_wmma_reorder; this pass applies its plan to every loop whose body
// holds WMMAs (a nested loop in it: skipped).
class WmmaReorderPass : public Pass {
 public:
  static constexpr const char* kHelp =
      "reorder a loop's WMMAs (mode vgpr|explicit|reverse) and re-place the ds_loads feeding them across the back edge";
  struct Options {
    std::string mode;   // vgpr, explicit, reverse
    std::string order;  // mode=explicit: new position -> old WMMA position
    int64_t distance;   // WMMA slots from a ds_load to its first consumer; -1: derived
    void check() const;
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit WmmaReorderPass(const Options& o);
  void run(PassContext& ctx) override;

 private:
  std::unique_ptr<WmmaOrderProvider> order_;
  int distance_;
};

}  // namespace tandem
