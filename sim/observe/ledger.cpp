#include "sim/observe/ledger.h"

#include <algorithm>
#include <tuple>
#include <cmath>
#include <limits>

#include "sched/analysis/capacity.h"
#include "sched/analysis/loop_bounds.h"
#include "sched/ir/kernel_queries.h"
#include "sim/units/stream_unit.h"
#include "sim/observe/race_checker.h"
#include "sim/observe/trace_writer.h"

namespace tandem {

namespace {

constexpr Picos kNever = std::numeric_limits<Picos>::max();

// Merges overlapping and touching intervals in place: the union (all finalize reads of an
// iteration's intervals) stays the same. An outer iteration records one interval per inner
// instance; merged whenever the count reaches a power of two from 4096 on, its memory follows
// the gaps in the busy time, not the instances (fuzz reproducer 13 grew ~17 MB/s).
void compact(std::vector<std::pair<Picos, Picos>>& v) {
  const size_t n = v.size();
  if (n < 4096 || (n & (n - 1)) != 0) return;
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (size_t i = 1; i < n; ++i) {
    if (v[i].first <= v[out].second) v[out].second = std::max(v[out].second, v[i].second);
    else v[++out] = v[i];
  }
  v.resize(out + 1);
}

// Length of the union of intervals (sorted in place).
Picos union_length(std::vector<std::pair<Picos, Picos>>& v) {
  std::sort(v.begin(), v.end());
  Picos total = 0, cur_a = 0, cur_b = -1;
  for (const auto& [a, b] : v) {
    if (a > cur_b) {
      if (cur_b > cur_a) total += cur_b - cur_a;
      cur_a = a;
      cur_b = b;
    } else {
      cur_b = std::max(cur_b, b);
    }
  }
  if (cur_b > cur_a) total += cur_b - cur_a;
  return total;
}

// Instances of `inst` per iteration of `outer`, a loop that encloses it.
int64_t inner_trips(const Kernel& k, const SimInst& inst, LoopId outer) {
  return instances_within(k, k.insts[static_cast<size_t>(inst.id)].loop, outer);
}

// The instructions a unit runs directly in the body of `loop`, in its order.
bool find_stream(const std::vector<WalkNode>& nodes, LoopId loop, std::vector<InstId>& out) {
  for (const WalkNode& n : nodes) {
    if (!n.is_loop) continue;
    if (n.id == loop) {
      for (const WalkNode& c : n.children)
        if (!c.is_loop) out.push_back(c.id);
      return true;
    }
    if (find_stream(n.children, loop, out)) return true;
  }
  return false;
}

}  // namespace

const char* stall_reason_name(StallReason r) {
  switch (r) {
    case StallReason::Semaphore: return "semaphore";
    case StallReason::Dependency: return "dependency";
    case StallReason::Barrier: return "barrier";
    case StallReason::Queue: return "queue";
    case StallReason::Conflict: return "conflict";
    case StallReason::Count: break;
  }
  return "?";
}

Ledger::Ledger(SimContext& ctx, size_t iterations_kept, bool capture_timeline, TraceWriter* trace,
               RaceChecker* checker)
    : ctx_(ctx), trace_(trace), checker_(checker), kept_(std::max<size_t>(2, iterations_kept)) {
  const SimProgram& p = ctx.program;
  const Kernel& k = *p.kernel;
  for (const SimUnit& u : p.units) {
    UnitResult r;
    r.name = u.name;
    r.is_queue = u.kind == UnitKind::DmaQueue;
    units_.push_back(r);
  }
  profile_.resize(p.insts.size());
  loops_.resize(k.loops.size());
  for (size_t l = 0; l < k.loops.size(); ++l) {
    LoopState& s = loops_[l];
    s.result.id = static_cast<LoopId>(l);
    s.result.iv = k.loops[l].iv;
    s.result.trip_count = k.loops[l].trip_count();
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
    timeline_iterations_ = {0, n - 1};
    for (int64_t i = std::max<int64_t>(1, n / 2 - 1); i < std::min(n - 1, n / 2 + 3); ++i) timeline_iterations_.push_back(i);
  }
  works_in_.assign(k.loops.size(), std::vector<bool>(p.units.size(), false));
  for (const SimInst& inst : p.insts) {
    if (inst.units.empty()) continue;
    for (LoopId l : inst.nest) {
      loops_[static_cast<size_t>(l)].expected += inner_trips(k, inst, l);
      if (!inst.is_barrier) works_in_[static_cast<size_t>(l)][static_cast<size_t>(inst.units[0])] = true;
    }
  }
}

Ledger::Iter& Ledger::iteration(LoopState& s, int64_t index, int64_t iv) {
  while (s.base + static_cast<int64_t>(s.pending.size()) <= index) {
    Iter it;
    if (!s.spare.empty()) {
      it.dma.swap(s.spare.back().first);
      it.compute.swap(s.spare.back().second);
      s.spare.pop_back();
    }
    it.index = s.base + static_cast<int64_t>(s.pending.size());
    s.pending.push_back(std::move(it));
  }
  Iter& it = s.pending[static_cast<size_t>(index - s.base)];
  it.iv = iv;
  return it;
}

namespace {

using Intervals = std::vector<std::pair<Picos, Picos>>;

// The first interval that ends at or after `t`.
Intervals::iterator ending_from(Intervals& set, Picos t) {
  return std::lower_bound(set.begin(), set.end(), t, [](const std::pair<Picos, Picos>& x, Picos v) { return x.second < v; });
}

// The first interval that starts after `t`.
Intervals::const_iterator starting_after(const Intervals& set, Picos t) {
  return std::upper_bound(set.begin(), set.end(), t, [](Picos v, const std::pair<Picos, Picos>& x) { return v < x.first; });
}

// Adds [a, b) to a set of merged intervals (touching ones merge).
void merge_interval(Intervals& set, Picos a, Picos b) {
  if (b <= a) return;
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

// Drops what lies before `t` (an interval across `t` keeps its part from `t` on).
void forget_before(Intervals& set, Picos t) {
  auto end = std::lower_bound(set.begin(), set.end(), t, [](const std::pair<Picos, Picos>& x, Picos v) { return x.first < v; });
  if (end == set.begin()) return;
  auto across = end - 1;
  if (across->second > t) {
    *across = {t, across->second};
    end = across;
  }
  set.erase(set.begin(), end);
}

}  // namespace

void Ledger::add_compute_busy(Picos a, Picos b) { merge_interval(compute_busy_, a, b); }

void Ledger::count_exposed(LoopState& s, Picos until) {
  for (const auto& [a0, b0] : s.dma_wall) {
    const Picos a = std::max(a0, s.counted), b = std::min(b0, until);
    if (b <= a) continue;
    Picos hidden = 0;
    auto it = starting_after(s.engines_busy, a);
    if (it != s.engines_busy.begin()) --it;
    for (; it != s.engines_busy.end() && it->first < b; ++it) {
      const Picos lo = std::max(a, it->first), hi = std::min(b, it->second);
      if (hi > lo) hidden += hi - lo;
    }
    s.result.exposed_dma_ps += (b - a) - hidden;
  }
  if (until == kNever) {
    s.dma_wall.clear();
    s.engines_busy.clear();
  } else {
    forget_before(s.dma_wall, until);
    forget_before(s.engines_busy, until);
  }
  s.counted = std::max(s.counted, until);
}

void Ledger::record(const InstanceRecord& r) {
  recorded_.store(recorded_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (trace_) trace_->record(r);
  if (checker_) checker_->record(r);
  const SimProgram& p = ctx_.program;
  const SimInst& inst = p.insts[r.inst];
  const bool dma = r.unit >= 0 && p.units[static_cast<size_t>(r.unit)].kind == UnitKind::DmaQueue;
  total_ = std::max(total_, r.complete);
  if (r.unit >= 0) {
    UnitResult& u = units_[static_cast<size_t>(r.unit)];
    u.busy_ps += r.busy_end - r.busy_start;
    ++u.instances;
    for (size_t i = 0; i < u.stall_ps.size(); ++i) u.stall_ps[i] += r.stall[i];
    if (dma) u.bytes += inst.dma.bytes;
    if (!dma) {
      add_compute_busy(r.busy_start, r.busy_end);
      for (size_t l = 0; l < loops_.size(); ++l)
        if (works_in_[l][static_cast<size_t>(r.unit)]) merge_interval(loops_[l].engines_busy, r.busy_start, r.busy_end);
    }
    InstProfile& prof = profile_[static_cast<size_t>(r.inst)];  // named in finish(), off the hot path
    ++prof.instances;
    prof.busy_ps += r.busy_end - r.busy_start;
    for (size_t i = 0; i < prof.stall_ps.size(); ++i) prof.stall_ps[i] += r.stall[i];
  }
  if (timeline_loop_ != kNoId && r.unit >= 0 &&
      std::find(inst.nest.begin(), inst.nest.end(), timeline_loop_) != inst.nest.end()) {
    const int64_t index = r.loop_counts[timeline_loop_] - 1;
    if (std::find(timeline_iterations_.begin(), timeline_iterations_.end(), index) != timeline_iterations_.end())
      timeline_.push_back({p.units[static_cast<size_t>(r.unit)].name, inst.name, index, dma ? r.start : r.busy_start,
                           dma ? r.complete : r.busy_end});
  }
  for (LoopId l : inst.nest) {
    LoopState& s = loops_[static_cast<size_t>(l)];
    Iter& it = iteration(s, r.loop_counts[l] - 1, r.loop_ivs[l]);
    it.start = std::min(it.start, r.start);
    it.end = std::max(it.end, r.complete);
    if (r.unit >= 0) {
      if (dma) {
        merge_interval(s.dma_wall, r.start, r.complete);
        it.dma.emplace_back(r.start, r.complete);
        compact(it.dma);
        it.dma_min_start = std::min(it.dma_min_start, r.start);
        it.dma_max_end = std::max(it.dma_max_end, r.complete);
      } else {
        it.compute.emplace_back(r.busy_start, r.busy_end);
        compact(it.compute);
        if (r.waited_on_dma) it.exposed += r.stall[static_cast<size_t>(StallReason::Semaphore)];
      }
      for (size_t i = 0; i < it.stall.size(); ++i) it.stall[i] += r.stall[i];
      if (inst.wmma) {  // waits for operands: the scoreboard (dependency) or another unit's result
        it.wmma_bubble += r.stall[static_cast<size_t>(StallReason::Dependency)] +
                          r.stall[static_cast<size_t>(StallReason::Semaphore)];
        ++it.wmmas;
      }
    }
    ++it.received;
  }
  if (++since_finalize_ >= 64) try_finalize();
}

void Ledger::barrier_wait(const InstanceRecord& r, Picos ps, bool released_by_dma) {
  if (ps <= 0) return;
  constexpr size_t kBarrier = static_cast<size_t>(StallReason::Barrier);
  units_[static_cast<size_t>(r.unit)].stall_ps[kBarrier] += ps;
  const bool compute = ctx_.program.units[static_cast<size_t>(r.unit)].kind == UnitKind::Compute;
  for (LoopId l : ctx_.program.insts[static_cast<size_t>(r.inst)].nest) {
    LoopState& s = loops_[static_cast<size_t>(l)];
    const int64_t index = r.loop_counts[l] - 1;
    if (index < s.base) continue;  // that iteration is already reported
    Iter& it = iteration(s, index, r.loop_ivs[l]);
    it.stall[kBarrier] += ps;
    // Exposed: a compute engine with work in this loop held back by a transfer.
    if (compute && released_by_dma && works_in_[static_cast<size_t>(l)][static_cast<size_t>(r.unit)]) it.exposed += ps;
  }
}

Picos Ledger::overlap_with_compute(std::vector<std::pair<Picos, Picos>>& dma, Picos* union_len) {
  *union_len = union_length(dma);  // also sorts
  // Merge the sorted DMA intervals and intersect them with the compute busy set.
  Picos overlap = 0, a = 0, b = -1;
  auto flush = [&] {
    if (b <= a) return;
    auto it = starting_after(compute_busy_, a);
    if (it != compute_busy_.begin()) --it;
    for (; it != compute_busy_.end() && it->first < b; ++it) {
      Picos lo = std::max(a, it->first), hi = std::min(b, it->second);
      if (hi > lo) overlap += hi - lo;
    }
  };
  for (const auto& [x, y] : dma) {
    if (x > b) {
      flush();
      a = x;
      b = y;
    } else {
      b = std::max(b, y);
    }
  }
  flush();
  return overlap;
}

void Ledger::finalize(LoopState& s, Iter& it) {
  IterationResult r;
  r.index = it.index;
  r.iv = it.iv;
  r.start_ps = it.start == kNever ? 0 : it.start;
  r.end_ps = it.end;
  Picos dma_union = 0;
  Picos overlapped = overlap_with_compute(it.dma, &dma_union);
  r.dma_busy_ps = dma_union;
  r.compute_busy_ps = union_length(it.compute);
  r.overlap = dma_union > 0 ? static_cast<double>(overlapped) / static_cast<double>(dma_union) : 0.0;
  r.exposed_dma_ps = it.exposed;
  r.stall_ps = it.stall;
  r.wmma_bubble_ps = it.wmma_bubble;

  // Steady-state II: per entry of the loop, the time from the end of its first iteration to
  // the end of its last over the iterations in between. Ends leave at the bottleneck's rate,
  // also when a pattern repeats every few iterations; starts bunch up while loads run ahead.
  const Loop& l = ctx_.program.kernel->loops[static_cast<size_t>(s.result.id)];
  if (r.iv == l.lo) s.first_end = r.end_ps;
  if (r.iv == l.hi - 1 && l.trip_count() > 1) {
    s.steady_ps += r.end_ps - s.first_end;
    s.steady_intervals += l.trip_count() - 1;
  }
  s.result.dma_busy_ps += dma_union;
  s.result.overlapped_dma_ps += overlapped;
  s.result.wmma_bubble_ps += it.wmma_bubble;
  s.result.wmma_instances += it.wmmas;

  if (static_cast<size_t>(s.result.dynamic_iterations) <= kept_ || s.head.size() < kept_ / 2) {
    s.head.push_back(r);
  } else {
    s.tail.push_back(r);
    if (s.tail.size() > kept_ - kept_ / 2) s.tail.pop_front();
  }
}

Picos Ledger::watermark() const {
  // Each unit's bound is its floor, raised to what it waits for: iterate to the fixed point
  // (at most one round per unit, as every value is one of the floors).
  const size_t n = ctx_.units.size();
  std::vector<StreamUnit::Horizon> info(n);
  std::vector<Picos> h(n);
  for (size_t u = 0; u < n; ++u) {
    info[u] = ctx_.units[u]->horizon();
    h[u] = info[u].floor;
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
      if (v != h[u]) {
        h[u] = v;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return *std::min_element(h.begin(), h.end());
}

void Ledger::try_finalize(bool all_done) {
  since_finalize_ = 0;
  const Picos watermark = all_done ? kNever : this->watermark();
  if (checker_) {
    int64_t min_seq = std::numeric_limits<int64_t>::max();
    if (!all_done)
      for (const StreamUnit* u : ctx_.units) min_seq = std::min(min_seq, u->min_future_seq());
    checker_->advance(watermark, min_seq);
  }
  Picos keep_from = watermark;
  for (LoopState& s : loops_) {
    while (!s.pending.empty()) {
      Iter& it = s.pending.front();
      if (it.received < s.expected || it.dma_max_end > watermark) break;
      finalize(s, it);
      it.dma.clear();
      it.compute.clear();
      s.spare.emplace_back(std::move(it.dma), std::move(it.compute));
      s.pending.pop_front();
      ++s.base;
    }
    for (const Iter& it : s.pending) keep_from = std::min(keep_from, it.dma_min_start);
    count_exposed(s, watermark);
  }
  // Compute busy time that ends before anything still pending can start is no longer needed.
  compute_busy_.erase(compute_busy_.begin(), ending_from(compute_busy_, keep_from));
}

void Ledger::compute_bounds(SimResult& out) {
  const SimProgram& p = ctx_.program;
  const Kernel& k = *p.kernel;
  // The lowered program as the bounds analysis reads it (sched/analysis/loop_bounds.h).
  BoundsInput in;
  in.kernel = &k;
  in.pipes = p.pipes;
  in.dma_fixed_ps = p.dma_fixed_ps;
  for (const SimUnit& u : p.units) {
    in.units.push_back(u.name);
    in.unit_is_queue.push_back(u.kind == UnitKind::DmaQueue);
  }
  for (const SimInst& inst : p.insts) {
    BoundsInst b;
    b.id = inst.id;
    b.name = inst.name;
    b.units = inst.units;
    b.is_barrier = inst.is_barrier;
    b.cycles_ps = inst.cycles_ps;
    b.latency_ps = inst.latency_ps;
    b.data_ps = inst.data_ps;
    b.moves_dma = inst.collective || (!inst.is_barrier && !inst.units.empty() &&
                                      p.units[static_cast<size_t>(inst.units[0])].kind == UnitKind::DmaQueue);
    b.dma = inst.dma;
    b.pipe = inst.pipe;
    b.pipe_ps = inst.pipe_ps;
    b.nest = inst.nest;
    b.dynamic_count = inst.dynamic_count;
    in.insts.push_back(std::move(b));
  }
  for (const SimChannel& c : p.channels) in.edges.push_back({c.src, c.dst, c.kind, c.distance, c.key_loop});
  in.streams.assign(p.units.size(), std::vector<std::vector<InstId>>(k.loops.size()));
  for (size_t u = 0; u < p.units.size(); ++u)
    for (size_t l = 0; l < k.loops.size(); ++l) find_stream(p.walks[u], static_cast<LoopId>(l), in.streams[u][l]);

  const ResourceBound whole = kernel_resource_bound(in);
  out.lower_bound_ps = whole.ps;
  out.lower_bound_resource = whole.resource;
  out.dma_engine_busy_ps = whole.dma_total_ps;
  for (LoopResult& l : out.loops) {
    const LoopBounds b = loop_bounds(in, l.id);
    l.resource_bound_ps = b.resource.ps;
    l.bound_resource = b.resource.resource;
    l.recurrence_bound_ps = b.recurrence_ps;
    l.recurrence_cause = b.recurrence_cause;
    l.ii_bound_ps = std::max(l.resource_bound_ps, l.recurrence_bound_ps);
    // Against the hardware alone: what the schedule leaves on the table, including what its own
    // recurrences (barriers, cut or kept edges) cost; ii_bound_ns says how much of that is theirs.
    l.efficiency = l.ii_ps > 0 ? static_cast<double>(l.resource_bound_ps) / static_cast<double>(l.ii_ps) : 0.0;
  }
}

SimResult Ledger::finish() {
  try_finalize(/*all_done=*/true);
  const SimProgram& p = ctx_.program;
  SimResult out;
  out.kernel = p.kernel->name;
  out.model = p.model->name;
  out.reference_clock_ghz = p.model->reference_clock_ghz;
  out.total_ps = total_;
  out.dynamic_instructions = p.dynamic_instructions;
  for (const SimChannel& c : p.channels) out.semaphores += c.cross_unit ? 1 : 0;
  out.semaphores_available = p.model->semaphores;
  out.units = units_;
  for (const UnitResult& u : units_) out.dma_bytes += u.bytes;
  out.dma_engines = p.model->dma.engines;
  out.dma_queues_available = static_cast<int64_t>(p.model->dma_queues.size());
  for (const auto& [name, space] : p.model->spaces)
    if (space.capacity() > 0 && !space.is_register_file())
      out.spaces.push_back({name, space.capacity_unit(), space_allocation(*p.kernel, name), space.capacity()});
  for (size_t i = 0; i < profile_.size(); ++i) {
    if (profile_[i].instances == 0) continue;
    InstProfile prof = profile_[i];
    prof.name = p.insts[i].name;
    prof.opcode = p.kernel->insts[i].opcode;
    prof.unit = units_[static_cast<size_t>(p.insts[i].units.front())].name;  // an instance ran: it has its unit
    out.profile.push_back(prof);
  }
  // Longest first; ties in program order.
  std::stable_sort(out.profile.begin(), out.profile.end(),
                   [](const InstProfile& a, const InstProfile& b) { return a.busy_ps > b.busy_ps; });
  if (timeline_loop_ != kNoId) {
    out.timeline_loop = p.kernel->loops[static_cast<size_t>(timeline_loop_)].iv;
    out.timeline = timeline_;
    std::sort(out.timeline.begin(), out.timeline.end(), [](const TimelineSpan& a, const TimelineSpan& b) {
      return std::tie(a.iteration, a.start_ps, a.unit, a.inst) < std::tie(b.iteration, b.start_ps, b.unit, b.inst);
    });
  }
  for (LoopState& s : loops_) {
    LoopResult r = s.result;
    r.folded = !s.tail.empty();
    r.iterations = s.head;
    r.iterations.insert(r.iterations.end(), s.tail.begin(), s.tail.end());
    if (s.steady_intervals > 0)
      r.ii_ps = s.steady_ps / s.steady_intervals;
    else if (!r.iterations.empty())
      r.ii_ps = r.iterations.front().end_ps - r.iterations.front().start_ps;
    out.loops.push_back(std::move(r));
  }
  compute_bounds(out);
  return out;
}

}  // namespace tandem
