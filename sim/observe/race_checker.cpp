#include "sim/observe/race_checker.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/box.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

using Interval = std::pair<int64_t, int64_t>;

using BoxRef = RaceChecker::BoxRef;

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

Box to_box(BoxRef b) { return Box(b.d, b.d + b.rank); }

uint64_t box_hash(BoxRef b) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (uint32_t d = 0; d < b.rank; ++d) {
    h = (h ^ static_cast<uint64_t>(b.d[d].first)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ static_cast<uint64_t>(b.d[d].second)) * 0x94D049BB133111EBULL;
  }
  return h;
}

// A write log's dead front is reclaimed from this many writes on: kept small, the storage its
// writes cycle through stays in the L1 cache.
constexpr size_t kLogReclaimFrom = 16;
// The pending-read queue's, from this many instances on: it usually empties before that and is
// cleared without a move; a smaller threshold would move live reads for no fewer cache misses.
constexpr size_t kQueueReclaimFrom = 64;

std::string ns(Picos ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ps) / 1000.0);
  return buf;
}

// Whether a settle that dropped `dropped` of `n` live writes, the last at `last_dropped`, keeps
// what it found for the next (WriteLog::settle_known): when only the oldest went, so that no
// write moved, and many are left. Settling a few writes afresh costs less than keeping the
// same-box index up to date as they arrive (a GEMM K loop's logs hold about 23).
bool keeps_settled(size_t n, size_t dropped, size_t last_dropped) {
  constexpr size_t kKeptFrom = 64;
  return last_dropped + 1 == dropped && n - dropped >= kKeptFrom;
}

}  // namespace

RaceChecker::RaceChecker(const SimProgram& p) : p_(p), plans_(p.insts.size()) {
  // What each instruction touches, worked out once: the simulator calls record() per instance.
  const Kernel& k = *p.kernel;
  auto rotation = [&](const Tensor& t) -> std::pair<int64_t, std::optional<std::string>> {
    const auto buffers = t.attrs.get_int(attr::kBuffers);
    const auto loop_iv = t.attrs.get_string(attr::kRotate);
    if (buffers && loop_iv && *buffers >= 2) return {*buffers, loop_iv};
    return {1, std::nullopt};
  };
  // A write log per rotation buffer of each tensor something writes. Reads of a tensor
  // nothing writes see no write and cannot race: they get no plan.
  constexpr size_t kNoLog = SIZE_MAX;
  std::vector<size_t> first_log(k.tensors.size(), kNoLog);
  for (size_t id = 0; id < p.insts.size(); ++id)
    for (const Access& a : k.insts[id].writes) first_log[static_cast<size_t>(a.tensor_id)] = 0;
  for (size_t t = 0; t < k.tensors.size(); ++t) {
    if (first_log[t] == kNoLog) continue;
    first_log[t] = logs_.size();
    for (int64_t b = 0; b < rotation(k.tensors[t]).first; ++b) {
      logs_.emplace_back();
      logs_.back().buffer = {static_cast<int>(t), b};
    }
  }
  std::map<std::vector<Interval>, uint32_t> constant_boxes;
  for (size_t id = 0; id < p.insts.size(); ++id) {
    const Instruction& in = k.insts[id];
    auto plan = [&](const Access& a, bool read, LoopId fresh_at = kNoId) {
      const size_t log = first_log[static_cast<size_t>(a.tensor_id)];
      if (log == kNoLog) return;
      AccessPlan ap{read, 0, kNoId, 0, fresh_at, 0, log, nullptr, {}, 0, 0, {}};
      if (fresh_at != kNoId) ap.fresh_lo = k.loops[static_cast<size_t>(fresh_at)].lo;
      const Tensor& t = k.tensors[static_cast<size_t>(a.tensor_id)];
      // The box: an address register's value is known only at run time, so an access that
      // uses one has no box and is not followed.
      if (a.whole()) {
        for (int64_t d : t.shape) ap.base.push_back({0, d});
      } else {
        for (size_t d = 0; d < a.dims.size(); ++d) {
          const IndexRange& r = a.dims[d];
          ap.base.push_back({r.lo.constant, r.hi.constant});
          for (const auto& [e, hi] : {std::pair<const AffineExpr*, bool>{&r.lo, false}, {&r.hi, true}})
            for (const AffineTerm& term : e->terms) {
              if (term.loop == kNoId) return;
              ap.terms.push_back({d, hi, term.loop, term.coeff});
            }
        }
      }
      if (const auto [buffers, loop_iv] = rotation(t); loop_iv)
        for (LoopId l : p.insts[id].nest)
          if (k.loops[static_cast<size_t>(l)].iv == *loop_iv) {
            ap.buffers = buffers;
            ap.rotate = l;
            ap.rotate_lo = k.loops[static_cast<size_t>(l)].lo;
            break;
          }
      ap.rank = static_cast<uint32_t>(ap.base.size());
      if (ap.terms.empty() &&
          std::all_of(ap.base.begin(), ap.base.end(), [](const Interval& d) { return d.first < d.second; }))
        ap.key = constant_boxes.emplace(ap.base, static_cast<uint32_t>(constant_boxes.size() + 1)).first->second;
      (read ? plans_[id].reads : plans_[id].writes).push_back(std::move(ap));
    };
    for (const Access& a : in.reads) plan(a, true);
    if (in.attrs.has(attr::kAccumulate))  // an accumulating write reads what it adds to
      for (const Access& a : in.writes) plan(a, true, accumulation_start(k, static_cast<InstId>(id)));
    for (const Access& a : in.writes) plan(a, false);
  }
  // The keys' boxes, once each.
  keyed_.assign(constant_boxes.size() + 1, nullptr);
  std::vector<size_t> keyed_at(constant_boxes.size() + 1, 0);
  for (const auto& [box, key] : constant_boxes) {
    keyed_at[key] = keyed_boxes_.size();
    keyed_boxes_.insert(keyed_boxes_.end(), box.begin(), box.end());
  }
  for (size_t key = 1; key < keyed_.size(); ++key) keyed_[key] = keyed_boxes_.data() + keyed_at[key];
  // Program order as a constant plus a product per enclosing loop.
  for (size_t id = 0; id < p.insts.size(); ++id) {
    const SimInst& inst = p.insts[id];
    InstPlan& ip = plans_[id];
    ip.seq_base = inst.seq_base;
    for (size_t i = 0; i < inst.nest.size(); ++i) {
      ip.seq_base -= k.loops[static_cast<size_t>(inst.nest[i])].lo * inst.seq_strides[i];
      ip.seq_terms.push_back({inst.nest[i], inst.seq_strides[i]});
    }
  }
  // Boxes are stored at a fixed stride: the largest rank, for the pending reads; per tensor,
  // its rank, for its write logs. Every access has its tensor's rank (the parser and the
  // structural verifier hold kernels to it), so events need not carry one.
  constexpr uint32_t kNoRank = UINT32_MAX;
  std::vector<uint32_t> tensor_rank(k.tensors.size(), kNoRank);
  for (const InstPlan& plans : plans_)
    for (const std::vector<AccessPlan>* list : {&plans.reads, &plans.writes})
      for (const AccessPlan& ap : *list) {
        const size_t t = static_cast<size_t>(logs_[ap.log].buffer.first);
        if (tensor_rank[t] != kNoRank && tensor_rank[t] != ap.rank)
          throw std::logic_error("race checker: accesses of different ranks to %" + k.tensors[t].name);
        tensor_rank[t] = ap.rank;
        stride_ = std::max<size_t>(stride_, ap.rank);
      }
  for (InstPlan& plans : plans_)
    for (std::vector<AccessPlan>* list : {&plans.reads, &plans.writes})
      for (AccessPlan& ap : *list) ap.log0 = logs_.data() + ap.log;
  // The instructions whose instances all read the same: each read has a key and no rotation
  // (an accumulating read is left out at its group's first iteration: every accumulating read
  // of an instruction has the same `fresh_at`, its instruction's accumulation start).
  for (InstPlan& ip : plans_) {
    if (ip.reads.empty() || !std::all_of(ip.reads.begin(), ip.reads.end(),
                                         [](const AccessPlan& ap) { return ap.key != 0 && ap.rotate == kNoId; }))
      continue;
    ip.fixed = true;
    for (const AccessPlan& ap : ip.reads) {
      ip.fixed_reads.push_back({ap.log0, ap.key});
      if (ap.fresh_at == kNoId) {
        ip.fixed_fresh.push_back({ap.log0, ap.key});
      } else {  // the same for each: the instruction's accumulation start (above)
        ip.fresh_at = ap.fresh_at;
        ip.fresh_lo = ap.fresh_lo;
      }
    }
  }
  for (WriteLog& log : logs_) {
    const uint32_t rank = tensor_rank[static_cast<size_t>(log.buffer.first)];
    log.rank = rank == kNoRank ? 0 : rank;
    log.stride = std::max<size_t>(1, log.rank);
  }
}

inline void RaceChecker::box_of(const AccessPlan& ap, const int64_t* ivs, Interval* out) {
  const Interval* base = ap.base.data();
  for (uint32_t d = 0; d < ap.rank; ++d) out[d] = base[d];
  for (const AccessPlan::Term& t : ap.terms) {
    auto& bound = t.hi ? out[t.dim].second : out[t.dim].first;
    bound += t.coeff * ivs[t.loop];
  }
}

[[gnu::noinline]] void RaceChecker::record_unqueued_reads(const InstPlan& plan, const InstanceRecord& r, int64_t seq) {
  const int64_t* ivs = r.loop_ivs;
  size_t first = kNoSlot, last = kNoSlot;
  uint32_t count = 0;
  for (const AccessPlan& ap : plan.reads) {
    if (ap.fresh_at != kNoId && ivs[ap.fresh_at] == ap.fresh_lo) continue;
    size_t slot;
    if (!free_reads_.empty()) {
      slot = free_reads_.back();
      free_reads_.pop_back();
    } else {
      slot = reads_.size();
      reads_.emplace_back();
      read_dims_.resize(read_dims_.size() + stride_);
    }
    reads_[slot] = {static_cast<uint32_t>(ap.log + static_cast<size_t>(buffer_of(ap, ivs))), ap.key, kNoSlot};
    if (ap.key == 0) box_of(ap, ivs, read_dims_.data() + slot * stride_);
    if (last == kNoSlot)
      first = slot;
    else
      reads_[last].next = slot;
    last = slot;
    ++count;
  }
  if (count == 0) return;
  heap_.push_back({seq, arrivals_++, r.start, std::max(r.busy_end, r.start), r.inst, count, first});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<PendingInstance>());
}

[[gnu::noinline]] void RaceChecker::queue_box(const AccessPlan& ap, const int64_t* ivs) {
  const size_t need = queued_reads_.size() * stride_;
  if (queued_dims_.size() < need) queued_dims_.resize(std::max(need, 2 * queued_dims_.size()));
  box_of(ap, ivs, queued_dims_.data() + need - stride_);
}

[[gnu::noinline]] void RaceChecker::write_box(WriteLog& w, const AccessPlan& ap, const int64_t* ivs) {
  const size_t need = w.events.size() * w.stride;
  if (w.dims.size() < need) w.dims.resize(std::max(need, 2 * w.dims.size()));
  box_of(ap, ivs, w.dims.data() + need - w.stride);
}

[[gnu::noinline]] void RaceChecker::list(size_t log) {
  logs_[log].listed = true;  // a new write: index and settle it at the next advance
  listed_.insert(std::upper_bound(listed_.begin(), listed_.end(), log), log);
}

inline const RaceChecker::PendingInstance* RaceChecker::next_pending() const {
  // (The queue is empty, not merely passed, once its last entry leaves: no size to work out.)
  const PendingInstance* q = queue_.empty() ? nullptr : &queue_[queue_head_];
  if (heap_.empty()) return q;
  if (!q || *q > heap_.front()) return &heap_.front();
  return q;
}

inline void RaceChecker::pop_pending(const PendingInstance* which) {
  if (heap_.empty() || which != heap_.data()) {
    if (queue_.begin() + static_cast<std::ptrdiff_t>(++queue_head_) == queue_.end()) {
      queue_.clear();
      queue_head_ = 0;
      queued_reads_.clear();
    } else if (queue_head_ >= kQueueReclaimFrom && queue_head_ * 2 >= queue_.size()) {
      // Move the live entries down once the dead front outweighs them (each moves at most
      // once more for it), and their reads with them.
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_));
      queue_head_ = 0;
      const size_t dead = queue_.front().first;
      queued_reads_.erase(queued_reads_.begin(), queued_reads_.begin() + static_cast<std::ptrdiff_t>(dead));
      const size_t dead_dims = std::min(queued_dims_.size(), dead * stride_);
      queued_dims_.erase(queued_dims_.begin(), queued_dims_.begin() + static_cast<std::ptrdiff_t>(dead_dims));
      for (PendingInstance& in : queue_) in.first -= dead;
    }
    return;
  }
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<PendingInstance>());
  heap_.pop_back();
}

void RaceChecker::index(WriteLog& log) {
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

void RaceChecker::advance(Picos watermark, int64_t min_seq) {
  for (size_t l : listed_) {
    index(logs_[l]);
    logs_[l].cursor = 0;
  }
  // Reads whose every relevant write is known.
  while (const PendingInstance* next = next_pending()) {
    if (next->seq >= min_seq || next->end > watermark) break;
    const PendingInstance& in = *next;  // checks leave the queue and the heap as they are
    if (heap_.empty() || next != heap_.data()) {
      // Its instruction's fixed list (every read keyed), or its own queued reads.
      const QueuedRead* reads = in.fixed ? in.fixed : queued_reads_.data() + in.first;
      for (size_t i = 0; i < in.count; ++i)
        check(*reads[i].log, in, reads[i].key, reads[i].key ? nullptr : queued_dims_.data() + (in.first + i) * stride_);
    } else {
      for (size_t slot = in.first; slot != kNoSlot; slot = reads_[slot].next) {
        const PendingRead& pr = reads_[slot];
        WriteLog& log = logs_[pr.log];
        check(log, in, pr.key, read_dims_.data() + slot * stride_);
        free_reads_.push_back(slot);
      }
    }
    pop_pending(next);
  }
  // Writes hidden by a newer write that every future read comes after, both landed.
  const PendingInstance* next = next_pending();
  const int64_t settled = next ? std::min(min_seq, next->seq) : min_seq;
  for (size_t l : listed_) settle(logs_[l], watermark, settled);
  // A log whose every live write is settled, and was when nothing was dropped, stays as it is
  // until its next write: it leaves the list (the writes it keeps were each tested against
  // every candidate, settled; another settle would find the same, and its index and its
  // cursor stay valid, reads being checked in program order). A program writing many
  // tensors, each once per iteration, would otherwise settle every one of them at every
  // advance.
  size_t kept = 0;
  for (size_t l : listed_) {
    WriteLog& log = logs_[l];
    if (log.settle_known && log.settled_prefix == log.size() && log.indexed)  // (a drop unindexes it)
      log.listed = false;
    else
      listed_[kept++] = l;
  }
  listed_.resize(kept);
}

void RaceChecker::report_hidden(const WriteLog& log, size_t i, size_t j) {
  const Event& old = log.live()[i];
  const Event& newer = log.live()[j];
  report("WAW", old, newer, log.buffer, box(log, i), box(log, j),
         where(old) + " landed at " + ns(old.end) + " ns, after " + where(newer) + " at " + ns(newer.end) + " ns");
}

void RaceChecker::settle(WriteLog& log, Picos watermark, int64_t settled) {
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
    if (events[i].end > events[j].end) report_hidden(log, i, j);
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

void RaceChecker::index_same_boxes(WriteLog& log) {
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

void RaceChecker::settle_again(WriteLog& log, Picos watermark, int64_t settled) {
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
    if (events[i].end > events[j].end) report_hidden(log, i, j);
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

[[gnu::always_inline]] inline void RaceChecker::drop(WriteLog& log, size_t dropped, size_t last_dropped) {
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
size_t RaceChecker::gallop(const Event* ev, size_t n, size_t from, int64_t seq) {
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

inline void RaceChecker::check(WriteLog& log, const PendingInstance& in, uint32_t key, const Interval* dims) {
  // The read as an event, and its box, only on the paths that need them (a box with a key
  // is `keyed_`'s; else `dims`).
  auto read = [&] { return Event(in.seq, in.start, in.end, in.inst, key); };
  auto read_box = [&] { return BoxRef{key ? keyed_[key] : dims, log.rank}; };
  const Event* ev = log.live();
  const size_t n = log.size();
  if (n == 0) return;  // nothing written there yet
  // [0, earlier): writes before the read in program order; [later, n): writes after it (the
  // instance's own writes, an accumulation, lie between). Reads come in program order, so
  // the search gallops on from where the last one stopped.
  size_t earlier = log.cursor;
  // Usually the next read is a write or two further on: a few steps, then galloping.
  for (int probe = 0; earlier < n && ev[earlier].seq < in.seq; ++earlier)
    if (++probe > 3) {
      earlier = gallop(ev, n, earlier, in.seq);
      break;
    }
  log.cursor = earlier;
  size_t later = earlier;
  while (later < n && ev[later].seq == in.seq) ++later;
  // WAR: a later write began before the read was done: the reader can see new bytes. None
  // can when the earliest start among them is after the read.
  const Picos later_start = !log.starts_ordered ? log.min_start_from[later]
                            : later < n         ? ev[later].start
                                                : std::numeric_limits<Picos>::max();
  if (later_start < in.end) check_later(log, later, read(), read_box());
  // The usual case: the newest earlier write covers the whole read, its one producer.
  if (earlier == 0) return;
  if ((key != 0 && ev[earlier - 1].key == key) || overlaps_and_contains(box(log, earlier - 1), read_box())) {
    // produced()'s two tests first, so that the race-free check builds nothing.
    const Picos w_end = ev[earlier - 1].end;
    if (w_end > in.start || (!log.ends_ordered && log.max_end_before[earlier - 1] > w_end))
      produced(log, earlier - 1, read(), read_box());
    return;
  }
  check_producers(log, earlier, read(), read_box());
}

// `w` at live write i produces part of the read.
inline void RaceChecker::produced(const WriteLog& log, size_t i, const Event& read, BoxRef read_box) {
  const Event& w = log.live()[i];
  if (w.end > read.start) report_early_read(log, i, read, read_box);
  // An older write landing after this one (and before the read) replaces its value; none
  // can when every older write landed first.
  if (!log.ends_ordered && log.max_end_before[i] > w.end) check_older(log, i, read, read_box);
}

// Walk back from the newest write before the read (`earlier`): each part of the read has one
// expected producer.
void RaceChecker::check_producers(WriteLog& log, size_t earlier, const Event& read, BoxRef read_box) {
  // A write of the read's very box, remembered with how far no newer write overlaps it: only
  // the writes since need a look. Any that overlaps sends it the long way.
  const uint64_t hash = box_hash(read_box);
  const size_t until = log.head + earlier;  // `earlier` as an index into events
  if (auto it = log.producers.find(hash); it != log.producers.end()) {
    WriteLog::Producer& p = it->second;
    if (p.j < until && p.j >= log.head && box(log, p.j - log.head) == read_box) {
      size_t k = std::max(p.checked, p.j + 1);
      while (k < until && !overlaps(box(log, k - log.head), read_box)) ++k;
      if (k == until) {
        p.checked = std::max(p.checked, until);
        produced(log, p.j - log.head, read, read_box);
        return;
      }
    }
  }
  size_t newest = earlier;
  while (newest > 0 && !overlaps(box(log, newest - 1), read_box)) --newest;
  if (newest == 0) return;
  // Without allocation: the newest earlier write that overlaps covers the whole read.
  if (contains(box(log, newest - 1), read_box)) {
    if (box(log, newest - 1) == read_box) log.producers[hash] = {log.head + newest - 1, until};
    produced(log, newest - 1, read, read_box);
    return;
  }
  std::vector<Box> unseen{to_box(read_box)};
  for (size_t i = newest; i-- > 0 && !unseen.empty();) {
    if (!overlaps(box(log, i), read_box)) continue;
    const Box w_box = to_box(box(log, i));
    bool produces = false;
    std::vector<Box> next;
    for (Box& u : unseen) {
      if (!overlaps(u, w_box)) {
        next.push_back(std::move(u));
        continue;
      }
      produces = true;
      for (Box& piece : subtract(u, w_box)) next.push_back(std::move(piece));
    }
    if (produces) produced(log, i, read, read_box);
    unseen = std::move(next);
  }
}

void RaceChecker::check_later(const WriteLog& log, size_t later, const Event& read, BoxRef read_box) {
  const Event* ev = log.live();
  for (size_t j = later; j < log.size(); ++j) {
    const Event& w = ev[j];
    if (w.start < read.end && overlaps(box(log, j), read_box))
      report("WAR", read, w, log.buffer, read_box, box(log, j),
             where(w) + " overwrote it at " + ns(w.start) + " ns while " + where(read) + " was reading it until " +
                 ns(read.end) + " ns");
  }
}

void RaceChecker::report_early_read(const WriteLog& log, size_t i, const Event& read, BoxRef read_box) {
  const Event& w = log.live()[i];
  report("RAW", w, read, log.buffer, read_box, box(log, i),
         where(read) + " read it at " + ns(read.start) + " ns, before " + where(w) + " had written it at " + ns(w.end) +
             " ns");
}

void RaceChecker::check_older(const WriteLog& log, size_t i, const Event& read, BoxRef read_box) {
  const Event* ev = log.live();
  const Event& w = ev[i];
  for (size_t j = i; j-- > 0;) {
    const Event& older = ev[j];
    if (older.end > w.end && older.end <= read.start && overlaps(box(log, j), read_box) &&
        overlaps(box(log, j), box(log, i)))
      report("WAW", older, w, log.buffer, box(log, j), box(log, i),
             where(older) + " landed at " + ns(older.end) + " ns, after " + where(w) + " at " + ns(w.end) + " ns, so " +
                 where(read) + " saw the older value");
  }
}

std::vector<int64_t> RaceChecker::ivs_of(const Event& e) const {
  // seq = seq_base + sum of (iv - lo) * stride, each inner loop's whole range below its outer
  // loop's stride: divide outermost first.
  const SimInst& inst = p_.insts[static_cast<size_t>(e.inst)];
  std::vector<int64_t> ivs;
  int64_t rest = e.seq - inst.seq_base;
  for (size_t i = 0; i < inst.nest.size(); ++i) {
    ivs.push_back(p_.kernel->loops[static_cast<size_t>(inst.nest[i])].lo + rest / inst.seq_strides[i]);
    rest %= inst.seq_strides[i];
  }
  return ivs;
}

std::string RaceChecker::where(const Event& e) const {
  const SimInst& inst = p_.insts[static_cast<size_t>(e.inst)];
  std::string s = inst.name;
  if (!inst.nest.empty()) {
    const std::vector<int64_t> ivs = ivs_of(e);
    s += " (";
    for (size_t i = 0; i < inst.nest.size(); ++i)
      s += (i ? ", " : "") + p_.kernel->loops[static_cast<size_t>(inst.nest[i])].iv.substr(1) + "=" +
           std::to_string(ivs[i]);
    s += ")";
  }
  return s + " at " + p_.kernel->insts[static_cast<size_t>(e.inst)].loc.str();
}

std::string RaceChecker::describe(const Buffer& b, const Box& box) const {
  const Tensor& t = p_.kernel->tensors[static_cast<size_t>(b.first)];
  if (t.register_file)  // registers read inclusive, as the text writes them
    return t.name + "[" + std::to_string(box[0].first) + ":" + std::to_string(box[0].second - 1) + "]";
  std::string s = "%" + t.name + "[";
  for (size_t d = 0; d < box.size(); ++d)
    s += (d ? ", " : "") + std::to_string(box[d].first) + ":" + std::to_string(box[d].second);
  s += "]";
  if (t.attrs.has(attr::kBuffers)) s += " buffer " + std::to_string(b.second);
  return s;
}

void RaceChecker::report(const char* kind, const Event& earlier, const Event& later, const Buffer& b, BoxRef x,
                         BoxRef y, const std::string& what) {
  if (!reported_.insert({kind, earlier.inst, later.inst}).second) return;
  const Box box = intersect(to_box(x), to_box(y));
  // The edge that would have ordered them, as a dep line for the simulated kernel: from the
  // earlier to the later in program order, carried by the outermost common loop whose
  // iteration differs between the two (an edge's destination at iteration i of its loop waits
  // for the source's last instance in iteration i - distance), named with loop= when that is
  // not the innermost common loop.
  const Kernel& k = *p_.kernel;
  std::string distance;
  const std::vector<LoopId>& ne = p_.insts[static_cast<size_t>(earlier.inst)].nest;
  const std::vector<LoopId>& nl = p_.insts[static_cast<size_t>(later.inst)].nest;
  const LoopId common = k.common_loop(earlier.inst, later.inst);
  const std::vector<int64_t> earlier_ivs = ivs_of(earlier), later_ivs = ivs_of(later);
  for (size_t d = 0; d < ne.size() && d < nl.size() && ne[d] == nl[d]; ++d) {
    const int64_t diff = later_ivs[d] - earlier_ivs[d];
    if (diff == 0) continue;
    if (diff > 0) {
      distance = " distance=" + std::to_string(diff);
      if (ne[d] != common) distance += " loop=" + k.loops[static_cast<size_t>(ne[d])].iv;
    }
    break;
  }
  const std::string kind_s = kind;
  const char* edge = kind_s == "RAW" ? "flow" : kind_s == "WAR" ? "anti" : "output";
  hazards_.push_back({kind_s, earlier.inst, later.inst,
                      kind_s + " race on " + describe(b, box) + ": " + what + "; the order that prevents it: dep " +
                          p_.insts[static_cast<size_t>(earlier.inst)].name + " -> " +
                          p_.insts[static_cast<size_t>(later.inst)].name + " " + edge + distance});
}

}  // namespace tandem
