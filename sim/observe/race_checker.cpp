#include "sim/observe/race_checker.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "sched/ir/kernel_queries.h"
#include "sched/support/box.h"
#include "sched/ir/attribute_keys.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

uint64_t box_hash(const Box& b) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (const auto& [lo, hi] : b) {
    h = (h ^ static_cast<uint64_t>(lo)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ static_cast<uint64_t>(hi)) * 0x94D049BB133111EBULL;
  }
  return h;
}

std::string ns(Picos ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ps) / 1000.0);
  return buf;
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
  for (size_t id = 0; id < p.insts.size(); ++id) {
    const Instruction& in = k.insts[id];
    auto plan = [&](const Access& a, bool read, LoopId fresh_at = kNoId) {
      const size_t log = first_log[static_cast<size_t>(a.tensor_id)];
      if (log == kNoLog) return;
      AccessPlan ap{read, 0, kNoId, fresh_at, log, {}, {}};
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
            break;
          }
      plans_[id].push_back(std::move(ap));
    };
    for (const Access& a : in.reads) plan(a, true);
    if (in.attrs.has(attr::kAccumulate))  // an accumulating write reads what it adds to
      for (const Access& a : in.writes) plan(a, true, accumulation_start(k, static_cast<InstId>(id)));
    for (const Access& a : in.writes) plan(a, false);
  }
}

void RaceChecker::box_of(const AccessPlan& ap, const int64_t* ivs, Box& out) const {
  out = ap.base;
  for (const AccessPlan::Term& t : ap.terms) {
    auto& bound = t.hi ? out[t.dim].second : out[t.dim].first;
    bound += t.coeff * ivs[t.loop];
  }
}

int64_t RaceChecker::buffer_of(const AccessPlan& ap, const int64_t* ivs) const {
  if (ap.rotate == kNoId) return 0;
  return (ivs[ap.rotate] - p_.kernel->loops[static_cast<size_t>(ap.rotate)].lo) % ap.buffers;
}

void RaceChecker::record(const InstanceRecord& r) {
  if (r.unit < 0) return;  // a barrier touches no memory
  const std::vector<AccessPlan>& plans = plans_[static_cast<size_t>(r.inst)];
  if (plans.empty()) return;
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  const int64_t seq = inst.seq(r.loop_ivs, *p_.kernel);
  // Reads last while the unit consumes its inputs. A write changes its range from the
  // moment the unit starts producing it (a transfer: its first byte; a compute engine: its
  // start) until it completes: a read that overlaps that window can see new bytes.
  const Picos read_end = std::max(r.busy_end, r.start);
  for (const AccessPlan& ap : plans) {
    if (ap.fresh_at != kNoId && r.loop_ivs[ap.fresh_at] == p_.kernel->loops[static_cast<size_t>(ap.fresh_at)].lo)
      continue;  // this instance starts its accumulation group: a plain write
    const size_t log = ap.log + static_cast<size_t>(buffer_of(ap, r.loop_ivs));
    Event* ev;
    if (ap.read) {
      size_t slot;
      if (!free_reads_.empty()) {
        slot = free_reads_.back();
        free_reads_.pop_back();
      } else {
        slot = reads_.size();
        reads_.emplace_back();
      }
      reads_[slot].log = log;
      ev = &reads_[slot].read;
      ev->start = r.start;
      ev->end = read_end;
      pending_.push_back({seq, arrivals_++, slot});
      std::push_heap(pending_.begin(), pending_.end(), std::greater<PendingKey>());
    } else {
      WriteLog& w = logs_[log];
      if (!w.active) {  // its first write: settle it from now on
        w.active = true;
        active_.insert(std::upper_bound(active_.begin(), active_.end(), log), log);
      }
      if (w.size() > 0 && w.events.back().seq > seq) w.sorted = false;
      w.indexed = false;
      w.events.emplace_back();
      ev = &w.events.back();
      ev->start = std::min(r.busy_start, r.complete);
      ev->end = r.complete;
    }
    ev->seq = seq;
    ev->inst = r.inst;
    box_of(ap, r.loop_ivs, ev->box);
  }
}

void RaceChecker::WriteLog::index() {
  if (indexed) return;
  indexed = true;
  auto by_seq = [](const Event& x, const Event& y) { return x.seq < y.seq; };
  if (!sorted) std::sort(events.begin() + static_cast<std::ptrdiff_t>(head), events.end(), by_seq);
  sorted = true;
  const Event* ev = live();
  const size_t n = size();
  max_end_before.resize(n + 1);
  min_start_from.resize(n + 1);
  max_end_before[0] = std::numeric_limits<Picos>::min();
  for (size_t i = 0; i < n; ++i) max_end_before[i + 1] = std::max(max_end_before[i], ev[i].end);
  min_start_from[n] = std::numeric_limits<Picos>::max();
  for (size_t i = n; i-- > 0;) min_start_from[i] = std::min(min_start_from[i + 1], ev[i].start);
}

void RaceChecker::advance(Picos watermark, int64_t min_seq) {
  for (size_t l : active_) logs_[l].index();
  // Reads whose every relevant write is known.
  while (!pending_.empty()) {
    const PendingKey next = pending_.front();
    PendingRead& pr = reads_[next.slot];
    if (next.seq >= min_seq || pr.read.end > watermark) break;
    std::pop_heap(pending_.begin(), pending_.end(), std::greater<PendingKey>());
    pending_.pop_back();
    check(logs_[pr.log], pr.read);
    free_reads_.push_back(next.slot);
  }
  // Writes hidden by a newer write that every future read comes after, both landed.
  const int64_t settled = pending_.empty() ? min_seq : std::min(min_seq, pending_.front().seq);
  for (size_t l : active_) settle(logs_[l], watermark, settled);
}

void RaceChecker::settle(WriteLog& log, Picos watermark, int64_t settled) {
  const Buffer& buffer = log.buffer;
  Event* events = log.events.data() + log.head;  // in program order (index())
  const size_t n = log.size();
  // A write is hidden when a newer write that every future read follows (seq below
  // `settled`) covers it and both have landed; the next few newer writes are the candidates
  // (usually the very next one rewrites the whole tile), and beyond them the nearest newer
  // write of the same box (a strip written slice by slice: the slice's next write comes a
  // whole strip later; without it the live writes, and each check, grow with the rounds).
  // An older write landing after its cover is a WAW.
  auto hidden = [&](size_t i, size_t j) {
    const Event& old = events[i];
    const Event& newer = events[j];
    if (old.end > newer.end)
      report("WAW", old, newer, buffer, intersect(old.box, newer.box),
             where(old) + " landed at " + ns(old.end) + " ns, after " + where(newer) + " at " + ns(newer.end) + " ns");
  };
  size_t settled_n = 0;  // events [0, settled_n) may be dropped
  while (settled_n < n && events[settled_n].end <= watermark && events[settled_n].seq < settled) ++settled_n;
  if (settled_n == 0) return;
  // The nearest newer write with the same box, by a sort of (box hash, index): reused
  // scratch, no allocation once it has grown.
  bool indexed = false;
  auto next_same = [&](size_t i) {
    if (!indexed) {
      same_box_.clear();
      for (size_t x = 0; x < n; ++x) same_box_.push_back({box_hash(events[x].box), x});
      std::sort(same_box_.begin(), same_box_.end());
      next_same_.assign(n, n);
      for (size_t x = 0; x + 1 < same_box_.size(); ++x)
        if (same_box_[x].first == same_box_[x + 1].first) next_same_[same_box_[x].second] = same_box_[x + 1].second;
      indexed = true;
    }
    return next_same_[i];
  };
  // Writes from `followed_n` on come after a future read (events are in program order): no
  // cover among them. Usually none lies beyond the next few, and the same-box index (a sort
  // of every live write, 22 % of advance on a GEMM K loop) is not needed.
  size_t followed_n = settled_n;
  while (followed_n < n && events[followed_n].seq < settled) ++followed_n;
  drop_.assign(settled_n, false);
  size_t dropped = 0, last_dropped = 0;
  for (size_t i = 0; i < settled_n; ++i) {
    const Event& old = events[i];
    bool found = false;
    for (size_t j = i + 1; j < n && j <= i + 8; ++j) {
      const Event& newer = events[j];
      if (newer.seq >= settled || newer.end > watermark) break;
      if (!contains(newer.box, old.box)) continue;
      hidden(i, j);
      found = true;
      break;
    }
    if (!found && i + 9 < followed_n) {
      const size_t j = next_same(i);
      if (j < n && j > i + 8 && events[j].seq < settled && events[j].end <= watermark && events[j].box == old.box) {
        hidden(i, j);
        found = true;
      }
    }
    if (found) {
      drop_[i] = true;
      ++dropped;
      last_dropped = i;
    }
  }
  if (dropped == 0) return;
  // Survivors before the last dropped write move up over the dropped ones, in order; the
  // writes after it stay where they are and the head moves past the gap.
  size_t to = last_dropped + 1;
  for (size_t i = last_dropped + 1; i-- > 0;)
    if (!drop_[i] && --to != i) events[to] = std::move(events[i]);
  log.head += dropped;
  log.indexed = false;
  // Reclaim the dead front once it outweighs the live writes (each write moves at most once
  // more for it).
  if (log.head > log.size() && log.head >= 64) {
    log.events.erase(log.events.begin(), log.events.begin() + static_cast<std::ptrdiff_t>(log.head));
    log.head = 0;
  }
}

void RaceChecker::check(const WriteLog& log, const Event& read) {
  const Buffer& b = log.buffer;
  const Event* ev = log.live();
  const size_t n = log.size();
  if (n == 0) return;  // nothing written there yet
  auto seq_below = [](const Event& w, int64_t seq) { return w.seq < seq; };
  // [0, earlier): writes before the read in program order; [later, n): writes after it (the
  // instance's own writes, an accumulation, lie between).
  const size_t earlier = static_cast<size_t>(std::lower_bound(ev, ev + n, read.seq, seq_below) - ev);
  size_t later = earlier;
  while (later < n && ev[later].seq == read.seq) ++later;
  // WAR: a later write began before the read was done: the reader can see new bytes. None
  // can when the earliest start among them is after the read.
  if (log.min_start_from[later] < read.end)
    for (size_t j = later; j < n; ++j) {
      const Event& w = ev[j];
      if (w.start < read.end && overlaps(w.box, read.box))
        report("WAR", read, w, b, intersect(read.box, w.box),
               where(w) + " overwrote it at " + ns(w.start) + " ns while " + where(read) + " was reading it until " +
                   ns(read.end) + " ns");
    }
  // Walk back from the newest earlier write: each part of the read has one expected producer.
  // `w` at ev[i] produces part of the read.
  auto produced = [&](size_t i) {
    const Event& w = ev[i];
    if (w.end > read.start)
      report("RAW", w, read, b, intersect(read.box, w.box),
             where(read) + " read it at " + ns(read.start) + " ns, before " + where(w) + " had written it at " +
                 ns(w.end) + " ns");
    // An older write landing after this one (and before the read) replaces its value; none
    // can when every older write landed first.
    if (log.max_end_before[i] <= w.end) return;
    for (size_t j = i; j-- > 0;) {
      const Event& older = ev[j];
      if (older.end > w.end && older.end <= read.start && overlaps(older.box, read.box) && overlaps(older.box, w.box))
        report("WAW", older, w, b, intersect(older.box, w.box),
               where(older) + " landed at " + ns(older.end) + " ns, after " + where(w) + " at " + ns(w.end) +
                   " ns, so " + where(read) + " saw the older value");
    }
  };
  size_t newest = earlier;
  while (newest > 0 && !overlaps(ev[newest - 1].box, read.box)) --newest;
  if (newest == 0) return;
  // The usual case, without allocation: the newest earlier write covers the whole read.
  if (contains(ev[newest - 1].box, read.box)) {
    produced(newest - 1);
    return;
  }
  std::vector<Box> unseen{read.box};
  for (size_t i = newest; i-- > 0 && !unseen.empty();) {
    const Event& w = ev[i];
    if (!overlaps(w.box, read.box)) continue;
    bool produces = false;
    std::vector<Box> next;
    for (Box& u : unseen) {
      if (!overlaps(u, w.box)) {
        next.push_back(std::move(u));
        continue;
      }
      produces = true;
      for (Box& piece : subtract(u, w.box)) next.push_back(std::move(piece));
    }
    if (produces) produced(i);
    unseen = std::move(next);
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
      s += (i ? ", " : "") + p_.kernel->loops[static_cast<size_t>(inst.nest[i])].iv.substr(1) + "=" + std::to_string(ivs[i]);
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

void RaceChecker::report(const char* kind, const Event& earlier, const Event& later, const Buffer& b, const Box& box,
                         const std::string& what) {
  if (!reported_.insert({kind, earlier.inst, later.inst}).second) return;
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
