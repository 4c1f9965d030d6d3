// The arithmetic of shared DMA bandwidth, free of SystemC so that the simulator and the
// benchmark's plain event loop run the same model. Each DMA engine divides its bandwidth
// equally among the chunks it is moving, scaled by each transfer's efficiency. Engines that
// have carried the same transfers since they were last idle evolve identically, so they are
// kept as one group: a run of 128-partition transfers costs one engine's arithmetic, not 16.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/lower/program.h"
#include "sim/units/unit_state.h"

namespace tandem {

class DmaBandwidth {
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  // A chunk within this many bytes of done is done: wake-ups round up to whole picoseconds.
  static constexpr double kEpsilonBytes = 1e-6;

 public:
  explicit DmaBandwidth(const DmaModel& model);

  // Starts moving `t` at time `now` (ps); returns its id.
  int start(const DmaTransfer& t, double now);
  // When the next chunk will land, in whole picoseconds (a landing rounds up), or infinity
  // when nothing moves.
  double next_completion() const {
    double next = kNever;
    for (const Group& g : groups_) next = std::min(next, g.next);
    return next;
  }
  // Advances to `now` and appends the transfers whose last chunk has landed.
  void complete_until(double now, std::vector<int>& done);
  // Lists the model's state (sim/units/unit_state.h); `transfer(id)` lists a transfer by who
  // moves it (ids are labels).
  template <class ListTransfer>
  void visit_state(StateVisitor& v, ListTransfer&& transfer) {
    v.exact(static_cast<int64_t>(groups_.size()));
    for (Group& g : groups_) {
      v.exact(static_cast<int64_t>(g.engines));
      v.exact(static_cast<int64_t>(g.active.size()));
      if (g.active.empty()) continue;  // an idle group's times are stale
      v.time(g.updated);
      if (std::isinf(g.next)) return v.refuse();
      v.time(g.next);
      for (const Chunk& c : g.active) {
        transfer(c.transfer);
        v.exact(groups_left_[static_cast<size_t>(c.transfer)]);
        v.real(c.remaining);
        v.real(c.speed);
        v.real(c.rate);
      }
    }
  }

 private:
  struct Chunk {
    int transfer;
    double remaining;  // bytes per engine
    double speed;      // bytes per ps per engine when alone: the engine's bandwidth x efficiency
    double rate;       // its share now: speed / the group's chunks
  };
  struct Group {
    uint64_t engines = 0;  // bit set of DMA engines
    std::vector<Chunk> active;
    double updated = 0;    // when `remaining` was last brought up to date (whole ps); stale while idle
    double next = kNever;  // when its first chunk lands, kept so that a look-up scans no chunk
  };

  // The engines `count` engines from `first` on cover, wrapping around: a bit set.
  uint64_t engine_span(int first, int count) const;
  static void advance(Group& g, double now);
  static void share(Group& g);      // the rates after the chunk count changed
  static void find_next(Group& g);  // the landing time after `remaining` or the rates changed
  void merge_idle(double now);      // two or more idle groups, or one not last: one, last

  double bytes_per_ps_;
  int engines_;
  std::vector<Group> groups_;
  std::vector<int> groups_left_;  // per transfer: groups still moving part of it
  std::vector<int> free_ids_;
};

// A landing's arithmetic is inline: the DMA system runs complete_until at every wake, and a
// call's frame per landing is avoidable work; start() calls the same helpers from the .cpp.

// The rates, the remaining bytes and the landing times below are the same expressions, in the
// same order, as recomputing each from the efficiency at every use (the reference model in
// tests/unit/dma_bandwidth_test.cpp): the simulator's times must not move by one rounding.
inline void DmaBandwidth::advance(Group& g, double now) {
  const double dt = now - g.updated;
  if (dt > 0)
    for (Chunk& c : g.active) c.remaining -= c.rate * dt;
  g.updated = now;
}

inline void DmaBandwidth::share(Group& g) {
  const size_t count = g.active.size();
  const double n = static_cast<double>(count);
  if ((count & (count - 1)) == 0) {
    // A power of two: multiplying by its reciprocal (exact) rounds the same real number as the
    // division does, so the rates are bit for bit the same, without a division's latency per
    // chunk (the usual one or two chunks).
    const double inverse = 1.0 / n;
    for (Chunk& c : g.active) c.rate = c.speed * inverse;
    return;
  }
  for (Chunk& c : g.active) c.rate = c.speed / n;
}

// A landing is `updated` plus the first chunk's time left rounded up to a whole picosecond: the
// rounding is of a duration, never of an absolute time, so a run shifted in time lands its
// transfers shifted by exactly as much (fast-forward relies on it, sim/units/fast_forward.h).
inline void DmaBandwidth::find_next(Group& g) {
  double left = kNever;
  for (const Chunk& c : g.active) left = std::min(left, c.remaining / c.rate);
  // Within 1e-9 ps of a whole picosecond is on it; below 2^52 an integer ceil is exact and
  // costs less than the library's (no rounding instruction in the baseline ISA).
  const double x = left - 1e-9;
  if (x <= 0) {
    g.next = g.updated;
  } else if (x < 0x1p52) {
    auto whole = static_cast<int64_t>(x);
    if (static_cast<double>(whole) < x) ++whole;
    g.next = g.updated + static_cast<double>(whole);
  } else {
    g.next = std::isinf(x) ? kNever : g.updated + std::ceil(x);
  }
}

inline void DmaBandwidth::complete_until(double now, std::vector<int>& done) {
  size_t idle = 0;  // idle groups
  for (Group& g : groups_) {
    if (g.active.empty()) {  // nothing to advance: its `updated` is set when a chunk joins
      ++idle;
      continue;
    }
    const bool moved = now != g.updated;
    advance(g, now);
    // Drop the landed chunks in place, keeping the others' order (it orders `done`).
    size_t kept = 0;
    for (size_t i = 0; i < g.active.size(); ++i) {
      const Chunk& c = g.active[i];
      if (c.remaining > kEpsilonBytes) {
        if (kept != i) g.active[kept] = c;
        ++kept;
        continue;
      }
      const int id = c.transfer;
      if (--groups_left_[static_cast<size_t>(id)] == 0) {
        done.push_back(id);
        free_ids_.push_back(id);
      }
    }
    const bool landed = kept != g.active.size();
    if (landed) {
      g.active.resize(kept);
      if (kept == 0) {
        g.next = kNever;
        ++idle;
        continue;
      }
      share(g);
    }
    if (moved || landed) find_next(g);
  }
  // Idle groups carry no history: merge them into one, last, so that the next transfers share
  // one group. A lone idle group already last stays as it is (no rebuild per landing).
  if (idle > 1 || (idle == 1 && !groups_.back().active.empty())) merge_idle(now);
}

}  // namespace tandem
