#pragma once

#include "sched/passes/pass.h"

namespace tandem {

// Multi-buffering (docs/passes.md, address-rotation): a tensor of the chosen space that a loop
// rewrites every iteration, and whose value does not live from one iteration to the next,
// is ringed over N buffers: iteration i uses address base + (i mod N) * stride. Reuse of a
// buffer is then N iterations apart, so the loop-carried WAR and WAW edges on it move to
// distance N (the WAR the load/compute split cut comes back at distance N).
class AddressRotationPass : public Pass {
 public:
  static constexpr const char* kHelp = "ring each tensor a loop rewrites every iteration over N buffers";
  // buffers=: a fixed count, or auto (count 0), or the model's (from_model).
  struct BufferChoice {
    int64_t count = 0;
    bool from_model = false;
  };
  struct Options {
    std::string space;
    BufferChoice buffers;
    bool nested;                     // also ring tiles nested loops rewrite whole before any read
    std::vector<std::string> tiles;  // the tensors to ring (empty: every candidate)
    void check() const {}
  };
  static const std::vector<OptionRow<Options>>& option_rows();
  explicit AddressRotationPass(const Options& o) : o_(o) {}
  void run(PassContext& ctx) override;

 private:
  class KernelRotation;
  const Options o_;
};

}  // namespace tandem
