// The race checker's interval index: per rotation buffer of a followed tensor, the live writes
// (each a box of the buffer and the time it was being written) in program order, what lets a
// read's check skip the scan in the usual race-free case, and the settle that drops the writes
// newer ones hide, so that the live set follows live data, not the number of dynamic instances.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/support/box.h"
#include "sim/lower/program.h"

namespace tandem::race {

using Interval = std::pair<int64_t, int64_t>;

// A box stored elsewhere (a write log's or the pending reads' dims): events stay small and
// trivially copied, and a box is written in place, not built and copied per access.
struct BoxRef {
  const Interval* d;
  uint32_t rank;
};

// sched/support/box's overlaps, contains, == and intersect on boxes stored in place (the
// checker's events keep their boxes in flat arrays): the same results, no small_vector per
// access.
inline bool overlaps(BoxRef a, BoxRef b) {
  const uint32_t rank = std::min(a.rank, b.rank);
  for (uint32_t d = 0; d < rank; ++d)
    if (a.d[d].second <= b.d[d].first || b.d[d].second <= a.d[d].first) return false;
  return true;
}

inline bool contains(BoxRef outer, BoxRef inner) {
  const uint32_t rank = std::min(outer.rank, inner.rank);
  for (uint32_t d = 0; d < rank; ++d)
    if (inner.d[d].first < outer.d[d].first || inner.d[d].second > outer.d[d].second) return false;
  return true;
}

// overlaps(outer, inner) && contains(outer, inner), in one pass.
inline bool overlaps_and_contains(BoxRef outer, BoxRef inner) {
  const uint32_t rank = std::min(outer.rank, inner.rank);
  for (uint32_t d = 0; d < rank; ++d) {
    const Interval o = outer.d[d], i = inner.d[d];
    if (i.first < o.first || i.second > o.second || o.second <= i.first || i.second <= o.first) return false;
  }
  return true;
}

inline bool operator==(BoxRef a, BoxRef b) {
  if (a.rank != b.rank) return false;
  for (uint32_t d = 0; d < a.rank; ++d)
    if (a.d[d] != b.d[d]) return false;
  return true;
}

inline Box to_box(BoxRef b) { return Box(b.d, b.d + b.rank); }

inline uint64_t box_hash(BoxRef b) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (uint32_t d = 0; d < b.rank; ++d) {
    h = (h ^ static_cast<uint64_t>(b.d[d].first)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ static_cast<uint64_t>(b.d[d].second)) * 0x94D049BB133111EBULL;
  }
  return h;
}

// One dynamic access: a write, or a read as it is checked.
struct Event {
  Event() = default;
  Event(int64_t seq_, Picos start_, Picos end_, InstId inst_, uint32_t key_)
      : seq(seq_), start(start_), end(end_), inst(inst_), key(key_) {}
  int64_t seq;
  Picos start;  // reads: first moment of reading; writes: first moment of writing (a transfer's first byte)
  Picos end;    // writes: when they complete; reads: when reading ends
  InstId inst;
  // Events with the same nonzero key have the same non-empty box (a constant box, from
  // AccessPlan::key): it covers and overlaps the other without a look at the bounds.
  uint32_t key;
};

using Buffer = std::pair<int, int64_t>;  // tensor, rotation buffer

// The live writes of a buffer, in program order once index() has sorted them, with what
// lets a check skip the scan in the usual race-free case: the latest landing of the writes
// before each position and the earliest start of the writes from each position on. Dropped
// writes leave from the front by moving `head` (the usual case: every older write is
// hidden), so the survivors do not move down at every advance.
struct WriteLog {
  Buffer buffer;
  uint32_t rank = 0;          // the tensor's rank: every access's box has as many dimensions
  size_t stride = 1;          // dims per event in `dims`: the rank, at least 1
  std::vector<Event> events;  // live: [head, size)
  // events[i]'s box, unless it has a key: dims[i * stride, i * stride + rank); grown by doubling,
  // only as far as the last write without a key until a sort or a move needs all of it
  std::vector<Interval> dims;
  size_t head = 0;
  bool listed = false;  // in the checker's list of logs to index and settle at the next advance
  bool sorted = true;   // live writes in program order (writes arrive from several units)
  // The live writes start, and land, in program order (each no earlier than the one
  // before): then the earliest start from a position on is that position's, and no write
  // lands after a newer one, without the arrays below. Kept as writes arrive (while sorted);
  // dropping writes keeps them true; worked out again whenever the arrays are built.
  bool starts_ordered = true;
  bool ends_ordered = true;
  bool indexed = false;  // the two arrays below describe the live writes (unless ordered)
  // Reads are checked in program order within an advance: the first live write at or after
  // the last one checked, where the next check starts looking.
  size_t cursor = 0;
  std::vector<Picos> max_end_before;  // [i]: max end of live writes [0, i)
  std::vector<Picos> min_start_from;  // [i]: min start of live writes [i, n)
  // What the last settle left, while the live writes stay where they were (none dropped by
  // it but the oldest, writes since recorded only after them in program order): every
  // write of the settled prefix [0, settled_prefix) was kept, each tested against the
  // candidates it had then. The next settle (with the watermark and settled seq no lower)
  // looks only at what can have changed: writes newly settled, the near candidates they
  // add, and same-box candidates newly settled.
  bool settle_known = false;
  size_t settled_prefix = 0;
  size_t followed_prefix = 0;  // the first write at or after the prefix that a future read precedes
  Picos settle_watermark = 0;
  int64_t settle_seq = 0;
  // A settle that drops only the oldest live writes moves none (the head moves past them):
  // it keeps what it found, counted from the new head. (A strip rewritten a whole strip
  // later drops its oldest slices at every advance; settling it anew each time, with a
  // sort of every live write, would make the run grow faster than linearly.)
  //
  // For those settles, kept up as writes arrive, by index into `events` (not from `head`,
  // so that such a drop leaves them as they are): per write, the nearest newer write of
  // the same box hash (SIZE_MAX if none yet), and in order the writes whose such write lies
  // beyond the near ones with the very same box (those before `same_from` are dropped). It
  // covers events [head, same_end); last_of_hash gives the newest with each hash (dropped,
  // when before the head).
  bool same_known = false;
  size_t same_end = 0;
  std::vector<size_t> next_same;
  std::vector<size_t> same_list;
  size_t same_from = 0;
  std::unordered_map<uint64_t, size_t> last_of_hash;
  // The checks' memory, per box hash of a read: a live write j (an index into `events`, not
  // from `head`) whose box is that read's and overlaps it, and `checked`: no write in
  // (j, checked) overlaps it. A strip read slice by slice, each slice several times, then
  // finds its producer without walking back over the newer slices again. Emptied when
  // writes move (a drop, a sort); writes only join after `checked`.
  struct Producer {
    size_t j;
    size_t checked;
  };
  std::unordered_map<uint64_t, Producer> producers;
  const Event* live() const { return events.data() + head; }
  size_t size() const { return events.size() - head; }
};

// The work on the write logs that keeps them an index: sorting and indexing the live writes
// before reads are checked against them, and dropping the writes that newer ones hide.
class WriteIndex {
 public:
  // Live writes i (older) and j (newer, covering it) of a log, where i landed last: a WAW.
  using HiddenReport = std::function<void(const WriteLog& log, size_t i, size_t j)>;

  // `keyed[key]`: the box of each key (AccessPlan::key), which does not move.
  WriteIndex(const Interval* const* keyed, HiddenReport report_hidden)
      : keyed_(keyed), report_hidden_(std::move(report_hidden)) {}

  // The box of live write i of `log`.
  BoxRef box(const WriteLog& log, size_t i) const {
    const Event& e = log.events[log.head + i];
    return {e.key ? keyed_[e.key] : log.dims.data() + (log.head + i) * log.stride, log.rank};
  }
  // Sorts the live writes into program order and builds the arrays the checks read, unless
  // they are up to date.
  void index(WriteLog& log);
  // The first of events [from, n) at or after `seq` in program order, given ev[from].seq < seq.
  static size_t gallop(const Event* ev, size_t n, size_t from, int64_t seq);
  // Drops the writes hidden by a newer write that every future read comes after (seq below
  // `settled`), both landed (by `watermark`); reports each that landed after its cover.
  void settle(WriteLog& log, Picos watermark, int64_t settled);

 private:
  // settle() on a log unchanged since the last settle, which dropped nothing.
  void settle_again(WriteLog& log, Picos watermark, int64_t settled);
  void index_same_boxes(WriteLog& log);
  // Drop the writes of [0, last_dropped] not listed in kept_ (`dropped` of them).
  void drop(WriteLog& log, size_t dropped, size_t last_dropped);

  const Interval* const* keyed_;
  HiddenReport report_hidden_;
  // Scratch reused across calls (no allocation per call once grown).
  std::vector<std::pair<uint64_t, size_t>> same_box_;
  std::vector<size_t> next_same_;
  std::vector<size_t> kept_;
  std::vector<size_t> found_;
  std::vector<uint32_t> order_;
  std::vector<Event> sorted_events_;
  std::vector<Interval> sorted_dims_;
};

}  // namespace tandem::race
