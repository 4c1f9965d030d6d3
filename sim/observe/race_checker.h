// The race checker: is the simulated schedule faithful to its own program order? It follows
// every written box of every tensor buffer (after rotation: buffer (iv - lo) mod N; per
// register for register groups) and checks that each read sees the producer sequential
// program order gives:
//   RAW  the read started before its producer's write landed;
//   WAR  a write later in program order began before the read finished (a transfer writes
//        from its first byte to its last, so one that completes after the reader still races);
//   WAW  an older write landed after a newer one, replacing the value the read should see.
// A read is checked once every write that could matter is known (all instances earlier in
// program order have run, and no unit can still land a write before the read ends); writes
// hidden by newer settled writes are dropped, so memory follows live data, not the number of
// dynamic instances. Each race is reported once per (kind, instruction pair), with the dep
// line that, added to the simulated kernel, orders the pair (kind, distance and, when it is
// not the innermost common loop, the carrying loop).
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sched/support/box.h"
#include "sim/units/instance_record.h"

namespace tandem {

struct Hazard {
  std::string kind;      // RAW, WAR, WAW
  InstId first = kNoId;  // the earlier in program order
  InstId second = kNoId;
  std::string message;  // the one-line report
};

class RaceChecker {
 public:
  explicit RaceChecker(const SimProgram& p);

  void record(const InstanceRecord& r);
  // Everything that starts later starts at or after `watermark`; every instance not yet
  // recorded comes at or after `min_seq` in program order.
  void advance(Picos watermark, int64_t min_seq);
  const std::vector<Hazard>& hazards() const { return hazards_; }

  using Interval = std::pair<int64_t, int64_t>;
  // A box stored elsewhere (a write log's or the pending reads' dims): events stay small and
  // trivially copied, and a box is written in place, not built and copied per access.
  struct BoxRef {
    const Interval* d;
    uint32_t rank;
  };

 private:
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

  struct WriteLog;
  // One access of an instruction, worked out once: its rotation (tensor attributes `buffers`,
  // `rotate`) and its box as constants plus loop terms, so record() adds products and looks
  // nothing up.
  struct AccessPlan {
    bool read;                   // reads, and the reads of accumulating writes
    int64_t buffers;             // rotation buffers (when `rotate` is set)
    LoopId rotate;               // the loop the tensor rotates over, kNoId when it does not
    int64_t rotate_lo;           // its first iteration
    LoopId fresh_at;             // an accumulating read: not at this loop's first iteration (`start`)
    int64_t fresh_lo;            // that loop's first iteration
    size_t log;                  // the write log of the tensor's rotation buffer 0 (buffer b: log + b)
    WriteLog* log0;              // logs_[log] (logs_ does not move once built)
    std::vector<Interval> base;  // every bound's constant (a whole access: the tensor's extent)
    uint32_t rank;               // base.size()
    // A box without loop terms and not empty: one key per distinct box, its box kept once in
    // `keyed_` (events with a key store no box of their own); else 0.
    uint32_t key;
    struct Term {
      size_t dim;
      bool hi;
      LoopId loop;
      int64_t coeff;
    };
    std::vector<Term> terms;  // bound of `dim` += coeff * iv of `loop`
  };
  // A read waiting in the queue: its buffer's write log and its box's key (0: the box is in
  // `queued_dims_`).
  struct QueuedRead {
    WriteLog* log;
    uint32_t key;
  };
  // Per instruction: its accesses and its place in program order as a constant plus one
  // product per enclosing loop (SimInst::seq with the loops' first iterations folded in).
  struct InstPlan {
    std::vector<AccessPlan> reads;  // in program text order: reads, then accumulating writes' reads
    std::vector<AccessPlan> writes;
    // When every read has a key and no rotation, every instance reads the same (log, key)
    // list: a queued instance points at it instead of copying it read by read. `fixed_fresh`
    // leaves out the accumulating reads, for the instances that start their group (`fresh_at`
    // at `fresh_lo`, kNoId when none does).
    bool fixed = false;
    std::vector<QueuedRead> fixed_reads;
    std::vector<QueuedRead> fixed_fresh;
    LoopId fresh_at = kNoId;
    int64_t fresh_lo = 0;
    int64_t seq_base = 0;
    std::vector<std::pair<LoopId, int64_t>> seq_terms;  // (loop, stride)
  };
  int64_t buffer_of(const AccessPlan& ap, const int64_t* ivs) const;
  static void box_of(const AccessPlan& ap, const int64_t* ivs, Interval* out);
  // record()'s rarer parts, out of line: an instance's reads that come out of program order,
  // a box without a key, a buffer's first write.
  void record_unqueued_reads(const InstPlan& plan, const InstanceRecord& r, int64_t seq);
  void queue_box(const AccessPlan& ap, const int64_t* ivs);
  static void write_box(WriteLog& w, const AccessPlan& ap, const int64_t* ivs);
  void list(size_t log);
  // The live writes of a buffer, in program order once advance() has sorted them, with what
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
    bool listed = false;  // in listed_
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
    // check_producers()'s memory, per box hash of a read: a live write j (an index into
    // `events`, not from `head`) whose box is that read's and overlaps it, and `checked`: no
    // write in (j, checked) overlaps it. A strip read slice by slice, each slice several
    // times, then finds its producer without walking back over the newer slices again.
    // Emptied when writes move (a drop, a sort); writes only join after `checked`.
    struct Producer {
      size_t j;
      size_t checked;
    };
    std::unordered_map<uint64_t, Producer> producers;
    const Event* live() const { return events.data() + head; }
    size_t size() const { return events.size() - head; }
  };
  // The box of live write i of `log`.
  BoxRef box(const WriteLog& log, size_t i) const {
    const Event& e = log.events[log.head + i];
    return {e.key ? keyed_[e.key] : log.dims.data() + (log.head + i) * log.stride, log.rank};
  }
  void index(WriteLog& log);
  static size_t gallop(const Event* ev, size_t n, size_t from, int64_t seq);
  struct PendingInstance;
  void check(WriteLog& log, const PendingInstance& in, uint32_t key, const Interval* dims);
  // check()'s rarer parts: the writes after the read that began before it ended (WAR), the
  // producer landing after the read began (RAW), older writes landing after the producer (WAW).
  void check_later(const WriteLog& log, size_t later, const Event& read, BoxRef read_box);
  void produced(const WriteLog& log, size_t i, const Event& read, BoxRef read_box);
  void check_producers(WriteLog& log, size_t earlier, const Event& read, BoxRef read_box);
  void report_early_read(const WriteLog& log, size_t i, const Event& read, BoxRef read_box);
  void check_older(const WriteLog& log, size_t i, const Event& read, BoxRef read_box);
  void settle(WriteLog& log, Picos watermark, int64_t settled);
  // settle() on a log unchanged since the last settle, which dropped nothing.
  void settle_again(WriteLog& log, Picos watermark, int64_t settled);
  void index_same_boxes(WriteLog& log);
  // Drop the writes of [0, last_dropped] not listed in kept_ (`dropped` of them).
  void drop(WriteLog& log, size_t dropped, size_t last_dropped);
  // Live writes i (older) and j (newer, covering it) of `log`: a WAW when i landed last.
  void report_hidden(const WriteLog& log, size_t i, size_t j);
  // `earlier` and `later` in program order; `what` says what happened, naming both.
  void report(const char* kind, const Event& earlier, const Event& later, const Buffer& b, BoxRef x, BoxRef y,
              const std::string& what);
  std::string where(const Event& e) const;
  // The instance's induction variables (per entry of its nest), decoded from its seq: reports
  // only, so that events carry no per-instance vector.
  std::vector<int64_t> ivs_of(const Event& e) const;
  std::string describe(const Buffer& b, const Box& box) const;

  const SimProgram& p_;
  std::vector<InstPlan> plans_;  // per instruction
  // The box of each key (keyed_[0] unused), in `keyed_boxes_`, which does not move.
  std::vector<const Interval*> keyed_;
  std::vector<Interval> keyed_boxes_;
  // One write log per rotation buffer of every tensor something writes (a tensor nothing
  // writes has none, and its reads are not followed: they cannot race); `listed_` lists those
  // the next advance indexes and settles (written since, or with writes not settled yet) in
  // (tensor, buffer) order, the order races are found in.
  std::vector<WriteLog> logs_;
  std::vector<size_t> listed_;
  // Reads waiting to be checked, by instance: one seq is one dynamic instance, whose reads
  // share their seq, start and end and leave together, in the order they arrived. Instances
  // leave in (seq, arrival) order, the order a map by seq would give: those that arrive in
  // that order wait in a queue (one unit's reads, the usual case), their reads side by side
  // in `queued_reads_`; the others in a min-heap, their reads chained in a slab. The next is
  // the smaller of the two fronts.
  static constexpr size_t kNoSlot = SIZE_MAX;
  struct PendingRead {
    uint32_t log;
    uint32_t key;
    size_t next;  // the instance's next read, or kNoSlot
  };
  struct PendingInstance {
    PendingInstance(int64_t seq_, uint64_t arrival_, Picos start_, Picos end_, InstId inst_, uint32_t count_,
                    size_t first_, const QueuedRead* fixed_ = nullptr)
        : seq(seq_),
          arrival(arrival_),
          start(start_),
          end(end_),
          inst(inst_),
          count(count_),
          first(first_),
          fixed(fixed_) {}
    int64_t seq;
    uint64_t arrival;
    Picos start;
    Picos end;
    InstId inst;
    uint32_t count;  // its reads
    size_t first;  // queued: its reads are queued_reads_[first, first + count); in the heap: the first's slot in reads_
    // Queued with its instruction's fixed reads: they are fixed[0, count), and `first` is where
    // its own would have begun (none are in queued_reads_).
    const QueuedRead* fixed;
    bool operator>(const PendingInstance& o) const { return seq != o.seq ? seq > o.seq : arrival > o.arrival; }
  };
  std::vector<PendingInstance> queue_;  // in (seq, arrival) order from queue_head_; emptied when its last leaves
  size_t queue_head_ = 0;
  std::vector<QueuedRead> queued_reads_;
  // queued_reads_[i]'s box (without a key): [i * stride_, i * stride_ + rank), grown as far as the
  // last read without a key
  std::vector<Interval> queued_dims_;
  std::vector<PendingInstance> heap_;
  std::vector<PendingRead> reads_;
  std::vector<Interval> read_dims_;  // reads_[s]'s box (without a key): [s * stride_, s * stride_ + rank)
  std::vector<size_t> free_reads_;
  size_t stride_ = 1;  // the largest rank of any followed tensor
  // The next instance to check (the smaller front), or nullptr.
  const PendingInstance* next_pending() const;
  void pop_pending(const PendingInstance* which);
  uint64_t arrivals_ = 0;
  std::set<std::tuple<std::string, InstId, InstId>> reported_;
  std::vector<Hazard> hazards_;
  // Scratch reused across calls (no allocation per check once grown).
  std::vector<std::pair<uint64_t, size_t>> same_box_;
  std::vector<size_t> next_same_;
  std::vector<size_t> kept_;
  std::vector<size_t> found_;
  std::vector<uint32_t> order_;
  std::vector<Event> sorted_events_;
  std::vector<Interval> sorted_dims_;
};

// record() is inline: the ledger (and the bench's event loop) runs it per dynamic instance, and
// a call of its own cost a frame (six saved registers) on top of the ledger's.
inline int64_t RaceChecker::buffer_of(const AccessPlan& ap, const int64_t* ivs) const {
  if (ap.rotate == kNoId) return 0;
  return (ivs[ap.rotate] - ap.rotate_lo) % ap.buffers;
}

[[gnu::always_inline]] inline void RaceChecker::record(const InstanceRecord& r) {
  if (r.unit < 0) return;  // a barrier touches no memory
  const InstPlan& plan = plans_[static_cast<size_t>(r.inst)];
  const int64_t* ivs = r.loop_ivs;
  int64_t seq = plan.seq_base;
  for (const auto& [loop, stride] : plan.seq_terms) seq += ivs[loop] * stride;
  if (!plan.reads.empty()) {
    if (!queue_.empty() && queue_.back().seq > seq) {
      record_unqueued_reads(plan, r, seq);
    } else if (plan.fixed) {  // queued; its reads are its instruction's list
      const std::vector<QueuedRead>& reads =
          plan.fresh_at != kNoId && ivs[plan.fresh_at] == plan.fresh_lo ? plan.fixed_fresh : plan.fixed_reads;
      if (!reads.empty())
        queue_.emplace_back(seq, arrivals_++, r.start, std::max(r.busy_end, r.start), r.inst,
                            static_cast<uint32_t>(reads.size()), queued_reads_.size(), reads.data());
    } else {  // in program order after the queue's last instance: queued
      const size_t first = queued_reads_.size();
      for (const AccessPlan& ap : plan.reads) {
        if (ap.fresh_at != kNoId && ivs[ap.fresh_at] == ap.fresh_lo)
          continue;  // this instance starts its accumulation group: a plain write
        queued_reads_.push_back({ap.log0 + buffer_of(ap, ivs), ap.key});
        if (ap.key == 0) queue_box(ap, ivs);
      }
      // Reads last while the unit consumes its inputs.
      if (const auto count = static_cast<uint32_t>(queued_reads_.size() - first); count > 0)
        queue_.emplace_back(seq, arrivals_++, r.start, std::max(r.busy_end, r.start), r.inst, count, first);
    }
  }
  for (const AccessPlan& ap : plan.writes) {
    WriteLog& w = ap.log0[buffer_of(ap, ivs)];
    if (!w.listed) list(static_cast<size_t>(&w - logs_.data()));
    // A write changes its range from the moment the unit starts producing it (a transfer:
    // its first byte; a compute engine: its start) until it completes: a read that overlaps
    // that window can see new bytes.
    const Picos start = std::min(r.busy_start, r.complete);
    if (w.head != w.events.size()) {
      const Event& last = w.events.back();
      if (last.seq > seq) {  // the live writes will be sorted: settle anew
        w.sorted = false;
        w.settle_known = false;
      }
      if (last.start > start) w.starts_ordered = false;
      if (last.end > r.complete) w.ends_ordered = false;
    }
    w.indexed = false;
    w.events.emplace_back(seq, start, r.complete, r.inst, ap.key);
    if (ap.key == 0) write_box(w, ap, ivs);
  }
}

}  // namespace tandem
