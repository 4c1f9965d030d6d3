// The units' compact view of every instruction's channels: for each input and output, the
// semaphore and the few fields its key needs in the common case (one key per iteration of the
// key loop, published at the source's only instance in it), in one array the hot loop walks.
// A per-tile channel, or an output whose source sits in loops below the key loop, is `general`:
// the unit asks channel_needed_key / channel_produced_key (sim/lower/program.h). Channels that
// others imply (sim/lower/implied_channels.h) are left out: no unit waits on or publishes them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/lower/program.h"
#include "sim/units/semaphore.h"

namespace tandem {

struct ChannelPort {
  Semaphore* sem = nullptr;
  int32_t channel = -1;     // index in SimProgram::channels
  LoopId key_loop = kNoId;  // kNoId: always key 0
  int32_t distance = 0;
  DepKind kind = DepKind::Invalid;
  bool general = false;
  bool src_dma = false;  // SimChannel::src_dma: a wait on it is a wait on a DMA transfer
  // An output publishes the source's start (0: an Ordered edge, an order without data), the
  // end of its reads (1: Anti) or its completion (2).
  uint8_t value = 2;
  int64_t key_lo = 0;
};

class ChannelPorts {
 public:
  // A run of ports: [begin, begin + size).
  struct Range {
    uint32_t begin = 0, size = 0;
  };
  enum Set { In, Out, OutOrdered, OutData, SetCount };

  ChannelPorts() = default;
  ChannelPorts(const SimProgram& p, const std::vector<std::unique_ptr<Semaphore>>& semaphores,
               const std::vector<bool>& implied)
      : ranges_(p.insts.size()) {
    ports_.reserve(3 * p.channels.size());  // each channel's port in In, Out and one of OutOrdered, OutData
    for (const SimInst& inst : p.insts) {
      if (inst.units.empty()) continue;  // erased
      Range* r = ranges_[static_cast<size_t>(inst.id)].data();
      add(r[In], inst.in_channels, p, semaphores, implied, In);
      add(r[Out], inst.out_channels, p, semaphores, implied, Out);
      // A DMA queue publishes its Ordered outputs at issue, the others when the data lands.
      add(r[OutOrdered], inst.out_channels, p, semaphores, implied, OutOrdered);
      add(r[OutData], inst.out_channels, p, semaphores, implied, OutData);
    }
  }

  const ChannelPort* begin(InstId id, Set set, uint32_t* size) const {
    const Range& r = ranges_[static_cast<size_t>(id)][set];
    *size = r.size;
    return ports_.data() + r.begin;
  }

 private:
  void add(Range& r, const std::vector<int>& channels, const SimProgram& p,
           const std::vector<std::unique_ptr<Semaphore>>& semaphores, const std::vector<bool>& implied, Set set) {
    const bool input = set == In;
    r.begin = static_cast<uint32_t>(ports_.size());
    for (int ch : channels) {
      if (implied[static_cast<size_t>(ch)]) continue;
      const SimChannel& c = p.channels[static_cast<size_t>(ch)];
      if ((set == OutOrdered && c.kind != DepKind::Ordered) || (set == OutData && c.kind == DepKind::Ordered)) continue;
      ChannelPort port;
      port.sem = semaphores[static_cast<size_t>(ch)].get();
      port.channel = ch;
      port.key_loop = c.key_loop;
      port.distance = c.distance;
      port.kind = c.kind;
      // An input reads one key per iteration unless per tile; an output publishes once per
      // iteration unless per tile or below the key loop.
      port.general = !c.tile_key.empty() || (!input && !c.src_inner.empty());
      port.key_lo = c.key_lo;
      port.src_dma = c.src_dma;
      port.value = c.kind == DepKind::Ordered ? 0 : c.kind == DepKind::Anti ? 1 : 2;
      ports_.push_back(port);
    }
    r.size = static_cast<uint32_t>(ports_.size()) - r.begin;
  }

  std::vector<std::array<Range, SetCount>> ranges_;
  std::vector<ChannelPort> ports_;
};

}  // namespace tandem
