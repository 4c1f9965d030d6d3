#include "sim/units/dma_bandwidth.h"

#include <algorithm>

namespace tandem {

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
  // no division per engine.
  const uint64_t all = (1ULL << engines_) - 1;
  if (count >= engines_) return all;
  const int s = first % engines_;
  if (s + count <= engines_) return ((1ULL << count) - 1) << s;
  return (all & ~((1ULL << s) - 1)) | ((1ULL << (s + count - engines_)) - 1);
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
    // Built in place: a braced temporary is stored field by field and read back whole, a
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
