#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// Gives every instruction without one an engine or DMA queue: compute opcodes the first
// engine their target lists (or the least loaded with policy=balance), DMA opcodes a queue
// round-robin over the first `queues` queues. Instructions that already name one keep it.
// Instructions on one DMA queue are FIFO on the hardware: their Ordered edges are added.
class AssignEnginesPass : public Pass {
 public:
  static constexpr const char* kHelp =
      "assign an engine to every compute instruction and a DMA queue to every transfer that lacks one";
  struct Options {
    int64_t queues;  // 0: every queue of the target
    bool balance;    // the least loaded engine, not the first listed
    void check() const {}
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit AssignEnginesPass(const Options& o) : o_(o) {}
  void run(PassContext& ctx) override;

 private:
  const Options o_;
};

}  // namespace tandem
