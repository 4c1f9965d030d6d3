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
        const char* key = operand == 0 ? "a_tile" : "b_tile";
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

// Are any registers `in_group` accepts read outside the loop (by an instruction before or
// after it, or as the kernel's live_out result)? Their value when the loop ends is then
// observable, so which load writes them last, and for which iteration, must not change.
bool read_outside_loop(const Kernel& k, LoopId loop, const std::function<bool(const Regs&)>& in_group) {
  for (const Access& live : k.live_out_registers())
    if (in_group(regs_of(live))) return true;
  for (InstId id : k.program_order())
    if (!k.in_loop(id, loop))
      for (const Access& acc : k.insts[id].reads)
        if (k.tensors[acc.tensor_id].register_file && in_group(regs_of(acc))) return true;
  return false;
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
  auto skip = [&](std::string why) {
    plan.skip_reason = std::move(why);
    return plan;
  };
  // What the pass moves, by the opcode tags of the model (`tags: [wmma]`, `[lds_load]`).
  auto is_wmma = [&](const Instruction& in) { return k.target->has_tag(in.opcode, OpTag::Wmma); };
  auto is_ds_load = [&](const Instruction& in) { return k.target->has_tag(in.opcode, OpTag::LdsLoad); };

  // The body: ds_loads and WMMAs only.
  std::vector<InstId> old_body, old_wmmas;
  for (const Stmt& s : k.loops[loop].body) {
    if (s.kind == Stmt::kLoop) return skip("the body holds a nested loop");
    const Instruction& in = k.insts[s.id];
    const OpcodeInfo* op = k.target->opcode(in.opcode);
    if (op && op->op_class == OpClass::Barrier)
      return skip("the WMMA sequence spans " + k.display_name(s.id) + " (" + in.opcode + ")");
    if (!is_wmma(in) && !is_ds_load(in))
      return skip(k.display_name(s.id) + " (" + in.opcode + ") is neither a ds_load nor a WMMA");
    if (is_ds_load(in) && (in.writes.size() != 1 || !k.tensors[in.writes[0].tensor_id].register_file))
      return skip(k.display_name(s.id) + " does not load one register group");
    old_body.push_back(s.id);
    if (is_wmma(in)) old_wmmas.push_back(s.id);
  }
  const int n = static_cast<int>(old_wmmas.size());
  if (n == 0) return skip("no WMMA in the body");

  // The stride, read off preheader/body pairs: same register group, same address operands.
  // Only the body's last writer of a group carries its value into the next iteration. A real
  // prefetch pair loads, in the preheader, what the body copy loads one iteration later: both
  // address the register the loop advances, and their offsets differ by the advance.
  const auto advance = k.loops[loop].advance();
  std::map<InstId, InstId> twin_of;
  std::map<InstId, std::string> not_a_pair;  // body load -> why its preheader look-alike is no prefetch
  std::vector<InstId> preheader = k.preheader(loop);
  for (size_t bi = 0; bi < old_body.size(); ++bi) {
    const InstId b = old_body[bi];
    const Instruction& body_load = k.insts[b];
    if (!is_ds_load(body_load)) continue;
    bool rewritten_later = false;
    for (size_t later = bi + 1; later < old_body.size(); ++later)
      rewritten_later |= is_ds_load(k.insts[old_body[later]]) &&
                         overlap(regs_of(k.insts[old_body[later]].writes[0]), regs_of(body_load.writes[0]));
    if (rewritten_later) continue;
    for (InstId p : preheader) {
      const Instruction& pre = k.insts[p];
      if (!is_ds_load(pre) || pre.writes.size() != 1 || pre.reads.size() != 1 || body_load.reads.size() != 1) continue;
      const Regs rb = regs_of(body_load.writes[0]), rp = regs_of(pre.writes[0]);
      if (rb.tensor != rp.tensor || rb.lo != rp.lo || rb.hi != rp.hi) continue;
      auto delta = offset_difference(body_load.reads[0], pre.reads[0]);
      if (!delta || *delta == 0) continue;
      if (!addressed_by_advance(body_load.reads[0], advance)) {
        std::string through;
        for (const AffineTerm& t : body_load.reads[0].dims[0].lo.terms)
          through += (through.empty() ? "" : " and ") + t.symbol;
        not_a_pair[b] = k.display_name(p) + " and " + k.display_name(b) + " are addressed " +
                        (through.empty() ? "by constants" : "through " + through) +
                        (advance ? ", not through " + advance->first + ", which the loop advances"
                                 : ", and the loop has no advance: no address register moves");
        continue;
      }
      if (*delta != advance->second)
        return skip("preheader/body ds_load pairs differ by " + std::to_string(*delta) + ", but the loop advances " +
                    advance->first + " by " + std::to_string(advance->second));
      plan.stride = *delta;
      twin_of[b] = p;
    }
  }

  // Who reads each load's value, in the input order: the WMMAs after it up to the next write
  // of its registers; for a prefetched load, those at the top of the next iteration.
  const int m = static_cast<int>(old_body.size());
  for (int p = 0; p < m; ++p) {
    const InstId id = old_body[p];
    if (!is_ds_load(k.insts[id])) continue;
    LoadPlacement lp;
    lp.load = id;
    auto twin = twin_of.find(id);
    lp.twin = twin == twin_of.end() ? kNoId : twin->second;
    const Regs r = regs_of(k.insts[id].writes[0]);
    for (int step = 1; step < (lp.twin != kNoId ? m : m - p); ++step) {
      const int q = (p + step) % m;
      const Instruction& other = k.insts[old_body[q]];
      if (is_wmma(other) && reads_regs(k, other, r)) {
        if (lp.twin != kNoId && q > p)
          return skip(k.display_name(id) + " has a preheader copy but is read in its own iteration by " +
                      k.display_name(old_body[q]));
        lp.consumers.push_back(old_body[q]);
      }
      if (is_ds_load(other) && overlap(regs_of(other.writes[0]), r)) break;
    }
    if (lp.consumers.empty()) {
      auto why = not_a_pair.find(id);
      return skip(k.display_name(id) + " feeds no WMMA" +
                  (why == not_a_pair.end()
                       ? ""
                       : " of its iteration, and no preheader load pairs with it (" + why->second + ")"));
    }
    plan.loads.push_back(std::move(lp));
  }
  // A WMMA that reads registers no load of this iteration (or a prefetch) has written yet
  // reads a value carried from the previous iteration with nothing in the preheader to pair
  // with: the pass cannot tell where that value must come from, so it leaves the loop alone.
  for (int q = 0; q < m; ++q) {
    const Instruction& w = k.insts[old_body[q]];
    if (!is_wmma(w)) continue;
    for (const LoadPlacement& lp : plan.loads) {
      const Regs r = regs_of(k.insts[lp.load].writes[0]);
      if (!reads_regs(k, w, r)) continue;
      bool attributed = false;
      for (const LoadPlacement& other : plan.loads)
        attributed |= overlap(regs_of(k.insts[other.load].writes[0]), r) &&
                      std::find(other.consumers.begin(), other.consumers.end(), old_body[q]) != other.consumers.end();
      if (!attributed) {
        auto why = not_a_pair.find(lp.load);
        return skip(k.display_name(old_body[q]) + " reads registers of " + k.display_name(lp.load) +
                    " before any load of the iteration writes them, and no preheader load pairs with it" +
                    (why == not_a_pair.end() ? "" : " (" + why->second + ")"));
      }
    }
  }

  // The distance: a load's latency over a WMMA's issue cycles, unless given.
  if (distance < 0 && plan.loads.empty()) distance = 0;  // nothing to place
  if (distance < 0) {
    int64_t latency = 0, issue = std::numeric_limits<int64_t>::max();
    for (const LoadPlacement& lp : plan.loads)
      latency = std::max(latency, cycles_of(k, lp.load, attr::kLatencyCycles, true));
    for (InstId w : old_wmmas) issue = std::min(issue, cycles_of(k, w, attr::kIssueCycles, false));
    if (latency <= 0 || issue <= 0) return skip("no ds_load latency or WMMA issue cycles known; give distance=N");
    distance = static_cast<int>(std::max<int64_t>(1, (latency + issue - 1) / issue));
  }
  plan.distance = distance;

  // The new WMMA order, which must keep the WMMAs' own dependences.
  WmmaOrder order = provider.order(k, old_wmmas);
  if (!order.decline.empty()) return skip(order.decline);
  std::map<InstId, int> new_pos;
  for (int i = 0; i < n; ++i) {
    plan.wmmas.push_back(old_wmmas[order.perm[i]]);
    new_pos[old_wmmas[order.perm[i]]] = i;
    plan.wmmas_moved += order.perm[i] != i;
  }
  for (InstId w : old_wmmas)
    for (const DepEdgeRef& e : g.out_edges(w))
      if (e.props.distance == 0 && new_pos.count(e.dst) && new_pos[e.dst] < new_pos[w])
        return skip("the order puts " + k.display_name(e.dst) + " before " + k.display_name(w) +
                    ", which it depends on (" + dep_kind_name(e.props.kind) + ")");

  // Placement: `distance` slots before the first consumer; a negative slot wraps to the
  // previous iteration, but never before the last WMMA reading the load's registers (slot n:
  // after the last WMMA of the body). Only a load addressed by the advanced register may
  // wrap (the stride is that register's advance); any other load goes no earlier than the top
  // of the body, as when there is no stride. A load whose registers are read outside the loop
  // keeps whether it is prefetched: wrapping it, or de-rotating it, would change the
  // iteration whose value they hold when the loop ends.
  for (LoadPlacement& lp : plan.loads) {
    int first = n, last_reader = -1;
    for (InstId c : lp.consumers) first = std::min(first, new_pos[c]);
    const Regs r = regs_of(k.insts[lp.load].writes[0]);
    for (int i = 0; i < n; ++i)
      if (reads_regs(k, k.insts[plan.wmmas[i]], r)) last_reader = i;
    const int want = first - distance;
    bool wrap = want < 0 && plan.stride && addressed_by_advance(k.insts[lp.load].reads[0], advance);
    if (read_outside_loop(k, loop, [&](const Regs& other) { return overlap(other, r); }) &&
        wrap != (lp.twin != kNoId)) {
      wrap = lp.twin != kNoId;
      ++plan.loads_kept_for_after_loop;
    }
    if (!wrap) {
      lp.slot = std::max(want, 0);
      continue;
    }
    lp.slot = std::min(n, std::max(want + n, last_reader + 1));
    lp.wrapped = true;
  }

  // The new body: each slot's loads in their input order, then the slot's WMMA.
  std::vector<int> pos_in_body(k.insts.size(), -1);
  for (int s = 0; s <= n; ++s) {
    for (const LoadPlacement& lp : plan.loads)
      if (lp.slot == s) plan.body.push_back(lp.load);
    if (s < n) plan.body.push_back(plan.wmmas[s]);
  }
  for (int p = 0; p < m; ++p) pos_in_body[plan.body[p]] = p;

  // Registers read outside the loop hold, when it ends, the value of their last writer in the
  // body: the new order must not make another load the last one (its prefetch status is kept
  // above, so the same last writer leaves the same value).
  auto last_writer = [&](const std::vector<InstId>& body, int tensor, int64_t reg) {
    InstId last = kNoId;
    for (InstId id : body)
      if (is_ds_load(k.insts[id]) && overlap(regs_of(k.insts[id].writes[0]), Regs{tensor, reg, reg + 1})) last = id;
    return last;
  };
  for (const LoadPlacement& lp : plan.loads) {
    const Regs r = regs_of(k.insts[lp.load].writes[0]);
    for (int64_t reg = r.lo; reg < r.hi; ++reg) {
      const Regs one{r.tensor, reg, reg + 1};
      if (!read_outside_loop(k, loop, [&](const Regs& other) { return overlap(other, one); })) continue;
      const InstId before = last_writer(old_body, r.tensor, reg), after = last_writer(plan.body, r.tensor, reg);
      if (before != after)
        return skip("the new order makes " + k.display_name(after) + " the last writer of " + k.tensors[r.tensor].name +
                    "[" + std::to_string(reg) + "] instead of " + k.display_name(before) +
                    ", and the register is read after the loop");
    }
  }

  // Loads moved: a different next WMMA, or a different iteration.
  for (const LoadPlacement& lp : plan.loads) {
    auto next_wmma = [&](const std::vector<InstId>& body, InstId id) {
      auto it = std::find(body.begin(), body.end(), id);
      auto w = std::find_if(it, body.end(), [&](InstId x) { return is_wmma(k.insts[x]); });
      return w == body.end() ? kNoId : *w;
    };
    const bool was_prefetched = lp.twin != kNoId;
    plan.loads_moved += next_wmma(old_body, lp.load) != next_wmma(plan.body, lp.load) || was_prefetched != lp.wrapped;
    plan.prefetches_added += lp.wrapped && !was_prefetched;
    plan.prefetches_removed += !lp.wrapped && was_prefetched;
  }

  // Producer groups: loads feeding one operand access of a shared consumer.
  const size_t nl = plan.loads.size();
  std::vector<size_t> group(nl);
  std::iota(group.begin(), group.end(), 0);
  std::function<size_t(size_t)> root = [&](size_t i) { return group[i] == i ? i : group[i] = root(group[i]); };
  for (size_t i = 0; i < nl; ++i)
    for (size_t j = i + 1; j < nl; ++j)
      for (InstId c : plan.loads[i].consumers) {
        if (std::find(plan.loads[j].consumers.begin(), plan.loads[j].consumers.end(), c) ==
            plan.loads[j].consumers.end())
          continue;
        for (const Access& a : k.insts[c].reads)
          if (overlap(regs_of(a), regs_of(k.insts[plan.loads[i].load].writes[0])) &&
              overlap(regs_of(a), regs_of(k.insts[plan.loads[j].load].writes[0])))
            group[root(j)] = root(i);
      }

  // Collisions: two producers of overlapping registers whose live windows meet. The later
  // group (by new position) moves, with its consumers and preheader copy, to a virtual register.
  auto window = [&](const LoadPlacement& lp) {
    int last = -1;
    for (InstId c : lp.consumers) last = std::max(last, pos_in_body[c]);
    return Window{pos_in_body[lp.load], last};
  };
  std::vector<int> group_first(nl, m);
  for (size_t i = 0; i < nl; ++i)
    group_first[root(i)] = std::min(group_first[root(i)], pos_in_body[plan.loads[i].load]);
  std::map<size_t, int> virtual_of;  // group root -> virtual number
  std::vector<size_t> by_position(nl);
  std::iota(by_position.begin(), by_position.end(), 0);
  std::sort(by_position.begin(), by_position.end(),
            [&](size_t a, size_t b) { return pos_in_body[plan.loads[a].load] < pos_in_body[plan.loads[b].load]; });
  for (size_t bi = 0; bi < nl; ++bi)
    for (size_t ai = 0; ai < bi; ++ai) {
      const size_t a = by_position[ai], b = by_position[bi];
      if (virtual_of.count(root(a)) || virtual_of.count(root(b))) continue;
      const LoadPlacement& la = plan.loads[a];
      const LoadPlacement& lb = plan.loads[b];
      if (!overlap(regs_of(k.insts[la.load].writes[0]), regs_of(k.insts[lb.load].writes[0]))) continue;
      if (!intersect(window(la), window(lb))) continue;
      if (root(a) == root(b))  // one operand group: moving either would split a consumer's read
        return skip(
            k.display_name(la.load) + " and " + k.display_name(lb.load) +
            " write the same registers for one operand group, and the new order makes both values live at once");
      const size_t later = group_first[root(a)] > group_first[root(b)] ? root(a) : root(b);
      virtual_of[later] = next_virtual + static_cast<int>(plan.virtuals.size());
      VirtualRegister v;
      v.number = virtual_of[later];
      std::set<std::pair<int, int64_t>> regs;  // the group's registers
      std::set<InstId> consumers;
      bool prefetched = false;
      for (size_t i = 0; i < nl; ++i) {
        if (root(i) != later) continue;
        v.loads.push_back(plan.loads[i].load);
        consumers.insert(plan.loads[i].consumers.begin(), plan.loads[i].consumers.end());
        prefetched |= plan.loads[i].twin != kNoId;
        const Regs r = regs_of(k.insts[plan.loads[i].load].writes[0]);
        for (int64_t reg = r.lo; reg < r.hi; ++reg) regs.insert({r.tensor, reg});
      }
      auto in_group = [&](const Regs& r) {
        for (int64_t reg = r.lo; reg < r.hi; ++reg)
          if (regs.count({r.tensor, reg})) return true;
        return false;
      };
      const InstId earlier = plan.loads[root(a) == later ? b : a].load;  // the producer it collides with
      const std::string what = (prefetched ? "prefetched " : "") + k.display_name(v.loads[0]) +
                               (prefetched ? " has no legal slot: its registers" : ": its registers") +
                               " collide with " + k.display_name(earlier) + "'s in the new order";
      // Its consumers must read the group whole: a read mixing it with other registers cannot move.
      for (InstId c : consumers)
        for (size_t ri = 0; ri < k.insts[c].reads.size(); ++ri) {
          const Regs rr = regs_of(k.insts[c].reads[ri]);
          if (!in_group(rr)) continue;
          for (int64_t reg = rr.lo; reg < rr.hi; ++reg)
            if (!regs.count({rr.tensor, reg}))
              return skip(what + ", and " + k.display_name(c) + " reads them with other registers");
          v.reads.push_back({c, ri});
        }
      // Nor may the registers be read after the loop: their value must end up in them.
      if (read_outside_loop(k, loop, in_group)) return skip(what + " and are still read after the loop");
      plan.virtuals.push_back(std::move(v));
    }
  return plan;
}

}  // namespace tandem
