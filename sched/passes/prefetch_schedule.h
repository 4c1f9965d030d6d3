#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// Seed 000, Prefetch Scheduling: a placeholder in the pass table and the default pipeline,
// so that pipelines name it where it belongs; the pass itself (cc-dma-alignment,
// force-incoming-order, the before/after behaviours) lands with its own issue. It changes
// nothing and says so in --stats.
class PrefetchSchedulePass : public Pass {
 public:
  static constexpr const char* kHelp =
      "placeholder for prefetch scheduling (seed 000): changes nothing yet; {after} marks the after-scheduler run";
  static std::vector<PassOptionSpec> options();

  explicit PrefetchSchedulePass(const PassOptions& o) : after_(o.get_flag("after")) {}
  void run(PassContext& ctx) override;

 private:
  bool after_;
};

}  // namespace tandem
