#include "sim/observe/ledger.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "sched/ir/kernel_queries.h"
#include "sim/observe/race_checker.h"
#include "sim/observe/trace_writer.h"
#include "sim/units/stream_unit.h"

namespace tandem {

namespace {

constexpr Picos kNever = std::numeric_limits<Picos>::max();

// Instances of `inst` per iteration of `outer`, a loop that encloses it.
int64_t inner_trips(const Kernel& k, const SimInst& inst, LoopId outer) {
  return instances_within(k, k.insts[static_cast<size_t>(inst.id)].loop, outer);
}

}  // namespace

const char* stall_reason_name(StallReason r) {
  switch (r) {
    case StallReason::Semaphore:
      return "semaphore";
    case StallReason::Dependency:
      return "dependency";
    case StallReason::Barrier:
      return "barrier";
    case StallReason::Queue:
      return "queue";
    case StallReason::Conflict:
      return "conflict";
    case StallReason::Count:
      break;
  }
  return "?";
}

Ledger::Ledger(SimContext& ctx, size_t iterations_kept, bool capture_timeline, TraceWriter* trace, RaceChecker* checker)
    : ctx_(ctx), trace_(trace), checker_(checker), kept_(std::max<size_t>(2, iterations_kept)) {
  const SimProgram& p = ctx.program;
  const Kernel& k = *p.kernel;
  for (const CostedUnit& u : p.units) {
    UnitResult r;
    r.name = u.name;
    r.is_queue = u.kind == UnitKind::DmaQueue;
    units_.push_back(r);
  }
  loops_.resize(k.loops.size());
  for (size_t l = 0; l < k.loops.size(); ++l) {
    LoopState& s = loops_[l];
    s.result.id = static_cast<LoopId>(l);
    s.result.iv = k.loops[l].iv;
    s.result.trip_count = k.loops[l].trip_count();
    s.lo = k.loops[l].lo;
    s.hi = k.loops[l].hi;
    s.result.dynamic_iterations = instances_within(k, static_cast<LoopId>(l));
  }
  if (capture_timeline)
    for (size_t l = 0; l < loops_.size(); ++l)
      if (timeline_loop_ == kNoId ||
          loops_[l].result.dynamic_iterations > loops_[static_cast<size_t>(timeline_loop_)].result.dynamic_iterations)
        timeline_loop_ = static_cast<LoopId>(l);
  if (timeline_loop_ != kNoId) {
    const int64_t n = loops_[static_cast<size_t>(timeline_loop_)].result.dynamic_iterations;
    // The first, a window of four consecutive steady-state iterations from the middle (drawn
    // on shared time, so their overlap shows), and the last.
    timeline_last_ = n - 1;
    timeline_window_from_ = std::max<int64_t>(1, n / 2 - 1);
    timeline_window_size_ =
        static_cast<uint64_t>(std::max<int64_t>(0, std::min(n - 1, n / 2 + 3) - timeline_window_from_));
  }
  works_in_.assign(k.loops.size(), std::vector<bool>(p.units.size(), false));
  for (const SimInst& inst : p.insts) {
    if (inst.units.empty()) continue;
    for (LoopId l : inst.nest) {
      // A barrier's record, and the wait each unit it fences reports (Ledger::barrier_wait).
      const int64_t per_instance = inst.is_barrier ? 1 + static_cast<int64_t>(inst.units.size()) : 1;
      loops_[static_cast<size_t>(l)].expected += inner_trips(k, inst, l) * per_instance;
      if (!inst.is_barrier) works_in_[static_cast<size_t>(l)][static_cast<size_t>(inst.units[0])] = true;
    }
  }
  unit_bytes_.assign(p.units.size(), 0);
  // Each loop's compute engines, as a set shared with the loops of the same engines.
  std::map<std::vector<bool>, size_t> set_of;
  std::vector<size_t> loop_set(loops_.size());
  for (size_t l = 0; l < loops_.size(); ++l) {
    std::vector<bool> engines = works_in_[l];
    for (size_t u = 0; u < p.units.size(); ++u) engines[u] = engines[u] && !units_[u].is_queue;
    loop_set[l] = set_of.emplace(std::move(engines), set_of.size()).first->second;
  }
  engine_sets_busy_.resize(set_of.size());
  for (size_t l = 0; l < loops_.size(); ++l) loops_[l].engines_busy = &engine_sets_busy_[loop_set[l]];
  engine_sets_of_.resize(p.units.size());
  for (const auto& [engines, set] : set_of)
    for (size_t u = 0; u < engines.size(); ++u)
      if (engines[u]) engine_sets_of_[u].push_back(&engine_sets_busy_[set]);
  plans_.resize(p.insts.size());
  for (size_t i = 0; i < p.insts.size(); ++i) {
    const SimInst& inst = p.insts[i];
    InstPlan& plan = plans_[i];
    plan.nest = inst.nest.data();
    plan.nest_end = inst.nest.data() + inst.nest.size();
    plan.bytes = inst.dma.bytes;
    plan.wmma = inst.wmma;
    if (!inst.is_barrier && !inst.units.empty()) {
      const size_t u = static_cast<size_t>(inst.units[0]);
      plan.unit_bytes = &unit_bytes_[u];
      plan.dma = units_[u].is_queue;
      plan.engine_sets = engine_sets_of_[u].data();
      plan.engine_sets_end = engine_sets_of_[u].data() + engine_sets_of_[u].size();
    }
    plan.in_timeline =
        timeline_loop_ != kNoId && std::find(inst.nest.begin(), inst.nest.end(), timeline_loop_) != inst.nest.end();
  }
  for (LoopState& s : loops_) {
    // A long loop lists its first kept_ / 2 and its last iterations (finalize()).
    const int64_t n = s.result.dynamic_iterations;
    // Room from the start for the iterations listed first (all of a loop no longer than kept_).
    s.head.reserve(static_cast<size_t>(n) <= kept_ ? static_cast<size_t>(n) : kept_ / 2);
    if (static_cast<size_t>(n) <= kept_) continue;
    s.listed_below = static_cast<int64_t>(kept_ / 2);
    s.listed_from = n - static_cast<int64_t>(kept_ - kept_ / 2);
    s.tail.reserve(kept_ - kept_ / 2);
  }
}

void Ledger::Iter::reset() {
  // kept is set when the slot's next iteration opens (iteration(), open_to()), iv by
  // each record of it (iteration()): finalize() needs a record, so it never reads a stale one.
  start = std::numeric_limits<Picos>::max();
  end = 0;
  received = 0;
  settled = false;
  dma_min_start = std::numeric_limits<Picos>::max();
  dma_max_end = 0;
  wmma_bubble = 0;
  wmmas = 0;
  dma.clear();
}

void Ledger::Listed::reset() {
  start = std::numeric_limits<Picos>::max();
  compute.clear();
  exposed = 0;
  dma_moving = 0;
  dma_waiting = 0;
  stall = {};
  compute_settled = 0;
  dma_settled = 0;
  overlap_settled = 0;
}

void Ledger::IterRing::grow() {
  // Full: a ring twice the size, in order from its start.
  const size_t n = std::max<size_t>(8, 2 * slots_.size());
  std::vector<Iter> grown(n);
  std::vector<Listed> grown_listed(n);
  for (size_t i = 0; i < size_; ++i) {
    const size_t from = (head_ + i) & mask_;
    grown[i] = std::move(slots_[from]);
    grown_listed[i] = std::move(listed_[from]);
  }
  slots_.swap(grown);
  listed_.swap(grown_listed);
  for (size_t i = 0; i < n; ++i) slots_[i].listed = &listed_[i];
  mask_ = n - 1;
  head_ = 0;
}

void Ledger::IterRing::pop_front() {
  Iter& it = slots_[head_];
  if (it.kept || it.settled) it.listed->reset();  // only then was it written
  it.reset();
  head_ = (head_ + 1) & mask_;
  --size_;
}

void Ledger::release(LoopState& s) {
  s.pending = IterRing();
  s.dma_wall = Intervals();
}

[[gnu::noinline]] void Ledger::activate(LoopState& s) {
  s.active = true;
  active_.push_back(s.result.id);
}

[[gnu::noinline]] void Ledger::open_to(LoopState& s, int64_t index) {
  // Iterations skipped by the record that asks for `index` (iteration() opens the next one inline).
  if (!s.active) activate(s);
  while (s.base + static_cast<int64_t>(s.pending.size()) <= index) {
    const int64_t next = s.base + static_cast<int64_t>(s.pending.size());
    Iter& fresh = s.pending.push_back();
    fresh.kept = next < s.listed_below || next >= s.listed_from;
  }
}

[[gnu::noinline]] void Ledger::Intervals::grow() {
  store_.resize(std::max<size_t>(16, 2 * store_.size()));
  capacity_ = store_.size();
}

namespace {

using Intervals = Ledger::Intervals;

// The first interval that ends at or after `t`.
Intervals::iterator ending_from(Intervals& set, Picos t) {
  return std::lower_bound(set.begin(), set.end(), t,
                          [](const std::pair<Picos, Picos>& x, Picos v) { return x.second < v; });
}

// Adds [a, b) to a set of merged intervals (touching ones merge), b > a, anywhere.
void merge_interval_within(Intervals& set, Picos a, Picos b) {
  auto first = ending_from(set, a);
  auto last = first;
  for (; last != set.end() && last->first <= b; ++last) {
    a = std::min(a, last->first);
    b = std::max(b, last->second);
  }
  if (first == last) {
    set.insert(first, {a, b});
    return;
  }
  *first = {a, b};
  set.erase(first + 1, last);
}

// Adds [a, b) to a set of merged intervals (touching ones merge): usually at or after the
// last one (the set never holds touching intervals), a short path kept inline.
[[gnu::always_inline]] inline void merge_interval(Intervals& set, Picos a, Picos b) {
  if (b <= a) return;
  if (set.empty() || a > set.back().second) {
    set.push_back({a, b});
  } else if (a >= set.back().first) {
    set.back().second = std::max(set.back().second, b);
  } else {
    merge_interval_within(set, a, b);
  }
}

// Drops what lies before `t` (an interval across `t` keeps its part from `t` on).
void forget_before(Intervals& set, Picos t) {
  auto end = std::lower_bound(set.begin(), set.end(), t,
                              [](const std::pair<Picos, Picos>& x, Picos v) { return x.first < v; });
  if (end == set.begin()) return;
  auto across = end - 1;
  if (across->second > t) {
    *across = {t, across->second};
    end = across;
  }
  set.erase(set.begin(), end);
}

// Sorts and merges overlapping and touching intervals in place.
void sort_and_merge(Intervals& v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].first <= v[out].second)
      v[out].second = std::max(v[out].second, v[i].second);
    else
      v[++out] = v[i];
  }
  v.shrink_to(out + 1);
}

Picos total_length(const Intervals& v) {
  Picos total = 0;
  for (const auto& [a, b] : v) total += b - a;
  return total;
}

}  // namespace

[[gnu::always_inline]] inline void Ledger::SpanSet::add(Picos a, Picos b) {
  if (b <= a) return;  // adds nothing to the union
  if (merged_ && (spans_.empty() || a >= spans_.back().first)) {
    merge_interval(spans_, a, b);
    return;
  }
  add_out_of_order(a, b);
}

void Ledger::SpanSet::add_out_of_order(Picos a, Picos b) {
  if (merged_) {
    // Inserting keeps a small set merged; a large one waits to be sorted once.
    if (spans_.size() < 16) {
      merge_interval_within(spans_, a, b);
      return;
    }
    merged_ = false;
  }
  spans_.push_back({a, b});
  const size_t n = spans_.size();
  if (n >= 4096 && (n & (n - 1)) == 0) merge_all();
}

void Ledger::SpanSet::merge_all() {
  sort_and_merge(spans_);
  merged_ = true;
}

const Ledger::Intervals& Ledger::SpanSet::merged() {
  if (!merged_) merge_all();
  return spans_;
}

template <typename Each>
Picos Ledger::SpanSet::forget_before(Picos until, Each each) {
  merged();
  for (const auto& [a, b] : spans_) {
    if (a >= until) break;
    each(a, std::min(b, until));
  }
  ::tandem::forget_before(spans_, until);
  return spans_.empty() ? kNever : spans_.begin()->first;
}

void Ledger::count_exposed(LoopState& s, Picos until) {
  // Locals: the sets' reads cannot alias them, so they stay in registers.
  const Intervals::value_type* engines = s.engines_busy->begin();
  const size_t engine_count = s.engines_busy->size();
  const Picos counted = s.counted;
  Picos exposed = 0;
  size_t e = 0;
  for (const auto& [a0, b0] : s.dma_wall) {
    if (a0 >= until) break;  // sorted: nothing more before `until`
    const Picos a = std::max(a0, counted), b = std::min(b0, until);
    if (b <= a) continue;
    // The engines' intervals from the first that ends after `a`: the transfers are sorted, so
    // that one only moves forward.
    while (e < engine_count && engines[e].second <= a) ++e;
    Picos hidden = 0;
    for (size_t i = e; i < engine_count && engines[i].first < b; ++i) {
      const Picos lo = std::max(a, engines[i].first), hi = std::min(b, engines[i].second);
      if (hi > lo) hidden += hi - lo;
    }
    exposed += (b - a) - hidden;
  }
  s.result.exposed_dma_ps += exposed;
  // (The engines' busy time is forgotten once every loop has counted: try_finalize().)
  if (until == kNever)
    s.dma_wall.clear();
  else
    forget_before(s.dma_wall, until);
  s.counted = std::max(s.counted, until);
}

[[gnu::cold, gnu::noinline]] void Ledger::behind_watermark(const InstanceRecord& r) {
  throw std::logic_error("a record of " + ctx_.program.insts[static_cast<size_t>(r.inst)].name + " starts at " +
                         std::to_string(r.start) + " ps, before the watermark " + std::to_string(passed_) + " ps");
}

[[gnu::noinline]] void Ledger::capture_span(const InstanceRecord& r, bool dma, int64_t index) {
  timeline_.push_back({ctx_.program.units[static_cast<size_t>(r.unit)].name,
                       ctx_.program.insts[static_cast<size_t>(r.inst)].name, index, dma ? r.start : r.busy_start,
                       dma ? r.complete : r.busy_end});
}

[[gnu::always_inline]] inline void Ledger::add_to_plan(const InstanceRecord& r, InstPlan& plan) {
  // The unit's totals are the sums of its instructions' (finish()).
  ++plan.instances;
  plan.busy_ps += r.busy_end - r.busy_start;
  add_stalls(plan.stall_ps, r.stall);
  if (plan.in_timeline) {
    const int64_t index = r.loop_counts[timeline_loop_] - 1;
    if (timeline_iteration(index)) capture_span(r, plan.dma, index);
  }
}

// A WMMA's issue waits for its operands: the scoreboard (dependency) or another unit's result.
inline void Ledger::add_wmma(Iter& it, const InstanceRecord& r) {
  it.wmma_bubble +=
      r.stall[static_cast<size_t>(StallReason::Dependency)] + r.stall[static_cast<size_t>(StallReason::Semaphore)];
  ++it.wmmas;
}

// A transfer: its iterations' DMA spans and the loops' wall-time transfers.
[[gnu::always_inline]] inline void Ledger::record_transfer(const InstanceRecord& r, InstPlan& plan) {
  *plan.unit_bytes += plan.bytes;  // per unit, in the order they always were
  add_to_plan(r, plan);
  for (const LoopId* l = plan.nest; l != plan.nest_end; ++l) {
    LoopState& s = loops_[static_cast<size_t>(*l)];
    Iter& it = iteration(s, r.loop_counts[*l] - 1, r.loop_ivs[*l]);
    it.start = std::min(it.start, r.start);
    it.end = std::max(it.end, r.complete);
    merge_interval(s.dma_wall, r.start, r.complete);
    it.dma.add(r.start, r.complete);
    s.result.dma_moving_ps += r.busy_end - r.busy_start;
    s.result.dma_waiting_ps += r.busy_start - r.start;
    it.dma_min_start = std::min(it.dma_min_start, r.start);
    it.dma_max_end = std::max(it.dma_max_end, r.complete);
    if (it.kept) {
      it.listed->start = std::min(it.listed->start, r.start);
      it.listed->dma_moving += r.busy_end - r.busy_start;
      it.listed->dma_waiting += r.busy_start - r.start;
      add_stalls(it.listed->stall, r.stall);
    }
    if (plan.wmma) add_wmma(it, r);
    ++it.received;
  }
}

// A compute instruction: the engines' busy time, its iterations' compute spans and stalls.
[[gnu::always_inline]] inline void Ledger::record_compute(const InstanceRecord& r, InstPlan& plan) {
  add_to_plan(r, plan);
  merge_interval(compute_busy_, r.busy_start, r.busy_end);
  for (Intervals* const* set = plan.engine_sets; set != plan.engine_sets_end; ++set)
    merge_interval(**set, r.busy_start, r.busy_end);
  for (const LoopId* l = plan.nest; l != plan.nest_end; ++l) {
    LoopState& s = loops_[static_cast<size_t>(*l)];
    Iter& it = iteration(s, r.loop_counts[*l] - 1, r.loop_ivs[*l]);
    it.start = std::min(it.start, r.start);
    it.end = std::max(it.end, r.complete);
    if (it.kept) {
      Listed& d = *it.listed;
      d.start = std::min(d.start, r.start);
      d.compute.add(r.busy_start, r.busy_end);
      if (r.waited_on_dma) d.exposed += r.stall[static_cast<size_t>(StallReason::Semaphore)];
      add_stalls(d.stall, r.stall);
    }
    if (plan.wmma) add_wmma(it, r);
    ++it.received;
  }
}

void Ledger::record(const InstanceRecord& r) {
  const int64_t recorded = recorded_.load(std::memory_order_relaxed) + 1;
  recorded_.store(recorded, std::memory_order_relaxed);
  if (trace_) trace_->record(r);
  if (checker_) checker_->record(r);
  InstPlan& plan = plans_[static_cast<size_t>(r.inst)];
  // Finalised iterations, exposed DMA counted and the checker's settled writes all rest on it.
  if (r.start < passed_) behind_watermark(r);
  total_ = std::max(total_, r.complete);
  if (r.unit < 0) {  // a barrier: it occupies no unit
    for (const LoopId* l = plan.nest; l != plan.nest_end; ++l) {
      LoopState& s = loops_[static_cast<size_t>(*l)];
      Iter& it = iteration(s, r.loop_counts[*l] - 1, r.loop_ivs[*l]);
      if (it.kept) it.listed->start = std::min(it.listed->start, r.start);
      it.start = std::min(it.start, r.start);
      it.end = std::max(it.end, r.complete);
      ++it.received;
    }
  } else if (plan.dma) {
    record_transfer(r, plan);
  } else {
    record_compute(r, plan);
  }
  if (recorded >= finalize_at_) try_finalize();
}

void Ledger::barrier_wait(const InstanceRecord& r, Picos waited, bool released_by_dma) {
  const Picos ps = std::max<Picos>(waited, 0);
  constexpr size_t kBarrier = static_cast<size_t>(StallReason::Barrier);
  units_[static_cast<size_t>(r.unit)].stall_ps[kBarrier] += ps;
  const bool compute = ctx_.program.units[static_cast<size_t>(r.unit)].kind == UnitKind::Compute;
  for (LoopId l : ctx_.program.insts[static_cast<size_t>(r.inst)].nest) {
    LoopState& s = loops_[static_cast<size_t>(l)];
    const int64_t index = r.loop_counts[l] - 1;
    // Every fenced unit's wait is expected: its iteration stays open until it comes.
    if (index < s.base)
      throw std::logic_error("a wait at " + ctx_.program.insts[static_cast<size_t>(r.inst)].name +
                             " comes after its iteration was finalised");
    Iter& it = iteration(s, index, r.loop_ivs[l]);
    ++it.received;
    if (!it.kept) continue;
    it.listed->stall[kBarrier] += ps;
    // Exposed: a compute engine with work in this loop held back by a transfer.
    if (compute && released_by_dma && works_in_[static_cast<size_t>(l)][static_cast<size_t>(r.unit)])
      it.listed->exposed += ps;
  }
}

[[gnu::noinline]] size_t Ledger::compute_search(Picos t) {
  return compute_hint_ = static_cast<size_t>(ending_from(compute_busy_, t + 1) - compute_busy_.begin());
}

[[gnu::always_inline]] inline size_t Ledger::compute_from(Picos t) {
  const Intervals& set = compute_busy_;
  size_t i = compute_hint_;
  // Finalisation moves forward in time: from the previous answer, a few steps on.
  if (i <= set.size() && (i == 0 || set[i - 1].second <= t)) {
    for (int step = 0; step < 4; ++step) {
      if (i == set.size() || set[i].second > t) return compute_hint_ = i;
      ++i;
    }
  }
  return compute_search(t);
}

[[gnu::always_inline]] inline Picos Ledger::overlap_with_compute(Picos a, Picos b) {
  Picos overlap = 0;
  for (auto it = compute_busy_.begin() + static_cast<std::ptrdiff_t>(compute_from(a));
       it != compute_busy_.end() && it->first < b; ++it) {
    const Picos lo = std::max(a, it->first), hi = std::min(b, it->second);
    if (hi > lo) overlap += hi - lo;
  }
  return overlap;
}

[[gnu::always_inline]] inline Picos Ledger::overlap_with_compute(const Intervals& dma) {
  Picos overlap = 0;
  for (const auto& [a, b] : dma) overlap += overlap_with_compute(a, b);
  return overlap;
}

[[gnu::always_inline]] inline void Ledger::finalize(LoopState& s, Iter& it) {
  const Intervals& dma = it.dma.merged();
  Picos dma_union = total_length(dma);
  Picos overlapped = overlap_with_compute(dma);
  if (it.settled) {
    dma_union += it.listed->dma_settled;
    overlapped += it.listed->overlap_settled;
  }
  s.result.dma_in_flight_ps += dma_union;
  s.result.overlapped_dma_ps += overlapped;
  s.result.wmma_bubble_ps += it.wmma_bubble;
  s.result.wmma_instances += it.wmmas;

  // Steady-state II: per entry of the loop, the time from the end of its first iteration to
  // the end of its last over the iterations in between. Ends leave at the bottleneck's rate,
  // also when a pattern repeats every few iterations; starts bunch up while loads run ahead.
  if (it.iv == s.lo) {
    s.first_end = it.end;
    s.entry_start = it.start;
    s.entry_end = it.end;
  }
  // Span: per entry, its earliest start to its latest end (fill and drain included).
  s.entry_start = std::min(s.entry_start, it.start);
  s.entry_end = std::max(s.entry_end, it.end);
  if (it.iv == s.hi - 1) s.result.span_ps += s.entry_end - s.entry_start;
  if (it.iv == s.hi - 1 && s.result.trip_count > 1) {
    s.steady_ps += it.end - s.first_end;
    s.steady_intervals += s.result.trip_count - 1;
  }
  if (!it.kept) return;

  // Filled here and copied once into its place: at the end of the head, or over the oldest of
  // the tail's ring (emplace_back() would zero the slot first).
  IterationResult r;
  r.index = s.base;  // `it` is pending.front()
  r.iv = it.iv;
  Listed& d = *it.listed;
  r.start_ps = d.start == kNever ? 0 : d.start;
  r.end_ps = it.end;
  r.dma_in_flight_ps = dma_union;
  r.dma_moving_ps = d.dma_moving;
  r.dma_waiting_ps = d.dma_waiting;
  r.compute_busy_ps = d.compute_settled + total_length(d.compute.merged());
  r.overlap = dma_union > 0 ? static_cast<double>(overlapped) / static_cast<double>(dma_union) : 0.0;
  r.compute_dma_wait_ps = d.exposed;
  r.stall_ps = d.stall;
  r.wmma_bubble_ps = it.wmma_bubble;
  const size_t tail_size = kept_ - kept_ / 2;
  if (static_cast<size_t>(s.result.dynamic_iterations) <= kept_ || s.head.size() < kept_ / 2) {
    s.head.push_back(r);
  } else {
    if (s.tail.size() < tail_size)
      s.tail.push_back(r);
    else
      s.tail[s.tail_next] = r;
    s.tail_next = s.tail_next + 1 == tail_size ? 0 : s.tail_next + 1;
  }
}

int64_t Ledger::min_future_seq() const {
  if (stand_in_) return stand_in_->min_future_seq;
  int64_t min_seq = std::numeric_limits<int64_t>::max();
  for (const StreamUnit* u : ctx_.units) min_seq = std::min(min_seq, u->min_future_seq());
  return min_seq;
}

Picos Ledger::watermark() {
  // Each unit's bound is its floor, raised to what it waits for, and lowered to the work it
  // has accepted (which that wait does not hold up): iterate to the fixed point (at most one
  // round per unit, as every value is one of the floors).
  const size_t n = ctx_.units.size();
  std::vector<StreamUnit::Horizon>& info = horizons_;
  std::vector<Picos>& h = bounds_;
  info.resize(n);
  h.resize(n);
  for (size_t u = 0; u < n; ++u) {
    info[u] = stand_in_ ? stand_in_->horizons[u] : ctx_.units[u]->horizon();
    h[u] = std::min(info[u].floor, info[u].accepted);
  }
  for (size_t round = 0; round <= n; ++round) {
    bool changed = false;
    for (size_t u = 0; u < n; ++u) {
      Picos v = info[u].floor;
      if (info[u].waits_on >= 0) v = std::max(v, h[static_cast<size_t>(info[u].waits_on)]);
      if (info[u].barrier != kNoId) {
        Picos m = kNever;
        for (int o : ctx_.program.insts[static_cast<size_t>(info[u].barrier)].units)
          if (static_cast<size_t>(o) != u) m = std::min(m, h[static_cast<size_t>(o)]);
        if (m != kNever) v = std::max(v, m);
      }
      v = std::min(v, info[u].accepted);
      if (v != h[u]) {
        h[u] = v;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return *std::min_element(h.begin(), h.end());
}

Picos Ledger::settle(LoopState& s, Picos until, int64_t& held) {
  Picos first = kNever;
  for (size_t i = 0; i < s.pending.size(); ++i) {
    Iter& it = s.pending[i];
    if (it.dma_min_start < until) {
      Listed& d = *it.listed;
      it.settled = true;
      it.dma_min_start = it.dma.forget_before(until, [&](Picos a, Picos b) {
        d.dma_settled += b - a;
        d.overlap_settled += overlap_with_compute(a, b);
      });
    }
    if (it.kept) {
      Listed& d = *it.listed;
      d.compute.forget_before(until, [&](Picos a, Picos b) { d.compute_settled += b - a; });
      held += static_cast<int64_t>(d.compute.size());
    }
    held += static_cast<int64_t>(it.dma.size());
    first = std::min(first, it.dma_min_start);
  }
  return first;
}

void Ledger::try_finalize(bool all_done) {
  finalize_at_ = recorded_.load(std::memory_order_relaxed) + kFinalizeEvery;
  const Picos watermark = all_done ? kNever : this->watermark();
  passed_ = std::max(passed_, watermark);
  if (checker_) checker_->advance(watermark, all_done ? std::numeric_limits<int64_t>::max() : min_future_seq());
  Picos keep_from = watermark;
  // Each loop's results are its own: the order the loops are visited in changes nothing.
  size_t still_active = 0;
  int64_t held = 0;
  for (const LoopId l : active_) {
    LoopState& s = loops_[static_cast<size_t>(l)];
    while (!s.pending.empty()) {
      Iter& it = s.pending.front();
      if (it.received < s.expected || it.dma_max_end > watermark) break;
      finalize(s, it);
      s.pending.pop_front();
      ++s.base;
    }
    keep_from = std::min(keep_from, settle(s, watermark, held));
    count_exposed(s, watermark);
    held += static_cast<int64_t>(s.dma_wall.size());
    if (s.pending.empty() && s.dma_wall.empty()) {
      s.active = false;  // its next record starts after this watermark: nothing before it is asked again
      if (s.base == s.result.dynamic_iterations) release(s);
    } else
      active_[still_active++] = l;
  }
  active_.resize(still_active);
  for (Intervals& busy : engine_sets_busy_) {
    if (all_done)
      busy.clear();
    else
      forget_before(busy, watermark);
  }
  // Compute busy time that ends before anything still pending can start is no longer needed.
  const auto kept_from = ending_from(compute_busy_, keep_from);
  const size_t erased = static_cast<size_t>(kept_from - compute_busy_.begin());
  compute_busy_.erase(compute_busy_.begin(), kept_from);
  compute_hint_ = compute_hint_ > erased ? compute_hint_ - erased : 0;
  held += static_cast<int64_t>(compute_busy_.size());
  for (const Intervals& busy : engine_sets_busy_) held += static_cast<int64_t>(busy.size());
  peak_spans_ = std::max(peak_spans_, held);
}

void Ledger::Listed::visit_state(StateVisitor& v) {
  v.time(start);
  compute.visit_state(v);
  v.count(exposed);
  v.count(dma_moving);
  v.count(dma_waiting);
  for (Picos& x : stall) v.count(x);
  v.count(compute_settled);
  v.count(dma_settled);
  v.count(overlap_settled);
}

void Ledger::Iter::visit_state(StateVisitor& v) {
  v.count(iv);
  v.time(start);
  v.time(end);
  v.count(received);
  v.time(dma_min_start);
  v.time(dma_max_end);
  v.count(wmma_bubble);
  v.count(wmmas);
  v.exact(kept);
  v.exact(settled);
  dma.visit_state(v);
  if (kept || settled) listed->visit_state(v);
}

void Ledger::visit_state(StateVisitor& v) {
  if (timeline_loop_ != kNoId || trace_) return v.refuse();
  int64_t recorded = recorded_.load(std::memory_order_relaxed);
  v.count(recorded);
  recorded_.store(recorded, std::memory_order_relaxed);
  v.count(finalize_at_);
  v.time(passed_);
  v.time(total_);
  for (UnitResult& u : units_)
    for (Picos& x : u.stall_ps) v.count(x);
  for (double& bytes : unit_bytes_) v.count(bytes);
  for (InstPlan& plan : plans_) {
    v.count(plan.instances);
    v.count(plan.busy_ps);
    for (Picos& x : plan.stall_ps) v.count(x);
  }
  // Every loop, active or not: one whose iterations all finalized since the last listing
  // still moved its sums.
  for (LoopState& s : loops_) {
    v.count(s.base);
    v.exact(static_cast<int64_t>(s.pending.size()));
    for (size_t i = 0; i < s.pending.size(); ++i) s.pending[i].visit_state(v);
    v.time(s.first_end);
    v.count(s.steady_ps);
    v.count(s.steady_intervals);
    v.time(s.entry_start);
    v.time(s.entry_end);
    v.exact(static_cast<int64_t>(s.head.size()));
    v.exact(static_cast<int64_t>(s.tail.size()));
    v.exact(static_cast<int64_t>(s.tail_next));
    s.dma_wall.visit_state(v);
    v.time(s.counted);
    v.exact(s.active);
    LoopResult& r = s.result;
    for (Picos* x : {&r.span_ps, &r.dma_in_flight_ps, &r.dma_moving_ps, &r.dma_waiting_ps, &r.overlapped_dma_ps,
                     &r.exposed_dma_ps, &r.wmma_bubble_ps, &r.wmma_instances})
      v.count(*x);
  }
  for (Intervals& busy : engine_sets_busy_) busy.visit_state(v);
  v.exact(static_cast<int64_t>(active_.size()));
  for (LoopId l : active_) v.exact(l);
  compute_busy_.visit_state(v);
}

int64_t Ledger::periods_allowed(const std::vector<int64_t>& count_shift, const std::vector<int64_t>& started) {
  int64_t allowed = std::numeric_limits<int64_t>::max();
  bool later = false;
  for (size_t l = 0; l < loops_.size(); ++l) {
    const int64_t shift = count_shift[l];
    if (shift == 0) continue;
    const LoopState& s = loops_[l];
    // Its iterations open now and to come in the skipped periods must lie between the ones
    // listed first and last.
    if (s.listed_from == std::numeric_limits<int64_t>::max()) return 0;  // every iteration listed
    if (s.base < s.listed_below) later = true;
    allowed = std::min(allowed, (s.listed_from - started[l]) / shift - 1);
  }
  if (allowed < 1) return 0;
  return later ? -1 : allowed;
}

void Ledger::visit_checks(StateVisitor& v) {
  if (checker_) checker_->visit_state(v);
}

void Ledger::steady_loop(LoopId loop) {
  if (checker_) checker_->steady_loop(loop);
}

bool Ledger::checks_writes() const { return checker_ && checker_->has_unlisted(); }

void Ledger::check_write(const InstanceRecord& r) { checker_->record_unlisted_writes(r); }

void Ledger::check_writes_progress() { checker_->settle_unlisted(watermark(), min_future_seq()); }

void Ledger::check_record(const InstanceRecord& r) { checker_->record(r); }

void Ledger::check_progress() { checker_->advance(watermark(), min_future_seq()); }

}  // namespace tandem
