#include "sim/observe/race_checker.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>

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
  for (size_t id = 0; id < p.insts.size(); ++id) {
    const Instruction& in = k.insts[id];
    auto plan = [&](const Access& a, bool read, LoopId fresh_at = kNoId) {
      AccessPlan ap{&a, read, 0, kNoId, fresh_at};
      const Tensor& t = k.tensors[static_cast<size_t>(a.tensor_id)];
      const auto buffers = t.attrs.get_int(attr::kBuffers);
      const auto loop_iv = t.attrs.get_string(attr::kRotate);
      if (buffers && loop_iv && *buffers >= 2)
        for (LoopId l : p.insts[id].nest)
          if (k.loops[static_cast<size_t>(l)].iv == *loop_iv) {
            ap.buffers = *buffers;
            ap.rotate = l;
            break;
          }
      plans_[id].push_back(ap);
    };
    for (const Access& a : in.reads) plan(a, true);
    if (in.attrs.has(attr::kAccumulate))  // an accumulating write reads what it adds to
      for (const Access& a : in.writes) plan(a, true, accumulation_start(k, static_cast<InstId>(id)));
    for (const Access& a : in.writes) plan(a, false);
  }
}

bool RaceChecker::box_of(const Access& a, const int64_t* ivs, Box& out) const {
  // An address register's value is known only at run time: no box.
  const auto value = [ivs](const AffineTerm& t) -> std::optional<int64_t> {
    if (t.loop == kNoId) return std::nullopt;
    return ivs[t.loop];
  };
  return tandem::box_of(p_.kernel->tensors[static_cast<size_t>(a.tensor_id)], a, value, out);
}

int64_t RaceChecker::buffer_of(const AccessPlan& ap, const int64_t* ivs) const {
  if (ap.rotate == kNoId) return 0;
  return (ivs[ap.rotate] - p_.kernel->loops[static_cast<size_t>(ap.rotate)].lo) % ap.buffers;
}

void RaceChecker::record(const InstanceRecord& r) {
  if (r.unit < 0) return;  // a barrier touches no memory
  const SimInst& inst = p_.insts[static_cast<size_t>(r.inst)];
  const Event e{inst.seq(r.loop_ivs, *p_.kernel), r.start, 0, r.inst, {}};
  // Reads last while the unit consumes its inputs. A write changes its range from the
  // moment the unit starts producing it (a transfer: its first byte; a compute engine: its
  // start) until it completes: a read that overlaps that window can see new bytes.
  const Picos read_end = std::max(r.busy_end, r.start);
  for (const AccessPlan& ap : plans_[static_cast<size_t>(r.inst)]) {
    if (ap.fresh_at != kNoId && r.loop_ivs[ap.fresh_at] == p_.kernel->loops[static_cast<size_t>(ap.fresh_at)].lo)
      continue;  // this instance starts its accumulation group: a plain write
    Event ev = e;
    if (!box_of(*ap.access, r.loop_ivs, ev.box)) continue;
    const Buffer buffer{ap.access->tensor_id, buffer_of(ap, r.loop_ivs)};
    if (ap.read) {
      ev.end = read_end;
      pending_.push_back({arrivals_++, buffer, std::move(ev)});
      std::push_heap(pending_.begin(), pending_.end(), std::greater<Pending>());
    } else {
      ev.start = std::min(r.busy_start, r.complete);
      ev.end = r.complete;
      writes_[buffer].events.push_back(std::move(ev));
    }
  }
}

void RaceChecker::WriteLog::index() {
  auto by_seq = [](const Event& x, const Event& y) { return x.seq < y.seq; };
  if (!std::is_sorted(events.begin(), events.end(), by_seq)) std::sort(events.begin(), events.end(), by_seq);
  const size_t n = events.size();
  max_end_before.resize(n + 1);
  min_start_from.resize(n + 1);
  max_end_before[0] = std::numeric_limits<Picos>::min();
  for (size_t i = 0; i < n; ++i) max_end_before[i + 1] = std::max(max_end_before[i], events[i].end);
  min_start_from[n] = std::numeric_limits<Picos>::max();
  for (size_t i = n; i-- > 0;) min_start_from[i] = std::min(min_start_from[i + 1], events[i].start);
}

void RaceChecker::advance(Picos watermark, int64_t min_seq) {
  for (auto& entry : writes_) entry.second.index();
  // Reads whose every relevant write is known.
  while (!pending_.empty()) {
    const Pending& next = pending_.front();
    if (next.read.seq >= min_seq || next.read.end > watermark) break;
    std::pop_heap(pending_.begin(), pending_.end(), std::greater<Pending>());
    check(pending_.back().buffer, pending_.back().read);
    pending_.pop_back();
  }
  // Writes hidden by a newer write that every future read comes after, both landed.
  const int64_t settled = pending_.empty() ? min_seq : std::min(min_seq, pending_.front().read.seq);
  for (auto& entry : writes_) {
    // Named references, not a structured binding: lambdas below capture them (C++17; clang).
    const auto& buffer = entry.first;
    auto& events = entry.second.events;  // in program order (index())
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
    while (settled_n < events.size() && events[settled_n].end <= watermark && events[settled_n].seq < settled)
      ++settled_n;
    if (settled_n == 0) continue;
    // The nearest newer write with the same box, by a sort of (box hash, index): reused
    // scratch, no allocation once it has grown.
    bool indexed = false;
    auto next_same = [&](size_t i) {
      if (!indexed) {
        same_box_.clear();
        for (size_t x = 0; x < events.size(); ++x) same_box_.push_back({box_hash(events[x].box), x});
        std::sort(same_box_.begin(), same_box_.end());
        next_same_.assign(events.size(), events.size());
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
    while (followed_n < events.size() && events[followed_n].seq < settled) ++followed_n;
    drop_.assign(events.size(), false);
    for (size_t i = 0; i < settled_n; ++i) {
      const Event& old = events[i];
      bool found = false;
      for (size_t j = i + 1; j < events.size() && j <= i + 8; ++j) {
        const Event& newer = events[j];
        if (newer.seq >= settled || newer.end > watermark) break;
        if (!contains(newer.box, old.box)) continue;
        hidden(i, j);
        found = true;
        break;
      }
      if (!found && i + 9 < followed_n) {
        const size_t j = next_same(i);
        if (j < events.size() && j > i + 8 && events[j].seq < settled && events[j].end <= watermark &&
            events[j].box == old.box) {
          hidden(i, j);
          found = true;
        }
      }
      drop_[i] = found;
    }
    size_t kept = 0;
    for (size_t i = 0; i < events.size(); ++i)
      if (!drop_[i]) {
        if (kept != i) events[kept] = std::move(events[i]);
        ++kept;
      }
    events.resize(kept);
  }
}

void RaceChecker::check(const Buffer& b, const Event& read) {
  auto it = writes_.find(b);
  if (it == writes_.end()) return;
  const WriteLog& log = it->second;
  const std::vector<Event>& ev = log.events;
  auto seq_below = [](const Event& w, int64_t seq) { return w.seq < seq; };
  // [0, earlier): writes before the read in program order; [later, n): writes after it (the
  // instance's own writes, an accumulation, lie between).
  const size_t earlier = static_cast<size_t>(std::lower_bound(ev.begin(), ev.end(), read.seq, seq_below) - ev.begin());
  size_t later = earlier;
  while (later < ev.size() && ev[later].seq == read.seq) ++later;
  // WAR: a later write began before the read was done: the reader can see new bytes. None
  // can when the earliest start among them is after the read.
  if (log.min_start_from[later] < read.end)
    for (size_t j = later; j < ev.size(); ++j) {
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
