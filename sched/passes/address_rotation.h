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
  static std::vector<PassOptionSpec> options();

  explicit AddressRotationPass(const PassOptions& o);
  void run(PassContext& ctx) override;

 private:
  std::string space_;
  std::vector<std::string> tiles_;  // the tensors to ring (empty: every candidate)
  int64_t buffers_;                 // 0 = auto or model
  bool from_model_ = false;
  bool nested_ = false;  // also ring tiles nested loops rewrite whole before any read
};

}  // namespace tandem
