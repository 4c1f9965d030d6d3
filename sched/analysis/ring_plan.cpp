#include "sched/analysis/ring_plan.h"

#include <algorithm>
#include <limits>

namespace tandem {

namespace {

// Two costs closer than this (ps) are equal: the bounds are whole picoseconds per loop.
constexpr double kSame = 0.5;

class Search {
 public:
  explicit Search(const RingPlanProblem& p) : p_(p) {}

  RingPlan run(int64_t exact_limit) {
    RingPlan out;
    out.buffers = p_.most;
    if (p_.fits(out.buffers)) {
      out.cost = cost(out.buffers);
      out.exact = true;
    } else if (space_size(std::min(exact_limit, p_.budget)) <= std::min(exact_limit, p_.budget)) {
      out.buffers = exhaustive();
      out.exact = true;
    } else {
      out.buffers = descend();
      improve(out.buffers);
    }
    fill(out.buffers);
    out.cost = cost(out.buffers);
    out.plans_costed = costed_;
    return out;
  }

 private:
  double cost(const std::vector<int64_t>& n) {
    ++costed_;
    return p_.cost(n);
  }

  int64_t total_bytes(const std::vector<int64_t>& n) const {
    int64_t b = 0;
    for (size_t i = 0; i < n.size(); ++i) b += p_.bytes(i, n[i]);
    return b;
  }

  // The number of plans, stopping once it passes `limit`.
  int64_t space_size(int64_t limit) const {
    int64_t size = 1;
    for (int64_t m : p_.most) {
      size *= m;
      if (size > limit) return size;
    }
    return size;
  }

  // Every plan that fits, the cheapest kept (ties: fewer bytes).
  std::vector<int64_t> exhaustive() {
    std::vector<int64_t> n(p_.most.size(), 1), best = n;
    double best_cost = cost(best);
    int64_t best_bytes = total_bytes(best);
    for (;;) {
      size_t i = 0;
      while (i < n.size() && n[i] == p_.most[i]) n[i++] = 1;
      if (i == n.size()) break;
      ++n[i];
      if (!p_.fits(n)) continue;
      const double c = cost(n);
      const int64_t b = total_bytes(n);
      if (c < best_cost - kSame || (c <= best_cost + kSame && b < best_bytes)) {
        best = n;
        best_cost = c;
        best_bytes = b;
      }
    }
    return best;
  }

  // From every tile at its wish, one buffer at a time off the tile whose buffer costs the
  // least bound per byte it frees, until the plan fits. Starting high sees what each buffer
  // is worth while the others are in place: a loop's bound is the largest of its recurrences,
  // so a second buffer of one tile gains nothing until the other tiles of the loop have
  // theirs, and a climb from one buffer each would see no step worth taking.
  std::vector<int64_t> descend() {
    std::vector<int64_t> n = p_.most;
    double now = cost(n);
    while (!p_.fits(n)) {
      size_t pick = n.size();
      double pick_rate = std::numeric_limits<double>::infinity(), pick_cost = now;
      int64_t pick_freed = -1;
      for (size_t i = 0; i < n.size(); ++i) {
        if (n[i] <= 1) continue;
        const int64_t freed = p_.bytes(i, n[i]) - p_.bytes(i, n[i] - 1);
        if (freed <= 0) continue;
        double c = now;
        if (costed_ < p_.budget) {
          --n[i];
          c = cost(n);
          ++n[i];
        }
        const double loss = c - now > kSame ? c - now : 0;
        const double rate = loss / static_cast<double>(freed);
        // Ties: the buffer that frees more, then the tile with more buffers, then the later tile.
        const bool tie = pick < n.size() && rate == pick_rate && freed == pick_freed;
        if (rate < pick_rate || (rate == pick_rate && freed > pick_freed) || (tie && n[i] >= n[pick])) {
          pick = i;
          pick_rate = rate;
          pick_freed = freed;
          pick_cost = c;
        }
      }
      if (pick == n.size()) break;  // no buffer left to take off: one each fits (the header)
      --n[pick];
      now = costed_ < p_.budget ? pick_cost : now;
    }
    return n;
  }

  // Exchange moves: a tile's next buffer, paid for, when it does not fit, by as few buffers of
  // one other tile as make it fit; taken when the kernel's bound falls.
  void improve(std::vector<int64_t>& n) {
    double now = cost(n);
    for (bool better = true; better && costed_ < p_.budget;) {
      better = false;
      for (size_t i = 0; i < n.size() && !better && costed_ < p_.budget; ++i) {
        if (n[i] >= p_.most[i]) continue;
        std::vector<int64_t> m = n;
        ++m[i];
        if (p_.fits(m)) {
          const double c = cost(m);
          if (c < now - kSame) n = m, now = c, better = true;
          continue;
        }
        for (size_t j = 0; j < n.size() && !better && costed_ < p_.budget; ++j) {
          if (j == i || n[j] <= 1) continue;
          std::vector<int64_t> x = m;
          while (x[j] > 1 && !p_.fits(x)) --x[j];
          if (!p_.fits(x)) continue;
          const double c = cost(x);
          if (c < now - kSame) n = x, now = c, better = true;
        }
      }
    }
  }

  // What capacity is left, in rounds: every tile's next buffer, in tile order, where it fits.
  void fill(std::vector<int64_t>& n) {
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < n.size(); ++i) {
        if (n[i] >= p_.most[i]) continue;
        ++n[i];
        if (p_.fits(n))
          grew = true;
        else
          --n[i];
      }
    }
  }

  const RingPlanProblem& p_;
  int64_t costed_ = 0;
};

}  // namespace

RingPlan plan_rings(const RingPlanProblem& p, int64_t exact_limit) { return Search(p).run(exact_limit); }

}  // namespace tandem
