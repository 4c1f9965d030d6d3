// The analysis half of wmma-reorder (docs/passes.md): for one loop body of ds_loads and WMMAs, a
// new WMMA issue order from an order mode and the ds_load placement it implies, including
// loads that cross the back edge. A pure function of the kernel: the pass applies the plan.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace tandem {

// A new order: perm[new position] = old position among the loop's WMMAs, or a reason to decline.
struct WmmaOrder {
  std::vector<int> perm;
  std::string decline;
};

// Where an order comes from (the pass's modes: vgpr, explicit, reverse).
class WmmaOrderProvider {
 public:
  virtual ~WmmaOrderProvider() = default;
  virtual WmmaOrder order(const Kernel& k, const std::vector<InstId>& wmmas) const = 0;
};

// `mode` is vgpr, explicit or reverse; `explicit_order` ("3:2:1:0") only with explicit.
// Throws Error for a malformed order text.
std::unique_ptr<WmmaOrderProvider> make_wmma_order(const std::string& mode, const std::string& explicit_order);

struct LoadPlacement {
  InstId load = kNoId;
  int slot = 0;                   // issues just before the WMMA at this new position
  bool wrapped = false;           // issues for the next iteration
  InstId twin = kNoId;            // its preheader copy in the input, if it was prefetched
  std::vector<InstId> consumers;  // the WMMAs that read the value it loads
};

// A producer group (loads feeding one WMMA operand) moved to a virtual register because its
// live window collides with an earlier producer of the same registers in the new order.
struct VirtualRegister {
  int number = 0;
  std::vector<InstId> loads;
  std::vector<std::pair<InstId, size_t>> reads;  // consumers' read operands that move with it
};

struct WmmaReorderPlan {
  LoopId loop = kNoId;
  std::string skip_reason;        // set: leave the loop exactly as it is
  int distance = 0;               // WMMA slots between a load and its first consumer
  std::optional<int64_t> stride;  // per-iteration offset read off preheader/body pairs
  std::vector<InstId> wmmas;      // new issue order
  std::vector<InstId> body;       // new body: loads and WMMAs
  std::vector<LoadPlacement> loads;
  std::vector<VirtualRegister> virtuals;
  int wmmas_moved = 0, loads_moved = 0, prefetches_added = 0, prefetches_removed = 0;
  // Loads the order would have wrapped or de-rotated, kept as they were because their
  // registers are read after the loop.
  int loads_kept_for_after_loop = 0;
  // Loads kept as they were because the moved address would not fit the space's offset
  // field (address_offset_max).
  int loads_kept_for_offset = 0;
};

// `distance` < 0 derives it from ds_load latency over WMMA issue cycles. `next_virtual` is the
// number the first virtual register gets (numbering continues across loops).
WmmaReorderPlan plan_wmma_reorder(const Kernel& k, LoopId loop, const DepGraph& g, const WmmaOrderProvider& order,
                                  int distance, int next_virtual = 0);

}  // namespace tandem
