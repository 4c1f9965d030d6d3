#include "sim/observe/race_checker.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

#include "sched/ir/attribute_keys.h"
#include "sched/support/box.h"

namespace tandem {

namespace {

// The pending-read queue's dead front is reclaimed from this many instances on: it usually
// empties before that and is cleared without a move; a smaller threshold would move live reads
// for no fewer cache misses.
constexpr size_t kQueueReclaimFrom = 64;

std::string ns(Picos ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ps) / 1000.0);
  return buf;
}

}  // namespace

RaceChecker::RaceChecker(const SimProgram& p)
    : p_(p),
      plan_(race::plan_accesses(p, logs_)),
      index_(plan_.keyed.data(), [this](const WriteLog& log, size_t i, size_t j) { report_hidden(log, i, j); }) {
  unlisted_.assign(logs_.size(), 0);
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
      read_dims_.resize(read_dims_.size() + plan_.stride);
    }
    reads_[slot] = {static_cast<uint32_t>(ap.log + static_cast<size_t>(race::buffer_of(ap, ivs))), ap.key, kNoSlot};
    if (ap.key == 0) race::box_of(ap, ivs, read_dims_.data() + slot * plan_.stride);
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
  const size_t need = queued_reads_.size() * plan_.stride;
  if (queued_dims_.size() < need) queued_dims_.resize(std::max(need, 2 * queued_dims_.size()));
  race::box_of(ap, ivs, queued_dims_.data() + need - plan_.stride);
}

[[gnu::noinline]] void RaceChecker::write_box(WriteLog& w, const AccessPlan& ap, const int64_t* ivs) {
  const size_t need = w.events.size() * w.stride;
  if (w.dims.size() < need) w.dims.resize(std::max(need, 2 * w.dims.size()));
  race::box_of(ap, ivs, w.dims.data() + need - w.stride);
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

int64_t RaceChecker::settled_seq(int64_t min_seq) const {
  const PendingInstance* next = next_pending();
  return next ? std::min(min_seq, next->seq) : min_seq;
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
      const size_t dead_dims = std::min(queued_dims_.size(), dead * plan_.stride);
      queued_dims_.erase(queued_dims_.begin(), queued_dims_.begin() + static_cast<std::ptrdiff_t>(dead_dims));
      for (PendingInstance& in : queue_) in.first -= dead;
    }
    return;
  }
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<PendingInstance>());
  heap_.pop_back();
}

void RaceChecker::advance(Picos watermark, int64_t min_seq) {
  for (size_t l : listed_) {
    index_.index(logs_[l]);
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
        check(*reads[i].log, in, reads[i].key,
              reads[i].key ? nullptr : queued_dims_.data() + (in.first + i) * plan_.stride);
    } else {
      for (size_t slot = in.first; slot != kNoSlot; slot = reads_[slot].next) {
        const PendingRead& pr = reads_[slot];
        WriteLog& log = logs_[pr.log];
        check(log, in, pr.key, read_dims_.data() + slot * plan_.stride);
        free_reads_.push_back(slot);
      }
    }
    pop_pending(next);
  }
  // Writes hidden by a newer write that every future read comes after, both landed.
  const int64_t settled = settled_seq(min_seq);
  for (size_t l : listed_) index_.settle(logs_[l], watermark, settled);
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

void RaceChecker::steady_loop(LoopId loop) {
  std::fill(unlisted_.begin(), unlisted_.end(), 0);
  if (loop == kNoId) return;
  // The loop and the loops around it: what runs in a period lies in them.
  std::vector<char> around(p_.kernel->loops.size(), 0);
  for (LoopId l = loop; l != kNoId; l = p_.kernel->loops[static_cast<size_t>(l)].parent)
    around[static_cast<size_t>(l)] = 1;
  std::vector<char> read(logs_.size(), 0);
  for (size_t i = 0; i < plan_.insts.size(); ++i) {
    const std::vector<LoopId>& nest = p_.insts[i].nest;
    if (std::none_of(nest.begin(), nest.end(), [&](LoopId l) { return around[static_cast<size_t>(l)]; })) continue;
    for (const AccessPlan& ap : plan_.insts[i].reads) {
      const size_t buffers = ap.rotate == kNoId ? 1 : static_cast<size_t>(ap.buffers);
      std::fill(read.begin() + static_cast<std::ptrdiff_t>(ap.log),
                read.begin() + static_cast<std::ptrdiff_t>(ap.log + buffers), 1);
    }
  }
  for (size_t l = 0; l < logs_.size(); ++l) unlisted_[l] = !read[l];
}

void RaceChecker::record_unlisted_writes(const InstanceRecord& r) {
  if (r.unit < 0) return;
  const InstPlan& plan = plan_.insts[static_cast<size_t>(r.inst)];
  const int64_t seq = seq_of(plan, r.loop_ivs);
  for (const AccessPlan& ap : plan.writes)
    if (unlisted_[ap.log + static_cast<size_t>(race::buffer_of(ap, r.loop_ivs))]) record_write(ap, r, seq);
}

void RaceChecker::settle_unlisted(Picos watermark, int64_t min_seq) {
  const int64_t settled = settled_seq(min_seq);
  for (size_t l : listed_)
    if (unlisted_[l]) {
      index_.index(logs_[l]);
      index_.settle(logs_[l], watermark, settled);
    }
}

void RaceChecker::visit_state(StateVisitor& v) {
  v.exact(static_cast<int64_t>(std::count_if(listed_.begin(), listed_.end(), [&](size_t l) { return !unlisted_[l]; })));
  for (size_t l : listed_)
    if (!unlisted_[l]) v.exact(static_cast<int64_t>(l));
  for (size_t l = 0; l < logs_.size(); ++l)
    if (!unlisted_[l]) visit_log(v, logs_[l]);
  v.exact(static_cast<int64_t>(queue_.size() - queue_head_));
  for (size_t i = queue_head_; i < queue_.size(); ++i) visit_pending(v, queue_[i], true);
  v.exact(static_cast<int64_t>(heap_.size()));  // in heap order: equal heaps leave alike
  for (PendingInstance& in : heap_) visit_pending(v, in, false);
  auto arrivals = static_cast<int64_t>(arrivals_);
  v.count(arrivals);
  arrivals_ = static_cast<uint64_t>(arrivals);
  v.exact(static_cast<int64_t>(hazards_.size()));  // (reported_ grows with it)
}

void RaceChecker::visit_box(StateVisitor& v, Interval* dims, uint32_t rank) {
  for (uint32_t d = 0; d < rank; ++d) {
    v.count(dims[d].first);
    v.count(dims[d].second);
  }
}

void RaceChecker::visit_log(StateVisitor& v, WriteLog& log) {
  if (v.moves()) {  // the memos keyed by box hash are built again as they were
    log.producers.clear();
    log.same_known = false;
  }
  v.exact(static_cast<int64_t>(log.size()));
  for (size_t i = log.head; i < log.events.size(); ++i) {
    Event& e = log.events[i];
    v.count(e.seq);
    v.time(e.start);
    v.time(e.end);
    v.exact(e.inst);
    v.exact(e.key);
    if (e.key == 0) visit_box(v, log.dims.data() + i * log.stride, log.rank);
  }
  for (const bool flag : {log.listed, log.sorted, log.starts_ordered, log.ends_ordered, log.indexed}) v.exact(flag);
  if (!log.listed) v.exact(static_cast<int64_t>(log.cursor));  // (the next advance starts a listed log's afresh)
  // The arrays index() built when the live writes start or land out of order.
  if (log.indexed && (!log.starts_ordered || !log.ends_ordered)) {
    for (Picos& t : log.max_end_before) v.time(t);
    for (Picos& t : log.min_start_from) v.time(t);
  }
  v.exact(log.settle_known);
  if (log.settle_known) {
    v.exact(static_cast<int64_t>(log.settled_prefix));
    v.exact(static_cast<int64_t>(log.followed_prefix));
    v.time(log.settle_watermark);
    v.count(log.settle_seq);
  }
}

void RaceChecker::visit_pending(StateVisitor& v, PendingInstance& in, bool queued) {
  v.count(in.seq);
  auto arrival = static_cast<int64_t>(in.arrival);
  v.count(arrival);
  in.arrival = static_cast<uint64_t>(arrival);
  v.time(in.start);
  v.time(in.end);
  v.exact(in.inst);
  v.exact(in.count);
  if (queued && in.fixed) {  // its instruction's list: which of the two
    v.exact(in.fixed == plan_.insts[static_cast<size_t>(in.inst)].fixed_fresh.data());
    return;
  }
  v.exact(-1);
  auto read = [&](const WriteLog& log, uint32_t key, Interval* dims) {
    v.exact(static_cast<int64_t>(&log - logs_.data()));
    v.exact(key);
    if (key == 0) visit_box(v, dims, log.rank);
  };
  if (queued) {
    for (size_t i = in.first; i < in.first + in.count; ++i)
      read(*queued_reads_[i].log, queued_reads_[i].key, queued_dims_.data() + i * plan_.stride);
  } else {
    for (size_t slot = in.first; slot != kNoSlot; slot = reads_[slot].next)
      read(logs_[reads_[slot].log], reads_[slot].key, read_dims_.data() + slot * plan_.stride);
  }
}

void RaceChecker::report_hidden(const WriteLog& log, size_t i, size_t j) {
  const Event& old = log.live()[i];
  const Event& newer = log.live()[j];
  report("WAW", old, newer, log.buffer, box(log, i), box(log, j),
         where(old) + " landed at " + ns(old.end) + " ns, after " + where(newer) + " at " + ns(newer.end) + " ns");
}

inline void RaceChecker::check(WriteLog& log, const PendingInstance& in, uint32_t key, const Interval* dims) {
  // The read as an event, and its box, only on the paths that need them (a box with a key
  // is `plan_.keyed`'s; else `dims`).
  auto read = [&] { return Event(in.seq, in.start, in.end, in.inst, key); };
  auto read_box = [&] { return BoxRef{key ? plan_.keyed[key] : dims, log.rank}; };
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
      earlier = race::WriteIndex::gallop(ev, n, earlier, in.seq);
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
