#include "sched/passes/balance_engines.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sched/analysis/inst_cost.h"
#include "sched/analysis/loop_bounds.h"
#include "sched/analysis/rotation_candidate.h"
#include "sched/ir/kernel_queries.h"
#include "sched/passes/shown_name.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<BalanceEnginesPass::Options>>& BalanceEnginesPass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {};
  return rows;
}

namespace {

double ns(int64_t ps) { return static_cast<double>(ps) / 1000.0; }

struct Bound {
  int64_t ps = 0;
  std::string resource;
};

// One loop's resource work per iteration as the moves change it: each compute engine's, and
// the busiest of the resources no engine choice changes (DMA queues and engines, pipes).
struct LoopWork {
  std::map<std::string, int64_t> engine;
  Bound fixed;
  // The busiest resource: the fixed one, then the engines in name order, on ties.
  Bound bound() const {
    Bound b = fixed;
    for (const auto& [name, ps] : engine)
      if (ps > b.ps) b = {ps, name};
    return b;
  }
};

struct Move {
  size_t candidate = 0;
  std::string to;
};

// The first candidate on the busiest engine that a loop keeps there, and why.
struct Declined {
  size_t candidate = 0;
  size_t to = 0;  // the engine that gave the lowest bound
  Bound after, now;
  bool outer = false;      // the loop's bound fell, but a loop around or inside it would rise
  bool dma_binds = false;  // the bound of a loop with nested loops fell to that of its transfers
};

// A loop's moves and what they do to its bounds.
struct LoopChoice {
  std::vector<Move> moves;
  std::optional<Declined> declined;  // the first candidate it kept where it was, when it moved none
  Bound before, after;               // resource bounds
  Bound with_rings_before, with_rings_after;
  bool kept_back = false;  // the bound with its recurrences did not fall: the moves were taken back
};

// An instruction the pass may move: the engine assign-engines' default would give it, what it
// costs there, and each other engine that may run it with what it costs there.
struct Candidate {
  InstId id = kNoId;
  std::string from;
  int64_t from_ps = 0;
  std::vector<std::pair<std::string, int64_t>> to;
  bool moved = false;
};

class Balancer {
 public:
  Balancer(PassContext& ctx) : ctx_(ctx), k_(ctx.kernel), t_(*ctx.kernel.target) {}

  void run() {
    const std::vector<Chooser> choosers = with_engine_choices();
    const BoundsInput in = choosers.empty() ? BoundsInput{} : bounds_input(k_, ctx_.deps);
    collect_candidates(choosers, in);
    if (candidates_.empty()) {
      ctx_.skip_unchanged("no instruction in a loop may run on more than one engine");
      return;
    }
    measure_loops(in);
    const std::vector<LoopId> order = innermost_first();
    for (LoopId l : order) choose(l);
    keep_where_bound_falls();
    for (LoopId l : order) report(l);
    if (ctx_.stats.get("instructions_moved") == 0)
      ctx_.skip("no loop's resource bound falls by moving work to another engine");
  }

 private:
  // A compute instruction or memset in a loop, with no engine yet, whose opcode the target
  // lists on several engines that may access what it reads and writes, each with a cost.
  // Two engines that share a conflict port on a space it touches are one resource for it, so
  // moving between them gains nothing: such an engine is not offered.
  // The compute work in loops, in program order, that names no engine and that another engine
  // than its first may run: what the bounds are worked out for (none: nothing to weigh).
  struct Chooser {
    InstId id;
    std::vector<std::string> choices;  // engine_choices: its default first
  };
  std::vector<Chooser> with_engine_choices() const {
    std::vector<Chooser> out;
    for (InstId id : k_.program_order()) {
      const Instruction& inst = k_.insts[static_cast<size_t>(id)];
      if (!inst.engine.empty() || inst.loop == kNoId) continue;
      const OpcodeInfo* op = t_.opcode(inst.opcode);
      if (!op || (op->op_class != OpClass::Compute && op->op_class != OpClass::Memset)) continue;
      const std::vector<std::string> choices = engine_choices(k_, id);
      if (choices.size() >= 2 && !t_.is_dma_queue(choices[0]) && may_access(inst, choices[0]))
        out.push_back({id, choices});
    }
    return out;
  }

  void collect_candidates(const std::vector<Chooser>& choosers, const BoundsInput& in) {
    by_loop_.assign(k_.loops.size(), {});
    for (const auto& [id, choices] : choosers) {
      const Instruction& inst = k_.insts[static_cast<size_t>(id)];
      const CostedInst& costed = *in.insts[static_cast<size_t>(id)];
      if (costed.units.empty() || costed.cycles_ps <= 0) continue;
      Candidate c{id, choices[0], costed.cycles_ps, {}};
      for (size_t i = 1; i < choices.size(); ++i) {
        const EngineInfo* e = t_.engine(choices[i]);
        if (!e || e->clock_ghz <= 0 || !may_access(inst, choices[i]) || share_port(inst, choices[0], choices[i]))
          continue;
        const std::optional<ComputeCycles> cycles = compute_cycles(k_, inst, *e);
        if (!cycles) continue;
        c.to.push_back({choices[i], compute_times(*cycles, *e).cycles_ps});
      }
      if (c.to.empty()) continue;
      for (LoopId l : k_.loop_nest(id)) by_loop_[static_cast<size_t>(l)].push_back(candidates_.size());
      candidates_.push_back(std::move(c));
    }
  }

  bool has_nested_loop(LoopId l) const {
    return std::any_of(k_.loops.begin(), k_.loops.end(), [&](const Loop& m) { return m.parent == l; });
  }

  bool may_access(const Instruction& inst, const std::string& engine) const {
    for (bool write : {true, false})
      for (const Access& a : write ? inst.writes : inst.reads) {
        if (a.tensor_id < 0) continue;
        const SpaceInfo* space = t_.space(k_.tensors[static_cast<size_t>(a.tensor_id)].space);
        if (space && !space->allows(engine, write)) return false;
      }
    return true;
  }

  bool share_port(const Instruction& inst, const std::string& a, const std::string& b) const {
    for (const ConflictRule& rule : t_.conflicts) {
      const auto has = [&](const std::string& e) {
        return std::find(rule.engines.begin(), rule.engines.end(), e) != rule.engines.end();
      };
      if (!has(a) || !has(b)) continue;
      for (const auto* list : {&inst.reads, &inst.writes})
        for (const Access& acc : *list)
          if (acc.tensor_id >= 0 && k_.tensors[static_cast<size_t>(acc.tensor_id)].space == rule.space) return true;
    }
    return false;
  }

  // Every loop's work per iteration before any move (only loops with candidates change).
  void measure_loops(const BoundsInput& in) {
    work_.assign(k_.loops.size(), {});
    for (size_t l = 0; l < k_.loops.size(); ++l) {
      if (by_loop_[l].empty()) continue;
      for (const ResourceDemand& d : resource_demands(in, static_cast<LoopId>(l))) {
        if (d.kind == ResourceDemand::Kind::Compute)
          work_[l].engine[d.resource] += d.ps;
        else if (d.ps > work_[l].fixed.ps)
          work_[l].fixed = {d.ps, d.resource};
      }
    }
  }

  // Loops nested deepest first, then in program order: a loop's own choices come before
  // those of the loops around it, which weigh its work by its trip count.
  std::vector<LoopId> innermost_first() const {
    std::vector<std::pair<int, LoopId>> order;
    for (size_t l = 0; l < k_.loops.size(); ++l) {
      int depth = 0;
      for (LoopId p = k_.loops[l].parent; p != kNoId; p = k_.loops[static_cast<size_t>(p)].parent) ++depth;
      order.push_back({-depth, static_cast<LoopId>(l)});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<LoopId> out;
    for (const auto& o : order) out.push_back(o.second);
    return out;
  }

  // The bounds of the loops around `c` (its nest) were `c` on `engine` at `ps` per instance.
  std::vector<LoopWork> moved(const Candidate& c, const std::string& engine, int64_t ps) const {
    std::vector<LoopWork> out;
    const Instruction& inst = k_.insts[static_cast<size_t>(c.id)];
    for (LoopId m : k_.loop_nest(c.id)) {
      LoopWork w = work_[static_cast<size_t>(m)];
      const int64_t n = instances_within(k_, inst.loop, m);
      w.engine[c.from] -= c.from_ps * n;
      w.engine[engine] += ps * n;
      out.push_back(std::move(w));
    }
    return out;
  }

  // One pass over the loop's candidates in program order: each one on the loop's busiest
  // engine goes to the other engine that gives the loop the lowest resource bound, when that
  // bound is below the loop's present one and no other loop around the instruction gets a
  // higher one. The choices are tentative until keep_where_bound_falls.
  void choose(LoopId l) {
    const std::vector<size_t>& mine = by_loop_[static_cast<size_t>(l)];
    if (mine.empty()) return;
    LoopChoice& choice = choices_[l];
    choice.before = work_[static_cast<size_t>(l)].bound();
    for (size_t ci : mine) {
      Candidate& c = candidates_[ci];
      if (c.moved) continue;
      const Bound now = work_[static_cast<size_t>(l)].bound();
      if (now.resource != c.from) continue;
      const std::vector<LoopId> nest = k_.loop_nest(c.id);
      const size_t at = static_cast<size_t>(std::find(nest.begin(), nest.end(), l) - nest.begin());
      std::vector<LoopWork> best;
      size_t best_to = 0;
      for (size_t e = 0; e < c.to.size(); ++e) {
        std::vector<LoopWork> after = moved(c, c.to[e].first, c.to[e].second);
        if (!best.empty() && after[at].bound().ps >= best[at].bound().ps) continue;
        best = std::move(after);
        best_to = e;
      }
      bool others_hold = true;
      for (size_t i = 0; i < nest.size(); ++i)
        if (i != at && best[i].bound().ps > work_[static_cast<size_t>(nest[i])].bound().ps) others_hold = false;
      // In a loop with nested loops a compute engine must still bind after a move: the bound of
      // such a loop counts neither how its nested loops' entries take turns with its own work
      // nor the DMA engines its transfers share as they run ahead, and where the transfers
      // would set its pace it gains less than the bound says, or loses. A loop without nested
      // loops runs at its transfers' pace.
      const bool dma_binds = best[at].bound().ps <= best[at].fixed.ps && has_nested_loop(l);
      if (best[at].bound().ps >= now.ps || !others_hold || dma_binds) {
        if (!choice.declined) choice.declined = Declined{ci, best_to, best[at].bound(), now, !others_hold, dma_binds};
        continue;
      }
      for (size_t i = 0; i < nest.size(); ++i) work_[static_cast<size_t>(nest[i])] = std::move(best[i]);
      choice.moves.push_back({ci, c.to[best_to].first});
      c.moved = true;
    }
    choice.after = work_[static_cast<size_t>(l)].bound();
  }

  // The moves of a loop stand when the loop's bound with its recurrences (as auto's rings
  // leave them: after_rings) falls too: a move may put two instructions that take turns on a
  // value carried from one iteration to the next on two engines, which then wait for each
  // other where one engine ran them back to back. Every loop is judged on one analysis of the
  // kernel with all standing moves; a loop whose moves are taken back changes the loops
  // around it, so the judgement runs again until no loop's moves are taken back.
  void keep_where_bound_falls() {
    std::vector<LoopId> judged;
    for (const auto& [l, choice] : choices_)
      if (!choice.moves.empty()) judged.push_back(l);
    if (judged.empty()) return;
    const BoundsInput before = after_rings();
    for (LoopId l : judged) choices_[l].with_rings_before = loop_bound(before, l);
    for (bool taken_back = true; taken_back;) {
      taken_back = false;
      for (LoopId l : judged) place(l, true);
      const BoundsInput after = after_rings();
      for (LoopId l : judged) {
        LoopChoice& choice = choices_[l];
        if (choice.moves.empty() || choice.kept_back) continue;
        choice.with_rings_after = loop_bound(after, l);
        if (choice.with_rings_after.ps < choice.with_rings_before.ps) continue;
        place(l, false);
        choice.kept_back = true;
        taken_back = true;
      }
    }
  }

  void place(LoopId l, bool moved) {
    const LoopChoice& choice = choices_[l];
    if (choice.kept_back) return;
    for (const Move& m : choice.moves) {
      std::string& engine = k_.insts[static_cast<size_t>(candidates_[m.candidate].id)].engine;
      if (moved)
        engine = m.to;
      else
        engine.clear();
    }
  }

  void report(LoopId l) {
    const auto it = choices_.find(l);
    if (it == choices_.end()) return;
    const LoopChoice& choice = it->second;
    if (choice.moves.empty()) {
      if (choice.declined) report_declined(l, *choice.declined);
      return;
    }
    const Candidate& first = candidates_[choice.moves.front().candidate];
    if (choice.kept_back) {
      ctx_.note(fmt::format(
          "loop {}: {}{} stays on {}: moved, it would lower the loop's resource bound per iteration from {:.1f} ns "
          "({}) to {:.1f} ns, but its bound with its recurrences would be {:.1f} ns ({}), not below {:.1f} ns ({})",
          k_.loops[static_cast<size_t>(l)].iv, k_.display_name(first.id),
          choice.moves.size() > 1 ? fmt::format(" (and {} more)", choice.moves.size() - 1) : "", first.from,
          ns(choice.before.ps), choice.before.resource, ns(choice.after.ps), ns(choice.with_rings_after.ps),
          choice.with_rings_after.resource, ns(choice.with_rings_before.ps), choice.with_rings_before.resource));
      ctx_.stats.add("loops_declined_for_recurrence");
      return;
    }
    for (const Move& m : choice.moves)
      ctx_.log->debug("loop {}: {} {} -> {}", k_.loops[static_cast<size_t>(l)].iv,
                      shown(k_, candidates_[m.candidate].id), candidates_[m.candidate].from, m.to);
    report_moves(l, choice.before, choice.moves);
  }

  // The kernel's bounds input as it places its instructions now, without the loop-carried
  // anti and output edges on tiles address-rotation can ring in their loop (auto rings them,
  // which puts those edges N iterations apart, or leaves a tile on one buffer where its chain
  // fits in the bound).
  BoundsInput after_rings() {
    BoundsInput in = bounds_input(k_, ctx_.deps);
    std::vector<BoundsEdge> kept;
    for (const BoundsEdge& e : in.edges)
      if (!relaxed_by_rings(e, e.key_loop)) kept.push_back(e);
    in.edges = std::move(kept);
    return in;
  }

  // The larger of the loop's resource bound and its recurrence bound.
  static Bound loop_bound(const BoundsInput& in, LoopId l) {
    const LoopBounds b = loop_bounds(in, l);
    if (b.recurrence_ps > b.resource.ps) return {b.recurrence_ps, "the recurrence " + b.recurrence_cause};
    return {b.resource.ps, b.resource.resource};
  }

  bool relaxed_by_rings(const BoundsEdge& e, LoopId l) {
    if (e.distance < 1 || l == kNoId || (e.kind != DepKind::Anti && e.kind != DepKind::Output)) return false;
    const Instruction& src = k_.insts[static_cast<size_t>(e.src)];
    const Instruction& dst = k_.insts[static_cast<size_t>(e.dst)];
    bool any = false;
    for (const Access& w : dst.writes)
      for (const auto* list : {&src.reads, &src.writes})
        for (const Access& a : *list) {
          if (a.tensor_id != w.tensor_id || a.tensor_id < 0) continue;
          if (!ringable(l, a.tensor_id)) return false;
          any = true;
        }
    return any;
  }

  bool ringable(LoopId l, int tensor) {
    if (users_.empty()) users_ = users_by_tensor(k_);
    const auto key = std::make_pair(l, tensor);
    auto it = ringable_.find(key);
    if (it == ringable_.end())
      it = ringable_
               .emplace(key, rotation_candidate(k_, l, tensor, users_[static_cast<size_t>(tensor)], true).ringable())
               .first;
    return it->second;
  }

  void report_declined(LoopId l, const Declined& d) {
    const Candidate& c = candidates_[d.candidate];
    const int64_t n = instances_within(k_, k_.insts[static_cast<size_t>(c.id)].loop, l);
    const std::string why =
        d.after.ps >= d.now.ps ? fmt::format("not below {:.1f} ns ({})", ns(d.now.ps), d.now.resource)
        : d.outer ? fmt::format("below {:.1f} ns ({}), but a loop around or inside it would get a higher one",
                                ns(d.now.ps), d.now.resource)
                  : fmt::format(
                        "below {:.1f} ns ({}), but the transfers would set the pace of a loop with nested "
                        "loops, not a compute engine",
                        ns(d.now.ps), d.now.resource);
    ctx_.note(fmt::format(
        "loop {}: {} stays on {}: on {} ({:.1f} ns per iteration, against {:.1f}) the loop's resource bound per "
        "iteration would be {:.1f} ns ({}), {}",
        k_.loops[static_cast<size_t>(l)].iv, k_.display_name(c.id), c.from, c.to[d.to].first, ns(c.to[d.to].second * n),
        ns(c.from_ps * n), ns(d.after.ps), d.after.resource, why));
  }

  // One note per loop: what moved from where to where, and the bound before and after.
  void report_moves(LoopId l, const Bound& before, const std::vector<Move>& moves) {
    constexpr size_t kNamed = 8;
    std::map<std::pair<std::string, std::string>, std::vector<InstId>> by_pair;
    for (const Move& m : moves) by_pair[{candidates_[m.candidate].from, m.to}].push_back(candidates_[m.candidate].id);
    std::string what;
    size_t named = 0;
    for (const auto& [pair, ids] : by_pair) {
      std::string names;
      for (InstId id : ids)
        if (named < kNamed) names += (names.empty() ? "" : ", ") + k_.display_name(id), ++named;
      if (!names.empty()) what += (what.empty() ? "" : "; ") + names + " from " + pair.first + " to " + pair.second;
    }
    if (moves.size() > named) what += fmt::format(" and {} more", moves.size() - named);
    const Bound after = work_[static_cast<size_t>(l)].bound();
    ctx_.note(fmt::format(
        "loop {}: moved {}: the loop's resource bound per iteration falls from {:.1f} ns ({}) to "
        "{:.1f} ns ({})",
        k_.loops[static_cast<size_t>(l)].iv, what, ns(before.ps), before.resource, ns(after.ps), after.resource));
    ctx_.stats.add("instructions_moved", static_cast<int64_t>(moves.size()));
    ctx_.stats.add("loops_balanced");
  }

  PassContext& ctx_;
  Kernel& k_;
  const Target& t_;
  std::vector<Candidate> candidates_;
  std::vector<std::vector<size_t>> by_loop_;  // per loop: its candidates (nested ones too), in program order
  std::vector<LoopWork> work_;
  std::map<LoopId, LoopChoice> choices_;
  std::vector<std::vector<InstId>> users_;  // users_by_tensor, made on the first question
  std::map<std::pair<LoopId, int>, bool> ringable_;
};

}  // namespace

void BalanceEnginesPass::run(PassContext& ctx) { Balancer(ctx).run(); }

}  // namespace tandem
