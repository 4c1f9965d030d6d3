#include "sim/units/fast_forward.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "sched/support/log.h"
#include "sim/units/core_barrier.h"
#include "sim/units/dma_queue.h"
#include "sim/units/dma_system.h"
#include "sim/units/port_arbiter.h"
#include "sim/units/stream_unit.h"

namespace tandem {

namespace {

constexpr int64_t kNeverTime = std::numeric_limits<Picos>::max();

// Listings searched for a repeat: the longest period found is this many listings.
constexpr size_t kRecent = 256;
// Words listed per DMA step, at most, on average over the run, beyond a first allowance (a short
// run is listed at every mark): a state too large to list at every mark is listed at the marks
// the budget allows (any two marks a whole number of periods apart match).
constexpr int64_t kWordsPerStep = 16;
constexpr int64_t kWordsAllowed = int64_t{1} << 18;
// A record kept for a candidate period costs about this many listed words.
constexpr int64_t kWordsPerKept = 4;
// Records given to the observer on one stand-in, at least one period's: its memory holds about
// this many records.
constexpr int64_t kChunkRecords = 4096;
// Candidates whose units repeat and whose observer does not, looked past before replaying.
constexpr int kObserverMisses = 8;
// Words of a listing, at most: a larger state (a program of some 10^5 channels or loops) is
// not listed, and the listings kept to search for a repeat hold at most kRecentWords.
constexpr size_t kMaxWords = size_t{1} << 20;
constexpr size_t kRecentWords = size_t{1} << 22;
// Records kept for one period, at most: a longer period is not skipped.
constexpr size_t kMaxKept = size_t{1} << 20;

class Lister final : public StateVisitor {
 public:
  Lister(std::vector<int64_t>& words, std::vector<Kind>& kinds,
         const std::unordered_map<const void*, int64_t>& identities, Picos now)
      : words_(words), kinds_(kinds), identities_(identities), now_(now) {}
  void exact(int64_t v) override { put_hashed(v, Kind::Exact); }
  void linear(int64_t& v, Kind kind) override {
    // A time still to come moves by the period, so its distance from now repeats; a past
    // time may stay put; a count may move by any amount.
    if (kind == Kind::Time && v >= now_) mix_in(v == kNeverTime ? v : v - now_);
    put(v, kind);
  }
  void real(double v) override {
    int64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    put_hashed(bits, Kind::Real);
  }
  void identity(const void* p) override {
    if (!p) return put_hashed(-1, Kind::Exact);
    const auto it = identities_.find(p);
    if (it == identities_.end()) return refuse();
    put_hashed(it->second, Kind::Exact);
  }
  void refuse() override { refused = true; }
  bool refused = false;
  bool too_large = false;  // refused: more than kMaxWords
  // Of what repeats from one period to the next: the exact and real words and how far each
  // time still to come lies from now.
  uint64_t hash = 0xCBF29CE484222325ULL;

 private:
  void mix_in(int64_t v) { hash = (hash ^ static_cast<uint64_t>(v)) * 0x100000001B3ULL; }
  void put_hashed(int64_t v, Kind kind) {
    mix_in(v);
    put(v, kind);
  }
  void put(int64_t v, Kind kind) {
    if (words_.size() >= kMaxWords) refused = too_large = true;
    if (refused) return;
    words_.push_back(v);
    kinds_.push_back(kind);
  }
  std::vector<int64_t>& words_;
  std::vector<Kind>& kinds_;
  const std::unordered_map<const void*, int64_t>& identities_;
  const Picos now_;
};

// Moves every time and count word by `periods` times its shift.
class Shifter final : public StateVisitor {
 public:
  Shifter(const std::vector<int64_t>& shift, int64_t periods) : shift_(shift), periods_(periods) {}
  void exact(int64_t) override { ++next_; }
  void linear(int64_t& v, Kind) override { v += periods_ * shift_[next_++]; }
  void real(double) override { ++next_; }
  void identity(const void*) override { ++next_; }
  void refuse() override { ++next_; }
  bool moves() const override { return true; }

 private:
  const std::vector<int64_t>& shift_;
  const int64_t periods_;
  size_t next_ = 0;
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ULL;
}

}  // namespace

FastForward::FastForward(SimContext& ctx, InstanceObserver& observer)
    : ctx_(ctx),
      observer_(observer),
      count_shift_(ctx.program.kernel->loops.size()),
      iv_shift_(ctx.program.kernel->loops.size()),
      replay_counts_(ctx.program.kernel->loops.size()),
      replay_ivs_(ctx.program.kernel->loops.size()) {
  const auto n = static_cast<int64_t>(ctx.units.size());
  for (int64_t u = 0; u < n; ++u) {
    StreamUnit* unit = ctx.units[static_cast<size_t>(u)];
    identities_[static_cast<const Waker*>(unit)] = u;
    if (const auto* client = dynamic_cast<const DmaClient*>(unit)) identities_[client] = u;
    if (const auto* queue = dynamic_cast<const DmaQueue*>(unit)) identities_[queue->data_phase()] = n + u;
  }
  // The mark: the loop with the most iterations, as the first unit in it starts each one.
  const std::vector<Loop>& loops = ctx.program.kernel->loops;
  std::vector<int64_t> iterations(loops.size(), 0);
  int64_t most = 0;
  for (size_t l = 0; l < loops.size(); ++l) {
    const int64_t outer = loops[l].parent == kNoId ? 1 : iterations[static_cast<size_t>(loops[l].parent)];
    iterations[l] = outer * std::max<int64_t>(0, loops[l].hi - loops[l].lo);
  }
  for (StreamUnit* u : ctx.units)
    for (LoopId l : u->walk_loops())
      if (iterations[static_cast<size_t>(l)] > most) {
        most = iterations[static_cast<size_t>(l)];
        marker_ = u;
        marker_loop_ = l;
      }
  if (marker_) observer_.steady_loop(marker_loop_);
}

void FastForward::record(const InstanceRecord& r) {
  observer_.record(r);
  keep({r, 0, false, false, 0});
}

void FastForward::barrier_wait(const InstanceRecord& r, Picos ps, bool released_by_dma) {
  observer_.barrier_wait(r, ps, released_by_dma);
  keep({r, ps, true, released_by_dma, 0});
}

void FastForward::keep(Kept k) {
  if (!keeping_ || replaying_ || kept_.size() >= kMaxKept) return;
  k.nest_values = nest_values_.size();
  const std::vector<LoopId>& nest = ctx_.program.insts[static_cast<size_t>(k.r.inst)].nest;
  for (LoopId l : nest) nest_values_.push_back(k.r.loop_counts[l]);
  for (LoopId l : nest) nest_values_.push_back(k.r.loop_ivs[l]);
  kept_.push_back(k);
}

void FastForward::visit_units(StateVisitor& v) {
  for (StreamUnit* u : ctx_.units) u->visit_state(v);
  for (const auto& s : ctx_.semaphores) s->visit_state(v);
  for (CoreBarrier* b : ctx_.barriers)
    if (b) b->visit_state(v);
  if (ctx_.ports) ctx_.ports->visit_state(v);
  if (ctx_.dma) ctx_.dma->visit_state(v);
}

bool FastForward::list(Listing& out, int64_t mark, Picos now) {
  out.mark = mark;
  out.now = now;
  out.words.reserve(last_words_);
  out.kinds.reserve(last_words_);
  Lister units(out.words, out.kinds, identities_, now);
  visit_units(units);
  too_large_ = units.too_large;
  if (units.refused) return false;
  // The observer's state after it, when it lists it (else its records are replayed), then its
  // checks' (else the checks get the records).
  out.unit_words = out.words.size();
  observer_.settle();
  out.observer_listed = list_part(out, [&](StateVisitor& v) { observer_.visit_state(v); });
  out.observer_words = out.words.size();
  out.checks_listed = out.observer_listed && list_part(out, [&](StateVisitor& v) { observer_.visit_checks(v); });
  out.hash = mix(units.hash, out.unit_words);
  return true;
}

bool FastForward::list_part(Listing& out, const std::function<void(StateVisitor&)>& visit) {
  const size_t before = out.words.size();
  Lister lister(out.words, out.kinds, identities_, out.now);
  visit(lister);
  if (!lister.refused) return true;
  out.words.resize(before);
  out.kinds.resize(before);
  return false;
}

Picos FastForward::at_step(Picos now) {
  ++steps_;
  if (!marker_ || too_large_) return now;
  const int64_t started = marker_->started(marker_loop_);
  if (started == marker_seen_) return now;
  marker_seen_ = started;
  ++marks_;
  if (keeping_) {
    if (marks_ != confirm_mark_) return now;
  } else if (listed_words_ > kWordsAllowed + kWordsPerStep * steps_) {
    return now;
  }
  Listing listing;
  const bool listed = list(listing, marks_, now);
  listed_words_ += static_cast<int64_t>(listing.words.size());
  last_words_ = listing.words.size();
  if (!listed) {
    keeping_ = false;
    return now;
  }
  if (keeping_) return confirm(listing, now);
  search(std::move(listing));
  return now;
}

bool FastForward::shift_between(const Listing& a, const Listing& b, size_t from, size_t to,
                                std::vector<int64_t>& shift) const {
  const Picos period = b.now - a.now;
  if (period <= 0 || a.words.size() < to || b.words.size() < to) return false;
  shift.resize(to);
  for (size_t i = from; i < to; ++i) {
    if (a.kinds[i] != b.kinds[i]) return false;
    const int64_t d = b.words[i] - a.words[i];
    switch (a.kinds[i]) {
      case Kind::Exact:
      case Kind::Real:
        if (d != 0) return false;
        break;
      case Kind::Time:
        // A time that stays put is past (or never): one still to come would not move with
        // the period, and what happens at it would not repeat.
        if (d != period && !(d == 0 && (a.words[i] < a.now || a.words[i] == kNeverTime))) return false;
        break;
      case Kind::Count:
        break;
    }
    shift[i] = d;
  }
  return true;
}

FastForward::Follows FastForward::follows(const Listing& a, const Listing& b, std::vector<int64_t>& shift) const {
  if (!a.observer_listed || !b.observer_listed || a.observer_words != b.observer_words ||
      !shift_between(a, b, a.unit_words, a.observer_words, shift))
    return Follows::Units;
  if (!a.checks_listed || !b.checks_listed || a.words.size() != b.words.size() ||
      !shift_between(a, b, a.observer_words, a.words.size(), shift))
    return Follows::Observer;
  return Follows::Checks;
}

void FastForward::search(Listing&& b) {
  // The latest earlier listing the units repeat, unless an older one (a longer period) is
  // repeated whole: the race checker's state repeats only after every rotation buffer has
  // been written alike.
  const Listing* found = nullptr;
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {  // the latest first: the shortest period
    const Listing& a = *it;
    if (a.hash != b.hash || a.unit_words != b.unit_words || !shift_between(a, b, 0, a.unit_words, shift_)) continue;
    if (!found) found = &a;
    if (follows(a, b, shift_) == Follows::Checks) {
      found = &a;
      break;
    }
  }
  if (found) {
    const Listing& a = *found;
    shift_between(a, b, 0, a.unit_words, shift_);
    follows_ = follows(a, b, shift_);
    shift_.resize(follows_ == Follows::Units      ? a.unit_words
                  : follows_ == Follows::Observer ? a.observer_words
                                                  : a.words.size());
    period_ = b.now - a.now;
    confirm_mark_ = b.mark + (b.mark - a.mark);
    logger("sim")->debug(
        "fast-forward: at {} ps the state of {} ps before repeats ({} words: {} the units', {} their observer's, "
        "{} its checks'; the {} repeat); keeping a period",
        b.now, period_, b.words.size(), b.unit_words, b.observer_words - b.unit_words,
        b.words.size() - b.observer_words,
        follows_ == Follows::Units      ? "units'"
        : follows_ == Follows::Observer ? "units' and observer's"
                                        : "whole state's");
    started_b_.clear();
    iv_b_.clear();
    for (const StreamUnit* u : ctx_.units)
      for (LoopId l : u->walk_loops()) {
        started_b_.push_back(u->started(l));
        iv_b_.push_back(u->iv(l));
      }
    kept_.clear();
    nest_values_.clear();
    b_ = std::move(b);
    keeping_ = true;
    return;
  }
  recent_words_ += b.words.size();
  recent_.push_back(std::move(b));
  while (recent_.size() > kRecent || (recent_.size() > 1 && recent_words_ > kRecentWords)) {
    recent_words_ -= recent_.front().words.size();
    recent_.pop_front();
  }
}

Picos FastForward::confirm(const Listing& c, Picos now) {
  keeping_ = false;
  listed_words_ += kWordsPerKept * static_cast<int64_t>(kept_.size());
  recent_.clear();
  recent_words_ = 0;
  std::vector<int64_t> again;
  const size_t units = b_.unit_words;
  if (kept_.size() >= kMaxKept || c.now - b_.now != period_ || c.unit_words != units ||
      !shift_between(b_, c, 0, units, again) || !std::equal(again.begin(), again.end(), shift_.begin())) {
    logger("sim")->debug("fast-forward: at {} ps the next period differs", c.now);
    return now;
  }
  // The observer (and its checks) move on with the units when their state repeated with
  // theirs, twice, by the same shift.
  const Follows again_follows = std::min(follows_, follows(b_, c, again));
  auto same_shift = [&](size_t from, size_t to) {
    return again.size() >= to && shift_.size() >= to &&
           std::equal(again.begin() + static_cast<std::ptrdiff_t>(from),
                      again.begin() + static_cast<std::ptrdiff_t>(to),
                      shift_.begin() + static_cast<std::ptrdiff_t>(from));
  };
  const bool observer_steady = again_follows >= Follows::Observer && same_shift(units, b_.observer_words);
  const bool checks_steady =
      observer_steady && again_follows == Follows::Checks && same_shift(b_.observer_words, b_.words.size());
  if (!find_loop_shifts()) return now;
  int64_t periods = periods_allowed();
  // The observer moves on with the units where it can (its state repeated with theirs); where
  // it cannot, it is given the records; where it can later (its first iterations are listed
  // in the result), nothing is skipped yet.
  const int64_t observer = observer_.periods_allowed(count_shift_, started_now());
  if (observer < 0) return now;
  // A state that repeats only in part may repeat whole a period later (the observer's listing
  // changes as its first iterations are listed): look again a few times before replaying.
  if (observer > 0 && !observer_steady && ++observer_misses_ <= kObserverMisses) return now;
  observer_misses_ = 0;
  // Likewise its checks, until they have missed that many times in a row (a checked tensor
  // that keeps every write of the loop never repeats).
  if (observer > 0 && observer_steady && observer_.checks_records() && !checks_steady &&
      ++checks_misses_ <= kObserverMisses)
    return now;
  if (checks_steady) checks_misses_ = 0;
  observer_listed_ = observer > 0 && observer_steady;
  checks_listed_ = observer_listed_ && checks_steady && shifts_inside_marker_loops();
  if (observer_listed_) periods = std::min(periods, observer);
  logger("sim")->debug("fast-forward: at {} ps a steady period of {} ps and {} records; {} periods skipped{}", c.now,
                       period_, kept_.size(), std::max<int64_t>(periods, 0),
                       !observer_listed_                               ? ", their records replayed"
                       : observer_.checks_records() && !checks_listed_ ? ", their records checked"
                                                                       : "");
  if (periods < 1) return now;
  skip(periods);
  return now + periods * period_;
}

bool FastForward::find_loop_shifts() {
  std::fill(count_shift_.begin(), count_shift_.end(), 0);
  std::fill(iv_shift_.begin(), iv_shift_.end(), 0);
  size_t at = 0;
  for (const StreamUnit* u : ctx_.units)
    for (LoopId l : u->walk_loops()) {
      const int64_t dc = u->started(l) - started_b_[at], dv = u->iv(l) - iv_b_[at];
      ++at;
      int64_t& c_shift = count_shift_[static_cast<size_t>(l)];
      int64_t& v_shift = iv_shift_[static_cast<size_t>(l)];
      if ((dc != 0 && c_shift != 0 && dc != c_shift) || (dv != 0 && v_shift != 0 && dv != v_shift)) return false;
      if (dc != 0) c_shift = dc;
      if (dv != 0) v_shift = dv;
    }
  return true;
}

bool FastForward::shifts_inside_marker_loops() const {
  const std::vector<Loop>& loops = ctx_.program.kernel->loops;
  std::vector<char> inside(loops.size(), 0);  // the marker loop, its ancestors and what they hold
  for (LoopId l = marker_loop_; l != kNoId; l = loops[static_cast<size_t>(l)].parent)
    inside[static_cast<size_t>(l)] = 1;
  for (size_t l = 0; l < loops.size(); ++l)  // (a loop's parent comes first)
    if (loops[l].parent != kNoId && inside[static_cast<size_t>(loops[l].parent)]) inside[l] = 1;
  for (size_t l = 0; l < loops.size(); ++l)
    if ((count_shift_[l] != 0 || iv_shift_[l] != 0) && !inside[l]) return false;
  return true;
}

std::vector<int64_t> FastForward::started_now() const {
  std::vector<int64_t> started(count_shift_.size(), 0);
  for (const StreamUnit* u : ctx_.units)
    for (LoopId l : u->walk_loops())
      started[static_cast<size_t>(l)] = std::max(started[static_cast<size_t>(l)], u->started(l));
  return started;
}

int64_t FastForward::periods_allowed() const {
  int64_t allowed = std::numeric_limits<int64_t>::max();
  for (const StreamUnit* u : ctx_.units) {
    if (u->done()) continue;
    for (LoopId l : u->walk_loops()) {
      const int64_t step = iv_shift_[static_cast<size_t>(l)];
      if (step == 0) continue;
      if (step < 0) return 0;
      const int64_t left = ctx_.program.kernel->loops[static_cast<size_t>(l)].hi - 1 - u->iv(l);
      allowed = std::min(allowed, left / step - 2);
    }
  }
  return allowed == std::numeric_limits<int64_t>::max() ? 0 : allowed;
}

void FastForward::skip(int64_t periods) {
  // The observer moves on with the units unless it needs the records: then it gets them
  // period by period, the units' bounds at each chunk's start standing in for the units
  // (every record of the next chunk starts at or after them: bounds only grow).
  Give give = Give::Nothing;
  if (!observer_listed_)
    give = Give::Records;
  else if (observer_.checks_records() && !checks_listed_)
    give = Give::Checks;
  else if (checks_listed_ && observer_.checks_writes())
    give = Give::Writes;
  int64_t records = 0;
  for (const Kept& k : kept_) records += !k.barrier_wait;
  const int64_t chunk =
      give != Give::Nothing ? std::max<int64_t>(1, kChunkRecords / std::max<int64_t>(1, records)) : periods;
  replaying_ = true;
  UnitBounds bounds;
  for (int64_t done = 0; done < periods;) {
    const int64_t n = std::min(chunk, periods - done);
    if (give != Give::Nothing) {
      bounds.horizons.clear();
      bounds.min_future_seq = std::numeric_limits<int64_t>::max();
      for (const StreamUnit* u : ctx_.units) {
        bounds.horizons.push_back(u->horizon());
        bounds.min_future_seq = std::min(bounds.min_future_seq, u->min_future_seq());
      }
      observer_.stand_in(&bounds);
      for (int64_t j = done + 1; j <= done + n; ++j) give_period(j, give);
      if (give == Give::Checks) observer_.check_progress();
      if (give == Give::Writes) observer_.check_writes_progress();
    }
    shift_state(n);
    done += n;
    skipped_.fetch_add(n * records, std::memory_order_relaxed);
  }
  if (give != Give::Nothing) observer_.stand_in(nullptr);
  replaying_ = false;
}

void FastForward::give_period(int64_t j, Give give) {
  const Picos dt = j * period_;
  for (const Kept& k : kept_) {
    if (give != Give::Records && k.barrier_wait) continue;  // the ledger's own, moved with it
    InstanceRecord r = k.r;
    r.free += dt;
    r.start += dt;
    r.busy_start += dt;
    r.busy_end += dt;
    r.complete += dt;
    if (r.binding_channel >= 0) r.binding_signal += dt;
    const std::vector<LoopId>& nest = ctx_.program.insts[static_cast<size_t>(r.inst)].nest;
    for (size_t i = 0; i < nest.size(); ++i) {
      const auto l = static_cast<size_t>(nest[i]);
      replay_counts_[l] = nest_values_[k.nest_values + i] + j * count_shift_[l];
      replay_ivs_[l] = nest_values_[k.nest_values + nest.size() + i] + j * iv_shift_[l];
    }
    r.loop_counts = replay_counts_.data();
    r.loop_ivs = replay_ivs_.data();
    if (give == Give::Checks)
      observer_.check_record(r);
    else if (give == Give::Writes)
      observer_.check_write(r);
    else if (k.barrier_wait)
      observer_.barrier_wait(r, k.barrier_wait_ps, k.released_by_dma);
    else
      observer_.record(r);
  }
}

void FastForward::shift_state(int64_t periods) {
  Shifter shifter(shift_, periods);
  visit_units(shifter);
  if (observer_listed_) observer_.visit_state(shifter);
  if (checks_listed_) observer_.visit_checks(shifter);
}

}  // namespace tandem
