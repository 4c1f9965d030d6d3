#include "sched/passes/hoist_invariants.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sched/analysis/allocator.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/kernel_queries.h"
#include "sched/passes/shown_name.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<HoistInvariantsPass::Options>>& HoistInvariantsPass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {};
  return rows;
}

namespace {

// The box an access may touch over every iteration of its loops, per dimension [lo, hi);
// nullopt when an index names an address register (its value is not known before the run).
std::optional<std::vector<std::pair<int64_t, int64_t>>> reach(const Kernel& k, const Access& a) {
  std::vector<std::pair<int64_t, int64_t>> box;
  if (a.whole()) {
    for (int64_t d : k.tensors[static_cast<size_t>(a.tensor_id)].shape) box.emplace_back(0, d);
    return box;
  }
  for (const IndexRange& r : a.dims) {
    if (r.lo.uses_register() || r.hi.uses_register()) return std::nullopt;
    box.emplace_back(value_range(k, r.lo).first, value_range(k, r.hi).second);
  }
  return box;
}

// May the two accesses touch a common element in some iterations? Yes when in doubt.
bool may_meet(const Kernel& k, const Access& a, const Access& b) {
  if (a.tensor_id != b.tensor_id) return false;
  const auto x = reach(k, a), y = reach(k, b);
  if (!x || !y || x->size() != y->size()) return true;
  for (size_t d = 0; d < x->size(); ++d)
    if ((*x)[d].first >= (*y)[d].second || (*y)[d].first >= (*x)[d].second) return false;
  return true;
}

bool moves_with(const Access& a, LoopId loop) {
  return std::any_of(a.dims.begin(), a.dims.end(), [&](const IndexRange& r) {
    return r.lo.coeff_of_loop(loop) != 0 || r.hi.coeff_of_loop(loop) != 0;
  });
}

// The instructions of one loop's body moved in front of it, in program order, and where each
// stood in the body (to put them back).
struct Batch {
  LoopId loop;
  std::vector<InstId> moved;
  std::vector<size_t> index;
};

class Hoister {
 public:
  explicit Hoister(PassContext& ctx) : ctx_(ctx), k_(ctx.kernel) {
    for (const ExplicitDep& d : k_.explicit_deps) named_by_dep_.insert(named_by_dep_.end(), {d.src, d.dst});
    std::sort(named_by_dep_.begin(), named_by_dep_.end());
  }

  void run() {
    hoist_innermost_first();
    if (fitted_.value_or(false)) undo_until_it_fits();
    std::vector<InstId> moves;  // one per loop left: an instruction may leave several
    for (const Batch& b : batches_) moves.insert(moves.end(), b.moved.begin(), b.moved.end());
    const std::set<InstId> hoisted(moves.begin(), moves.end());
    ctx_.stats.add("hoisted", static_cast<int64_t>(hoisted.size()));
    ctx_.stats.add("loops_left", static_cast<int64_t>(moves.size()));
    if (!moves.empty()) ctx_.deps = build_dep_graph(k_);
    ctx_.unchanged = !fitted_;  // nothing ever moved: the pass manager need not check the kernel again
  }

 private:
  struct Use {
    InstId inst;
    size_t pos;  // in the loop's program order
    const Access* access;
  };
  // A loop's accesses by tensor, in program order: what writes it, what reads it.
  struct Uses {
    std::unordered_map<int, std::vector<Use>> writes, reads;
    const std::vector<Use>& of(const std::unordered_map<int, std::vector<Use>>& m, int tensor) const {
      static const std::vector<Use> kNone;
      const auto it = m.find(tensor);
      return it == m.end() ? kNone : it->second;
    }
  };

  // Is `x` a candidate in `loop` at all: work that could repeat unchanged (its indices do not
  // move with the loop)? Candidates that stay get a reason; the rest are not mentioned.
  bool candidate(InstId x, LoopId loop) const {
    const Instruction& in = k_.insts[static_cast<size_t>(x)];
    const OpcodeInfo* op = k_.target->opcode(in.opcode);
    if (!op || (op->op_class != OpClass::Compute && op->op_class != OpClass::Memset)) return false;
    if (in.attrs.has(attr::kAccumulate) || in.attrs.has(attr::kZeroInit)) return false;
    for (const auto* list : {&in.reads, &in.writes})
      for (const Access& a : *list)
        if (moves_with(a, loop) || !reach(k_, a)) return false;
    return true;
  }

  // Why `x`, a candidate of `loop`, must stay in it; "" when every iteration computes the same
  // thing into the same place and nothing else in the loop sees the difference.
  std::string why_stays(InstId x, size_t x_pos, const Uses& uses) const {
    const Instruction& in = k_.insts[static_cast<size_t>(x)];
    if (std::binary_search(named_by_dep_.begin(), named_by_dep_.end(), x)) return "a dep line names it";
    for (const auto* list : {&in.reads, &in.writes})
      for (const Access& a : *list)
        if (k_.tensors[static_cast<size_t>(a.tensor_id)].attrs.has(attr::kBuffers))
          return "%" + a.tensor + " is a ring";
    for (const Access& w : in.writes)
      for (const Access& r : in.reads)
        if (may_meet(k_, w, r)) return "it reads %" + r.tensor + ", which it writes";
    for (const Access& mine : in.reads)
      for (const Use& u : uses.of(uses.writes, mine.tensor_id))
        if (!gone(u.inst) && may_meet(k_, *u.access, mine))
          return fmt::format("{} writes %{}, which it reads", shown(k_, u.inst), mine.tensor);
    for (const Access& mine : in.writes) {
      for (const Use& u : uses.of(uses.writes, mine.tensor_id))
        if (u.inst != x && !gone(u.inst) && may_meet(k_, *u.access, mine))
          return fmt::format("{} writes %{} too", shown(k_, u.inst), mine.tensor);
      for (const Use& u : uses.of(uses.reads, mine.tensor_id)) {
        if (u.pos >= x_pos) break;
        if (!gone(u.inst) && may_meet(k_, *u.access, mine))
          return fmt::format("{} reads %{} before it", shown(k_, u.inst), mine.tensor);
      }
    }
    return "";
  }

  bool gone(InstId id) const { return gone_[static_cast<size_t>(id)] != 0; }

  // Which of `loop`'s own instructions go in front of it, in program order.
  std::vector<InstId> plan(LoopId loop) {
    const std::vector<InstId> order = k_.program_order(loop);
    Uses uses;
    for (size_t p = 0; p < order.size(); ++p) {
      const Instruction& in = k_.insts[static_cast<size_t>(order[p])];
      for (const Access& a : in.writes) uses.writes[a.tensor_id].push_back({order[p], p, &a});
      for (const Access& a : in.reads) uses.reads[a.tensor_id].push_back({order[p], p, &a});
    }
    std::vector<InstId> moved;
    gone_.resize(k_.insts.size());
    for (size_t p = 0; p < order.size(); ++p) {
      const InstId x = order[p];
      if (k_.insts[static_cast<size_t>(x)].loop != loop || !candidate(x, loop)) continue;
      const std::string why = why_stays(x, p, uses);
      if (!why.empty()) {
        ctx_.skip(
            fmt::format("loop {}: {} stays in it: {}", k_.loops[static_cast<size_t>(loop)].iv, shown(k_, x), why));
        continue;
      }
      moved.push_back(x);
      gone_[static_cast<size_t>(x)] = 1;
    }
    for (InstId x : moved) gone_[static_cast<size_t>(x)] = 0;
    return moved;
  }

  // Loops innermost first, so that what leaves a loop is a candidate of the one around it.
  // Loops of one depth are disjoint: each level's moves into a parent block are made at once.
  void hoist_innermost_first() {
    std::map<int, std::vector<LoopId>, std::greater<int>> by_depth;
    for (LoopId l = 0; l < static_cast<LoopId>(k_.loops.size()); ++l)
      by_depth[k_.loops[static_cast<size_t>(l)].depth].push_back(l);
    for (const auto& [depth, loops] : by_depth) {
      std::map<LoopId, std::vector<size_t>> into;  // parent -> its batches of this level
      for (LoopId l : loops) {
        std::vector<InstId> moved = plan(l);
        if (moved.empty()) continue;
        if (!fitted_) fitted_ = !find_capacity_problem(k_);  // the kernel as it was, before the first move
        Batch b{l, std::move(moved), {}};
        take_out(b);
        into[k_.loops[static_cast<size_t>(l)].parent].push_back(batches_.size());
        batches_.push_back(std::move(b));
      }
      for (const auto& [parent, which] : into) put_in_front(parent, which);
    }
  }

  // Removes the batch's instructions from its loop's body, noting where each stood.
  void take_out(Batch& b) {
    std::vector<InstId> sorted = b.moved;
    std::sort(sorted.begin(), sorted.end());
    std::vector<Stmt> body;
    const std::vector<Stmt>& old = k_.block_of(b.loop);
    for (size_t i = 0; i < old.size(); ++i) {
      const bool moves = old[i].kind == Stmt::kInst && std::binary_search(sorted.begin(), sorted.end(), old[i].id);
      if (moves)
        b.index.push_back(i);
      else
        body.push_back(old[i]);
    }
    k_.replace_block(b.loop, std::move(body));
  }

  // Places each batch's instructions just before its loop in `parent`'s block, in order.
  void put_in_front(LoopId parent, const std::vector<size_t>& which) {
    std::map<LoopId, const Batch*> of_loop;
    for (size_t i : which) of_loop[batches_[i].loop] = &batches_[i];
    std::vector<Stmt> block;
    for (const Stmt& s : k_.block_of(parent)) {
      if (s.kind == Stmt::kLoop)
        if (auto it = of_loop.find(s.id); it != of_loop.end())
          for (InstId x : it->second->moved) {
            block.push_back({Stmt::kInst, x});
            k_.insts[static_cast<size_t>(x)].loop = parent;
            ctx_.log->debug("{} moved out of loop {}", shown(k_, x), k_.loops[static_cast<size_t>(s.id)].iv);
          }
      block.push_back(s);
    }
    k_.replace_block(parent, std::move(block));
  }

  // The last batch back into its loop: its instructions stand just before the loop (every
  // later batch, which could have moved them on, is undone already).
  void undo_last() {
    const Batch& b = batches_.back();
    const LoopId parent = k_.loops[static_cast<size_t>(b.loop)].parent;
    std::vector<Stmt> block = k_.block_of(parent);
    const auto at = std::find_if(block.begin(), block.end(),
                                 [&](const Stmt& s) { return s.kind == Stmt::kLoop && s.id == b.loop; });
    block.erase(at - static_cast<ptrdiff_t>(b.moved.size()), at);
    k_.replace_block(parent, std::move(block));
    std::vector<Stmt> body = k_.block_of(b.loop);
    for (size_t i = 0; i < b.moved.size(); ++i) {
      body.insert(body.begin() + static_cast<ptrdiff_t>(b.index[i]), Stmt{Stmt::kInst, b.moved[i]});
      k_.insts[static_cast<size_t>(b.moved[i])].loop = b.loop;
    }
    k_.replace_block(b.loop, std::move(body));
    batches_.pop_back();
  }

  // A result now live across a whole loop can overflow the on-chip buffer: batches are undone,
  // the last first, until the kernel fits as it did (what is left is a prefix of the moves, each
  // legal given the ones before it).
  void undo_until_it_fits() {
    while (!batches_.empty()) {
      const std::optional<CapacityProblem> problem = find_capacity_problem(k_);
      if (!problem) return;
      const Batch& b = batches_.back();
      std::string names;
      for (InstId x : b.moved) names += (names.empty() ? "" : ", ") + k_.display_name(x);
      ctx_.note(fmt::format("loop {}: {} left in it: moved out, {}", k_.loops[static_cast<size_t>(b.loop)].iv, names,
                            problem->message));
      undo_last();
    }
  }

  PassContext& ctx_;
  Kernel& k_;
  std::vector<InstId> named_by_dep_;  // sorted
  std::vector<uint8_t> gone_;         // by instruction: moved out of the loop being planned
  std::vector<Batch> batches_;        // in the order made
  std::optional<bool> fitted_;        // did the on-chip tensors fit before the first move (none: no move)
};

}  // namespace

void HoistInvariantsPass::run(PassContext& ctx) {
  const Kernel& k = ctx.kernel;
  if (k.deps_listed()) {
    ctx.skip_unchanged("the kernel lists its dependences; hoist-invariants needs them derived from the accesses");
    return;
  }
  for (const Instruction& in : k.insts)
    if (!in.erased && in.attrs.has(attr::kOrder)) {
      ctx.skip_unchanged("the kernel is list-scheduled (order attributes); hoist-invariants runs before list-schedule");
      return;
    }
  Hoister(ctx).run();
}

}  // namespace tandem
