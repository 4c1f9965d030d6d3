// Exact fast-forward of steady loops (docs/performance.md, "Fast-forward").
//
// While the DMA system runs ahead of SystemC (no unit waits in the SystemC kernel), the state
// of the simulation is the units', the semaphores', the barriers', the ports' and the DMA
// system's, listed as words (sim/units/unit_state.h), followed by the observer's (the ledger's)
// when it lists it. It is listed at marks: the first DMA step after an iteration of the loop
// with the most iterations starts. When a listing equals an earlier one except for time and
// count words that moved (a candidate period: P picoseconds and a shift per word), the next
// period's records are kept; if that period ends in the same state moved by the same shift
// again, the loop is steady and the simulation moves on by as many whole periods as the ends
// of the loops allow (each unit stays two periods clear of the last iteration of every loop
// it is in): every time and count word by that many shifts.
//
// The observer moves on with the units when its words repeated with theirs and no skipped
// iteration is one the result lists (Ledger::periods_allowed); the race checker still gets
// the kept period's records once per period skipped, each moved by its periods. Otherwise the
// observer gets every such record, in the order instance-by-instance simulation gives them.
// Either way, while records are given, the units' bounds at the start of the periods given
// stand in for the units (InstanceObserver::stand_in).
//
// Exact by construction: a state equal up to the shift runs on as the earlier one did, moved
// by the shift. The times it moves are whole picoseconds and the DMA model rounds durations,
// never absolute times (sim/units/dma_bandwidth.h); what a unit decides from a count (a loop's
// end, a semaphore's key) is the same in each period as long as the loop does not end, which
// the margin keeps; a second equal period confirms the shift before anything is skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "sim/units/observer.h"
#include "sim/units/sim_context.h"
#include "sim/units/unit_state.h"

namespace tandem {

class FastForward final : public InstanceObserver {
 public:
  // Records go on to `observer`.
  FastForward(SimContext& ctx, InstanceObserver& observer);

  // At a step of the DMA system's run-ahead at `now`, every hand-off run and the run-ahead
  // going on: the time to go on from (`now`, or `now` plus the periods skipped).
  Picos at_step(Picos now);
  // Dynamic instances given to the observer from skipped periods.
  int64_t skipped_instances() const { return skipped_.load(std::memory_order_relaxed); }  // any thread

  void record(const InstanceRecord& r) override;
  void barrier_wait(const InstanceRecord& r, Picos ps, bool released_by_dma) override;
  void unit_done() override { observer_.unit_done(); }
  void stand_in(const UnitBounds* bounds) override { observer_.stand_in(bounds); }

 private:
  using Kind = StateVisitor::Kind;
  struct Listing {
    int64_t mark = 0;
    Picos now = 0;
    size_t unit_words = 0;         // the units' words, first
    bool observer_listed = false;  // the observer's words follow them, up to observer_words
    size_t observer_words = 0;
    bool checks_listed = false;  // its checks' words follow those
    uint64_t hash = 0;           // of the units' exact and real words and their count
    std::vector<int64_t> words;
    std::vector<Kind> kinds;
  };
  // A record or a barrier wait of the kept period, with its loop counters (SimInst::nest).
  struct Kept {
    InstanceRecord r;
    Picos barrier_wait_ps;
    bool barrier_wait, released_by_dma;
    size_t nest_values;  // its loops' counts, then their induction variables, in nest_values_
  };

  // Keeps a record (or barrier wait) of the candidate period, with its loop counters.
  void keep(Kept k);
  // The units', semaphores', barriers', ports' and DMA system's state, in one order (the same
  // each time); the observer's follows it in a listing that has it.
  void visit_units(StateVisitor& v);
  bool list(Listing& out, int64_t mark, Picos now);
  // Appends what `visit` lists to `out`; false (and nothing appended) when it refuses.
  bool list_part(Listing& out, const std::function<void(StateVisitor&)>& visit);
  // The shift from `a` to `b` of words [from, to), into `shift` (resized to `to`), when every
  // exact and real word there is equal and each time word moved by b.now - a.now or is a past
  // time (or never) that stayed put.
  bool shift_between(const Listing& a, const Listing& b, size_t from, size_t to, std::vector<int64_t>& shift) const;
  // How far `b`, whose units repeat `a`'s, repeats it: the observer's words too, and its
  // checks' (their shifts into `shift` after the units').
  enum class Follows { Units, Observer, Checks };
  Follows follows(const Listing& a, const Listing& b, std::vector<int64_t>& shift) const;
  // Looks for an earlier listing `b` repeats; on one, starts keeping records.
  void search(Listing&& b);
  // The kept period has ended at `c`: skips what the loops allow, if `c` confirms the shift.
  Picos confirm(const Listing& c, Picos now);
  // Each loop's counters per period (count_shift_, iv_shift_), from the units' at b and now:
  // false unless every unit that runs a loop moved it by the same amount.
  bool find_loop_shifts();
  // Every loop the period moves on is the marker loop, one around it or one inside those.
  bool shifts_inside_marker_loops() const;
  // Per loop, the most iterations any unit has started.
  std::vector<int64_t> started_now() const;
  // Whole periods that keep every unit two periods clear of its loops' last iterations.
  int64_t periods_allowed() const;
  // Moves the state on by `periods` periods, giving the observer the kept period's records
  // for each when it needs them.
  void skip(int64_t periods);
  // What a skip gives the observer of each skipped period: every record, the records for its
  // checks, the writes its checks do not list, or nothing.
  enum class Give { Records, Checks, Writes, Nothing };
  void give_period(int64_t j, Give give);  // the kept records, moved on by j periods
  void shift_state(int64_t periods);

  SimContext& ctx_;
  InstanceObserver& observer_;
  std::unordered_map<const void*, int64_t> identities_;  // a module's pointer -> its number
  // The state is listed at marks: the first DMA step after `marker_` starts an iteration of
  // `marker_loop_` (the loop with the most iterations), as long as the listings' words stay
  // within a budget per DMA step.
  StreamUnit* marker_ = nullptr;
  LoopId marker_loop_ = kNoId;
  int64_t marker_seen_ = 0;
  int64_t steps_ = 0, marks_ = 0, listed_words_ = 0;
  size_t last_words_ = 0;       // the last listing's words
  std::deque<Listing> recent_;  // the last listings, searched for a repeat
  size_t recent_words_ = 0;     // their words
  bool too_large_ = false;      // the state has more words than a listing takes: never listed
  // The candidate: listing b, the shift from a to it, the mark its period ends at.
  bool keeping_ = false;
  Listing b_;
  std::vector<int64_t> shift_;        // the units' words, and the observer's when it follows
  Follows follows_ = Follows::Units;  // between a and b
  int observer_misses_ = 0;           // candidates in a row whose observer did not repeat
  int checks_misses_ = 0;             // candidates in a row whose observer's checks did not
  int64_t confirm_mark_ = 0;
  std::vector<int64_t> started_b_, iv_b_;        // per unit and loop of its walk, at b
  std::vector<int64_t> count_shift_, iv_shift_;  // per LoopId, per period
  std::vector<Kept> kept_;
  std::vector<int64_t> nest_values_;
  Picos period_ = 0;
  bool replaying_ = false;
  bool observer_listed_ = false;                     // the skip moves the observer's state too
  bool checks_listed_ = false;                       // and its checks'
  std::vector<int64_t> replay_counts_, replay_ivs_;  // per LoopId: a replayed record's
  std::atomic<int64_t> skipped_{0};                  // read by the progress line's thread
};

}  // namespace tandem
