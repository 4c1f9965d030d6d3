#include "sim/lower/implied_channels.h"

#include <map>
#include <tuple>

namespace tandem {

namespace {

// Which time a channel carries: Ordered the source's start, Anti its read_done (a compute
// engine's busy end, a transfer's landing), Flow and Output its completion. For one instance
// start <= read_done <= completion, so a channel of higher rank carries a time no earlier.
int rank(DepKind k) {
  switch (k) {
    case DepKind::Ordered:
      return 0;
    case DepKind::Anti:
      return 1;
    default:
      return 2;
  }
}

// One key per iteration of the key loop, published by the source's only instance in it.
bool simple(const SimChannel& c) { return c.tile_key.empty() && c.src_inner.empty(); }

}  // namespace

std::vector<bool> implied_channels(const SimProgram& p, double spread) {
  const size_t n = p.channels.size();
  std::vector<bool> implied(n, false);
  // A channel another one's implication relies on must stay: `kept` pins it (no chain of
  // implications can then lean on a channel that is itself left out).
  std::vector<bool> kept(n, false);
  auto plain = [&](InstId id) { return !p.insts[static_cast<size_t>(id)].is_barrier; };
  // b's channel to c must carry a time strictly after b's start, however the jitter scales
  // b: then a -> c, which carries a time no later than b's start, is never the binding input
  // (the ledger's stall reason and exposed DMA, the trace's arrow follow the binding one).
  // A compute engine's busy end and completion, a transfer's landing, all come at least the
  // jittered cycles after the start (floored to whole picoseconds; 2 keeps a margin against
  // rounding). A collective's end follows its link and DMA phases: not taken as b.
  auto takes_time = [&](InstId id) {
    const SimInst& b = p.insts[static_cast<size_t>(id)];
    return !b.is_barrier && !b.collective && static_cast<double>(b.cycles_ps) * (1.0 - spread) >= 2.0;
  };
  // Simple channels by (src, dst).
  std::multimap<std::pair<InstId, InstId>, int> by_ends;
  std::vector<std::vector<int>> out(p.insts.size());
  for (size_t i = 0; i < n; ++i) {
    const SimChannel& c = p.channels[i];
    if (!simple(c) || !plain(c.src) || !plain(c.dst)) continue;
    by_ends.emplace(std::make_pair(c.src, c.dst), static_cast<int>(i));
    out[static_cast<size_t>(c.src)].push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    const SimChannel& ac = p.channels[i];
    if (kept[i] || !simple(ac) || !plain(ac.src) || !plain(ac.dst)) continue;
    // Leaving a -> c out also lifts the hold a full ring puts on a, which can move a unit's
    // use of a shared resource in SystemC time. Only when a and c share a unit: such a ring
    // holds at most distance + 2 keys (the unit reads before it publishes again; a queue
    // publishes at landing, after its issue has read), so with any window of 2 or more it is
    // never full and never held anything.
    if (p.insts[static_cast<size_t>(ac.src)].units != p.insts[static_cast<size_t>(ac.dst)].units) continue;
    bool found = false;
    for (int ab_id : out[static_cast<size_t>(ac.src)]) {
      const SimChannel& ab = p.channels[static_cast<size_t>(ab_id)];
      if (static_cast<size_t>(ab_id) == i || implied[static_cast<size_t>(ab_id)]) continue;
      if (ab.key_loop != ac.key_loop || ab.distance > ac.distance || rank(ab.kind) < rank(ac.kind)) continue;
      if (!takes_time(ab.dst)) continue;
      auto [lo, hi] = by_ends.equal_range({ab.dst, ac.dst});
      for (auto it = lo; it != hi && !found; ++it) {
        const int bc_id = it->second;
        const SimChannel& bc = p.channels[static_cast<size_t>(bc_id)];
        if (static_cast<size_t>(bc_id) == i || bc_id == ab_id || implied[static_cast<size_t>(bc_id)]) continue;
        if (bc.key_loop != ac.key_loop || ab.distance + bc.distance != ac.distance || bc.kind == DepKind::Ordered)
          continue;
        // c's instance in iteration n reads b's of n - d2 (needed: n - d2 is at least d1 into
        // the loop), whose start waited for a's of n - d, which published a -> b and a -> c
        // at once (both simple, on the same loop), a -> b's time no earlier. So
        //   c.start >= value_bc(b) > b.start >= value_ab(a) >= value_ac(a).
        found = true;
        kept[static_cast<size_t>(ab_id)] = kept[static_cast<size_t>(bc_id)] = true;
      }
      if (found) break;
    }
    implied[i] = found;
  }
  return implied;
}

}  // namespace tandem
