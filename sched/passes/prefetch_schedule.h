#pragma once

#include <optional>
#include <string>

#include "sched/passes/pass.h"

namespace tandem {

// Prefetch scheduling (docs/passes.md, prefetch-schedule): which loads may cross the load/compute boundary, in what
// order, and how far ahead. One class, two behaviours selected by {after}:
//  - before the scheduler it marks intent: with force-incoming-order=BYTES it stamps the
//    incoming order of the loads of SBUF tensors of at least BYTES (`prefetch = N`);
//  - after the scheduler it resolves them: each stamped load gets a Flow edge from the one
//    before it in incoming order when the two run on different engines or queues;
//    and it makes the loop's prefetch distance explicit (below).
// cc-dma-alignment (both runs): 0 adds nothing; 1 pins the loads feeding each collective
// behind the store the collective fed in the previous iteration; 2 (after only) keeps the
// other loads of the loop from overlapping the collective.
// Prefetch distance is structural, never from latency. The split alone holds loads one
// iteration ahead (the `prefetch_one_iteration_ahead` loop attribute only records that);
// prefetch-distance=D (after, D > 0) lets loads of iteration i+D run while compute of i has
// not started, and no further: the barrier stops fencing the DMA queues and holds each
// stage-0 load to D+1 iterations behind it.
class PrefetchSchedulePass : public Pass {
 public:
  static constexpr const char* kHelp =
      "prefetch scheduling: incoming-order pinning of large loads, collective/DMA alignment, prefetch "
      "distance";
  struct Options {
    bool after;
    int64_t cc_dma_alignment;
    int64_t force_incoming_order;    // bytes; -1: off
    int64_t prefetch_distance;       // 0: leave the split's one-iteration prefetch as it is
    std::vector<std::string> loops;  // the loops prefetch-distance applies to (empty: all)
    void check() const;
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit PrefetchSchedulePass(const Options& o) : o_(o) {}
  void run(PassContext& ctx) override;

 private:
  void force_incoming_order(PassContext& ctx);
  void align_collectives(PassContext& ctx);
  // `fence`: the compute engines the barrier fences ("" when none runs); `derived`: the
  // analysis's dependences, made when a nested loop first needs them. Both are the kernel's,
  // the same for every loop (set_distance changes no access): worked out per loop, they would
  // make a kernel of many loops quadratic.
  void set_distance(PassContext& ctx, LoopId loop, int64_t distance, const std::string& fence,
                    std::optional<DepGraph>& derived);

  const Options o_;
};

}  // namespace tandem
