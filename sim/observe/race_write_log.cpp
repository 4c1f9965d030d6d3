#include "sim/observe/race_write_log.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tandem::race {

namespace {

// A write log's dead front is reclaimed from this many writes on: kept small, the storage its
// writes cycle through stays in the L1 cache.
constexpr size_t kLogReclaimFrom = 16;

// Whether a settle that dropped `dropped` of `n` live writes, the last at `last_dropped`, keeps
// what it found for the next (WriteLog::settle_known): when only the oldest went, so that no
// write moved, and many are left. Settling a few writes afresh costs less than keeping the
// same-box index up to date as they arrive (a GEMM K loop's logs hold about 23).
bool keeps_settled(size_t n, size_t dropped, size_t last_dropped) {
  constexpr size_t kKeptFrom = 64;
  return last_dropped + 1 == dropped && n - dropped >= kKeptFrom;
}

}  // namespace

void WriteIndex::index(WriteLog& log) {
  if (log.indexed) return;
  log.indexed = true;
  const size_t n = log.size();
  if (!log.sorted) {
    // The order std::sort gives the events themselves (the same comparisons on the same
    // sequence), applied to the events and their boxes.
    const Event* live = log.live();
    order_.resize(n);
    for (size_t i = 0; i < n; ++i) order_[i] = static_cast<uint32_t>(i);
    std::sort(order_.begin(), order_.end(), [&](uint32_t x, uint32_t y) { return live[x].seq < live[y].seq; });
    const size_t stride = log.stride;
    if (log.dims.size() < log.events.size() * stride) log.dims.resize(log.events.size() * stride);
    sorted_events_.clear();
    sorted_dims_.resize(n * stride);
    for (size_t i = 0; i < n; ++i) {
      sorted_events_.push_back(live[order_[i]]);
      const Interval* from = log.dims.data() + (log.head + order_[i]) * stride;
      std::copy(from, from + stride, sorted_dims_.data() + i * stride);
    }
    std::copy(sorted_events_.begin(), sorted_events_.end(), log.events.begin() + static_cast<std::ptrdiff_t>(log.head));
    std::copy(sorted_dims_.begin(), sorted_dims_.end(),
              log.dims.begin() + static_cast<std::ptrdiff_t>(log.head * stride));
    if (!log.producers.empty()) log.producers.clear();
  }
  if (log.sorted && log.starts_ordered && log.ends_ordered) return;  // the usual case: no arrays
  log.sorted = true;
  const Event* ev = log.live();
  std::vector<Picos>& max_end_before = log.max_end_before;
  std::vector<Picos>& min_start_from = log.min_start_from;
  max_end_before.resize(n + 1);
  min_start_from.resize(n + 1);
  max_end_before[0] = std::numeric_limits<Picos>::min();
  bool ends_ordered = true, starts_ordered = true;
  for (size_t i = 0; i < n; ++i) {
    max_end_before[i + 1] = std::max(max_end_before[i], ev[i].end);
    if (i > 0 && ev[i - 1].end > ev[i].end) ends_ordered = false;
    if (i > 0 && ev[i - 1].start > ev[i].start) starts_ordered = false;
  }
  min_start_from[n] = std::numeric_limits<Picos>::max();
  for (size_t i = n; i-- > 0;) min_start_from[i] = std::min(min_start_from[i + 1], ev[i].start);
  log.ends_ordered = ends_ordered;
  log.starts_ordered = starts_ordered;
}

void WriteIndex::settle(WriteLog& log, Picos watermark, int64_t settled) {
  if (log.settle_known && watermark >= log.settle_watermark && settled >= log.settle_seq) {
    settle_again(log, watermark, settled);
    return;
  }
  // Whenever it drops nothing, what it found is kept for the next settle.
  auto remember = [&](size_t settled_n, size_t followed_n) {
    log.settle_known = true;
    log.same_known = false;
    log.settle_watermark = watermark;
    log.settle_seq = settled;
    log.settled_prefix = settled_n;
    log.followed_prefix = followed_n;
  };
  Event* events = log.events.data() + log.head;  // in program order (index())
  const size_t n = log.size();
  // A write is hidden when a newer write that every future read follows (seq below
  // `settled`) covers it and both have landed; the next few newer writes are the candidates
  // (usually the very next one rewrites the whole tile), and beyond them the nearest newer
  // write of the same box (a strip written slice by slice: the slice's next write comes a
  // whole strip later; without it the live writes, and each check, grow with every rewrite of
  // the strip).
  // An older write landing after its cover is a WAW.
  auto hidden = [&](size_t i, size_t j) {
    if (events[i].end > events[j].end) report_hidden_(log, i, j);
  };
  auto is_settled = [&](size_t i) { return events[i].end <= watermark && events[i].seq < settled; };
  if (n == 0 || !is_settled(0)) {
    remember(0, 0);
    return;
  }
  // The usual run first: each write hidden by the next, of the same constant box and settled
  // (the first candidate the loop below would try), found while finding the settled prefix.
  size_t i = 0;
  if (const uint32_t key = events[0].key; key != 0) {
    while (i + 1 < n && events[i + 1].key == key && is_settled(i + 1)) ++i;
    if (!log.ends_ordered)  // else none landed after the next
      for (size_t j = 0; j < i; ++j) hidden(j, j + 1);
  }
  size_t settled_n = i + 1;  // events [0, settled_n) may be dropped
  while (settled_n < n && is_settled(settled_n)) ++settled_n;
  // The nearest newer write with the same box, by a sort of (box hash, index): reused
  // scratch, no allocation once it has grown.
  bool indexed = false;
  auto next_same = [&](size_t at) {
    if (!indexed) {
      same_box_.clear();
      for (size_t x = 0; x < n; ++x) same_box_.push_back({box_hash(box(log, x)), x});
      std::sort(same_box_.begin(), same_box_.end());
      next_same_.assign(n, n);
      for (size_t x = 0; x + 1 < same_box_.size(); ++x)
        if (same_box_[x].first == same_box_[x + 1].first) next_same_[same_box_[x].second] = same_box_[x + 1].second;
      indexed = true;
    }
    return next_same_[at];
  };
  // Writes from `followed_n` on come after a future read (events are in program order): no
  // cover among them. Usually none lies beyond the next few, and the same-box index (a sort
  // of every live write, 22 % of advance on a GEMM K loop) is not needed.
  size_t followed_n = settled_n;
  while (followed_n < n && events[followed_n].seq < settled) ++followed_n;
  // Survivors among [0, settled_n), in order.
  kept_.clear();
  size_t dropped = i, last_dropped = i == 0 ? 0 : i - 1;
  for (; i < settled_n; ++i) {
    const BoxRef old = box(log, i);
    const uint32_t old_key = events[i].key;
    bool found = false;
    // The next few newer writes, up to the first that is not settled (settled_n).
    const size_t near_end = std::min(i + 9, settled_n);
    for (size_t j = i + 1; j < near_end; ++j) {
      if (!((old_key != 0 && events[j].key == old_key) || contains(box(log, j), old))) continue;
      hidden(i, j);
      found = true;
      break;
    }
    if (!found && i + 9 < followed_n) {
      const size_t j = next_same(i);
      if (j < n && j > i + 8 && events[j].seq < settled && events[j].end <= watermark && box(log, j) == old) {
        hidden(i, j);
        found = true;
      }
    }
    if (found) {
      ++dropped;
      last_dropped = i;
    } else {
      kept_.push_back(i);
    }
  }
  if (dropped == 0) {
    remember(settled_n, followed_n);
    return;
  }
  drop(log, dropped, last_dropped);
  if (keeps_settled(n, dropped, last_dropped)) remember(settled_n - dropped, followed_n - dropped);
}

void WriteIndex::index_same_boxes(WriteLog& log) {
  // The nearest newer write of the same hash is the one the sort of (hash, index) in
  // settle() puts next: the next write with that hash.
  if (!log.same_known) {
    log.same_known = true;
    log.same_end = log.head;
    log.next_same.clear();
    log.same_list.clear();
    log.same_from = 0;
    log.last_of_hash.clear();
  }
  const size_t end = log.events.size(), head = log.head, listed = log.same_list.size();
  log.next_same.resize(end, SIZE_MAX);
  for (size_t x = log.same_end; x < end; ++x) {
    const auto [it, fresh] = log.last_of_hash.try_emplace(box_hash(box(log, x - head)), x);
    if (fresh) continue;
    const size_t prev = it->second;
    it->second = x;
    if (prev < head) continue;  // dropped: x is the newest live write with its hash
    log.next_same[prev] = x;
    if (x > prev + 8 && box(log, x - head) == box(log, prev - head)) log.same_list.push_back(prev);
  }
  log.same_end = end;
  const auto mid = log.same_list.begin() + static_cast<std::ptrdiff_t>(listed);
  std::sort(mid, log.same_list.end());
  if (listed > 0 && mid != log.same_list.end() && *(mid - 1) > *mid)
    std::inplace_merge(log.same_list.begin(), mid, log.same_list.end());
}

void WriteIndex::settle_again(WriteLog& log, Picos watermark, int64_t settled) {
  // The live writes are where the last settle left them, newer ones after them, and every
  // write of its settled prefix [0, before) was kept: a near candidate that failed then
  // fails again (boxes and keys do not change), and settling only grows with the watermark
  // and settled seq. What settle() would find now, in the same order: writes newly settled,
  // the near candidates newly settled of the last eight before them, and same-box
  // candidates newly settled or newly arrived.
  const Event* events = log.live();
  const size_t n = log.size();
  auto is_settled = [&](size_t i) { return events[i].end <= watermark && events[i].seq < settled; };
  const size_t before = log.settled_prefix;
  size_t settled_n = before;
  while (settled_n < n && is_settled(settled_n)) ++settled_n;
  log.settle_watermark = watermark;
  log.settle_seq = settled;
  if (settled_n == 0) return;
  size_t followed_n = std::max(settled_n, log.followed_prefix);
  while (followed_n < n && events[followed_n].seq < settled) ++followed_n;
  if (followed_n > 9 && (!log.same_known || log.same_end != log.events.size())) index_same_boxes(log);
  // The nearest newer write of the same hash as live write i, counted from the head (n: none).
  const size_t head = log.head;
  auto next_same = [&](size_t i) {
    const size_t j = log.next_same[head + i];
    return j == SIZE_MAX ? n : j - head;
  };
  found_.clear();
  auto hide = [&](size_t i, size_t j) {
    if (events[i].end > events[j].end) report_hidden_(log, i, j);
    found_.push_back(i);
  };
  // Below `near_from` every near candidate was tested last time: only a same-box one can
  // have settled since.
  const size_t near_from = before >= 8 ? before - 8 : 0;
  if (log.same_known) {
    std::vector<size_t>& list = log.same_list;
    while (log.same_from < list.size() && list[log.same_from] < head) ++log.same_from;
    if (log.same_from >= 1024 && 2 * log.same_from >= list.size()) {  // the dropped outweigh the rest
      list.erase(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(log.same_from));
      log.same_from = 0;
    }
    for (size_t k = log.same_from; k < list.size(); ++k) {
      const size_t i = list[k] - head;
      if (i >= near_from || i + 9 >= followed_n) break;
      if (is_settled(next_same(i))) hide(i, next_same(i));
    }
  }
  for (size_t i = near_from; i < settled_n; ++i) {
    const BoxRef old = box(log, i);
    const uint32_t old_key = events[i].key;
    bool found = false;
    const size_t near_end = std::min(i + 9, settled_n);
    for (size_t j = std::max(i + 1, before); j < near_end; ++j) {
      if (!((old_key != 0 && events[j].key == old_key) || contains(box(log, j), old))) continue;
      hide(i, j);
      found = true;
      break;
    }
    if (!found && i + 9 < followed_n) {
      const size_t j = next_same(i);
      if (j < n && j > i + 8 && is_settled(j) && box(log, j) == old) hide(i, j);
    }
  }
  if (const size_t dropped = found_.size(); dropped > 0) {
    kept_.clear();
    const size_t last_dropped = found_.back();
    for (size_t i = 0, f = 0; i < last_dropped; ++i) {
      if (found_[f] == i) {
        ++f;
        continue;
      }
      kept_.push_back(i);
    }
    drop(log, dropped, last_dropped);
    if (!keeps_settled(n, dropped, last_dropped)) return;
    log.settle_known = true;  // what was found holds from the new head
    settled_n -= dropped;
    followed_n -= dropped;
  }
  log.settled_prefix = settled_n;
  log.followed_prefix = followed_n;
}

[[gnu::always_inline]] inline void WriteIndex::drop(WriteLog& log, size_t dropped, size_t last_dropped) {
  Event* events = log.events.data() + log.head;
  log.settle_known = false;
  // Survivors before the last dropped write move up over the dropped ones, in order; the
  // writes after it stay where they are and the head moves past the gap.
  const size_t stride = log.stride;
  size_t to = last_dropped + 1;
  for (size_t k = kept_.size(); k-- > 0;) {
    const size_t from = kept_[k];
    if (from > last_dropped || --to == from) continue;
    events[to] = events[from];
    if (events[to].key == 0) {  // a box of its own, which lies inside `dims` (record)
      Interval* dims = log.dims.data() + log.head * stride;
      std::copy(dims + from * stride, dims + (from + 1) * stride, dims + to * stride);
    }
  }
  log.head += dropped;
  log.indexed = false;
  if (!log.producers.empty()) log.producers.clear();
  // Reclaim the dead front once it outweighs the live writes (each write moves at most once
  // more for it).
  if (log.head > log.size() && log.head >= kLogReclaimFrom) {
    // The boxes first (log.size() counts from the old head; only as far as `dims` reaches,
    // the last write without a key), then the events.
    const size_t end = std::min(log.dims.size(), log.events.size() * stride);
    if (end > log.head * stride)
      std::copy(log.dims.begin() + static_cast<std::ptrdiff_t>(log.head * stride),
                log.dims.begin() + static_cast<std::ptrdiff_t>(end), log.dims.begin());
    log.events.erase(log.events.begin(), log.events.begin() + static_cast<std::ptrdiff_t>(log.head));
    log.head = 0;
    log.same_known = false;  // its indices into `events` moved
  }
}

// The first of events [from, n) at or after `seq` in program order, given ev[from].seq < seq:
// galloping, then a binary search (logarithmic in the distance moved).
size_t WriteIndex::gallop(const Event* ev, size_t n, size_t from, int64_t seq) {
  size_t step = 1;
  while (from + step < n && ev[from + step].seq < seq) {
    from += step;
    step *= 2;
  }
  // ev[from].seq < seq; the first at or after it lies in (from, from + step].
  auto seq_below = [](const Event& w, int64_t s) { return w.seq < s; };
  const size_t end = std::min(n, from + step + 1);
  return static_cast<size_t>(std::lower_bound(ev + from + 1, ev + end, seq, seq_below) - ev);
}

}  // namespace tandem::race
