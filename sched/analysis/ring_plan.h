// The number of buffers of every tile a kernel rings, chosen together (address-rotation
// {buffers=model}, the `auto` pipeline; docs/passes.md, "One plan per kernel"). Each tile's
// count is a variable from 1 to its wish; the space's capacity at every program point is the
// constraint; the kernel's bound (each loop's bound per iteration times its iterations, summed)
// is the objective. The search knows neither tiles nor loops: the caller answers what a plan
// costs and whether it fits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tandem {

// The most tiles one plan sizes: beyond, a step grants buffers in rounds (address_rotation.cpp),
// as each costing and capacity check walks every tile.
constexpr size_t kRingPlanMostTiles = 256;

struct RingPlanProblem {
  std::vector<int64_t> most;                                // per tile: its wish, at least 1
  std::function<double(const std::vector<int64_t>&)> cost;  // the kernel's bound under a plan
  std::function<bool(const std::vector<int64_t>&)> fits;    // the plan's rings fit the space
  std::function<int64_t(size_t, int64_t)> bytes;            // a tile's footprint over n buffers
  int64_t budget = 20000;  // costings the search may spend (the exhaustive one: plans it may cost)
};

struct RingPlan {
  std::vector<int64_t> buffers;  // per tile
  double cost = 0;
  bool exact = false;  // every plan in the space was looked at
  int64_t plans_costed = 0;
};

// Plans of at most `exact_limit` combinations (and the budget) are searched exhaustively; larger ones by
// descent from every wish with exchange moves (ring_plan.cpp). Ties go to fewer bytes, and
// what capacity is left is then handed out in rounds, every tile's next buffer in tile order,
// which never raises the cost (a further buffer only puts a reuse further apart). The plan of
// all ones always fits: each tile fits on one buffer already.
RingPlan plan_rings(const RingPlanProblem& p, int64_t exact_limit = 4096);

}  // namespace tandem
