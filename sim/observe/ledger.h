// The overlap ledger: folds the stream of instance records into per-unit totals and, for
// every loop, per-iteration start, end, DMA and compute busy time, overlap and exposed DMA
// (ledger.cpp: the records and the per-iteration rows; ledger_summary.cpp: the result).
// Memory is bounded by how far units run ahead of each other, not by the number of dynamic
// instances: an iteration is finalised as soon as all its instances are in and no unit can
// still produce compute time that overlaps its transfers, and an iteration still open (an
// outer loop's, while its inner loops run) keeps only its spans after the watermark: the part
// before it is final and is added up at each finalization.
#pragma once

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "sim/observe/sim_result.h"
#include "sim/units/observer.h"
#include "sim/units/sim_context.h"
#include "sim/units/stream_unit.h"

namespace tandem {

class RaceChecker;
class TraceWriter;

// `from` is a record's, `to` a sum's: never the same array (restrict drops the check for it).
inline void add_stalls(StallArray& __restrict to, const StallArray& __restrict from) {
  for (size_t i = 0; i < to.size(); ++i) to[i] += from[i];
}

class Ledger final : public InstanceObserver {
 public:
  // `capture_timeline`: keep every span of the first, middle and last iteration of the loop
  // with the most dynamic iterations. Every record is passed on to `trace` and `checker`
  // (either may be null); the ledger tells the checker how far the units have come.
  Ledger(SimContext& ctx, size_t iterations_kept, bool capture_timeline, TraceWriter* trace, RaceChecker* checker);

  // Records between two finalizations (and the race checker's advances): the watermark's and
  // the checker's fixed work per call is paid this rarely. The bench's event loop feeds its
  // checker at the same cadence, so that both do equal work.
  static constexpr int64_t kFinalizeEvery = 128;

  void record(const InstanceRecord& r) override;
  // Instances recorded so far; read by the progress line's thread while the simulation runs.
  int64_t recorded() const { return recorded_.load(std::memory_order_relaxed); }
  // When a transfer set the release, a compute unit's wait is exposed DMA of that iteration.
  void barrier_wait(const InstanceRecord& r, Picos ps, bool released_by_dma) override;
  void unit_done() override { try_finalize(); }
  void stand_in(const UnitBounds* bounds) override { stand_in_ = bounds; }
  // Fast-forward (sim/units/fast_forward.h): the ledger finalizes what it can (settle), then
  // lists its sums, its open iterations and its busy intervals; it refuses while it keeps a
  // timeline or writes a trace. A skipped period may not open or finalize an iteration the
  // result lists.
  void settle() override { try_finalize(); }
  void visit_state(StateVisitor& v) override;
  int64_t periods_allowed(const std::vector<int64_t>& count_shift, const std::vector<int64_t>& started) override;
  bool checks_records() const override { return checker_ != nullptr; }
  void visit_checks(StateVisitor& v) override;
  void steady_loop(LoopId loop) override;
  bool checks_writes() const override;
  void check_write(const InstanceRecord& r) override;
  void check_writes_progress() override;
  void check_record(const InstanceRecord& r) override;
  void check_progress() override;
  // Finalises everything (all units are done) and fills in the bounds.
  SimResult finish();
  // The most busy intervals and spans held after a finalization (SimResult::ledger_peak_spans).
  int64_t peak_spans() const { return peak_spans_; }

  // Disjoint intervals [start, end), sorted: mostly appended at the end as the simulation
  // advances, so a vector (no allocation per record once grown) whose append is inline
  // (std::vector's is a call): storage of its capacity, the first size() in use. Public for
  // its unit test.
  class Intervals {
   public:
    using value_type = std::pair<Picos, Picos>;
    using iterator = value_type*;
    using const_iterator = const value_type*;
    iterator begin() { return store_.data(); }
    iterator end() { return store_.data() + size_; }
    const_iterator begin() const { return store_.data(); }
    const_iterator end() const { return store_.data() + size_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    value_type& operator[](size_t i) { return store_[i]; }
    const value_type& operator[](size_t i) const { return store_[i]; }
    value_type& back() { return store_[size_ - 1]; }
    [[gnu::always_inline]] void push_back(value_type v) {
      if (size_ == capacity_) grow();
      store_[size_++] = v;
    }
    iterator insert(iterator at, value_type v) {
      const size_t i = static_cast<size_t>(at - begin());
      push_back(v);
      std::rotate(begin() + i, end() - 1, end());
      return begin() + i;
    }
    void erase(iterator from, iterator to) {
      std::move(to, end(), from);
      size_ -= static_cast<size_t>(to - from);
    }
    void shrink_to(size_t n) { size_ = n; }
    void clear() { size_ = 0; }
    void visit_state(StateVisitor& v) {
      v.exact(static_cast<int64_t>(size_));
      for (size_t i = 0; i < size_; ++i) {
        v.time(store_[i].first);
        v.time(store_[i].second);
      }
    }

   private:
    void grow();
    std::vector<value_type> store_;
    size_t size_ = 0;
    size_t capacity_ = 0;  // store_.size()
  };

 private:
  // An iteration's busy spans. They arrive nearly in time order, so they are kept sorted and
  // merged by extending or appending at the end (or inserting, while few); a span arriving
  // out of order into a large set is appended and the set sorted and merged later (when
  // read, or when its size reaches a power of two from 4096 on, so the memory of an outer
  // iteration follows the gaps in its busy time, not its inner instances).
  class SpanSet {
   public:
    void add(Picos a, Picos b);
    void clear() {
      spans_.clear();
      merged_ = true;
    }
    // Sorted, disjoint and not touching.
    const Intervals& merged();
    size_t size() const { return spans_.size(); }
    void visit_state(StateVisitor& v) {
      v.exact(merged_);
      spans_.visit_state(v);
    }
    // Drops what lies before `until` (a span across it keeps its part from `until` on) and
    // returns the first span left's start (kNever when none), after `each(a, b)` has seen
    // each dropped part [a, b) of the merged spans.
    template <typename Each>
    Picos forget_before(Picos until, Each each);

   private:
    void add_out_of_order(Picos a, Picos b);
    void merge_all();
    Intervals spans_;
    bool merged_ = true;
  };
  // What only a listed iteration's result reads (finalize()): written only while it is kept,
  // in a slot beside the iteration's, so that the ring's part every record touches is two
  // cache lines (a finalised iteration's slot is written up to kFinalizeEvery records before).
  // Also holds, for any iteration with `settled` set, the sums of its spans already dropped.
  struct Listed {
    Picos start = std::numeric_limits<Picos>::max();
    SpanSet compute;
    Picos exposed = 0;
    Picos dma_moving = 0;   // its transfers' data phases, summed
    Picos dma_waiting = 0;  // its transfers' issue to first byte, summed
    StallArray stall{};
    Picos compute_settled = 0;  // length of the compute spans dropped
    Picos dma_settled = 0;      // length of the DMA spans dropped
    Picos overlap_settled = 0;  // their overlap with compute busy time
    void reset();               // back to fresh, keeping the span storage
    void visit_state(StateVisitor& v);
  };
  struct alignas(128) Iter {  // 128 bytes: the index is a shift; what every record touches first
    int64_t iv = 0;
    Picos start = std::numeric_limits<Picos>::max();
    Picos end = 0;
    int64_t received = 0;
    Picos dma_min_start = std::numeric_limits<Picos>::max();
    Picos dma_max_end = 0;
    Picos wmma_bubble = 0;
    int64_t wmmas = 0;
    // (Its index among the loop's iterations is the position in `pending` plus `base`.)
    // Listed in the result (a long loop lists its first and last ones): only then is
    // `listed` written or read.
    bool kept = true;
    bool settled = false;  // some spans were dropped into the slot's Listed sums
    SpanSet dma;
    Listed* listed = nullptr;  // its slot's (IterRing keeps it)
    // Back to a fresh iteration, keeping the span storage (no allocation per iteration).
    void reset();
    void visit_state(StateVisitor& v);
  };
  static_assert(sizeof(Iter) == 128, "an iteration's slot is two cache lines");
  // The pending iterations, oldest first, in a ring of reused slots (a power of two).
  class IterRing {
   public:
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    Iter& operator[](size_t i) { return slots_[(head_ + i) & mask_]; }
    Iter& front() { return slots_[head_]; }
    Iter& push_back() {
      if (size_ == slots_.size()) grow();
      return (*this)[size_++];
    }
    void pop_front();

   private:
    void grow();
    std::vector<Iter> slots_;
    std::vector<Listed> listed_;  // slots_[i].listed is &listed_[i]
    size_t mask_ = 0;             // slots_.size() - 1
    size_t head_ = 0;
    size_t size_ = 0;
  };
  struct LoopState {
    int64_t expected = 0;  // instance records per iteration
    int64_t base = 0;      // index of pending.front()
    // Iterations listed in the result: those below the first or from the second (all of a
    // loop no longer than iterations_kept).
    int64_t listed_below = std::numeric_limits<int64_t>::max();
    int64_t listed_from = std::numeric_limits<int64_t>::max();
    IterRing pending;
    int64_t lo = 0, hi = 0;  // the loop's bounds (Loop::lo, Loop::hi)
    Picos first_end = 0;     // end of the current entry's first iteration
    Picos steady_ps = 0;     // summed over entries: first to last end
    int64_t steady_intervals = 0;
    Picos entry_start = 0, entry_end = 0;  // the current entry's earliest start and latest end
    std::vector<IterationResult> head;
    // The last iterations finalized, a ring: tail[tail_next] is the oldest once it is full.
    std::vector<IterationResult> tail;
    size_t tail_next = 0;
    // Wall-time exposed DMA: the loop's transfers and the busy time of the compute engines
    // with work in the loop (shared by the loops with the same engines: engine_sets_busy_),
    // merged, not yet counted; counted up to `counted`.
    Intervals dma_wall;
    const Intervals* engines_busy = nullptr;
    Picos counted = 0;
    bool active = false;  // in active_
    LoopResult result;
  };

  // Frees the storage of a loop whose every iteration is finalized: it records nothing more.
  void release(LoopState& s);
  // The pending iteration `index` (at or after s.base), opened if new.
  [[gnu::always_inline]] Iter& iteration(LoopState& s, int64_t index, int64_t iv) {
    const size_t offset = static_cast<size_t>(index - s.base);
    if (offset == s.pending.size()) {
      if (!s.active) activate(s);
      Iter& fresh = s.pending.push_back();
      fresh.kept = index < s.listed_below || index >= s.listed_from;
    } else if (offset > s.pending.size()) {
      open_to(s, index);
    }
    Iter& it = s.pending[offset];
    it.iv = iv;
    return it;
  }
  // Opens the iterations up to `index`.
  void open_to(LoopState& s, int64_t index);
  // The loop has an iteration open: try_finalize() visits it until none is and its transfers
  // are counted.
  void activate(LoopState& s);
  // record() for a transfer and for a compute instruction, and the parts of it they share.
  struct InstPlan;
  void record_transfer(const InstanceRecord& r, InstPlan& plan);
  static void add_wmma(Iter& it, const InstanceRecord& r);
  void record_compute(const InstanceRecord& r, InstPlan& plan);
  void add_to_plan(const InstanceRecord& r, InstPlan& plan);
  // The cold parts of record(), out of line so that its common path stays small.
  [[noreturn]] void behind_watermark(const InstanceRecord& r);
  void capture_span(const InstanceRecord& r, bool dma, int64_t index);
  // Adds to the loop's exposed DMA the time before `until` when some of its transfers moved
  // and none of its compute engines was busy, then forgets the intervals before `until`.
  void count_exposed(LoopState& s, Picos until);
  // The time during which some compute engine was busy within the merged spans `dma`, or
  // within [a, b).
  Picos overlap_with_compute(const Intervals& dma);
  Picos overlap_with_compute(Picos a, Picos b);
  // The first interval of compute_busy_ that ends after `t` (or its size).
  size_t compute_from(Picos t);
  size_t compute_search(Picos t);  // compute_from when its previous answer no longer holds
  // No unit will still produce a record that starts before this time.
  Picos watermark();
  // Every instance not yet recorded comes at or after this in program order.
  int64_t min_future_seq() const;
  void try_finalize(bool all_done = false);
  void finalize(LoopState& s, Iter& it);
  // Adds up and drops the spans of the loop's open iterations before `until`; returns the
  // earliest start of a DMA span still held and counts the spans held into `held`.
  Picos settle(LoopState& s, Picos until, int64_t& held);
  // The bounds, from sched/analysis/loop_bounds over the lowered program.
  void compute_bounds(SimResult& out);

  SimContext& ctx_;
  TraceWriter* trace_;
  RaceChecker* checker_;
  size_t kept_;
  // Written by the simulation's thread only: a relaxed load and store, no read-modify-write.
  std::atomic<int64_t> recorded_{0};
  // Barrier waits as they come; bytes (unit_bytes_), busy time, instances and the other stalls
  // are added once, in finish() (the last three the sums of the unit's instructions' profile).
  std::vector<UnitResult> units_;
  // Per unit: its bytes so far (finish() hands them to its result).
  std::vector<double> unit_bytes_;
  // What record() reads and adds up of an instruction, in one place (128 bytes: the index is
  // a shift); finish() makes its profile of the sums. An instruction other than a barrier
  // runs on one unit, so what record() needs of that unit is copied here.
  struct alignas(128) InstPlan {
    int64_t instances = 0;
    Picos busy_ps = 0;
    StallArray stall_ps{};
    const LoopId* nest = nullptr;  // its enclosing loops (SimInst::nest)
    const LoopId* nest_end = nullptr;
    double bytes = 0;                         // a transfer's (SimInst::dma.bytes)
    double* unit_bytes = nullptr;             // its unit's (null for a barrier)
    Intervals* const* engine_sets = nullptr;  // a compute instruction's: engine_sets_of_ of its engine
    Intervals* const* engine_sets_end = nullptr;
    bool dma = false;  // on a DMA queue
    bool wmma = false;
    bool in_timeline = false;  // inside the timeline's loop
  };
  std::vector<InstPlan> plans_;  // per instruction
  std::vector<LoopState> loops_;
  std::vector<std::vector<bool>> works_in_;  // [loop][unit]: the unit runs an instruction in the loop
  // The busy time of each set of compute engines that some loop's work runs on, merged (one per
  // distinct set, not per loop: every engine's record merged into each loop it works in would
  // make many sibling loops quadratic), and per unit the sets a compute engine is in. Not moved
  // once built (loops and plans point into them).
  std::vector<Intervals> engine_sets_busy_;
  std::vector<std::vector<Intervals*>> engine_sets_of_;
  // The loops try_finalize() visits: those with an iteration open or transfers not counted.
  std::vector<LoopId> active_;
  // The watermark's scratch: each unit's horizon and bound.
  std::vector<StreamUnit::Horizon> horizons_;
  const UnitBounds* stand_in_ = nullptr;  // the units' bounds while fast-forward replays records
  std::vector<Picos> bounds_;
  Picos passed_ = 0;         // the last watermark: every record still to come starts at or after it
  int64_t peak_spans_ = 0;   // peak_spans()
  Intervals compute_busy_;   // merged busy intervals of all compute engines
  size_t compute_hint_ = 0;  // compute_from's last answer
  Picos total_ = 0;
  LoopId timeline_loop_ = kNoId;
  // The timeline's iterations (its loop's dynamic index): the first, the last and a window.
  int64_t timeline_last_ = -1;
  int64_t timeline_window_from_ = 0;
  uint64_t timeline_window_size_ = 0;
  bool timeline_iteration(int64_t index) const {
    return index == 0 || index == timeline_last_ ||
           static_cast<uint64_t>(index - timeline_window_from_) < timeline_window_size_;
  }
  std::vector<TimelineSpan> timeline_;
  // record() calls try_finalize() once the count of records reaches this: kFinalizeEvery
  // records after the last call (a count apart from recorded_ would be one more load and store
  // per record).
  int64_t finalize_at_ = kFinalizeEvery;
};

}  // namespace tandem
