// The arithmetic of shared DMA bandwidth, free of SystemC so that the simulator and the
// benchmark's plain event loop run the same model. Each DMA engine divides its bandwidth
// equally among the chunks it is moving, scaled by each transfer's efficiency. Engines that
// have carried the same transfers since they were last idle evolve identically, so they are
// kept as one group: a run of 128-partition transfers costs one engine's arithmetic, not 16.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/lower/program.h"

namespace tandem {

class DmaBandwidth {
  static constexpr double kNever = std::numeric_limits<double>::infinity();

 public:
  explicit DmaBandwidth(const DmaModel& model);

  // Starts moving `t` at time `now` (ps); returns its id.
  int start(const DmaTransfer& t, double now);
  // When the next chunk will land (ps), or infinity when nothing moves.
  double next_completion() const {
    double next = kNever;
    for (const Group& g : groups_) next = std::min(next, g.next);
    return next;
  }
  // Advances to `now` and appends the transfers whose last chunk has landed.
  void complete_until(double now, std::vector<int>& done);

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
    double updated = 0;   // when `remaining` was last brought up to date; stale while idle
    double next = kNever;  // when its first chunk lands, kept so that a look-up scans no chunk
  };

  // The engines `count` engines from `first` on cover, wrapping around: a bit set.
  uint64_t engine_span(int first, int count) const;
  static void advance(Group& g, double now);
  static void share(Group& g);       // the rates after the chunk count changed
  static void find_next(Group& g);   // the landing time after `remaining` or the rates changed
  void merge_idle(double now);  // two or more idle groups, or one not last: one, last

  double bytes_per_ps_;
  int engines_;
  std::vector<Group> groups_;
  std::vector<int> groups_left_;  // per transfer: groups still moving part of it
  std::vector<int> free_ids_;
};

}  // namespace tandem
