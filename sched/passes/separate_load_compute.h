#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// The load/compute split (docs/passes.md, separate-load-compute): in each loop body, loads whose source no instruction
// of the loop produces qualify for a load stage; their predecessor edges from the loop are
// cut (only orders something restores: a load whose order would need a second buffer
// qualifies only if an address-rotation later in the pipeline rings it), and a CoreBarrier `separation_barrier` before
// the first non-load instruction waits for them (Flow) and holds every compute instruction after it (Flow). The base
// variant moves nothing; {memset} adds gathers with a zero-initialised SBUF index tile; {post-ada} physically moves the
// qualified loads before the barrier.
class SeparateLoadComputePass : public Pass {
 public:
  static constexpr const char* kHelp =
      "split each loop body into a load stage and a compute stage fenced by a CoreBarrier";
  struct Options {
    bool memset;    // gathers join the load class
    bool post_ada;  // move the qualified loads before the barrier
    void check() const;
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit SeparateLoadComputePass(const Options& o) : o_(o) {}
  void run(PassContext& ctx) override;

 private:
  struct Shared;
  class LoopSplit;
  void split(PassContext& ctx, LoopId loop, Shared& shared);
  void keep_within_capacity(PassContext& ctx, Shared& shared);

  const Options o_;
};

}  // namespace tandem
