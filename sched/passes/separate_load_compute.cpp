#include "sched/passes/separate_load_compute.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "sched/analysis/allocator.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/rotation_candidate.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/passes/shown_name.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<SeparateLoadComputePass::Options>>& SeparateLoadComputePass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {
      flag_option("memset", &Options::memset,
                  "indirect loads (gathers) join the load class; a gather whose index tile is in SBUF gets a "
                  "zero-init memset_<tensor> Flow-wired before it"),
      flag_option("post-ada", &Options::post_ada,
                  "also move the qualified loads physically before the first non-load instruction"),
  };
  return rows;
}

void SeparateLoadComputePass::Options::check() const {
  if (memset && post_ada)
    throw Error("separate-load-compute: {memset} and {post-ada} are separate variants of the pass; run one at a time");
}

// What the split of every loop asks of the whole kernel, kept from one loop to the next: built
// again per loop, it would make the pass quadratic in the number of loops.
struct SeparateLoadComputePass::Shared {
  explicit Shared(const Kernel& k) : op_class(k) {}
  OpClassOf op_class;  // the pass adds instructions but changes no opcode
  // Each tensor's users in program order (what rotation_candidate reads), while it holds: a
  // barrier touches no tensor, so only an inserted memset or a moved load makes it stale.
  std::optional<std::vector<std::vector<InstId>>> users;
  // By instruction id, for the loop being split, and clear between loops: a candidate load,
  // one disqualified, and the position in the loop's body; and MoveBlocker's positions.
  std::vector<char> candidate, disqualified;
  std::vector<size_t> body_pos;
  std::vector<int> order_pos;
  // {post-ada}: each loop's moves, with its block before them, to undo those the capacity
  // does not allow.
  struct Hoist {
    LoopId loop;
    InstId barrier;
    std::vector<Stmt> block;
    std::vector<InstId> moved;
  };
  std::vector<Hoist> hoists;
};

void SeparateLoadComputePass::run(PassContext& ctx) {
  Shared shared(ctx.kernel);
  const bool fitted = o_.post_ada && !find_capacity_problem(ctx.kernel);
  for (LoopId l = 0; l < static_cast<LoopId>(ctx.kernel.loops.size()); ++l) split(ctx, l, shared);
  if (fitted) keep_within_capacity(ctx, shared);
}

// The loads `moved` from `first` on stay behind their loop's fence `barrier`: they wait for it
// like the rest of the compute stage, and every order into them that the analysis of the
// program as it now stands finds is back (the cut may have removed one only the fence kept).
static void stay_behind_fence(PassContext& ctx, InstId barrier, const std::vector<InstId>& moved, size_t first) {
  const std::unordered_set<InstId> staying(moved.begin() + static_cast<ptrdiff_t>(first), moved.end());
  for (InstId id : staying) {
    ctx.deps.remove(id, barrier);
    ctx.deps.add(barrier, id, DepKind::Flow);
  }
  analyze_dependences(ctx.kernel).for_each_edge([&](const DepEdgeRef& e) {
    if (staying.count(e.dst) && e.src != e.dst)
      ctx.deps.add(e.src, e.dst, e.props.kind, e.props.distance, e.props.loop);
  });
}

// A kernel whose tensors fit keeps fitting: a load moved before the fence is live from there,
// so where the moves overflow a space, a loop keeps the longest prefix of its moves that fits
// (a later load would be live longer still) and its other loads stay where they were, counted
// as loads_not_moved. Loops are settled in order, each against the earlier ones' moves.
void SeparateLoadComputePass::keep_within_capacity(PassContext& ctx, Shared& shared) {
  Kernel& k = ctx.kernel;
  std::vector<Shared::Hoist>& hoists = shared.hoists;
  // The overflow with the moves of the loops before h as kept, the first n of h's, none after.
  auto problem_with = [&](size_t h, size_t n) {
    for (size_t j = h; j < hoists.size(); ++j) {
      k.replace_block(hoists[j].loop, hoists[j].block);
      const std::vector<InstId>& all = hoists[j].moved;
      if (j == h)
        k.move_all_before(std::vector<InstId>(all.begin(), all.begin() + static_cast<ptrdiff_t>(n)), hoists[j].barrier);
    }
    return find_capacity_problem(k);
  };
  for (size_t h = 0; h < hoists.size(); ++h) {
    // The moves of every loop from h on, as made: when they fit, all is settled.
    for (size_t j = h; j < hoists.size(); ++j) {
      k.replace_block(hoists[j].loop, hoists[j].block);
      k.move_all_before(hoists[j].moved, hoists[j].barrier);
    }
    if (!find_capacity_problem(k)) return;
    size_t lo = 0, hi = hoists[h].moved.size();  // no problem with lo moves; the most that fit is in [lo, hi]
    if (!problem_with(h, hi)) continue;
    --hi;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (!problem_with(h, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    const std::optional<CapacityProblem> problem = problem_with(h, lo + 1);
    problem_with(h, lo);
    const Shared::Hoist& hoist = hoists[h];
    stay_behind_fence(ctx, hoist.barrier, hoist.moved, lo);
    const int64_t stay = static_cast<int64_t>(hoist.moved.size() - lo);
    ctx.stats.add("loads_moved", -stay);
    ctx.stats.add("loads_not_moved", stay);
    const std::string what = problem ? problem->message.substr(0, problem->message.find(" (")) : "";
    const std::string first = k.display_name(hoist.moved[lo]);
    ctx.note(fmt::format("loop {}: {} {} behind the fence: moved before it, {} would make the tensors overflow ({})",
                         k.loops[hoist.loop].iv, first,
                         stay > 1 ? "and the " + std::to_string(stay - 1) + " loads after it stay" : "stays", first,
                         what));
  }
}

namespace {

// The loop's own instructions (not those of loops nested in it), in program order.
std::vector<InstId> region_of(const Kernel& k, LoopId loop) {
  std::vector<InstId> out;
  for (const Stmt& s : k.loops[loop].body)
    if (s.kind == Stmt::kInst) out.push_back(s.id);
  return out;
}

// An edge the split removes: from inside the loop, at most one iteration back, an order
// rather than data (the WAR that pins load(i) behind compute(i-1), the WAW on its own tile,
// queue order). Edges at a larger distance come from multi-buffering; a Flow edge carries
// data the load needs (a gather's index tile) and stays.
bool cuttable(const Kernel& k, LoopId loop, const DepEdgeRef& e) {
  return k.in_loop(e.src, loop) && e.props.distance <= 1 && e.props.kind != DepKind::Flow;
}

// Could two accesses touch a common element? Exact for constant ranges (register groups,
// fixed tiles), conservative otherwise.
bool may_touch(const Access& a, const Access& b) {
  if (a.tensor_id != b.tensor_id) return false;
  if (a.whole() || b.whole()) return true;
  for (size_t d = 0; d < a.dims.size() && d < b.dims.size(); ++d) {
    const IndexRange &x = a.dims[d], &y = b.dims[d];
    if (!x.lo.is_constant() || !x.hi.is_constant() || !y.lo.is_constant() || !y.hi.is_constant()) continue;
    if (x.hi.constant <= y.lo.constant || y.hi.constant <= x.lo.constant) return false;
  }
  return true;
}

// The first instruction between `from` and the load `id` in program order (the loop's own and
// those of loops nested in it) that touches what the load writes: moving the load above it
// would change what the program means. kNoId when there is none. Instructions in `gone` (the
// loads already moved above `from`) are no longer between. Built for a kernel that does not
// change while it is asked; it looks only at the users of the tensors the load writes.
// `from` and `id` both lie in `loop`'s body, so whatever lies between them lies inside the
// loop: its instructions alone are indexed (positions in `pos`, all -1 outside, which it
// leaves so), not the whole program once per loop.
class MoveBlocker {
 public:
  MoveBlocker(const Kernel& k, LoopId loop, std::vector<int>& pos) : k_(k), order_(k.program_order(loop)), pos_(pos) {
    if (pos_.size() < k.insts.size()) pos_.resize(k.insts.size(), -1);
    for (size_t i = 0; i < order_.size(); ++i) {
      const InstId id = order_[i];
      pos_[static_cast<size_t>(id)] = static_cast<int>(i);
      for (const auto* list : {&k.insts[id].reads, &k.insts[id].writes})
        for (const Access& a : *list) {
          if (a.tensor_id < 0) continue;
          std::vector<InstId>& u = users_[a.tensor_id];
          if (u.empty() || u.back() != id) u.push_back(id);
        }
    }
  }
  ~MoveBlocker() {
    for (InstId id : order_) pos_[static_cast<size_t>(id)] = -1;
  }
  MoveBlocker(const MoveBlocker&) = delete;
  MoveBlocker& operator=(const MoveBlocker&) = delete;

  // Does `a` come before `b`? (Both inside the loop.)
  bool before(InstId a, InstId b) const { return pos_[static_cast<size_t>(a)] < pos_[static_cast<size_t>(b)]; }

  InstId operator()(InstId id, InstId from, const std::unordered_set<InstId>& gone = {}) const {
    InstId first = kNoId;
    for (const Access& w : k_.insts[id].writes) {
      const std::vector<InstId>& users = users_.at(w.tensor_id);
      auto it = std::upper_bound(users.begin(), users.end(), pos_[from], [&](int p, InstId u) { return p < pos_[u]; });
      for (; it != users.end() && pos_[*it] < pos_[id] && (first == kNoId || pos_[*it] < pos_[first]); ++it) {
        if (gone.count(*it)) continue;
        bool touches = false;
        for (const auto* list : {&k_.insts[*it].reads, &k_.insts[*it].writes})
          for (const Access& a : *list) touches = touches || may_touch(w, a);
        if (touches) first = *it;
      }
    }
    return first;
  }

 private:
  const Kernel& k_;
  const std::vector<InstId> order_;                     // the loop's instructions in program order
  std::vector<int>& pos_;                               // by instruction: its place in order_
  std::unordered_map<int, std::vector<InstId>> users_;  // by tensor: the loop's users of it, in order
};

// The one compute engine an instruction can run on (the one it names, or the only one its
// opcode lists), or "" when there is a choice or it runs on a DMA queue. A compute engine
// runs its stream in order, each instruction reading its inputs before the next issues.
std::string only_compute_engine(const Kernel& k, InstId id) {
  const std::string engine = known_engine(k, id);
  return k.target->engines.count(engine) ? engine : "";
}

}  // namespace

// One loop's split, as its phases: classify the loop's loads, cut their orders, add the
// zero-inits {memset} asks for, insert the stage divider, hoist the loads {post-ada} asks
// for, and check that no order the split removes survived.
class SeparateLoadComputePass::LoopSplit {
 public:
  LoopSplit(PassContext& ctx, LoopId loop, Shared& shared, const Options& o)
      : ctx_(ctx),
        k_(ctx.kernel),
        g_(ctx.deps),
        t_(*ctx.kernel.target),
        loop_(loop),
        shared_(shared),
        o_(o),
        where_("loop " + ctx.kernel.loops[loop].iv),
        earlier_(load_stage(k_, g_, loop)),
        barrier_(earlier_.barrier),
        staged_set_(earlier_.loads.begin(), earlier_.loads.end()),
        moved_later_(o.post_ada || ctx.moves_loads_later()),
        scheduled_later_(ctx.schedules_later()) {}

  void run() {
    classify();
    if (!report_classification()) return;
    cut();
    if (o_.memset) insert_index_zero_inits();
    insert_stage_divider();
    if (o_.post_ada) hoist_loads();
    verify_cut();
    ctx_.stats.add("loops_split");
    if (disqualified_) ctx_.stats.add("loads_disqualified", disqualified_);
    ctx_.stats.add("loads_qualified", static_cast<int64_t>(loads_.size()));
    ctx_.mark_deps_listed();
  }

 private:
  static constexpr size_t kNotInBody = SIZE_MAX;

  // Load-class instructions of the loop.
  bool load_class(InstId id) const {
    const std::optional<OpClass> c = shared_.op_class(id);
    return c == OpClass::Load || (o_.memset && c == OpClass::IndirectLoad);
  }

  bool is_staged(InstId id) const { return staged_set_.count(id) > 0; }

  // A load may not run a stage early when something the compute stage produces this
  // iteration flows into it (directly, or through another load that may not), or when the
  // compute stage still uses its destination earlier in this iteration (a distance-0 Anti or
  // Output edge): such a load already prefetches for the next iteration, and a stage earlier
  // it would clobber what is being read. (Edges are read in place: nothing changes the graph
  // while classifying.)
  bool produced_this_iteration(InstId id, const std::vector<char>& disqualified) const {
    for (const DepEdgeRef& e : g_.incoming(id)) {
      if (e.props.distance != 0 || !k_.in_loop(e.src, loop_) || e.props.kind == DepKind::Ordered) continue;
      const Instruction& src = k_.insts[e.src];
      if (src.attrs.has(attr::kZeroInit)) continue;
      if (!load_class(e.src) || src.loop != loop_) return true;
      if (e.props.kind == DepKind::Flow && disqualified[static_cast<size_t>(e.src)]) return true;
    }
    return false;
  }

  // A tile rotation could ring is ringed only by an address-rotation of its space later in
  // this pipeline (nothing between changes which tiles it may ring). Why not, or "".
  std::string ring_blocker_of(int tensor) {
    std::optional<std::vector<std::vector<InstId>>>& users = shared_.users;
    if (!users) users = users_by_tensor(k_);
    const std::string why = rotation_candidate(k_, loop_, tensor, (*users)[static_cast<size_t>(tensor)]).blocker;
    if (!why.empty()) return "address-rotation cannot ring the tile, as " + why;
    const std::string& space = k_.tensors[static_cast<size_t>(tensor)].space;
    if (ctx_.rotates_later(space)) return "";
    return "no address-rotation{space=" + space + "} runs after this pass to ring %" +
           k_.tensors[static_cast<size_t>(tensor)].name;
  }

  // The cut may only remove an order that something restores, or it is a race (the split's
  // rule: the cut alone does not multi-buffer). Why the cut of `e` (into a load) would not be
  // restored, or "" when it would be. `in_stage` tells the loads still qualified.
  std::string unrestored(const DepEdgeRef& e, const std::function<bool(InstId)>& in_stage) {
    // Queue order carries no data.
    if (e.props.kind == DepKind::Ordered) return "";
    // The barrier waits for every load of the stage before the next iteration's loads pass it,
    // as long as it fences every engine (prefetch-distance takes the DMA queues off it).
    if (e.props.distance >= 1 && in_stage(e.src) && (barrier_ == kNoId || !k_.insts[barrier_].attrs.has(attr::kFence)))
      return "";
    if (e.props.distance >= 1 && one_engine_keeps_order(e)) return "";
    // Otherwise address-rotation must ring every tile the two share, so that the iterations
    // use different buffers and the order comes back at distance N.
    // (Spelled out only for a cut it refuses: naming an unnamed instruction walks the program.)
    const auto cut = [&] {
      return "the cut of " + k_.display_name(e.src) + " -> " + k_.display_name(e.dst) + " " +
             dep_kind_name(e.props.kind) + (e.props.distance ? " distance=" + std::to_string(e.props.distance) : "") +
             " would not be restored: ";
    };
    if (e.props.distance == 0) return cut() + "it orders two loads of one iteration, which no rotation separates";
    const Instruction& src = k_.insts[e.src];
    for (const Access& w : k_.insts[e.dst].writes)
      for (const auto* list : {&src.reads, &src.writes})
        for (const Access& a : *list) {
          if (!may_touch(w, a)) continue;
          auto blocker = ring_blocker_.find(w.tensor_id);
          if (blocker == ring_blocker_.end())
            blocker = ring_blocker_.emplace(w.tensor_id, ring_blocker_of(w.tensor_id)).first;
          if (!blocker->second.empty()) return cut() + blocker->second;
        }
    return "";
  }

  // One in-order engine runs both ends of a loop-carried edge: the load of a later iteration
  // issues after the source has read its inputs (a WAR), or after an instruction of that
  // engine that waited for the source's write (a WAW: the source's value has a reader there
  // in the same iteration).
  bool one_engine_keeps_order(const DepEdgeRef& e) const {
    const std::string engine = only_compute_engine(k_, e.src);
    if (engine.empty() || engine != only_compute_engine(k_, e.dst)) return false;
    if (e.props.kind == DepKind::Anti) return true;
    for (const DepEdgeRef& out : g_.outgoing(e.src))
      if (out.props.kind == DepKind::Flow && out.props.distance == 0 && k_.in_loop(out.dst, loop_) &&
          only_compute_engine(k_, out.dst) == engine)
        return true;
    return false;
  }

  // Membership and positions by instruction id in arrays (not hash sets of ids), the pass's,
  // set for this body and cleared after it, whichever way classify() ends.
  struct ClearOnExit {
    const std::vector<InstId>& body;
    Shared& shared;
    ~ClearOnExit() {
      for (InstId id : body) {
        const auto i = static_cast<size_t>(id);
        shared.candidate[i] = shared.disqualified[i] = 0;
        shared.body_pos[i] = kNotInBody;
      }
    }
  };

  // Does a loop nested in this one sit between `from` and `id` (both of its own body)? No
  // unit then runs `id` before `from` unless `id` is moved: they are not in one straight run.
  // (Counts of the nested loops before each body position: no walk of the body per load.)
  bool loop_between(InstId from, InstId id) const {
    const size_t f = shared_.body_pos[static_cast<size_t>(from)], i = shared_.body_pos[static_cast<size_t>(id)];
    if (f == kNotInBody || (i != kNotInBody && i <= f)) return false;
    return (i == kNotInBody ? loops_in_body_ : loops_before_[i]) > loops_before_[f];
  }

  size_t body_index(InstId id) const {
    const size_t i = shared_.body_pos[static_cast<size_t>(id)];
    if (i == kNotInBody) throw std::out_of_range("separate-load-compute: instruction not in the loop body");
    return i;
  }

  // A load the fence precedes must reach it first on its unit. After a loop nested behind
  // the fence it must be moved (list-schedule orders straight runs only); behind a compute
  // instruction that surely runs on its engine (which waits for the fence), it must be
  // moved or scheduled. The simulator places the fence after the other loads of its run.
  std::string unreachable(InstId id) {
    const InstId fence = barrier_ != kNoId ? barrier_ : anchor_;
    if (is_staged(id) || fence == kNoId) return "";
    std::string why;
    if (loop_between(fence, id)) {
      why = "it follows a loop nested after the first compute instruction";
    } else if (const std::string engine = scheduled_later_ ? "" : known_engine(k_, id); !engine.empty()) {
      const size_t from = body_index(fence), to = body_index(id);
      if (const size_t at = first_waiting(engine, from, to); at < to)
        why = "it follows " + k_.display_name(body_[at]) + " on " + engine + ", which waits for the fence";
    }
    if (why.empty()) return "";
    if (!moved_later_) return why + ", and no separate-load-compute{post-ada} runs to move it before the fence";
    if (!move_blocker_) move_blocker_.emplace(k_, loop_, shared_.order_pos);
    if (const InstId b = (*move_blocker_)(id, fence); b != kNoId)
      return why + ", and cannot be moved before the fence past " + k_.display_name(b) + ", which uses what it writes";
    return "";
  }

  // The instructions of the body that wait for the fence on their unit (not the barrier; a
  // compute instruction, or a load disqualified so far), by the one engine each surely runs
  // on: body positions, indexed when unreachable() first asks and kept current by
  // disqualify(), so that each question is a lookup rather than a walk of the body.
  bool waits_for_fence(InstId id) const {
    return id != barrier_ && (!load_class(id) || shared_.disqualified[static_cast<size_t>(id)]);
  }

  void index_waiting() {
    waiting_.emplace();
    for (size_t i = 0; i < body_.size(); ++i)
      if (waits_for_fence(body_[i]))
        if (std::string engine = known_engine(k_, body_[i]); !engine.empty()) (*waiting_)[engine].insert(i);
  }

  // The first body position in [from, to) of an instruction on `engine` that waits for the
  // fence; `to` when there is none.
  size_t first_waiting(const std::string& engine, size_t from, size_t to) {
    if (!waiting_) index_waiting();
    const auto on = waiting_->find(engine);
    if (on == waiting_->end()) return to;
    const auto it = on->second.lower_bound(from);
    return it != on->second.end() && *it < to ? *it : to;
  }

  // Takes a candidate load out of the load stage: it then waits for the fence too.
  void disqualify(InstId id, std::vector<InstId>& out) {
    out.push_back(id), shared_.disqualified[static_cast<size_t>(id)] = 1;
    if (!waiting_ || id == barrier_) return;
    if (std::string engine = known_engine(k_, id); !engine.empty()) (*waiting_)[engine].insert(body_index(id));
  }

  // A load whose cut nothing would restore stays in the compute stage too, with every edge.
  // One an earlier run already split off stays in the load stage: an order a pass has put
  // back into it since (prefetch-schedule's across loop entries) is kept, not cut again.
  std::string unrestored_cut(InstId id) {
    if (is_staged(id)) return "";
    const auto in_stage = [&](InstId x) {
      return shared_.candidate[static_cast<size_t>(x)] && !shared_.disqualified[static_cast<size_t>(x)];
    };
    for (const DepEdgeRef& e : g_.incoming(id)) {
      if (!cuttable(k_, loop_, e) || e.props.is_explicit || k_.insts[e.src].attrs.has(attr::kZeroInit)) continue;
      if (std::string why = unrestored(e, in_stage); !why.empty()) return why;
    }
    return "";
  }

  // loops_before_[i]: the loops nested in this one's body before body_[i]; loops_in_body_: all.
  void count_nested_loops() {
    loops_before_.clear();
    loops_in_body_ = 0;
    for (const Stmt& s : k_.loops[loop_].body)
      if (s.kind == Stmt::kLoop)
        ++loops_in_body_;
      else
        loops_before_.push_back(loops_in_body_);
  }

  // The loads that qualify for the load stage (loads_), the first non-load instruction
  // (anchor_), and the loads kept in the compute stage with why (kept_ordered_).
  void classify() {
    body_ = region_of(k_, loop_);
    std::vector<char>& candidate_set = shared_.candidate;
    std::vector<char>& out_set = shared_.disqualified;
    std::vector<size_t>& body_pos = shared_.body_pos;
    candidate_set.resize(k_.insts.size(), 0), out_set.resize(k_.insts.size(), 0);
    body_pos.resize(k_.insts.size(), kNotInBody);
    const ClearOnExit clear{body_, shared_};
    for (size_t i = 0; i < body_.size(); ++i)
      if (body_pos[static_cast<size_t>(body_[i])] == kNotInBody) body_pos[static_cast<size_t>(body_[i])] = i;
    count_nested_loops();
    std::vector<InstId> candidates, out;
    for (InstId id : body_) {
      const Instruction& in = k_.insts[id];
      if (in.attrs.has(attr::kZeroInit) || in.attrs.has(attr::kSeparationBarrier))
        continue;  // already stage 0 / the fence
      if (load_class(id))
        candidates.push_back(id), candidate_set[static_cast<size_t>(id)] = 1;
      else if (anchor_ == kNoId)
        anchor_ = id;
    }
    for (bool changed = true; changed;) {  // disqualification spreads along Flow between loads
      changed = false;
      for (InstId id : candidates) {
        if (out_set[static_cast<size_t>(id)]) continue;
        if (produced_this_iteration(id, out_set)) {
          disqualify(id, out);
          changed = true;
        } else if (std::string why = unreachable(id); !why.empty()) {
          disqualify(id, out);
          kept_ordered_.push_back({id, why});
          changed = true;
        } else if (std::string why = unrestored_cut(id); !why.empty()) {
          disqualify(id, out);
          kept_ordered_.push_back({id, why});
          changed = true;
        }
      }
    }
    move_blocker_.reset();  // its positions are of the body as classified
    waiting_.reset();
    disqualified_ = static_cast<int64_t>(out.size() - kept_ordered_.size());
    std::unordered_set<InstId> kept_set;
    for (const auto& p : kept_ordered_) kept_set.insert(p.first);
    for (InstId id : candidates) {
      if (out_set[static_cast<size_t>(id)]) {
        if (!kept_set.count(id)) ctx_.log->debug("{}: disqualified {} due to flow dependencies", where_, shown(k_, id));
        continue;
      }
      ctx_.log->debug("{}: found {} without flow dependencies", where_, shown(k_, id));
      loads_.push_back(id);
    }
  }

  // Says which loads stay in the compute stage; false when the loop is not split.
  bool report_classification() {
    for (const auto& [id, why] : kept_ordered_) {
      ctx_.skip(where_ + ": " + k_.display_name(id) + " stays in the compute stage: " + why);
      ctx_.stats.add("loads_kept_ordered");
    }
    if (loads_.empty()) {
      ctx_.skip(where_ + ": no qualifying loads");
      return false;
    }
    if (anchor_ == kNoId) {
      ctx_.skip(where_ + ": no non-load instructions");
      return false;
    }
    return true;
  }

  // The cut: snapshot each qualified load's predecessors, then remove them, except an order
  // nothing would restore (only a load of the earlier run's stage has one, see above).
  void cut() {
    load_set_.insert(loads_.begin(), loads_.end());
    const auto in_stage = [&](InstId x) { return load_set_.count(x) > 0; };
    for (InstId id : loads_) {
      const std::vector<DepEdgeRef> preds = g_.in_edges(id);
      bool any = false;
      for (const DepEdgeRef& e : preds) {
        if (!cuttable(k_, loop_, e) || e.props.is_explicit || k_.insts[e.src].attrs.has(attr::kZeroInit)) continue;
        if (std::string why = unrestored(e, in_stage); !why.empty()) {
          ctx_.log->debug("{}: keeping an order of {}: {}", where_, shown(k_, id), why);
          ctx_.stats.add("edges_kept");
          kept_.push_back(e);
          continue;
        }
        g_.remove(e.src, e.dst, e.props.distance, e.props.loop);
        ctx_.stats.add("edges_cut");
        any = true;
      }
      if (any) ctx_.log->debug("{}: removing deps for {}", where_, shown(k_, id));
    }
  }

  // {memset}: a qualified gather reading an SBUF index tile gets a zero-init of that tile,
  // placed first in the loop (it belongs to the load stage) and wired after the cut: its own
  // edges from the accesses, and Flow into the gather.
  void insert_index_zero_inits() {
    for (InstId id : loads_) {
      const Instruction& gather = k_.insts[id];
      if (t_.opcode(gather.opcode)->op_class != OpClass::IndirectLoad || gather.reads.size() < 2) continue;
      const Tensor& index = k_.tensors[gather.reads[1].tensor_id];
      if (t_.role_of(index.space) != SpaceRole::OnChip) {
        ctx_.log->info("{}: skipping index writer for {}: %{} is in {}", where_, shown(k_, id), index.name,
                       index.space);
        ctx_.stats.add("index_tiles_skipped");
        continue;
      }
      InstId zero = kNoId;
      for (InstId r : region_of(k_, loop_))
        if (k_.insts[r].attrs.has(attr::kZeroInit) && k_.insts[r].writes[0].tensor_id == gather.reads[1].tensor_id)
          zero = r;
      if (zero == kNoId) zero = insert_zero_init(id);
      g_.add(zero, id, DepKind::Flow);
    }
  }

  // A zero-init of the gather's index tile, first in the loop, with its dependences.
  InstId insert_zero_init(InstId gather_id) {
    const Instruction& gather = k_.insts[gather_id];
    const Tensor& index = k_.tensors[gather.reads[1].tensor_id];
    const OpcodeInfo* op = t_.first_of_class(OpClass::Memset);
    if (!op) throw Error(gather.loc, "separate-load-compute{memset}: target '" + t_.name + "' has no memset opcode");
    Instruction m;
    m.name = k_.unique_name("memset_" + index.name);
    m.opcode = op->name;
    m.loc = gather.loc;
    Access whole;
    whole.tensor = index.name;
    whole.tensor_id = gather.reads[1].tensor_id;
    whole.loc = gather.loc;
    m.writes.push_back(whole);
    m.attrs.set(attr::kValue, int64_t{0});
    m.attrs.set_flag(attr::kZeroInit);
    const InstId zero = k_.add_inst(std::move(m));
    shared_.users.reset();  // a new writer of the index tile
    g_.grow(k_.insts.size());
    k_.insert_at_top(loop_, zero);
    ctx_.stats.add("memsets_inserted");
    ctx_.log->debug("{}: inserted {} for {}", where_, shown(k_, zero), shown(k_, gather_id));
    for (const DepEdgeRef& e : analyze_dependences(k_).edges())
      if (e.src == zero || e.dst == zero) g_.add(e.src, e.dst, e.props.kind, e.props.distance, e.props.loop);
    return zero;
  }

  // The stage divider: one CoreBarrier before the anchor, every edge Flow. A barrier an
  // earlier run inserted is kept, and what it already waits for stays in the load stage
  // (a gather qualified by {memset} is still a load for {post-ada}).
  void insert_stage_divider() {
    for (InstId id : earlier_.loads)
      if (load_set_.insert(id).second) loads_.push_back(id);
    if (barrier_ == kNoId) {
      const OpcodeInfo* op = t_.first_of_class(OpClass::Barrier);
      if (!op)
        throw Error(k_.insts[anchor_].loc, "separate-load-compute: target '" + t_.name + "' has no barrier opcode");
      Instruction b;
      b.name = k_.unique_name("separation_barrier");
      b.opcode = op->name;
      b.loc = k_.insts[anchor_].loc;
      b.attrs.set_flag(attr::kSeparationBarrier);
      barrier_ = k_.add_inst(std::move(b));
      g_.grow(k_.insts.size());
      k_.insert_before(anchor_, barrier_);
      ctx_.stats.add("barriers_inserted");
      ctx_.log->debug("{}: inserted CoreBarrier before {}", where_, shown(k_, anchor_));
    }
    for (InstId id : loads_) g_.add(id, barrier_, DepKind::Flow);
    bool after_anchor = false;
    for (InstId id : region_of(k_, loop_)) {
      if (id == anchor_) after_anchor = true;
      if (!after_anchor || id == barrier_ || k_.insts[id].attrs.has(attr::kZeroInit)) continue;
      if (load_set_.count(id)) continue;
      g_.add(barrier_, id, DepKind::Flow);
    }
  }

  // {post-ada}: the physical hoist, keeping the loads' relative order. A load never passes
  // an instruction that touches what it writes: that would change what the program means.
  // Decided on the order as it is, then moved at once: a load moved before the barrier is no
  // longer between it and the next one.
  void hoist_loads() {
    const MoveBlocker move_blocker(k_, loop_, shared_.order_pos);
    std::vector<InstId> moved;
    std::unordered_set<InstId> moved_set;
    for (InstId id : loads_) {
      if (move_blocker.before(id, barrier_)) continue;
      const InstId blocker = move_blocker(id, barrier_, moved_set);
      if (blocker != kNoId) {
        ctx_.log->debug("{}: not moving {}: it would pass {}, which uses what it writes", where_, shown(k_, id),
                        shown(k_, blocker));
        ctx_.stats.add("loads_not_moved");
        continue;
      }
      moved.push_back(id), moved_set.insert(id);
      ctx_.stats.add("loads_moved");
      ctx_.log->debug("{}: moving {} before the first non-load instruction", where_, shown(k_, id));
    }
    if (moved.empty()) return;
    shared_.users.reset();  // the moved loads' tensors have their users in another order
    shared_.hoists.push_back({loop_, barrier_, k_.block_of(loop_), moved});
    k_.move_all_before(moved, barrier_);
  }

  // No edge the split should have removed may survive (the zero-init's edges are added after
  // the cut).
  void verify_cut() const {
    auto was_kept = [&](const DepEdgeRef& e) {
      return std::any_of(kept_.begin(), kept_.end(), [&](const DepEdgeRef& x) {
        return x.src == e.src && x.dst == e.dst && x.props.distance == e.props.distance && x.props.loop == e.props.loop;
      });
    };
    for (InstId id : loads_)
      for (const DepEdgeRef& e : g_.in_edges(id)) {
        if (!cuttable(k_, loop_, e) || k_.insts[e.src].attrs.has(attr::kZeroInit) || was_kept(e)) continue;
        SourceLoc at = k_.insts[id].loc;
        for (const ExplicitDep& d : k_.explicit_deps)
          if (d.src == e.src && d.dst == e.dst) at = d.loc;
        throw Error(at, "Unexpected edge found. Disable separation pass. (" + k_.display_name(e.src) + " -> " +
                            k_.display_name(e.dst) + " " + dep_kind_name(e.props.kind) + " survives the cut in " +
                            where_ + ")");
      }
  }

  PassContext& ctx_;
  Kernel& k_;
  DepGraph& g_;
  const Target& t_;
  const LoopId loop_;
  Shared& shared_;
  const Options& o_;
  const std::string where_;
  const LoadStage earlier_;  // a barrier an earlier run inserted, and the loads it waits for
  InstId barrier_;
  const std::unordered_set<InstId> staged_set_;
  // {post-ada} moves the loads, in this run or a later one; list-schedule orders each
  // straight run by the graph.
  const bool moved_later_, scheduled_later_;
  std::map<int, std::string> ring_blocker_;  // tensor -> why address-rotation will not ring it ("" if it will)
  std::vector<InstId> body_;                 // the loop's own instructions, while classifying
  std::vector<size_t> loops_before_;         // by body position: the nested loops before it
  size_t loops_in_body_ = 0;
  std::optional<MoveBlocker> move_blocker_;  // while classifying, built when first asked
  // While classifying, built when first asked: by engine, the body positions that wait for
  // the fence (first_waiting).
  std::optional<std::unordered_map<std::string, std::set<size_t>>> waiting_;
  std::vector<InstId> loads_;  // the qualified loads
  std::unordered_set<InstId> load_set_;
  InstId anchor_ = kNoId;  // the first non-load instruction
  int64_t disqualified_ = 0;
  std::vector<std::pair<InstId, std::string>> kept_ordered_;  // loads whose cut nothing would restore, and why
  std::vector<DepEdgeRef> kept_;                              // orders the cut kept
};

void SeparateLoadComputePass::split(PassContext& ctx, LoopId loop, Shared& shared) {
  LoopSplit(ctx, loop, shared, o_).run();
}

}  // namespace tandem
