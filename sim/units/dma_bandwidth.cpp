#include "sim/units/dma_bandwidth.h"

#include <algorithm>

namespace tandem {

DmaBandwidth::DmaBandwidth(const DmaModel& model)
    : bytes_per_ps_(model.bandwidth_bytes_per_ns / 1000.0), engines_(static_cast<int>(model.engines)) {
  Group all;
  all.engines = engines_ >= 64 ? ~0ULL : (1ULL << engines_) - 1;
  groups_.push_back(all);
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
