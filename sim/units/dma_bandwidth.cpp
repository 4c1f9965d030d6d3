#include "sim/units/dma_bandwidth.h"

#include <algorithm>

namespace tandem {

namespace {
// A chunk within this many bytes of done is done: wake-ups round up to whole picoseconds.
constexpr double kEpsilonBytes = 1e-6;
}  // namespace

DmaBandwidth::DmaBandwidth(const DmaModel& model)
    : bytes_per_ps_(model.bandwidth_bytes_per_ns / 1000.0), engines_(static_cast<int>(model.engines)) {
  Group all;
  all.engines = engines_ >= 64 ? ~0ULL : (1ULL << engines_) - 1;
  groups_.push_back(all);
}

uint64_t DmaBandwidth::engine_span(int first, int count) const {
  if (count <= 0) return 0;
  if (engines_ >= 64 || first < 0) {  // beyond a word's shifts: engine by engine
    uint64_t span = 0;
    for (int i = 0; i < count; ++i) span |= 1ULL << ((first + i) % engines_);
    return span;
  }
  // Engines first .. first + count - 1, wrapping around modulo engines_, as whole-word masks:
  // a division per engine was most of start()'s time.
  const uint64_t all = (1ULL << engines_) - 1;
  if (count >= engines_) return all;
  const int s = first % engines_;
  if (s + count <= engines_) return ((1ULL << count) - 1) << s;
  return (all & ~((1ULL << s) - 1)) | ((1ULL << (s + count - engines_)) - 1);
}

// The rates, the remaining bytes and the landing times below are the same expressions, in the
// same order, as when each was recomputed from the efficiency at every use: the simulator's
// times must not move by one rounding.
void DmaBandwidth::advance(Group& g, double now) {
  const double dt = now - g.updated;
  if (dt > 0)
    for (Chunk& c : g.active) c.remaining -= c.rate * dt;
  g.updated = now;
}

void DmaBandwidth::share(Group& g) {
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

void DmaBandwidth::find_next(Group& g) {
  double next = kNever;
  for (const Chunk& c : g.active) next = std::min(next, g.updated + c.remaining / c.rate);
  g.next = next;
}

int DmaBandwidth::start(const DmaTransfer& t, double now) {
  int id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<int>(groups_left_.size());
    groups_left_.push_back(0);
  }
  const uint64_t span = engine_span(t.first_engine, t.engine_count);
  const double per_engine = t.engine_bytes();
  const double speed = bytes_per_ps_ * t.efficiency;
  int& left = groups_left_[static_cast<size_t>(id)];
  left = 0;
  const size_t n = groups_.size();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t inside = groups_[i].engines & span;
    if (!inside) continue;
    advance(groups_[i], now);
    if (inside != groups_[i].engines) {
      // Split: the engines outside the span go on without the new chunk.
      Group outside = groups_[i];
      outside.engines &= ~span;
      groups_[i].engines = inside;
      for (const Chunk& c : outside.active) ++groups_left_[static_cast<size_t>(c.transfer)];
      find_next(outside);  // advanced: the same chunks, landing at the same times by another sum
      groups_.push_back(std::move(outside));
    }
    Group& g = groups_[i];
    // Built in place: a braced temporary was stored field by field and read back whole, a
    // store-forwarding stall.
    Chunk& c = g.active.emplace_back();
    c.transfer = id;
    c.remaining = per_engine;
    c.speed = speed;
    share(g);
    find_next(g);
    ++left;
  }
  return id;
}

void DmaBandwidth::complete_until(double now, std::vector<int>& done) {
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

void DmaBandwidth::merge_idle(double now) {
  Group merged;
  merged.updated = now;
  size_t kept = 0;
  for (size_t i = 0; i < groups_.size(); ++i) {
    if (groups_[i].active.empty()) {
      merged.engines |= groups_[i].engines;
      // An idle group's storage (empty, its capacity kept) serves the merged one: no
      // allocation per transfer once the vectors have grown.
      if (merged.active.capacity() == 0) merged.active.swap(groups_[i].active);
      continue;
    }
    if (kept != i) std::swap(groups_[kept], groups_[i]);
    ++kept;
  }
  groups_.resize(kept);
  groups_.push_back(std::move(merged));
}

}  // namespace tandem
