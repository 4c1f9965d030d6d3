// The joint ring plan (sched/analysis/ring_plan.h): the exhaustive search and the descent with
// exchange moves on plans whose best is known by hand.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sched/analysis/ring_plan.h"

using namespace tandem;

namespace {

// Two tiles of one loop, 100 bytes per buffer, 400 bytes for both rings: the loop's bound is
// the larger of its resource bound (50) and each tile's recurrence, 100 / n, so a second
// buffer of one tile gains nothing until the other has one too.
RingPlanProblem two_tiles_of_one_loop() {
  RingPlanProblem p;
  p.most = {4, 4};
  p.bytes = [](size_t, int64_t n) { return 100 * n; };
  p.fits = [](const std::vector<int64_t>& n) { return 100 * (n[0] + n[1]) <= 400; };
  p.cost = [](const std::vector<int64_t>& n) {
    return std::max({50.0, 100.0 / static_cast<double>(n[0]), 100.0 / static_cast<double>(n[1])});
  };
  return p;
}

}  // namespace

TEST_CASE("every wish that fits is the plan", "[ring_plan]") {
  RingPlanProblem p = two_tiles_of_one_loop();
  p.fits = [](const std::vector<int64_t>&) { return true; };
  const RingPlan plan = plan_rings(p);
  CHECK(plan.buffers == std::vector<int64_t>{4, 4});
  CHECK(plan.exact);
}

TEST_CASE("the exhaustive search gives both tiles of a loop their second buffer", "[ring_plan]") {
  const RingPlan plan = plan_rings(two_tiles_of_one_loop());
  CHECK(plan.buffers == std::vector<int64_t>{2, 2});
  CHECK(plan.cost == 50.0);
  CHECK(plan.exact);
}

TEST_CASE("the descent finds the same plan where the space is too large to search", "[ring_plan]") {
  const RingPlan plan = plan_rings(two_tiles_of_one_loop(), 1);
  CHECK(plan.buffers == std::vector<int64_t>{2, 2});
  CHECK(plan.cost == 50.0);
  CHECK_FALSE(plan.exact);
}

TEST_CASE("the one buffer that fits goes to the tile whose loop it shortens", "[ring_plan]") {
  // Tile 0's loop gains nothing from a ring (its bound is its resource bound); tile 1's loop
  // runs 10 iterations at a recurrence of 80 on one buffer, at 40 on two. One ring fits.
  RingPlanProblem p;
  p.most = {3, 3};
  p.bytes = [](size_t, int64_t n) { return 100 * n; };
  p.fits = [](const std::vector<int64_t>& n) { return 100 * (n[0] + n[1]) <= 300; };
  p.cost = [](const std::vector<int64_t>& n) { return 20.0 + 10 * std::max(40.0, 80.0 / static_cast<double>(n[1])); };
  for (int64_t limit : {4096, 1}) {
    const RingPlan plan = plan_rings(p, limit);
    CHECK(plan.buffers == std::vector<int64_t>{1, 2});
    CHECK(plan.cost == 420.0);
  }
}
