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
//
// This file is the checking: the reads waiting to be checked and the reports. What each
// instruction touches is worked out once in race_access_plan.h; each buffer's live writes
// and their index are race_write_log.h.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sched/support/box.h"
#include "sim/observe/race_access_plan.h"
#include "sim/observe/race_write_log.h"
#include "sim/units/instance_record.h"
#include "sim/units/unit_state.h"

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
  // Fast-forward (sim/units/fast_forward.h): the live writes of every log with their boxes and
  // the state of their index and settle, the reads waiting to be checked with theirs, and how
  // many races were found (a period that finds a new one does not repeat). The memos keyed by
  // box hash are not listed: a shift empties them, and they are built again as they were.
  void visit_state(StateVisitor& v);
  // Fast-forward marks its periods by the iterations of `loop`: the write logs that nothing in
  // that loop or around it reads (an output stored at each iteration, kept for what reads it
  // later) are not listed, since they only grow. While a skip moves the rest on, they get each
  // skipped period's writes and settle as they would have. (kNoId: every log is listed.)
  void steady_loop(LoopId loop);
  bool has_unlisted() const { return std::find(unlisted_.begin(), unlisted_.end(), 1) != unlisted_.end(); }
  void record_unlisted_writes(const InstanceRecord& r);
  void settle_unlisted(Picos watermark, int64_t min_seq);

  using Interval = race::Interval;
  using BoxRef = race::BoxRef;

 private:
  using Event = race::Event;
  using Buffer = race::Buffer;
  using WriteLog = race::WriteLog;
  using AccessPlan = race::AccessPlan;
  using QueuedRead = race::QueuedRead;
  using InstPlan = race::InstPlan;

  // record()'s rarer parts, out of line: an instance's reads that come out of program order,
  // a box without a key, a buffer's first write.
  void record_unqueued_reads(const InstPlan& plan, const InstanceRecord& r, int64_t seq);
  void queue_box(const AccessPlan& ap, const int64_t* ivs);
  static void write_box(WriteLog& w, const AccessPlan& ap, const int64_t* ivs);
  void list(size_t log);
  int64_t seq_of(const InstPlan& plan, const int64_t* ivs) const;
  void record_write(const AccessPlan& ap, const InstanceRecord& r, int64_t seq);
  void visit_log(StateVisitor& v, WriteLog& log);
  void visit_box(StateVisitor& v, Interval* dims, uint32_t rank);
  // The box of live write i of `log`.
  BoxRef box(const WriteLog& log, size_t i) const { return index_.box(log, i); }
  struct PendingInstance;
  void check(WriteLog& log, const PendingInstance& in, uint32_t key, const Interval* dims);
  // check()'s rarer parts: the writes after the read that began before it ended (WAR), the
  // producer landing after the read began (RAW), older writes landing after the producer (WAW).
  void check_later(const WriteLog& log, size_t later, const Event& read, BoxRef read_box);
  void produced(const WriteLog& log, size_t i, const Event& read, BoxRef read_box);
  void check_producers(WriteLog& log, size_t earlier, const Event& read, BoxRef read_box);
  void report_early_read(const WriteLog& log, size_t i, const Event& read, BoxRef read_box);
  void check_older(const WriteLog& log, size_t i, const Event& read, BoxRef read_box);
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
  // One write log per rotation buffer of every tensor something writes (a tensor nothing
  // writes has none, and its reads are not followed: they cannot race); `listed_` lists those
  // the next advance indexes and settles (written since, or with writes not settled yet) in
  // (tensor, buffer) order, the order races are found in. Built with the plan, before it.
  std::vector<WriteLog> logs_;
  std::vector<size_t> listed_;
  std::vector<char> unlisted_;  // per log: left out of visit_state (steady_loop)
  const race::ProgramPlan plan_;
  race::WriteIndex index_;
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
  // queued_reads_[i]'s box (without a key): [i * stride, i * stride + rank), grown as far as the
  // last read without a key
  std::vector<Interval> queued_dims_;
  std::vector<PendingInstance> heap_;
  std::vector<PendingRead> reads_;
  std::vector<Interval>
      read_dims_;  // reads_[s]'s box (without a key): [s * stride, s * stride + rank) (the plan's stride)
  std::vector<size_t> free_reads_;
  // A pending instance and its reads; `queued`: in queue_ (else in heap_).
  void visit_pending(StateVisitor& v, PendingInstance& in, bool queued);
  // The next instance to check (the smaller front), or nullptr.
  const PendingInstance* next_pending() const;
  void pop_pending(const PendingInstance* which);
  // Every read still to be checked comes at or after this in program order, given that every
  // instance not yet recorded comes at or after `min_seq`.
  int64_t settled_seq(int64_t min_seq) const;
  uint64_t arrivals_ = 0;
  std::set<std::tuple<std::string, InstId, InstId>> reported_;
  std::vector<Hazard> hazards_;
};

[[gnu::always_inline]] inline int64_t RaceChecker::seq_of(const InstPlan& plan, const int64_t* ivs) const {
  int64_t seq = plan.seq_base;
  for (const auto& [loop, stride] : plan.seq_terms) seq += ivs[loop] * stride;
  return seq;
}

[[gnu::always_inline]] inline void RaceChecker::record_write(const AccessPlan& ap, const InstanceRecord& r,
                                                             int64_t seq) {
  const int64_t* ivs = r.loop_ivs;
  WriteLog& w = ap.log0[race::buffer_of(ap, ivs)];
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

// record() is inline: the ledger (and the bench's event loop) runs it per dynamic instance, and
// a call of its own cost a frame (six saved registers) on top of the ledger's.
[[gnu::always_inline]] inline void RaceChecker::record(const InstanceRecord& r) {
  if (r.unit < 0) return;  // a barrier touches no memory
  const InstPlan& plan = plan_.insts[static_cast<size_t>(r.inst)];
  const int64_t* ivs = r.loop_ivs;
  const int64_t seq = seq_of(plan, ivs);
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
        queued_reads_.push_back({ap.log0 + race::buffer_of(ap, ivs), ap.key});
        if (ap.key == 0) queue_box(ap, ivs);
      }
      // Reads last while the unit consumes its inputs.
      if (const auto count = static_cast<uint32_t>(queued_reads_.size() - first); count > 0)
        queue_.emplace_back(seq, arrivals_++, r.start, std::max(r.busy_end, r.start), r.inst, count, first);
    }
  }
  for (const AccessPlan& ap : plan.writes) record_write(ap, r, seq);
}

}  // namespace tandem
