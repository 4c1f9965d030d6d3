// The arithmetic of shared DMA bandwidth, free of SystemC so that the simulator and the
// benchmark's plain event loop run the same model. Each DMA engine divides its bandwidth
// equally among the chunks it is moving, scaled by each transfer's efficiency. Engines that
// have carried the same transfers since they were last idle evolve identically, so they are
// kept as one group: a run of 128-partition transfers costs one engine's arithmetic, not 16.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sim/lower/program.h"

namespace tandem {

class DmaBandwidth {
 public:
  explicit DmaBandwidth(const DmaModel& model);

  // Starts moving `t` at time `now` (ps); returns its id.
  int start(const DmaTransfer& t, double now);
  // When the next chunk will land (ps), or infinity when nothing moves.
  double next_completion() const;
  // Advances to `now` and appends the transfers whose last chunk has landed.
  void complete_until(double now, std::vector<int>& done);

 private:
  struct Chunk {
    int transfer;
    double remaining;  // bytes per engine
    double efficiency;
  };
  struct Group {
    uint64_t engines = 0;  // bit set of DMA engines
    std::vector<Chunk> active;
    double updated = 0;
  };

  // The engines `count` engines from `first` on cover, wrapping around: a bit set.
  uint64_t engine_span(int first, int count) const;
  double rate(const Group& g, const Chunk& c) const;  // bytes per ps per engine
  void advance(Group& g, double now) const;

  double bytes_per_ps_;
  int engines_;
  std::vector<Group> groups_;
  std::vector<int> groups_left_;  // per transfer: groups still moving part of it
  std::vector<int> free_ids_;
};

}  // namespace tandem
