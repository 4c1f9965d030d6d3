#include "sim/lower/program.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "sched/analysis/allocator.h"
#include "sched/analysis/costed_program.h"
#include "sched/analysis/tile_dependence.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"

namespace tandem {

namespace {

class Lowering {
 public:
  Lowering(const Kernel& k, const DepGraph& g) : k_(k), g_(g), m_(k.target) {
    m_->require_timing();
    p_.model = m_;
    p_.kernel = &k_;
  }

  SimProgram run() {
    check_counts();
    check_capacity();
    order_ = k_.program_order();
    pos_ = program_positions(k_);
    take_costs(cost_program(k_, Placement::Assigned));
    first_of_run_.assign(k_.insts.size(), -1);
    mark_runs(k_.body);
    make_channels();
    std::vector<int64_t> strides;
    number(k_.body, 0, strides);
    marks_.assign(k_.insts.size(), 0);
    p_.walks = walks(k_.body);
    return std::move(p_);
  }

 private:
  // The costed program becomes the simulation program's units and instructions.
  void take_costs(CostedProgram&& costed) {
    p_.units = std::move(costed.units);
    p_.ports = std::move(costed.ports);
    p_.pipes = std::move(costed.pipes);
    p_.dma_fixed_ps = costed.dma_fixed_ps;
    p_.insts.resize(costed.insts.size());
    for (size_t i = 0; i < costed.insts.size(); ++i) static_cast<CostedInst&>(p_.insts[i]) = std::move(costed.insts[i]);
    for (InstId id : order_) p_.dynamic_instructions += p_.insts[static_cast<size_t>(id)].dynamic_count;
  }

  [[noreturn]] void fail(InstId id, const std::string& msg) const {
    throw Error(k_.insts[id].loc, k_.display_name(id) + ": " + msg);
  }

  void make_channels() {
    // (source unit, destination unit), -1 for a barrier: the pair's first dependence
    std::map<std::pair<int, int>, std::array<int64_t, 4>> unit_pairs;
    p_.channels.reserve(g_.num_edges());  // at most one per edge: no growth by doubling
    for (const DepEdgeRef& e : g_.edges()) {
      if (pos_[e.src] < 0 || pos_[e.dst] < 0) continue;
      SimChannel c;
      c.src = e.src;
      c.dst = e.dst;
      c.kind = e.props.kind;
      c.distance = e.props.distance;
      c.key_loop = e.props.distance > 0 ? e.props.loop : k_.common_loop(e.src, e.dst);
      if (c.key_loop != kNoId) c.key_lo = k_.loops[static_cast<size_t>(c.key_loop)].lo;
      const SimInst& s = p_.insts[e.src];
      const SimInst& d = p_.insts[e.dst];
      c.src_dma = !s.is_barrier && p_.units[static_cast<size_t>(s.units[0])].kind == UnitKind::DmaQueue;
      bool past_key = c.key_loop == kNoId;
      for (LoopId l : s.nest) {
        if (past_key) c.src_inner.push_back(l);
        if (l == c.key_loop) past_key = true;
      }
      c.cross_unit = s.is_barrier || d.is_barrier || s.units != d.units;
      if (!s.is_barrier && !d.is_barrier)
        if (std::optional<TileMap> m = edge_tile_map(k_, e.src, e.dst, e.props)) {
          c.tile_key = std::move(m->wait_for);
          c.src_per_key = m->src_instances;
          c.src_tile = numbering(m->src_loops);
          c.dst_tile = numbering(m->dst_loops);
        }
      if (!c.cross_unit && c.distance == 0 && stream_pos(e.src) > stream_pos(e.dst))
        fail(e.dst, "waits for " + s.name + ", which runs after it on " + p_.units[s.units[0]].name +
                        ": an in-order engine can never honour this dependence");
      if (c.cross_unit) {
        // Each pair's first dependence in program order (by its destination, then its source).
        const std::pair<int, int> pair{s.is_barrier ? -1 : s.units[0], d.is_barrier ? -1 : d.units[0]};
        const std::array<int64_t, 4> first{pos_[e.dst], pos_[e.src], e.dst, e.src};
        auto [it, fresh] = unit_pairs.emplace(pair, first);
        if (!fresh) it->second = std::min(it->second, first);
      }
      int id = static_cast<int>(p_.channels.size());
      p_.channels.push_back(std::move(c));
      p_.insts[e.src].out_channels.push_back(id);
      p_.insts[e.dst].in_channels.push_back(id);
    }
    p_.semaphores = static_cast<int64_t>(unit_pairs.size());
    if (m_->semaphores > 0 && p_.semaphores > m_->semaphores) {
      std::vector<std::array<int64_t, 4>> firsts;
      for (const auto& [pair, first] : unit_pairs) firsts.push_back(first);
      std::sort(firsts.begin(), firsts.end());
      const auto& [dst_pos, src_pos, dst, src] = firsts[static_cast<size_t>(m_->semaphores)];
      const SimInst& sd = p_.insts[static_cast<size_t>(dst)];
      const SimInst& ss = p_.insts[static_cast<size_t>(src)];
      fail(static_cast<InstId>(dst),
           fmt::format("the schedule needs {} semaphores, more than the {} of {}: one per pair of units with a "
                       "dependence between them, and {} -> {} ({} -> {}) needs semaphore {}",
                       p_.semaphores, m_->semaphores, m_->name, ss.name, sd.name, unit_label(ss), unit_label(sd),
                       m_->semaphores + 1));
    }
  }

  std::string unit_label(const SimInst& i) const {
    return i.is_barrier ? "a barrier" : p_.units[static_cast<size_t>(i.units[0])].name;
  }

  // Loops with their strides when their iterations are numbered innermost fastest.
  std::vector<std::pair<LoopId, int64_t>> numbering(const std::vector<LoopId>& loops) const {
    std::vector<std::pair<LoopId, int64_t>> out(loops.size());
    int64_t stride = 1;
    for (size_t i = loops.size(); i-- > 0;) {
      out[i] = {loops[i], stride};
      stride *= k_.loops[loops[i]].trip_count();
    }
    return out;
  }

  // Position in its unit's stream order: program position, or the list schedule's order
  // within the same run (instructions of one run share everything but the order).
  std::pair<int, int64_t> stream_pos(InstId id) const {
    auto o = k_.insts[id].attrs.get_int(attr::kOrder);
    return {o ? first_of_run_[id] : pos_[id], o ? *o : 0};
  }

  // Every unit's walk: its instructions in program order, except that a straight run of
  // instructions whose every member carries an `order` (list-schedule) follows that order.
  // All units in one pass: a run is sorted, and each barrier's reach within it found, once
  // for all of them, never per unit with linear searches.
  std::vector<std::vector<WalkNode>> walks(const std::vector<Stmt>& block) {
    const size_t units = p_.units.size();
    std::vector<std::vector<WalkNode>> out(units);
    std::vector<InstId> run;
    std::vector<std::vector<InstId>> mine(units);  // per unit, its part of the run
    auto flush = [&] {
      const bool ordered = !run.empty() && std::all_of(run.begin(), run.end(), [&](InstId id) {
        return k_.insts[id].attrs.get_int(attr::kOrder).has_value();
      });
      if (ordered)
        std::stable_sort(run.begin(), run.end(), [&](InstId a, InstId b) {
          return *k_.insts[a].attrs.get_int(attr::kOrder) < *k_.insts[b].attrs.get_int(attr::kOrder);
        });
      for (auto& m : mine) m.clear();
      for (InstId id : run)
        for (int u : p_.insts[id].units)
          if (mine[u].empty() || mine[u].back() != id) mine[u].push_back(id);
      for (InstId id : run) marks_[id] |= kInRun;
      for (InstId id : run) {
        if (!p_.insts[id].is_barrier) continue;
        const std::vector<InstId> before = reach(id, false, kBefore), after = reach(id, true, kAfter);
        for (int u : p_.insts[id].units) place_barrier(mine[u], id);
        for (InstId v : before) marks_[v] &= ~kBefore;
        for (InstId v : after) marks_[v] &= ~kAfter;
      }
      for (InstId id : run) marks_[id] &= ~kInRun;
      for (size_t u = 0; u < units; ++u) {
        std::vector<WalkNode>& o = out[u];
        const size_t first = o.size();
        for (InstId id : mine[u]) o.push_back({false, id, {}, 0});
        int64_t least = std::numeric_limits<int64_t>::max();
        for (size_t i = o.size(); i-- > first;) {
          least = std::min(least, p_.insts[static_cast<size_t>(o[i].id)].seq_base);
          o[i].future_seq_base = least;
        }
      }
      run.clear();
    };
    for (const Stmt& st : block) {
      if (st.kind == Stmt::kInst) {
        run.push_back(st.id);
        continue;
      }
      flush();
      std::vector<std::vector<WalkNode>> inner = walks(k_.loops[st.id].body);
      for (size_t u = 0; u < units; ++u)
        if (!inner[u].empty()) out[u].push_back({true, st.id, std::move(inner[u]), 0});
    }
    flush();
    return out;
  }

  // The instructions of the run being walked that `barrier` reaches through same-iteration
  // edges (forward: what waits for it; backward: what it waits for), each marked with `flag`.
  std::vector<InstId> reach(InstId barrier, bool forward, uint8_t flag) {
    std::vector<InstId> work{barrier}, seen;
    while (!work.empty()) {
      const InstId v = work.back();
      work.pop_back();
      for (const DepEdgeRef& e : forward ? g_.out_edges(v) : g_.in_edges(v)) {
        const InstId next = forward ? e.dst : e.src;
        if (e.props.distance != 0 || !(marks_[next] & kInRun) || (marks_[next] & flag)) continue;
        marks_[next] |= flag;
        seen.push_back(next);
        work.push_back(next);
      }
    }
    return seen;
  }

  // A barrier's place in one unit's stream (`mine`, the unit's part of the straight run):
  // where the order puts it, unless the unit runs an instruction the barrier waits for
  // after it, or one that waits for the barrier before it (through same-iteration edges via
  // any unit: reach() marked them kBefore and kAfter). The unit would then stop at the
  // barrier, or before it, for good: a pass that leaves its loads in place behind the split's
  // fence relies on the units reaching the fence after them. The unit arrives after the
  // first and before the second, when both can hold.
  void place_barrier(std::vector<InstId>& mine, InstId barrier) const {
    const auto at = std::find(mine.begin(), mine.end(), barrier);
    if (at == mine.end()) return;
    size_t p = static_cast<size_t>(at - mine.begin());
    mine.erase(at);
    size_t lo = 0, hi = mine.size();
    for (size_t i = 0; i < mine.size(); ++i) {
      if (marks_[mine[i]] & kBefore) lo = i + 1;
      if (hi == mine.size() && (marks_[mine[i]] & kAfter)) hi = i;
    }
    if (lo <= hi) p = std::clamp(p, lo, hi);
    mine.insert(mine.begin() + static_cast<std::ptrdiff_t>(p), barrier);
  }

  // Every tensor is live for the whole kernel (static allocation): the spaces must hold them.
  void check_capacity() const {
    if (auto problem = find_capacity_problem(k_)) throw Error(problem->loc, problem->message);
  }

  // The counts below (dynamic instructions, sequence numbers) are exact in 64 bits when the
  // kernel stays within kMaxDynamicCount, as the parser checked; a pass may have grown it.
  void check_counts() const { (void)checked_block_size(k_.body); }

  __int128 checked_block_size(const std::vector<Stmt>& block) const {
    __int128 n = 0;
    for (const Stmt& st : block) {
      if (st.kind == Stmt::kInst) {
        ++n;
        continue;
      }
      const Loop& l = k_.loops[static_cast<size_t>(st.id)];
      n += static_cast<__int128>(l.trip_count()) * (checked_block_size(l.body) + 1);
      if (n > kMaxDynamicCount)
        throw Error(l.loc, "loop " + l.iv + " makes the kernel run more than 2^" +
                               std::to_string(kMaxDynamicCountLog2) +
                               " dynamic instructions and loop iterations (the limit)");
    }
    return n;
  }

  // Dynamic instructions one execution of `block` runs.
  int64_t block_size(const std::vector<Stmt>& block) const {
    int64_t n = 0;
    for (const Stmt& st : block)
      n += st.kind == Stmt::kInst ? 1 : k_.loops[st.id].trip_count() * block_size(k_.loops[st.id].body);
    return n;
  }

  // Sequential program order numbers (SimInst::seq_base, seq_strides).
  void number(const std::vector<Stmt>& block, int64_t base, std::vector<int64_t>& strides) {
    int64_t offset = base;
    for (const Stmt& st : block) {
      if (st.kind == Stmt::kInst) {
        SimInst& s = p_.insts[st.id];
        s.seq_base = offset;
        s.seq_strides = strides;
        ++offset;
        continue;
      }
      const int64_t body = block_size(k_.loops[st.id].body);
      strides.push_back(body);
      number(k_.loops[st.id].body, offset, strides);
      strides.pop_back();
      offset += k_.loops[st.id].trip_count() * body;
    }
  }

  // Program position of the first instruction of each instruction's straight run.
  void mark_runs(const std::vector<Stmt>& block) {
    int first = -1;
    for (const Stmt& st : block) {
      if (st.kind == Stmt::kLoop) {
        first = -1;
        mark_runs(k_.loops[st.id].body);
        continue;
      }
      if (first < 0) first = pos_[st.id];
      first_of_run_[st.id] = first;
    }
  }

  const Kernel& k_;
  const DepGraph& g_;
  std::shared_ptr<const Target> m_;  // k_.target
  std::vector<int> first_of_run_;
  SimProgram p_;
  std::vector<InstId> order_;
  std::vector<int> pos_;
  // walks()'s marks per instruction: in the run being walked, and reached from its barrier
  // being placed backward (kBefore) or forward (kAfter); cleared after each use.
  static constexpr uint8_t kInRun = 1, kBefore = 2, kAfter = 4;
  std::vector<uint8_t> marks_;
};

}  // namespace

namespace {

// A per-tile channel: the first key of the iteration of the key loop `distance` before the
// current one, and an instance's number within an iteration.
int64_t tile_base(const SimChannel& c, const int64_t* counts, int distance) {
  return c.key_loop == kNoId ? 0 : (counts[c.key_loop] - 1 - distance) * c.src_per_key;
}
int64_t tile_index(const std::vector<std::pair<LoopId, int64_t>>& tile, const Kernel& k, const int64_t* ivs) {
  int64_t j = 0;
  for (const auto& [l, stride] : tile) j += (ivs[l] - k.loops[static_cast<size_t>(l)].lo) * stride;
  return j;
}

}  // namespace

int64_t channel_needed_tile_key(const SimChannel& c, const Kernel& k, const int64_t* counts, const int64_t* ivs,
                                bool* needed) {
  *needed = true;
  if (c.key_loop == kNoId) return c.tile_key[static_cast<size_t>(tile_index(c.dst_tile, k, ivs))];
  const int64_t index_in_loop = ivs[c.key_loop] - k.loops[static_cast<size_t>(c.key_loop)].lo;
  *needed = index_in_loop >= c.distance;
  return tile_base(c, counts, c.distance) + c.tile_key[static_cast<size_t>(tile_index(c.dst_tile, k, ivs))];
}

int64_t channel_produced_tile_key(const SimChannel& c, const Kernel& k, const int64_t* counts, const int64_t* ivs) {
  return tile_base(c, counts, 0) + tile_index(c.src_tile, k, ivs);
}

SimProgram lower_for_simulation(const Kernel& k, const DepGraph& g) { return Lowering(k, g).run(); }

}  // namespace tandem
