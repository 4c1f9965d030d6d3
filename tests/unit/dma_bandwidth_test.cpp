// DmaBandwidth keeps each chunk's rate and each group's next landing instead of recomputing
// them at every call. The simulator's output must not move by one rounding for it, so the
// model is checked here, bit for bit, against the straightforward one (each rate recomputed
// from the efficiency at every use, every group advanced and scanned at every call), on
// random streams of transfers over engine counts that take each engine_span path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sim/units/dma_bandwidth.h"

using namespace tandem;

namespace {

// The straightforward model, without the caches: the reference.
class ReferenceBandwidth {
 public:
  explicit ReferenceBandwidth(const DmaModel& model)
      : bytes_per_ps_(model.bandwidth_bytes_per_ns / 1000.0), engines_(static_cast<int>(model.engines)) {
    Group all;
    all.engines = engines_ >= 64 ? ~0ULL : (1ULL << engines_) - 1;
    groups_.push_back(all);
  }

  int start(const DmaTransfer& t, double now) {
    int id;
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      id = static_cast<int>(groups_left_.size());
      groups_left_.push_back(0);
    }
    uint64_t span = 0;
    for (int i = 0; i < t.engine_count; ++i) span |= 1ULL << ((t.first_engine + i) % engines_);
    const double per_engine = t.engine_bytes();
    groups_left_[static_cast<size_t>(id)] = 0;
    const size_t n = groups_.size();
    for (size_t i = 0; i < n; ++i) {
      uint64_t inside = groups_[i].engines & span;
      if (!inside) continue;
      advance(groups_[i], now);
      if (inside != groups_[i].engines) {
        Group outside = groups_[i];
        outside.engines &= ~span;
        groups_[i].engines = inside;
        for (const Chunk& c : outside.active) ++groups_left_[static_cast<size_t>(c.transfer)];
        groups_.push_back(std::move(outside));
      }
      groups_[i].active.push_back({id, per_engine, t.efficiency});
      ++groups_left_[static_cast<size_t>(id)];
    }
    return id;
  }

  double next_completion() const {
    double next = std::numeric_limits<double>::infinity();
    for (const Group& g : groups_)
      for (const Chunk& c : g.active)
        next = std::min(next, g.updated + std::max(0.0, std::ceil(c.remaining / rate(g, c) - 1e-9)));
    return next;
  }

  void complete_until(double now, std::vector<int>& done) {
    for (Group& g : groups_) {
      advance(g, now);
      for (size_t i = 0; i < g.active.size();) {
        if (g.active[i].remaining > 1e-6) {
          ++i;
          continue;
        }
        const int id = g.active[i].transfer;
        if (--groups_left_[static_cast<size_t>(id)] == 0) {
          done.push_back(id);
          free_ids_.push_back(id);
        }
        g.active.erase(g.active.begin() + static_cast<long>(i));
      }
    }
    uint64_t idle = 0;
    for (const Group& g : groups_)
      if (g.active.empty()) idle |= g.engines;
    if (idle) {
      Group merged;
      merged.engines = idle;
      merged.updated = now;
      std::vector<Group> kept;
      for (Group& g : groups_)
        if (!g.active.empty()) kept.push_back(std::move(g));
      kept.push_back(merged);
      groups_ = std::move(kept);
    }
  }

 private:
  struct Chunk {
    int transfer;
    double remaining;
    double efficiency;
  };
  struct Group {
    uint64_t engines = 0;
    std::vector<Chunk> active;
    double updated = 0;
  };
  double rate(const Group& g, const Chunk& c) const {
    return bytes_per_ps_ * c.efficiency / static_cast<double>(g.active.size());
  }
  void advance(Group& g, double now) const {
    const double dt = now - g.updated;
    if (dt > 0)
      for (Chunk& c : g.active) c.remaining -= rate(g, c) * dt;
    g.updated = now;
  }

  double bytes_per_ps_;
  int engines_;
  std::vector<Group> groups_;
  std::vector<int> groups_left_;
  std::vector<int> free_ids_;
};

// Drives both models through the same random stream as the simulator does: starts at the
// current time, and wake-ups at the next landing rounded up to a whole picosecond.
void same_as_reference(int engines, unsigned seed) {
  DmaModel m;
  m.engines = engines;
  m.bandwidth_bytes_per_ns = 27.3;
  DmaBandwidth fast(m);
  ReferenceBandwidth ref(m);
  std::mt19937 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  double now = 0;
  int moving = 0;
  std::vector<int> done_fast, done_ref;
  for (int step = 0; step < 4000; ++step) {
    const bool start = moving == 0 || (moving < 12 && rng() % 3 != 0);
    if (start) {
      DmaTransfer t;
      // Half of them from a few round sizes, so that landings often coincide (their order
      // in `done` is then the groups' and chunks' order).
      const bool round = rng() % 2;
      t.bytes = round ? 4096.0 * (1 << (rng() % 4)) : std::floor(uniform(1, 300000));
      t.first_engine = static_cast<int>(rng() % static_cast<unsigned>(engines));
      t.engine_count = 1 + static_cast<int>(rng() % static_cast<unsigned>(engines));
      t.efficiency = round ? 1.0 : uniform(0.2, 1.0);
      t.overhead_bytes = !round && rng() % 2 ? uniform(0, 500) : 0;
      REQUIRE(fast.start(t, now) == ref.start(t, now));
      ++moving;
      // The next start a little later, but not past a landing (the simulator wakes for it).
      if (rng() % 2)
        now = std::min(now + std::floor(uniform(0, 2000)), std::max(now, std::ceil(ref.next_completion() - 1e-9)));
    } else {
      const double next = ref.next_completion();
      REQUIRE(fast.next_completion() == next);  // bit for bit, not approximately
      now = std::max(now, std::ceil(next - 1e-9));
      done_fast.clear();
      done_ref.clear();
      fast.complete_until(now, done_fast);
      ref.complete_until(now, done_ref);
      REQUIRE(done_fast == done_ref);  // the same transfers, in the same order
      moving -= static_cast<int>(done_ref.size());
    }
    REQUIRE(fast.next_completion() == ref.next_completion());
  }
}

}  // namespace

TEST_CASE("DMA bandwidth's cached rates and landings equal the model recomputed at every call", "[dma]") {
  // 16 engines: the whole-word span; 5: spans wrapping around; 64: engine by engine.
  for (int engines : {16, 5, 64, 1})
    for (unsigned seed = 1; seed <= 3; ++seed) {
      INFO("engines " << engines << " seed " << seed);
      same_as_reference(engines, seed);
    }
}

// Transfers landing together are reported in the order of their groups, and a group that
// falls idle goes last: the order the simulator's clients hear of them in.
TEST_CASE("DMA transfers landing together come in group order, an idle group last", "[dma]") {
  DmaModel m;
  m.engines = 2;
  m.bandwidth_bytes_per_ns = 1;  // 0.001 bytes per ps per engine
  DmaBandwidth bw(m);
  std::vector<int> done;
  const int a = bw.start({1000, 0, 1, 1.0}, 0);  // engine 0: its group splits from engine 1's
  const int b = bw.start({2000, 1, 1, 1.0}, 0);  // engine 1
  CHECK(bw.next_completion() == Approx(1e6));
  bw.complete_until(1e6, done);
  REQUIRE(done == std::vector<int>{a});
  // Engine 0's group is idle and goes after engine 1's; `c` joins it and lands with `b`.
  done.clear();
  const int c = bw.start({1000, 0, 1, 1.0}, 1e6);
  bw.complete_until(std::ceil(bw.next_completion() - 1e-9), done);
  CHECK(done == std::vector<int>{b, c});
}
