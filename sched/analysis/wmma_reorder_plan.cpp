#include "sched/analysis/wmma_reorder_plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

// ---- order modes ----

class ReverseOrder : public WmmaOrderProvider {
 public:
  WmmaOrder order(const Kernel&, const std::vector<InstId>& wmmas) const override {
    WmmaOrder o;
    o.perm.resize(wmmas.size());
    std::iota(o.perm.rbegin(), o.perm.rend(), 0);
    return o;
  }
};

class ExplicitOrder : public WmmaOrderProvider {
 public:
  explicit ExplicitOrder(std::vector<int> perm, std::string text) : perm_(std::move(perm)), text_(std::move(text)) {}
  WmmaOrder order(const Kernel& k, const std::vector<InstId>& wmmas) const override {
    std::vector<int> sorted = perm_;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> identity(wmmas.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (sorted != identity)
      throw Error(k.loops[k.insts[wmmas[0]].loop].loc, "wmma-reorder: order=" + text_ + " is not a permutation of 0.." +
                                                           std::to_string(wmmas.size() - 1) + " (the loop has " +
                                                           std::to_string(wmmas.size()) + " WMMAs)");
    return {perm_, ""};
  }

 private:
  std::vector<int> perm_;
  std::string text_;
};

// The order with the smallest peak of live A/B operand registers (then the smallest sum over
// the issue slots), found exactly by dynamic programming over the sets of WMMAs issued so
// far. An operand is live from its first reader to its last. The WMMAs name their operand
// tiles with `a_tile`/`b_tile` attributes; without them there is nothing to group.
class VgprPressureOrder : public WmmaOrderProvider {
 public:
  WmmaOrder order(const Kernel& k, const std::vector<InstId>& wmmas) const override {
    const size_t n = wmmas.size();
    if (n > 16) return {{}, "more than 16 WMMAs in the body (the exact order search stops at 16)"};
    std::map<std::string, std::pair<uint32_t, int64_t>> operands;  // tile -> (readers, registers)
    for (size_t i = 0; i < n; ++i) {
      const Instruction& w = k.insts[wmmas[i]];
      for (int operand = 0; operand < 2; ++operand) {
        const char* key = operand == 0 ? attr::kATile : attr::kBTile;
        const AttrValue* tile = w.attrs.find(key);
        if (!tile || w.reads.size() < 2)
          return {{}, "WMMA " + k.display_name(wmmas[i]) + " carries no operand grouping (a_tile/b_tile)"};
        const IndexRange& r = w.reads[operand].dims.at(0);
        auto& [readers, regs] = operands[std::string(key) + "=" + format_attr_value(*tile)];
        readers |= 1u << i;
        regs = std::max(regs, r.hi.constant - r.lo.constant);
      }
    }
    struct Best {
      int64_t peak = std::numeric_limits<int64_t>::max(), sum = 0;
      int last = -1;
    };
    std::vector<Best> best(size_t{1} << n);
    best[0] = {0, 0, -1};
    for (uint32_t s = 0; s + 1 < best.size(); ++s) {
      if (best[s].last < 0 && s != 0) continue;
      for (size_t w = 0; w < n; ++w) {
        if (s & (1u << w)) continue;
        const uint32_t next = s | (1u << w);
        int64_t live = 0;
        for (const auto& [tile, info] : operands)
          if ((info.first & next) && (info.first & ~s)) live += info.second;
        const int64_t peak = std::max(best[s].peak, live), sum = best[s].sum + live;
        Best& b = best[next];
        if (b.last < 0 || peak < b.peak || (peak == b.peak && sum < b.sum)) b = {peak, sum, static_cast<int>(w)};
      }
    }
    WmmaOrder o;
    for (uint32_t s = static_cast<uint32_t>(best.size() - 1); s; s &= ~(1u << best[s].last))
      o.perm.push_back(best[s].last);
    std::reverse(o.perm.begin(), o.perm.end());
    return o;
  }
};

// ---- registers ----

struct Regs {
  int tensor = kNoId;
  int64_t lo = 0, hi = 0;  // [lo, hi)
};

Regs regs_of(const Access& a) { return {a.tensor_id, a.dims.at(0).lo.constant, a.dims.at(0).hi.constant}; }
bool overlap(const Regs& a, const Regs& b) { return a.tensor == b.tensor && a.lo < b.hi && b.lo < a.hi; }

bool reads_regs(const Kernel& k, const Instruction& in, const Regs& r) {
  for (const Access& a : in.reads)
    if (k.tensors[a.tensor_id].register_file && overlap(regs_of(a), r)) return true;
  return false;
}

// Is the address `REG + constant` with REG the register the loop advances (`advance =
// "v10 += 512"`)? Only such a load addresses, one iteration later, what it addresses now plus
// the advance: a load through another register, through the loop variable, or in a loop
// with no advance reads the same address or a different sequence, and the stride says
// nothing about it.
bool addressed_by_advance(const Access& a, const std::optional<std::pair<std::string, int64_t>>& advance) {
  if (!advance || a.dims.size() != 1) return false;
  const std::vector<AffineTerm>& terms = a.dims[0].lo.terms;
  return terms.size() == 1 && terms[0].loop < 0 && terms[0].symbol == advance->first && terms[0].coeff == 1;
}

// One register of a register file.
using Reg = std::pair<int, int64_t>;  // (tensor, index)

// Does every instruction of `id`'s loop nest run at least once whenever the code around that
// nest does (all enclosing loops have a positive trip count)?
bool runs_whenever_reached(const Kernel& k, InstId id) {
  for (LoopId l = k.insts[id].loop; l != kNoId; l = k.loops[l].parent)
    if (k.loops[l].trip_count() <= 0) return false;
  return true;
}

// The registers live when `loop` exits: those read, on some path from its exit, before
// anything writes them, and those of the kernel's live_out result. The kernel body runs
// straight through, and every loop after `loop` is entered from its preheader only, so the
// paths from the exit are the instructions after the loop in program order. A write kills a
// register when it certainly happens: its loops all run, it does not add to what is there
// (accumulate), and no instruction since the exit has changed the control flow or the active
// lanes (the `control` attribute). In a nested loop the exit may lead back to the enclosing
// body's start: there every register read outside the loop counts as live.
std::set<Reg> live_after_loop(const Kernel& k, LoopId loop) {
  std::set<Reg> live, killed;
  auto add = [](std::set<Reg>& to, const Access& a) {
    const Regs r = regs_of(a);
    for (int64_t i = r.lo; i < r.hi; ++i) to.insert({r.tensor, i});
  };
  for (const Access& a : k.live_out_registers()) add(live, a);
  const std::vector<InstId> order = k.program_order();
  if (k.loops[loop].parent != kNoId) {
    for (InstId id : order)
      if (!k.in_loop(id, loop))
        for (const Access& a : k.insts[id].reads)
          if (k.tensors[a.tensor_id].register_file) add(live, a);
    return live;
  }
  size_t exit = order.size();
  for (size_t i = order.size(); i-- > 0;)
    if (k.in_loop(order[i], loop)) {
      exit = i + 1;
      break;
    }
  bool certain = true;
  for (size_t i = exit; i < order.size(); ++i) {
    const Instruction& in = k.insts[order[i]];
    auto read = [&](const Access& a) {
      if (!k.tensors[a.tensor_id].register_file) return;
      const Regs r = regs_of(a);
      for (int64_t reg = r.lo; reg < r.hi; ++reg)
        if (!killed.count({r.tensor, reg})) live.insert({r.tensor, reg});
    };
    for (const Access& a : in.reads) read(a);
    const bool accumulates = in.attrs.has(attr::kAccumulate);
    if (accumulates)
      for (const Access& a : in.writes) read(a);
    if (in.attrs.has(attr::kControl)) certain = false;
    if (!certain || accumulates || !runs_whenever_reached(k, order[i])) continue;
    for (const Access& a : in.writes)
      if (k.tensors[a.tensor_id].register_file) add(killed, a);
  }
  return live;
}

// The register the loop advances, when its name is one of a register file ("v113" in a
// loop with `advance = "v113 += 6144"`: register 113 of file v).
std::optional<Regs> advanced_register(const Kernel& k, const std::optional<std::pair<std::string, int64_t>>& advance) {
  if (!advance) return std::nullopt;
  const std::string& name = advance->first;
  const size_t digits = name.find_first_of("0123456789");
  if (digits == 0 || digits == std::string::npos || name.find_first_not_of("0123456789", digits) != std::string::npos ||
      name.size() - digits > 6)
    return std::nullopt;
  const int file = k.find_tensor(name.substr(0, digits));
  if (file == kNoId || !k.tensors[file].register_file) return std::nullopt;
  const int64_t reg = std::stoll(name.substr(digits));
  return Regs{file, reg, reg + 1};
}

// Same address operands: one tensor, index expressions equal but for the constant offset.
std::optional<int64_t> offset_difference(const Access& body, const Access& pre) {
  if (body.tensor_id != pre.tensor_id || body.dims.size() != 1 || pre.dims.size() != 1) return std::nullopt;
  const AffineExpr& b = body.dims[0].lo;
  const AffineExpr& p = pre.dims[0].lo;
  if (!(b - p).is_constant()) return std::nullopt;
  return b.constant - p.constant;
}

int64_t cycles_of(const Kernel& k, InstId id, const char* attr, bool latency) {
  const Instruction& in = k.insts[static_cast<size_t>(id)];
  if (auto v = in.attrs.get_int(attr)) return *v;
  const EngineInfo* e = k.target->engine(preferred_engine(k, id));
  if (!e) return -1;
  const std::optional<double> c = latency ? e->constant_latency(in.opcode) : e->constant_cycles(in.opcode);
  return c && *c >= 0 && *c == std::floor(*c) ? static_cast<int64_t>(*c) : -1;
}

// Live window of a load on the circular body positions: [from, to] inclusive, wrapping when
// from > to.
struct Window {
  int from, to;
  bool covers(int p) const { return from <= to ? (p >= from && p <= to) : (p >= from || p <= to); }
};
bool intersect(const Window& a, const Window& b) { return a.covers(b.from) || b.covers(a.from); }

// What the pass moves, by the opcode tags of the model (`tags: [wmma]`, `[lds_load]`).
bool is_wmma(const Kernel& k, const Instruction& in) { return k.target->has_tag(in.opcode, OpTag::Wmma); }
bool is_ds_load(const Kernel& k, const Instruction& in) { return k.target->has_tag(in.opcode, OpTag::LdsLoad); }

// The ds_load of `body` that writes register `reg` of `tensor` last (kNoId: none).
InstId last_writer(const Kernel& k, const std::vector<InstId>& body, int tensor, int64_t reg) {
  InstId last = kNoId;
  for (InstId id : body)
    if (is_ds_load(k, k.insts[id]) && overlap(regs_of(k.insts[id].writes[0]), Regs{tensor, reg, reg + 1})) last = id;
  return last;
}

// The first WMMA of `body` at or after `id` (kNoId: none).
InstId next_wmma(const Kernel& k, const std::vector<InstId>& body, InstId id) {
  auto it = std::find(body.begin(), body.end(), id);
  auto w = std::find_if(it, body.end(), [&](InstId x) { return is_wmma(k, k.insts[x]); });
  return w == body.end() ? kNoId : *w;
}

// One loop's plan, built phase by phase into `plan`. A phase that finds the loop must be left
// as it is returns the reason; the plan then keeps what the earlier phases filled in.
class ReorderPlanner {
 public:
  ReorderPlanner(const Kernel& k, LoopId loop, WmmaReorderPlan& plan) : k_(k), loop_(loop), plan_(plan) {}

  // Why the loop is left as it is, or "" when the plan is complete.
  std::string plan(const DepGraph& g, const WmmaOrderProvider& provider, int distance, int next_virtual) {
    if (std::string why = read_body(); !why.empty()) return why;
    if (std::string why = pair_prefetches(); !why.empty()) return why;
    if (std::string why = find_consumers(); !why.empty()) return why;
    if (std::string why = check_carried_reads(); !why.empty()) return why;
    if (std::string why = choose_distance(distance); !why.empty()) return why;
    if (std::string why = order_wmmas(g, provider); !why.empty()) return why;
    place_loads();
    build_body();
    if (std::string why = check_address_register(); !why.empty()) return why;
    if (std::string why = check_last_writers(); !why.empty()) return why;
    count_moves();
    return assign_virtual_registers(next_virtual);
  }

 private:
  Regs loaded(const LoadPlacement& lp) const { return regs_of(k_.insts[lp.load].writes[0]); }
  // Are any registers `in_group` accepts live when the loop exits? Their value then is
  // observable, so which load writes them last, and for which iteration, must not change.
  bool read_after_loop(const std::function<bool(const Regs&)>& in_group) const {
    if (!live_after_) live_after_ = live_after_loop(k_, loop_);
    for (const Reg& r : *live_after_)
      if (in_group(Regs{r.first, r.second, r.second + 1})) return true;
    return false;
  }

  // The body: ds_loads and WMMAs only, each ds_load writing one register group.
  std::string read_body() {
    for (const Stmt& s : k_.loops[loop_].body) {
      if (s.kind == Stmt::kLoop) return "the body holds a nested loop";
      const Instruction& in = k_.insts[s.id];
      const OpcodeInfo* op = k_.target->opcode(in.opcode);
      if (op && op->op_class == OpClass::Barrier)
        return "the WMMA sequence spans " + k_.display_name(s.id) + " (" + in.opcode + ")";
      if (!is_wmma(k_, in) && !is_ds_load(k_, in))
        return k_.display_name(s.id) + " (" + in.opcode + ") is neither a ds_load nor a WMMA";
      if (is_ds_load(k_, in) && (in.writes.size() != 1 || !k_.tensors[in.writes[0].tensor_id].register_file))
        return k_.display_name(s.id) + " does not load one register group";
      old_body_.push_back(s.id);
      if (is_wmma(k_, in)) old_wmmas_.push_back(s.id);
    }
    n_ = static_cast<int>(old_wmmas_.size());
    m_ = static_cast<int>(old_body_.size());
    return n_ == 0 ? "no WMMA in the body" : "";
  }

  // The stride, read off preheader/body pairs: same register group, same address operands.
  // Only the body's last writer of a group carries its value into the next iteration. A real
  // prefetch pair loads, in the preheader, what the body copy loads one iteration later: both
  // address the register the loop advances, and their offsets differ by the advance.
  std::string pair_prefetches() {
    advance_ = k_.loops[loop_].advance();
    const std::vector<InstId> preheader = k_.preheader(loop_);
    for (size_t bi = 0; bi < old_body_.size(); ++bi) {
      const InstId b = old_body_[bi];
      const Instruction& body_load = k_.insts[b];
      if (!is_ds_load(k_, body_load)) continue;
      bool rewritten_later = false;
      for (size_t later = bi + 1; later < old_body_.size(); ++later)
        rewritten_later |= is_ds_load(k_, k_.insts[old_body_[later]]) &&
                           overlap(regs_of(k_.insts[old_body_[later]].writes[0]), regs_of(body_load.writes[0]));
      if (rewritten_later) continue;
      for (InstId p : preheader)
        if (std::string why = pair_with(b, p); !why.empty()) return why;
    }
    return "";
  }

  // Is preheader instruction `p` the prefetch of body load `b`? Records the pair, or why a
  // look-alike is none.
  std::string pair_with(InstId b, InstId p) {
    const Instruction& body_load = k_.insts[b];
    const Instruction& pre = k_.insts[p];
    if (!is_ds_load(k_, pre) || pre.writes.size() != 1 || pre.reads.size() != 1 || body_load.reads.size() != 1)
      return "";
    const Regs rb = regs_of(body_load.writes[0]), rp = regs_of(pre.writes[0]);
    if (rb.tensor != rp.tensor || rb.lo != rp.lo || rb.hi != rp.hi) return "";
    auto delta = offset_difference(body_load.reads[0], pre.reads[0]);
    if (!delta || *delta == 0) return "";
    if (!addressed_by_advance(body_load.reads[0], advance_)) {
      std::string through;
      for (const AffineTerm& t : body_load.reads[0].dims[0].lo.terms)
        through += (through.empty() ? "" : " and ") + t.symbol;
      not_a_pair_[b] = k_.display_name(p) + " and " + k_.display_name(b) + " are addressed " +
                       (through.empty() ? "by constants" : "through " + through) +
                       (advance_ ? ", not through " + advance_->first + ", which the loop advances"
                                 : ", and the loop has no advance: no address register moves");
      return "";
    }
    if (*delta != advance_->second)
      return "preheader/body ds_load pairs differ by " + std::to_string(*delta) + ", but the loop advances " +
             advance_->first + " by " + std::to_string(advance_->second);
    plan_.stride = *delta;
    twin_of_[b] = p;
    return "";
  }

  // Who reads each load's value, in the input order: the WMMAs after it up to the next write
  // of its registers; for a prefetched load, those at the top of the next iteration.
  std::string find_consumers() {
    for (int p = 0; p < m_; ++p) {
      const InstId id = old_body_[p];
      if (!is_ds_load(k_, k_.insts[id])) continue;
      LoadPlacement lp;
      lp.load = id;
      auto twin = twin_of_.find(id);
      lp.twin = twin == twin_of_.end() ? kNoId : twin->second;
      const Regs r = regs_of(k_.insts[id].writes[0]);
      for (int step = 1; step < (lp.twin != kNoId ? m_ : m_ - p); ++step) {
        const int q = (p + step) % m_;
        const Instruction& other = k_.insts[old_body_[q]];
        if (is_wmma(k_, other) && reads_regs(k_, other, r)) {
          if (lp.twin != kNoId && q > p)
            return k_.display_name(id) + " has a preheader copy but is read in its own iteration by " +
                   k_.display_name(old_body_[q]);
          lp.consumers.push_back(old_body_[q]);
        }
        if (is_ds_load(k_, other) && overlap(regs_of(other.writes[0]), r)) break;
      }
      if (lp.consumers.empty()) {
        auto why = not_a_pair_.find(id);
        return k_.display_name(id) + " feeds no WMMA" +
               (why == not_a_pair_.end()
                    ? ""
                    : " of its iteration, and no preheader load pairs with it (" + why->second + ")");
      }
      plan_.loads.push_back(std::move(lp));
    }
    return "";
  }

  // A WMMA that reads registers no load of this iteration (or a prefetch) has written yet
  // reads a value carried from the previous iteration with nothing in the preheader to pair
  // with: the pass cannot tell where that value must come from, so it leaves the loop alone.
  std::string check_carried_reads() const {
    for (int q = 0; q < m_; ++q) {
      const Instruction& w = k_.insts[old_body_[q]];
      if (!is_wmma(k_, w)) continue;
      for (const LoadPlacement& lp : plan_.loads) {
        const Regs r = loaded(lp);
        if (!reads_regs(k_, w, r)) continue;
        bool attributed = false;
        for (const LoadPlacement& other : plan_.loads)
          attributed |= overlap(loaded(other), r) && std::find(other.consumers.begin(), other.consumers.end(),
                                                               old_body_[q]) != other.consumers.end();
        if (!attributed) {
          auto why = not_a_pair_.find(lp.load);
          return k_.display_name(old_body_[q]) + " reads registers of " + k_.display_name(lp.load) +
                 " before any load of the iteration writes them, and no preheader load pairs with it" +
                 (why == not_a_pair_.end() ? "" : " (" + why->second + ")");
        }
      }
    }
    return "";
  }

  // The distance: a load's latency over a WMMA's issue cycles, unless given.
  std::string choose_distance(int distance) {
    if (distance < 0 && plan_.loads.empty()) distance = 0;  // nothing to place
    if (distance < 0) {
      int64_t latency = 0, issue = std::numeric_limits<int64_t>::max();
      for (const LoadPlacement& lp : plan_.loads)
        latency = std::max(latency, cycles_of(k_, lp.load, attr::kLatencyCycles, true));
      for (InstId w : old_wmmas_) issue = std::min(issue, cycles_of(k_, w, attr::kIssueCycles, false));
      if (latency <= 0 || issue <= 0) return "no ds_load latency or WMMA issue cycles known; give distance=N";
      distance = static_cast<int>(std::max<int64_t>(1, (latency + issue - 1) / issue));
    }
    plan_.distance = distance;
    return "";
  }

  // The new WMMA order, which must keep the WMMAs' own dependences.
  std::string order_wmmas(const DepGraph& g, const WmmaOrderProvider& provider) {
    WmmaOrder order = provider.order(k_, old_wmmas_);
    if (!order.decline.empty()) return order.decline;
    for (int i = 0; i < n_; ++i) {
      plan_.wmmas.push_back(old_wmmas_[order.perm[i]]);
      new_pos_[old_wmmas_[order.perm[i]]] = i;
      plan_.wmmas_moved += order.perm[i] != i;
    }
    for (InstId w : old_wmmas_)
      for (const DepEdgeRef& e : g.out_edges(w))
        if (e.props.distance == 0 && new_pos_.count(e.dst) && new_pos_[e.dst] < new_pos_[w])
          return "the order puts " + k_.display_name(e.dst) + " before " + k_.display_name(w) +
                 ", which it depends on (" + dep_kind_name(e.props.kind) + ")";
    return "";
  }

  // Placement: `distance` slots before the first consumer; a negative slot wraps to the
  // previous iteration, but never before the last WMMA reading the load's registers (slot n:
  // after the last WMMA of the body). Only a load addressed by the advanced register may
  // wrap (the stride is that register's advance); any other load goes no earlier than the top
  // of the body, as when there is no stride. A load whose registers are read outside the loop
  // keeps whether it is prefetched: wrapping it, or de-rotating it, would change the
  // iteration whose value they hold when the loop ends.
  void place_loads() {
    for (LoadPlacement& lp : plan_.loads) {
      int first = n_, last_reader = -1;
      for (InstId c : lp.consumers) first = std::min(first, new_pos_[c]);
      const Regs r = loaded(lp);
      for (int i = 0; i < n_; ++i)
        if (reads_regs(k_, k_.insts[plan_.wmmas[i]], r)) last_reader = i;
      const int want = first - plan_.distance;
      bool wrap = want < 0 && plan_.stride && addressed_by_advance(k_.insts[lp.load].reads[0], advance_);
      if (read_after_loop([&](const Regs& other) { return overlap(other, r); }) && wrap != (lp.twin != kNoId)) {
        wrap = lp.twin != kNoId;
        ++plan_.loads_kept_for_after_loop;
      }
      if (wrap != (lp.twin != kNoId) &&
          !offset_fits(k_.insts[lp.load].reads[0], wrap ? *plan_.stride : -*plan_.stride)) {
        wrap = lp.twin != kNoId;
        ++plan_.loads_kept_for_offset;
      }
      if (!wrap) {
        lp.slot = std::max(want, 0);
        continue;
      }
      lp.slot = std::min(n_, std::max(want + n_, last_reader + 1));
      lp.wrapped = true;
    }
  }

  // Can the address, moved by `by`, still be written? In a space whose addresses are a
  // register plus an unsigned offset (address_offset_max), the offset from the advanced
  // register must stay in [0, address_offset_max].
  bool offset_fits(const Access& a, int64_t by) const {
    const SpaceInfo* space = k_.target->space(k_.tensors[a.tensor_id].space);
    if (!space || space->address_offset_max <= 0) return true;
    const int64_t offset = a.dims.at(0).lo.constant + by;
    return offset >= 0 && offset <= space->address_offset_max;
  }

  // The new body: each slot's loads in their input order, then the slot's WMMA.
  void build_body() {
    pos_in_body_.assign(k_.insts.size(), -1);
    for (int s = 0; s <= n_; ++s) {
      for (const LoadPlacement& lp : plan_.loads)
        if (lp.slot == s) plan_.body.push_back(lp.load);
      if (s < n_) plan_.body.push_back(plan_.wmmas[s]);
    }
    for (int p = 0; p < m_; ++p) pos_in_body_[plan_.body[p]] = p;
  }

  // A load may overwrite the register the loop advances (its own address): the loads addressed
  // through that register must then all issue no later than the first instruction writing
  // it, in the new body as in the old.
  std::string check_address_register() const {
    const std::optional<Regs> reg = advanced_register(k_, advance_);
    if (!reg) return "";
    InstId writer = kNoId;
    for (InstId id : plan_.body) {
      const Instruction& in = k_.insts[id];
      if (writer != kNoId && is_ds_load(k_, in) && addressed_by_advance(in.reads[0], advance_))
        return k_.display_name(writer) + " overwrites the address register " + advance_->first + " before " +
               k_.display_name(id) + " reads it in the new order";
      if (writer == kNoId)
        for (const Access& w : in.writes)
          if (overlap(regs_of(w), *reg)) writer = id;
    }
    return "";
  }

  // Registers read outside the loop hold, when it ends, the value of their last writer in the
  // body: the new order must not make another load the last one (its prefetch status is kept
  // by place_loads, so the same last writer leaves the same value).
  std::string check_last_writers() const {
    for (const LoadPlacement& lp : plan_.loads) {
      const Regs r = loaded(lp);
      for (int64_t reg = r.lo; reg < r.hi; ++reg) {
        const Regs one{r.tensor, reg, reg + 1};
        if (!read_after_loop([&](const Regs& other) { return overlap(other, one); })) continue;
        const InstId before = last_writer(k_, old_body_, r.tensor, reg);
        const InstId after = last_writer(k_, plan_.body, r.tensor, reg);
        if (before != after)
          return "the new order makes " + k_.display_name(after) + " the last writer of " + k_.tensors[r.tensor].name +
                 "[" + std::to_string(reg) + "] instead of " + k_.display_name(before) +
                 ", and the register is read after the loop";
      }
    }
    return "";
  }

  // Loads moved: a different next WMMA, or a different iteration.
  void count_moves() {
    for (const LoadPlacement& lp : plan_.loads) {
      const bool was_prefetched = lp.twin != kNoId;
      plan_.loads_moved +=
          next_wmma(k_, old_body_, lp.load) != next_wmma(k_, plan_.body, lp.load) || was_prefetched != lp.wrapped;
      plan_.prefetches_added += lp.wrapped && !was_prefetched;
      plan_.prefetches_removed += !lp.wrapped && was_prefetched;
    }
  }

  // Producer groups: loads feeding one operand access of a shared consumer. The group of
  // each load, named by one of its loads (an index into plan.loads).
  std::vector<size_t> producer_groups() const {
    const size_t nl = plan_.loads.size();
    std::vector<size_t> group(nl);
    std::iota(group.begin(), group.end(), 0);
    std::function<size_t(size_t)> root = [&](size_t i) { return group[i] == i ? i : group[i] = root(group[i]); };
    for (size_t i = 0; i < nl; ++i)
      for (size_t j = i + 1; j < nl; ++j)
        for (InstId c : plan_.loads[i].consumers) {
          if (std::find(plan_.loads[j].consumers.begin(), plan_.loads[j].consumers.end(), c) ==
              plan_.loads[j].consumers.end())
            continue;
          for (const Access& a : k_.insts[c].reads)
            if (overlap(regs_of(a), loaded(plan_.loads[i])) && overlap(regs_of(a), loaded(plan_.loads[j])))
              group[root(j)] = root(i);
        }
    std::vector<size_t> roots(nl);
    for (size_t i = 0; i < nl; ++i) roots[i] = root(i);
    return roots;
  }

  // Live window of a load: from its position in the new body to its last consumer's.
  Window window(const LoadPlacement& lp) const {
    int last = -1;
    for (InstId c : lp.consumers) last = std::max(last, pos_in_body_[c]);
    return Window{pos_in_body_[lp.load], last};
  }

  // Collisions: two producers of overlapping registers whose live windows meet. The later
  // group (by new position) moves, with its consumers and preheader copy, to a virtual register.
  std::string assign_virtual_registers(int next_virtual) {
    const size_t nl = plan_.loads.size();
    const std::vector<size_t> root = producer_groups();
    std::vector<int> group_first(nl, m_);
    for (size_t i = 0; i < nl; ++i)
      group_first[root[i]] = std::min(group_first[root[i]], pos_in_body_[plan_.loads[i].load]);
    std::set<size_t> moved;  // group roots given a virtual register
    std::vector<size_t> by_position(nl);
    std::iota(by_position.begin(), by_position.end(), 0);
    std::sort(by_position.begin(), by_position.end(), [&](size_t a, size_t b) {
      return pos_in_body_[plan_.loads[a].load] < pos_in_body_[plan_.loads[b].load];
    });
    for (size_t bi = 0; bi < nl; ++bi)
      for (size_t ai = 0; ai < bi; ++ai) {
        const size_t a = by_position[ai], b = by_position[bi];
        if (moved.count(root[a]) || moved.count(root[b])) continue;
        const LoadPlacement& la = plan_.loads[a];
        const LoadPlacement& lb = plan_.loads[b];
        if (!overlap(loaded(la), loaded(lb))) continue;
        if (!intersect(window(la), window(lb))) continue;
        if (root[a] == root[b])  // one operand group: moving either would split a consumer's read
          return k_.display_name(la.load) + " and " + k_.display_name(lb.load) +
                 " write the same registers for one operand group, and the new order makes both values live at once";
        const size_t later = group_first[root[a]] > group_first[root[b]] ? root[a] : root[b];
        moved.insert(later);
        const InstId earlier = plan_.loads[root[a] == later ? b : a].load;  // the producer it collides with
        if (std::string why =
                move_to_virtual(root, later, earlier, next_virtual + static_cast<int>(plan_.virtuals.size()));
            !why.empty())
          return why;
      }
    return "";
  }

  // Group `group` (its loads, and its consumers' reads of them) to virtual register `number`,
  // unless a consumer reads the group's registers mixed with others or they are read after
  // the loop.
  std::string move_to_virtual(const std::vector<size_t>& root, size_t group, InstId earlier, int number) {
    VirtualRegister v;
    v.number = number;
    std::set<std::pair<int, int64_t>> regs;  // the group's registers
    std::set<InstId> consumers;
    bool prefetched = false;
    for (size_t i = 0; i < plan_.loads.size(); ++i) {
      if (root[i] != group) continue;
      v.loads.push_back(plan_.loads[i].load);
      consumers.insert(plan_.loads[i].consumers.begin(), plan_.loads[i].consumers.end());
      prefetched |= plan_.loads[i].twin != kNoId;
      const Regs r = loaded(plan_.loads[i]);
      for (int64_t reg = r.lo; reg < r.hi; ++reg) regs.insert({r.tensor, reg});
    }
    auto in_group = [&](const Regs& r) {
      for (int64_t reg = r.lo; reg < r.hi; ++reg)
        if (regs.count({r.tensor, reg})) return true;
      return false;
    };
    const std::string what = (prefetched ? "prefetched " : "") + k_.display_name(v.loads[0]) +
                             (prefetched ? " has no legal slot: its registers" : ": its registers") + " collide with " +
                             k_.display_name(earlier) + "'s in the new order";
    // Its consumers must read the group whole: a read mixing it with other registers cannot move.
    for (InstId c : consumers)
      for (size_t ri = 0; ri < k_.insts[c].reads.size(); ++ri) {
        const Regs rr = regs_of(k_.insts[c].reads[ri]);
        if (!in_group(rr)) continue;
        for (int64_t reg = rr.lo; reg < rr.hi; ++reg)
          if (!regs.count({rr.tensor, reg}))
            return what + ", and " + k_.display_name(c) + " reads them with other registers";
        v.reads.push_back({c, ri});
      }
    // Nor may the registers be read after the loop: their value must end up in them.
    if (read_after_loop(in_group)) return what + " and are still read after the loop";
    plan_.virtuals.push_back(std::move(v));
    return "";
  }

  const Kernel& k_;
  const LoopId loop_;
  WmmaReorderPlan& plan_;
  std::optional<std::pair<std::string, int64_t>> advance_;  // the register the loop advances, by how much
  std::vector<InstId> old_body_, old_wmmas_;                // in the input order
  int n_ = 0, m_ = 0;                                       // WMMAs, body instructions
  std::map<InstId, InstId> twin_of_;                        // body load -> its prefetch
  std::map<InstId, std::string> not_a_pair_;                // body load -> why its preheader look-alike is no prefetch
  std::map<InstId, int> new_pos_;                           // WMMA -> its new position among the WMMAs
  std::vector<int> pos_in_body_;                            // instruction -> its position in the new body
  mutable std::optional<std::set<Reg>> live_after_;         // registers live at the loop's exit
};

}  // namespace

std::unique_ptr<WmmaOrderProvider> make_wmma_order(const std::string& mode, const std::string& explicit_order) {
  if (mode == "explicit") {
    if (explicit_order.empty()) throw Error("wmma-reorder: mode=explicit needs order=I:J:... (a permutation)");
    std::vector<int> perm;
    size_t start = 0;
    while (start <= explicit_order.size()) {
      size_t end = explicit_order.find(':', start);
      if (end == std::string::npos) end = explicit_order.size();
      const std::string part = explicit_order.substr(start, end - start);
      if (part.empty() || part.size() > 4 || !std::all_of(part.begin(), part.end(), ::isdigit))
        throw Error("wmma-reorder: order=" + explicit_order +
                    " must be WMMA positions separated by ':' (e.g. 3:2:1:0)");
      perm.push_back(std::stoi(part));
      start = end + 1;
    }
    return std::make_unique<ExplicitOrder>(std::move(perm), explicit_order);
  }
  if (!explicit_order.empty()) throw Error("wmma-reorder: order= is only for mode=explicit");
  if (mode == "reverse") return std::make_unique<ReverseOrder>();
  return std::make_unique<VgprPressureOrder>();
}

WmmaReorderPlan plan_wmma_reorder(const Kernel& k, LoopId loop, const DepGraph& g, const WmmaOrderProvider& provider,
                                  int distance, int next_virtual) {
  WmmaReorderPlan plan;
  plan.loop = loop;
  plan.skip_reason = ReorderPlanner(k, loop, plan).plan(g, provider, distance, next_virtual);
  return plan;
}

}  // namespace tandem
