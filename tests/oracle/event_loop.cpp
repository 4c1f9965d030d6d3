#include "tests/oracle/event_loop.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>

#include "sim/observe/ledger.h"
#include "sim/units/dma_bandwidth.h"

namespace tandem {

namespace {

class Baseline {
 public:
  Baseline(const SimProgram& p, BaselineObserver* observer)
      : p_(p), k_(*p.kernel), dma_(p.model->dma), observer_(observer) {
    for (const SimInst& i : p.insts)
      if (i.is_barrier || !i.ports.empty())
        throw std::invalid_argument("the baseline runs no barriers or conflict ports");
    units_.resize(p.units.size());
    for (size_t u = 0; u < units_.size(); ++u) {
      Unit& s = units_[u];
      s.counts.assign(k_.loops.size(), 0);
      s.ivs.assign(k_.loops.size(), 0);
      s.stack.push_back({&p.walks[u], 0, kNoId});
      next_instance(s);
      push(0, kTry, static_cast<int>(u));
    }
    chans_.resize(p.channels.size());
  }

  BaselineResult run() {
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      ++result_.events;
      now_ = e.t;
      switch (e.type) {
        case kTry:
          try_start(e.a);
          break;
        case kPublish:
          publish(e.a, e.b, e.value);
          break;
        case kDmaStart:
          dma_start(e.a);
          break;
        case kDmaWake:
          dma_wake(e.b);
          break;
        case kCollectiveDone:
          finish_transfer(e.a, now_);
          break;
      }
    }
    for (const Unit& u : units_)
      if (u.cur != kNoId) throw std::runtime_error("baseline deadlocked");
    if (observer_) observer_->progress(std::numeric_limits<Picos>::max(), std::numeric_limits<int64_t>::max());
    return result_;
  }

 private:
  enum Type { kTry, kPublish, kDmaStart, kDmaWake, kCollectiveDone };
  struct Event {
    Picos t;
    uint64_t seq;
    int type;
    int a;      // unit or channel
    int64_t b;  // key, or wake version
    Picos value;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct Frame {
    const std::vector<WalkNode>* nodes;
    size_t idx;
    LoopId loop;  // the loop whose body `nodes` is, iterating; kNoId for the top
  };
  struct Unit {
    std::vector<Frame> stack;
    std::vector<int64_t> counts, ivs;
    InstId cur = kNoId;
    int64_t cur_future_base = 0;  // the current walk node's future_seq_base
    Picos free = 0, data_free = 0, issue = 0, data_start = 0;
    bool in_flight = false;          // a transfer issued and not yet landed
    std::map<int, Picos> pipe_free;  // register loads queued on a space's pipe (the LDS)
  };
  struct Chan {
    std::deque<Picos> values;  // keys [base, base + size)
    std::deque<bool> known;
    int64_t base = 0;
    int waiting = -1;
  };

  void push(Picos t, int type, int a, int64_t b = 0, Picos value = 0) { events_.push({t, seq_++, type, a, b, value}); }

  // Moves a unit's walk to its next instruction instance (cur = kNoId when done).
  void next_instance(Unit& u) {
    u.cur = kNoId;
    while (!u.stack.empty()) {
      Frame& f = u.stack.back();
      if (f.idx < f.nodes->size()) {
        const WalkNode& n = (*f.nodes)[f.idx++];
        if (!n.is_loop) {
          u.cur = n.id;
          u.cur_future_base = n.future_seq_base;
          return;
        }
        const Loop& l = k_.loops[static_cast<size_t>(n.id)];
        u.ivs[n.id] = l.lo;
        ++u.counts[n.id];
        u.stack.push_back({&n.children, 0, n.id});
        continue;
      }
      if (f.loop != kNoId && ++u.ivs[f.loop] < k_.loops[static_cast<size_t>(f.loop)].hi) {
        ++u.counts[f.loop];
        f.idx = 0;
        continue;
      }
      u.stack.pop_back();
    }
  }

  Chan& chan(int c) { return chans_[static_cast<size_t>(c)]; }

  void try_start(int ui) {
    Unit& u = units_[static_cast<size_t>(ui)];
    if (u.cur == kNoId) return;
    const SimInst& inst = p_.insts[static_cast<size_t>(u.cur)];
    Picos ready = 0;
    for (int c : inst.in_channels) {
      bool needed = false;
      const int64_t key =
          channel_needed_key(p_.channels[static_cast<size_t>(c)], k_, u.counts.data(), u.ivs.data(), &needed);
      Chan& ch = chan(c);
      if (p_.channels[static_cast<size_t>(c)].key_loop != kNoId)
        while (ch.base < key && !ch.values.empty()) {
          ch.values.pop_front();
          ch.known.pop_front();
          ++ch.base;
        }
      if (!needed) continue;
      const int64_t at = key - ch.base;
      if (at < 0 || at >= static_cast<int64_t>(ch.known.size()) || !ch.known[static_cast<size_t>(at)]) {
        ch.waiting = ui;
        return;
      }
      ready = std::max(ready, ch.values[static_cast<size_t>(at)]);
    }
    const Picos start = std::max(u.free, ready);
    if (start > now_) {
      push(start, kTry, ui);
      return;
    }
    ++result_.instances;
    if (p_.units[static_cast<size_t>(ui)].kind == UnitKind::DmaQueue) {
      u.issue = start;
      u.in_flight = true;
      const Picos data_start = std::max(start + inst.cycles_ps, u.data_free);
      publish_outputs(u, inst, DepKind::Ordered, start);
      push(data_start, kDmaStart, ui);
      return;
    }
    if (inst.collective) {  // start-up, then the ring volume through the DMA engines
      u.issue = start;
      publish_outputs(u, inst, DepKind::Ordered, start);
      push(start + inst.cycles_ps - inst.link_ps, kDmaStart, ui);
      return;
    }
    const Picos busy_end = start + inst.cycles_ps;
    Picos complete = start + inst.latency_ps;
    if (inst.pipe >= 0) {
      Picos& pipe_free = u.pipe_free[inst.pipe];
      const Picos pipe_start = std::max(start, pipe_free);
      pipe_free = pipe_start + inst.pipe_ps;
      complete = std::max(pipe_start + inst.latency_ps, pipe_free);
    }
    observe(ui, u, start, start, busy_end, complete);
    publish_outputs(u, inst, DepKind::Ordered, start);
    publish_outputs(u, inst, DepKind::Anti, busy_end);
    publish_outputs(u, inst, DepKind::Flow, complete);
    result_.total_ps = std::max(result_.total_ps, complete);
    u.free = busy_end;
    next_instance(u);
    push(u.free, kTry, ui);
  }

  // Schedules the signals of `inst`'s output channels of this kind (Flow covers Flow and
  // Output) at `value`.
  void publish_outputs(const Unit& u, const SimInst& inst, DepKind kind, Picos value) {
    for (int c : inst.out_channels) {
      const SimChannel& spec = p_.channels[static_cast<size_t>(c)];
      const DepKind k = spec.kind == DepKind::Output ? DepKind::Flow : spec.kind;
      if (k != kind) continue;
      bool produce = false;
      const int64_t key = channel_produced_key(spec, k_, u.counts.data(), u.ivs.data(), &produce);
      if (produce) push(std::max(value, now_), kPublish, c, key, value);
    }
  }

  void publish(int c, int64_t key, Picos value) {
    Chan& ch = chan(c);
    if (key < ch.base) return;  // already released
    const size_t at = static_cast<size_t>(key - ch.base);
    if (ch.values.size() <= at) {
      ch.values.resize(at + 1, 0);
      ch.known.resize(at + 1, false);
    }
    ch.values[at] = value;
    ch.known[at] = true;
    if (ch.waiting >= 0) {
      push(now_, kTry, ch.waiting);
      ch.waiting = -1;
    }
  }

  void dma_start(int ui) {
    Unit& u = units_[static_cast<size_t>(ui)];
    u.data_start = now_;
    const int id = dma_.start(p_.insts[static_cast<size_t>(u.cur)].dma, static_cast<double>(now_));
    if (static_cast<size_t>(id) >= transfer_unit_.size()) transfer_unit_.resize(static_cast<size_t>(id) + 1);
    transfer_unit_[static_cast<size_t>(id)] = ui;
    reschedule();
  }

  // A transfer (or a collective's data) has landed at `end`: signal and move on.
  void finish_transfer(int ui, Picos end) {
    Unit& u = units_[static_cast<size_t>(ui)];
    const SimInst& inst = p_.insts[static_cast<size_t>(u.cur)];
    if (!inst.collective) observe(ui, u, u.issue, u.data_start, end, end);
    u.in_flight = false;
    publish_outputs(u, inst, DepKind::Anti, end);
    publish_outputs(u, inst, DepKind::Flow, end);
    result_.total_ps = std::max(result_.total_ps, end);
    if (inst.collective) {
      u.free = end;
    } else {
      u.data_free = end;
      u.free = u.issue + inst.cycles_ps;  // one setup at a time per queue
    }
    next_instance(u);
    push(end, kTry, ui);
  }

  // Hands the instance `u` runs to the observer, as the simulator's units record it.
  void observe(int ui, const Unit& u, Picos start, Picos busy_start, Picos busy_end, Picos complete) {
    if (!observer_) return;
    InstanceRecord r;
    r.inst = u.cur;
    r.unit = ui;
    r.start = start;
    r.busy_start = busy_start;
    r.busy_end = busy_end;
    r.complete = complete;
    r.loop_counts = u.counts.data();
    r.loop_ivs = u.ivs.data();
    observer_->record(r);
    if (++since_progress_ < Ledger::kFinalizeEvery) return;  // as the ledger advances its checker
    since_progress_ = 0;
    // A unit's next record starts no earlier than it is free (a transfer in flight: its
    // issue); every instance not yet recorded is at or after a unit's current instruction.
    Picos watermark = std::numeric_limits<Picos>::max();
    int64_t min_seq = std::numeric_limits<int64_t>::max();
    for (const Unit& v : units_) {
      if (v.cur == kNoId) continue;
      watermark = std::min(watermark, v.in_flight ? v.issue : v.free);
      min_seq = std::min(min_seq, p_.insts[static_cast<size_t>(v.cur)].seq_at(v.cur_future_base, v.ivs.data(), k_));
    }
    observer_->progress(watermark, min_seq);
  }

  void reschedule() {
    const double next = dma_.next_completion();
    if (std::isinf(next)) return;
    push(std::max(now_, static_cast<Picos>(std::ceil(next - 1e-9))), kDmaWake, -1, ++wake_version_);
  }

  void dma_wake(int64_t version) {
    if (version != wake_version_) return;  // superseded by a later reschedule
    done_.clear();
    dma_.complete_until(static_cast<double>(now_), done_);
    for (int id : done_) {
      const int ui = transfer_unit_[static_cast<size_t>(id)];
      Unit& u = units_[static_cast<size_t>(ui)];
      const SimInst& inst = p_.insts[static_cast<size_t>(u.cur)];
      if (inst.collective) {  // done when both the DMA engines and the link are
        const Picos end = std::max(now_, u.issue + inst.cycles_ps);
        if (end > now_) {
          push(end, kCollectiveDone, ui);
          continue;
        }
      }
      finish_transfer(ui, now_);
    }
    reschedule();
  }

  const SimProgram& p_;
  const Kernel& k_;
  DmaBandwidth dma_;
  std::vector<Unit> units_;
  std::vector<Chan> chans_;
  std::vector<int> transfer_unit_;
  std::vector<int> done_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  int64_t wake_version_ = 0;
  Picos now_ = 0;
  BaselineResult result_;
  BaselineObserver* observer_;
  int since_progress_ = 0;
};

}  // namespace

BaselineResult run_event_loop_baseline(const SimProgram& p, BaselineObserver* observer) {
  return Baseline(p, observer).run();
}

}  // namespace tandem
