// The overlap ledger: folds the stream of instance records into per-unit totals and, for
// every loop, per-iteration start, end, DMA and compute busy time, overlap and exposed DMA.
// Memory is bounded by how far units run ahead of each other, not by the number of dynamic
// instances: an iteration is finalised as soon as all its instances are in and no unit can
// still produce compute time that overlaps its transfers.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <vector>

#include "sim/observe/sim_result.h"
#include "sim/units/observer.h"
#include "sim/units/sim_context.h"

namespace tandem {

class RaceChecker;
class TraceWriter;

class Ledger final : public InstanceObserver {
 public:
  // `capture_timeline`: keep every span of the first, middle and last iteration of the loop
  // with the most dynamic iterations. Every record is passed on to `trace` and `checker`
  // (either may be null); the ledger tells the checker how far the units have come.
  Ledger(SimContext& ctx, size_t iterations_kept, bool capture_timeline, TraceWriter* trace, RaceChecker* checker);

  void record(const InstanceRecord& r) override;
  // Instances recorded so far; read by the progress line's thread while the simulation runs.
  int64_t recorded() const { return recorded_.load(std::memory_order_relaxed); }
  // When a transfer set the release, a compute unit's wait is exposed DMA of that iteration.
  void barrier_wait(const InstanceRecord& r, Picos ps, bool released_by_dma) override;
  void unit_done() override { try_finalize(); }
  // Finalises everything (all units are done) and fills in the bounds.
  SimResult finish();

 private:
  // Disjoint intervals [start, end), sorted: mostly appended at the end as the simulation
  // advances, so a vector (no allocation per record once grown).
  using Intervals = std::vector<std::pair<Picos, Picos>>;
  using Spans = std::vector<std::pair<Picos, Picos>>;  // an iteration's busy spans, unmerged
  struct Iter {
    int64_t index = 0;
    int64_t iv = 0;
    Picos start = std::numeric_limits<Picos>::max();
    Picos end = 0;
    Picos dma_min_start = std::numeric_limits<Picos>::max();
    Picos dma_max_end = 0;
    Spans dma;
    Spans compute;
    Picos exposed = 0;
    StallArray stall{};
    Picos wmma_bubble = 0;
    int64_t wmmas = 0;
    int64_t received = 0;
  };
  struct LoopState {
    int64_t expected = 0;      // instance records per iteration
    int64_t base = 0;          // index of pending.front()
    std::deque<Iter> pending;
    // The span storage of finalized iterations, emptied, for the next ones: no allocation per
    // iteration once it has grown.
    std::vector<std::pair<Spans, Spans>> spare;
    Picos first_end = 0;         // end of the current entry's first iteration
    Picos steady_ps = 0;         // summed over entries: first to last end
    int64_t steady_intervals = 0;
    std::vector<IterationResult> head;
    std::deque<IterationResult> tail;
    // Wall-time exposed DMA: the loop's transfers and the busy time of the compute engines
    // with work in the loop, merged, not yet counted; counted up to `counted`.
    Intervals dma_wall;
    Intervals engines_busy;
    Picos counted = 0;
    LoopResult result;
  };

  Iter& iteration(LoopState& s, int64_t index, int64_t iv);
  void add_compute_busy(Picos a, Picos b);
  // Adds to the loop's exposed DMA the time before `until` when some of its transfers moved
  // and none of its compute engines was busy, then forgets the intervals before `until`.
  void count_exposed(LoopState& s, Picos until);
  Picos overlap_with_compute(std::vector<std::pair<Picos, Picos>>& dma, Picos* union_len);
  // No unit will still produce a record that starts before this time.
  Picos watermark() const;
  void try_finalize(bool all_done = false);
  void finalize(LoopState& s, Iter& it);
  // The bounds, from sched/analysis/loop_bounds over the lowered program.
  void compute_bounds(SimResult& out);

  SimContext& ctx_;
  TraceWriter* trace_;
  RaceChecker* checker_;
  size_t kept_;
  // Written by the simulation's thread only: a relaxed load and store, no read-modify-write.
  std::atomic<int64_t> recorded_{0};
  std::vector<UnitResult> units_;
  std::vector<InstProfile> profile_;  // per instruction
  std::vector<LoopState> loops_;
  std::vector<std::vector<bool>> works_in_;  // [loop][unit]: the unit runs an instruction in the loop
  Intervals compute_busy_;  // merged busy intervals of all compute engines
  Picos total_ = 0;
  LoopId timeline_loop_ = kNoId;
  std::vector<int64_t> timeline_iterations_;
  std::vector<TimelineSpan> timeline_;
  int64_t since_finalize_ = 0;
};

}  // namespace tandem
