#include "sched/passes/address_rotation.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "sched/analysis/allocator.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/analysis/loop_bounds.h"
#include "sched/analysis/prefetch_depth.h"
#include "sched/analysis/ring_plan.h"
#include "sched/analysis/rotation_candidate.h"
#include "sched/analysis/tile_dependence.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/error.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

AddressRotationPass::BufferChoice parse_buffers(const std::string& b) {
  if (b == "auto") return {};
  if (b == "model") return {0, true};
  int64_t n = -1;
  try {
    size_t used = 0;
    n = std::stoll(b, &used);
    if (used != b.size()) n = -1;
  } catch (const std::exception&) {
  }
  if (n < 2 || n > 16)
    throw Error("address-rotation: buffers must be auto or a number from 2 to 16, not '" + printable(b) + "'");
  return {n, false};
}

}  // namespace

const std::vector<OptionRow<AddressRotationPass::Options>>& AddressRotationPass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {
      text_choice_option("space", &Options::space, rotatable_spaces(), "sbuf",
                         "the memory space whose tensors are rotated"),
      text_option<Options, BufferChoice>(
          "buffers", &Options::buffers, "auto",
          "buffers per rotated tensor: auto (the largest of 4, 3, 2 that fits, one when two do not), model (a tile a "
          "transfer writes or reads: ceil(lifetime / the loop's resource bound per iteration) + 1 from the model, "
          "else 4; as many as fit, one when two do not; none in a loop whose writer-to-last-reader chains fit in "
          "that bound) or a number from 2 to 16",
          parse_buffers),
      flag_option("nested", &Options::nested,
                  "also ring a tile that loops nested in the ringing loop rewrite whole, piece by piece, before any "
                  "read of it (a strip loaded tile by tile)"),
      names_option("tiles", &Options::tiles,
                   "ring only these tensors, %names separated by '|' (e.g. %a|%b); a later address-rotation step "
                   "rings the rest, so each tile can get its own buffers (empty: every candidate)"),
  };
  return rows;
}

namespace {

// A tile a loop could ring, with the model's wish (buffers=model) and its writer-to-last-reader
// chain on one buffer, worked out once.
struct Ring {
  size_t ti;
  RotationCandidate c;
  std::optional<PrefetchDepth> depth;
  double chain_ns = 0;
};

// Why the step rings nothing when no tensor of `space` is rewritten every iteration of a loop.
std::string nothing_rewritten(const std::string& space) {
  return "no " + space + " tensor is rewritten every iteration of a loop";
}

// The tensor `name` ("%a") of {tiles=}; an Error when the kernel has none of that name.
int named_tile(const Kernel& k, const std::string& name) {
  const int ti = k.find_tensor(name.substr(1));
  if (ti < 0) throw Error("address-rotation: tiles names " + name + ", which the kernel does not have");
  return ti;
}

// Each tile {tiles=} names that this step left on one buffer, and why.
void note_named_tiles(PassContext& ctx, const AddressRotationPass::Options& o) {
  for (const std::string& name : o.tiles) {
    const Tensor& t = ctx.kernel.tensors[static_cast<size_t>(ctx.kernel.find_tensor(name.substr(1)))];
    if (t.space != o.space)
      ctx.note(name + " stays on one buffer: it is in " + t.space + ", and this step rings " + o.space);
    else if (!t.attrs.has(attr::kBuffers))
      ctx.note(name + " stays on one buffer: no loop rewrites it every iteration with a value that dies there");
  }
}

}  // namespace

// One run of the pass over a kernel, as its phases: per loop, the tiles it can ring, how many
// buffers each gets, and the dependences the ring moves, adds and restores; then what the
// report reads of the tiles left on one buffer.
class AddressRotationPass::KernelRotation {
 public:
  KernelRotation(PassContext& ctx, const Options& o, const SpaceInfo& space)
      : ctx_(ctx),
        k_(ctx.kernel),
        g_(ctx.deps),
        o_(o),
        space_(space),
        alloc_(k_),
        unit_(space.capacity_unit()),
        wanted_(k_.tensors.size(), o.tiles.empty()),
        users_(users_by_tensor(k_)),
        pos_(program_positions(k_)),
        role_(k_.insts.size(), 0) {
    for (const std::string& name : o_.tiles) wanted_[static_cast<size_t>(named_tile(k_, name))] = true;
    // The costs and units the bounds analysis sees (loop_bounds.h), before the ring changes edges.
    if (o_.buffers.from_model) bounds_ = bounds_input(k_, g_);
  }

  void run() {
    std::vector<Plan> plans;
    std::vector<bool> planned(k_.tensors.size(), false);
    for (LoopId loop = 0; loop < static_cast<LoopId>(k_.loops.size()); ++loop) plan_loop(loop, plans, planned);
    grant_buffers(plans);
    for (const Plan& p : plans) {
      if (p.n >= 2)
        ring(p.r, p.n, p.loop, where(p.loop));
      else if (p.split)
        keep_one_buffer_order(p.r, p.loop);
    }
    if (plans_costed_ > 0) {
      ctx_.stats.add("ring_plans_costed", plans_costed_);
      if (plan_exact_) ctx_.stats.add("ring_plans_exact");
    }
    if (o_.buffers.from_model) note_unringed_tiles();
    note_named_tiles(ctx_, o_);
    if (ctx_.stats.get("tensors_rotated") == 0) {
      ctx_.skip(at_bound_tiles_ > 0 ? "every loop rewriting " + o_.space + " tensors runs at its bound without a ring"
                : ctx_.stats.get("tensors_left_for_capacity") > 0
                    ? "no " + o_.space + " tensor rewritten every iteration of a loop has room for a second buffer"
                    : nothing_rewritten(o_.space));
      return;
    }
    ctx_.mark_deps_listed();
  }

 private:
  // A tile a loop rings, the buffers it wants, and those it gets (1: it stays on one).
  struct Plan {
    LoopId loop;
    Ring r;
    bool split;  // its loop has a separation barrier
    int64_t want = 1;
    int64_t n = 1;
    int64_t free = 0;  // what the space had free for it when it stopped short of `want`
  };

  // n buffers of a tensor, in the space's capacity unit (banks or bytes per partition): the
  // one rule the simulator's capacity check uses too.
  int64_t footprint(const Tensor& t, int64_t n) const { return space_.footprint(bytes_per_partition(k_, t), n); }

  std::string where(LoopId loop) const { return "loop " + k_.loops[loop].iv; }

  // The tiles the loop may ring (a tile any earlier loop may ring is that loop's) and the
  // buffers each wants: the number given, else the model's wish or 4; none in a loop that
  // runs at its bound on one buffer. A loop whose every ringable tile fits on one buffer
  // already runs at its bound: each iteration's writer waits only for the previous one's
  // readers, a chain shorter than the resource bound per iteration that no ring can beat, in
  // a steady state or within an entry of a few iterations alike (there a ring only lets the
  // entry's loads share the DMA engines at once, landing the first ones later). (A tile no
  // transfer touches would take 4 buffers, as under buffers=auto.)
  void plan_loop(LoopId loop, std::vector<Plan>& plans, std::vector<bool>& planned) {
    std::vector<Ring> rings = rings_of(loop);
    rings.erase(std::remove_if(rings.begin(), rings.end(), [&](const Ring& r) { return planned[r.ti]; }), rings.end());
    const ResourceBound ii = o_.buffers.from_model ? loop_resource_bound(*bounds_, loop) : ResourceBound{};
    const bool at_bound =
        o_.buffers.from_model && !rings.empty() &&
        std::all_of(rings.begin(), rings.end(),
                    [&](const Ring& r) { return r.chain_ns > 0 && r.chain_ns * 1000 <= static_cast<double>(ii.ps); }) &&
        !turn_exceeds(loop, ii);
    const bool split = !rings.empty() && load_stage(k_, g_, loop).barrier != kNoId;
    for (Ring& r : rings) {
      if (!wanted_[r.ti]) continue;
      planned[r.ti] = true;
      Plan p{loop, std::move(r), split};
      if (at_bound) {
        ctx_.note(fmt::format(
            "{}: %{} stays on one buffer: its writer to its last reader take {:.1f} ns, within "
            "the loop's resource bound per iteration ({:.1f} ns, {}), so the loop reaches that "
            "bound without a ring",
            where(loop), k_.tensors[p.r.ti].name, p.r.chain_ns, static_cast<double>(ii.ps) / 1000, ii.resource));
        ++at_bound_tiles_;
      } else {
        p.want = o_.buffers.count > 0 ? o_.buffers.count : p.r.depth ? p.r.depth->buffers : 4;
        if (p.r.depth)
          ctx_.log->debug(
              "{}: %{} load latency {:.1f} ns, resource bound {:.1f} ns per iteration ({}), lifetime "
              "{:.1f} ns: {} buffers wanted",
              where(loop), k_.tensors[p.r.ti].name, p.r.depth->load_latency_ns, p.r.depth->ii_ns,
              p.r.depth->bound_resource, p.r.depth->lifetime_ns, p.r.depth->buffers);
      }
      plans.push_back(std::move(p));
    }
  }

  // Whether the loop's longest turn on one buffer (prefetch_depth.h) exceeds its resource
  // bound per iteration: then it is not at its bound, whatever each tile's chain.
  bool turn_exceeds(LoopId loop, const ResourceBound& ii) {
    InstId slowest = kNoId;
    const double turn = one_buffer_turn_ns(*bounds_, g_, loop, &slowest);
    if (turn * 1000 <= static_cast<double>(ii.ps)) return false;
    ctx_.note(
        fmt::format("{}: one buffer would make {} and its transfers take turns of {:.1f} ns, beyond the loop's "
                    "resource bound per iteration ({:.1f} ns, {}): its tiles get rings",
                    where(loop), k_.display_name(slowest), turn, static_cast<double>(ii.ps) / 1000, ii.resource));
    return true;
  }

  // Buffers for every planned tile of the kernel together, against the space at each point
  // where the ring would be live (allocation by liveness). A number the user gave must fit
  // (the pass stops, naming the tile, otherwise). buffers=auto and buffers=model never fail
  // for capacity: a tile that does not get two buffers stays on one (noted). buffers=auto
  // grants them in rounds, the second buffer of every tile (in program order) before any
  // tile's third, and so on up to each tile's wish, since a second buffer removes the tile's
  // one-buffer recurrence and a further one only lets a load run an iteration further ahead;
  // a tile stops where its next buffer does not fit. buffers=model plans them (plan_kernel).
  void grant_buffers(std::vector<Plan>& plans) {
    if (o_.buffers.from_model) return plan_kernel(plans);
    if (o_.buffers.count > 0) {
      for (Plan& p : plans) {
        if (p.want < 2) continue;
        const Tensor& t = k_.tensors[p.r.ti];
        const int64_t free = alloc_.free_for(static_cast<int>(p.r.ti), p.loop);
        if (footprint(t, p.want) > free)
          throw Error(t.loc, "address-rotation: %" + t.name + " needs " + std::to_string(p.want) + " x " +
                                 std::to_string(footprint(t, 1)) + " " + unit_ + " in " + o_.space + " but only " +
                                 std::to_string(free) + " are free while it is live");
        alloc_.rotate(static_cast<int>(p.r.ti), p.want, p.loop);
        p.n = p.want;
      }
      return;
    }
    grant_in_rounds(plans);
  }

  // buffers=auto: every tile's second buffer (in program order) before any tile's third, and
  // so on up to each tile's wish; a tile stops where its next buffer does not fit.
  void grant_in_rounds(std::vector<Plan>& plans) {
    std::vector<bool> stopped(plans.size(), false);
    for (int64_t n = 2, granted = 1; n <= 16 && granted > 0; ++n) {
      granted = 0;
      for (size_t i = 0; i < plans.size(); ++i) {
        Plan& p = plans[i];
        if (stopped[i] || p.want < n) continue;
        const Tensor& t = k_.tensors[p.r.ti];
        p.free = alloc_.free_for(static_cast<int>(p.r.ti), p.loop);
        if (footprint(t, n) > p.free) {
          stopped[i] = true;
          continue;
        }
        alloc_.rotate(static_cast<int>(p.r.ti), n, p.loop);
        p.n = n;
        ++granted;
      }
    }
    for (const Plan& p : plans) note_short_of_wish(p, "");
  }

  // A tile with fewer buffers than it wished for, and why: the space it had free.
  void note_short_of_wish(const Plan& p, const std::string& gave_up) {
    if (p.n >= p.want) return;
    const Tensor& t = k_.tensors[p.r.ti];
    const std::string why = ": " + o_.space + " has " + std::to_string(p.free) + " " + unit_ +
                            " free for it while it is live, " + std::to_string(footprint(t, 1)) + " per buffer" +
                            gave_up;
    if (p.n < 2) {
      ctx_.note(where(p.loop) + ": %" + t.name + " stays on one buffer, not " + std::to_string(p.want) + why);
      ctx_.stats.add("tensors_left_for_capacity");
    } else {
      ctx_.note(where(p.loop) + ": %" + t.name + " over " + std::to_string(p.n) + " buffers, not " +
                std::to_string(p.want) + why);
    }
  }

  // buffers=model: every tile its wish where all fit; beyond kRingPlanMostTiles tiles, the
  // rounds of buffers=auto; else one plan for every tile of the kernel the step may ring, each
  // tile's count from one to its wish, against the space at every point (allocation by
  // liveness), for the lowest kernel bound (ring_plan.h, RingCosts below). The plan's rings are then committed in
  // program order against the pass's allocator, which the plan fits by construction (the
  // search's allocator counts a tile left on one buffer as live over its whole loop, at least
  // what it takes). Each tile short of its wish says what one more buffer would have saved.
  void plan_kernel(std::vector<Plan>& plans) {
    std::vector<size_t> vars;  // the plans searched: a wish of two or more
    for (size_t i = 0; i < plans.size(); ++i)
      if (plans[i].want >= 2) vars.push_back(i);
    if (vars.empty()) return;
    Allocator trial(k_);
    RingPlanProblem problem;
    for (size_t v : vars) problem.most.push_back(std::min<int64_t>(plans[v].want, 16));
    problem.bytes = [&](size_t i, int64_t n) { return footprint(k_.tensors[plans[vars[i]].r.ti], n); };
    // The trial allocator holds the last plan asked about. A ring can only overflow the space
    // where it is live, so against the last plan known to fit only the rings larger than
    // there are checked.
    std::vector<int64_t> held(vars.size(), 0), fitting;
    problem.fits = [&](const std::vector<int64_t>& n) {
      for (size_t i = 0; i < vars.size(); ++i)
        if (n[i] != held[i]) trial.rotate(static_cast<int>(plans[vars[i]].r.ti), held[i] = n[i], plans[vars[i]].loop);
      for (size_t i = 0; i < vars.size(); ++i) {
        const Plan& p = plans[vars[i]];
        if (!fitting.empty() && n[i] <= fitting[i]) continue;
        if (footprint(k_.tensors[p.r.ti], n[i]) > trial.free_for(static_cast<int>(p.r.ti), p.loop)) return false;
      }
      fitting = n;
      return true;
    };
    if (problem.fits(problem.most)) return commit_plan(plans, vars, problem.most);
    if (vars.size() > kRingPlanMostTiles) return grant_in_rounds(plans);
    RingCosts costs(*this, plans, vars);
    problem.cost = [&](const std::vector<int64_t>& n) { return costs.kernel_bound(n); };
    problem.budget = costs.budget();
    const RingPlan plan = plan_rings(problem);
    plans_costed_ = plan.plans_costed;
    plan_exact_ = plan.exact;
    commit_plan(plans, vars, plan.buffers);
    std::vector<int64_t> chosen;
    for (size_t v : vars) chosen.push_back(plans[v].n);
    const double bound = costs.kernel_bound(chosen);
    for (size_t i = 0; i < vars.size(); ++i) {
      Plan& p = plans[vars[i]];
      if (p.n >= p.want) continue;
      p.free = alloc_.free_for(static_cast<int>(p.r.ti), p.loop);  // beside every ring of the plan
      std::vector<int64_t> more = chosen;
      ++more[i];
      const double saved = bound - costs.kernel_bound(more);
      const int64_t need = footprint(k_.tensors[p.r.ti], p.n + 1) - footprint(k_.tensors[p.r.ti], p.n);
      note_short_of_wish(p, saved > 0.5
                                ? fmt::format("; {} would save {:.1f} ns of the kernel's bound, needing {} {} more",
                                              p.n + 1, saved / 1000, need, unit_)
                                : fmt::format("; {} would not lower the kernel's bound", p.n + 1));
    }
    note_plan(plans, vars, plan, bound);
  }

  // The plan's rings, in program order, each checked against the space as the rings before it
  // left it: a count that does not fit comes down until it does.
  void commit_plan(std::vector<Plan>& plans, const std::vector<size_t>& vars, const std::vector<int64_t>& n) {
    for (size_t i = 0; i < vars.size(); ++i) {
      Plan& p = plans[vars[i]];
      const Tensor& t = k_.tensors[p.r.ti];
      p.free = alloc_.free_for(static_cast<int>(p.r.ti), p.loop);
      int64_t count = n[i];
      while (count >= 2 && footprint(t, count) > p.free) --count;
      if (count >= 2) alloc_.rotate(static_cast<int>(p.r.ti), count, p.loop);
      p.n = count;
    }
  }

  // What the plan chose for each tile, of its wish, and the kernel's bound it gives.
  void note_plan(const std::vector<Plan>& plans, const std::vector<size_t>& vars, const RingPlan& plan, double bound) {
    constexpr size_t kShown = 8;
    std::string tiles;
    for (size_t i = 0; i < vars.size() && i < kShown; ++i) {
      const Plan& p = plans[vars[i]];
      tiles += fmt::format("{}%{} {} of {}", i ? ", " : "", k_.tensors[p.r.ti].name, p.n, p.want);
    }
    if (vars.size() > kShown) tiles += fmt::format(" and {} more", vars.size() - kShown);
    ctx_.note(fmt::format("{} ring plan: {} buffers; the kernel's bound {:.1f} ns ({} search, {} plans costed)",
                          o_.space, tiles, bound / 1000, plan.exact ? "exact" : "descent", plan.plans_costed));
  }

  // The objective of plan_kernel: the kernel's bound under a plan, the sum over the loops
  // with planned tiles of each loop's bound per iteration (loop_bounds.h: the larger of its
  // resource bound and its recurrence bound) times its iterations in the kernel. A loop's
  // recurrences are the kernel's before this step, less the loop-carried anti and output
  // edges on the tiles the plan sizes there (and on the tiles a later step rings, in a space
  // after this one: that step puts them N iterations apart), plus each planned tile's reuse
  // edges at distance N: from each user that no other user's distance-0 edge covers to each
  // writer no earlier writer orders (those add_reuse_edges adds, without its per-tile rule,
  // which only adds edges a covering one implies by latency). A loop's bound depends on its
  // own tiles' counts alone and is worked out once per distinct count vector.
  class RingCosts {
   public:
    RingCosts(const KernelRotation& r, const std::vector<Plan>& plans, const std::vector<size_t>& vars)
        : r_(r), in_(*r.bounds_) {
      for (size_t i = 0; i < vars.size(); ++i) {
        const Plan& p = plans[vars[i]];
        size_t li = std::find(loops_.begin(), loops_.end(), p.loop) - loops_.begin();
        if (li == loops_.size()) {
          loops_.push_back(p.loop);
          tiles_of_.emplace_back();
        }
        tiles_of_[li].push_back(i);
        reuse_.push_back(reuse_pairs(p.r));
        planned_.insert({p.loop, static_cast<int>(p.r.ti)});
      }
      drop_carried_edges();
      in_.insts_in_loop.clear();
      in_.edges_in_loop.clear();
      loop_bounds(in_, loops_[0]);  // indexes the loops (loop_bounds.h) before edges come and go
      for (LoopId l : loops_) weight_.push_back(static_cast<double>(instances_within(r_.k_, l)));
    }

    // Costings the search may spend: a costing solves the recurrences of each loop whose
    // tiles' counts changed, so large loop bodies get fewer (about 2e7 instructions and edges
    // in all; at least 20).
    int64_t budget() const {
      int64_t size = 1;
      for (LoopId l : loops_)
        size += static_cast<int64_t>(in_.insts_in_loop[static_cast<size_t>(l)].size() +
                                     in_.edges_in_loop[static_cast<size_t>(l)].size());
      return std::clamp<int64_t>(20000000 / size, 20, 20000);
    }

    double kernel_bound(const std::vector<int64_t>& n) {
      double total = 0;
      for (size_t li = 0; li < loops_.size(); ++li) {
        std::vector<int64_t> key;
        for (size_t i : tiles_of_[li]) key.push_back(n[i]);
        auto [it, fresh] = cache_.try_emplace({li, key}, 0);
        if (fresh) it->second = loop_bound_ps(li, n);
        total += static_cast<double>(it->second) * weight_[li];
      }
      return total;
    }

   private:
    struct Pair {
      InstId src, dst;
      DepKind kind;
    };

    // The loop's bound per iteration with its planned tiles over n buffers.
    int64_t loop_bound_ps(size_t li, const std::vector<int64_t>& n) {
      const LoopId l = loops_[li];
      std::vector<size_t>& listed = in_.edges_in_loop[static_cast<size_t>(l)];
      const size_t edges = in_.edges.size(), listed_before = listed.size();
      for (size_t i : tiles_of_[li])
        for (const Pair& e : reuse_[i]) {
          listed.push_back(in_.edges.size());
          in_.edges.push_back({e.src, e.dst, e.kind, static_cast<int>(n[i]), l});
        }
      const LoopBounds b = loop_bounds(in_, l);
      in_.edges.resize(edges);
      listed.resize(listed_before);
      return std::max(b.resource.ps, b.recurrence_ps);
    }

    // The users of iteration i - N that must be done before a writer of iteration i starts,
    // and those writers, as pairs.
    std::vector<Pair> reuse_pairs(const Ring& ring) const {
      const DepGraph& g = r_.g_;
      std::vector<InstId> users;
      std::set_union(ring.c.readers.begin(), ring.c.readers.end(), ring.c.writers.begin(), ring.c.writers.end(),
                     std::back_inserter(users), [&](InstId a, InstId b) { return r_.pos_[a] < r_.pos_[b]; });
      std::vector<InstId> user_ids = users, writer_ids = ring.c.writers;  // by id, to look up
      std::sort(user_ids.begin(), user_ids.end());
      std::sort(writer_ids.begin(), writer_ids.end());
      auto uses = [&](InstId x) { return std::binary_search(user_ids.begin(), user_ids.end(), x); };
      auto writes = [&](InstId x) { return std::binary_search(writer_ids.begin(), writer_ids.end(), x); };
      std::vector<InstId> heads, sources;
      for (InstId w : ring.c.writers) {
        bool ordered = false;
        for (const DepEdgeRef& e : g.incoming(w))
          ordered =
              ordered || (e.props.distance == 0 && e.props.kind != DepKind::Ordered && e.src != w && writes(e.src));
        if (!ordered) heads.push_back(w);
      }
      for (InstId x : users) {
        const bool writer = writes(x);
        bool covered = false;
        for (const DepEdgeRef& e : g.outgoing(x))
          covered = covered || (e.props.distance == 0 && e.dst != x && uses(e.dst) &&
                                (e.props.kind == DepKind::Flow || e.props.kind == DepKind::Output ||
                                 (!writer && e.props.kind == DepKind::Anti)));
        if (!covered) sources.push_back(x);
      }
      std::vector<Pair> pairs;
      for (InstId w : heads)
        for (InstId x : sources) pairs.push_back({x, w, writes(x) ? DepKind::Output : DepKind::Anti});
      return pairs;
    }

    // The carried anti and output edges of a planned loop between two users of tiles that
    // this step or a later one rings there (and of no other tensor).
    void drop_carried_edges() {
      std::vector<BoundsEdge> kept;
      for (const BoundsEdge& e : in_.edges)
        if (!ringed_apart(e)) kept.push_back(e);
      in_.edges = std::move(kept);
    }

    bool ringed_apart(const BoundsEdge& e) {
      if (e.distance < 1 || (e.kind != DepKind::Anti && e.kind != DepKind::Output)) return false;
      if (std::find(loops_.begin(), loops_.end(), e.key_loop) == loops_.end()) return false;
      const Instruction& src = r_.k_.insts[static_cast<size_t>(e.src)];
      const Instruction& dst = r_.k_.insts[static_cast<size_t>(e.dst)];
      bool any = false;
      for (const Access& w : dst.writes)
        for (const auto* list : {&src.reads, &src.writes})
          for (const Access& a : *list) {
            if (a.tensor_id != w.tensor_id || a.tensor_id < 0) continue;
            if (!rings_in(e.key_loop, a.tensor_id)) return false;
            any = true;
          }
      return any;
    }

    // Whether the tile is one the plan sizes in the loop, or one a later step rings there.
    bool rings_in(LoopId l, int tensor) {
      if (planned_.count({l, tensor})) return true;
      const Tensor& t = r_.k_.tensors[static_cast<size_t>(tensor)];
      const std::vector<std::string>& spaces = rotatable_spaces();
      const auto here = std::find(spaces.begin(), spaces.end(), r_.o_.space);
      const auto there = std::find(spaces.begin(), spaces.end(), t.space);
      if (there == spaces.end() || there <= here || t.attrs.has(attr::kBuffers)) return false;
      auto [it, fresh] = later_.try_emplace({l, tensor}, false);
      if (fresh) it->second = rotation_candidate(r_.k_, l, tensor, r_.users_[static_cast<size_t>(tensor)]).ringable();
      return it->second;
    }

    const KernelRotation& r_;
    BoundsInput in_;
    std::vector<LoopId> loops_;                     // the loops with planned tiles
    std::vector<std::vector<size_t>> tiles_of_;     // by loop: its planned tiles (plan variables)
    std::vector<double> weight_;                    // by loop: its iterations in the kernel
    std::vector<std::vector<Pair>> reuse_;          // by variable
    std::set<std::pair<LoopId, int>> planned_;      // (loop, tensor) the plan sizes
    std::map<std::pair<LoopId, int>, bool> later_;  // a later step's tile, by loop
    std::map<std::pair<size_t, std::vector<int64_t>>, int64_t> cache_;
  };

  // The loop's ringable tiles of the space. Only a tensor the loop touches can take a ring
  // there (it needs a writer inside): asking of every tensor of the space in every loop would
  // make the pass quadratic in the loops.
  std::vector<Ring> rings_of(LoopId loop) {
    std::vector<size_t> touched;
    for (InstId id : k_.program_order(loop))
      for (const auto* list : {&k_.insts[id].reads, &k_.insts[id].writes})
        for (const Access& a : *list)
          if (a.tensor_id >= 0) touched.push_back(static_cast<size_t>(a.tensor_id));
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    std::vector<Ring> rings;
    for (size_t ti : touched) {
      if (k_.tensors[ti].space != o_.space || k_.tensors[ti].attrs.has(attr::kBuffers)) continue;
      Ring r{ti, rotation_candidate(k_, loop, static_cast<int>(ti), users_[ti], o_.nested), std::nullopt, 0};
      if (!r.c.ringable()) continue;
      if (o_.buffers.from_model) {
        r.depth = prefetch_depth(*bounds_, loop, static_cast<int>(ti), r.c.writers, r.c.readers);
        r.chain_ns = one_buffer_chain_ns(*bounds_, g_, loop, r.c.writers, r.c.readers);
        ctx_.log->debug("loop {}: %{} writer to last reader {:.1f} ns on one buffer", k_.loops[loop].iv,
                        k_.tensors[ti].name, r.chain_ns);
      }
      rings.push_back(std::move(r));
    }
    return rings;
  }

  // The tile over n buffers of `loop`, and the dependences that follow.
  void ring(const Ring& r, int64_t n, LoopId loop, const std::string& where) {
    Tensor& t = k_.tensors[r.ti];
    t.attrs.set(attr::kBuffers, n);
    t.attrs.set(attr::kRotate, k_.loops[loop].iv);
    t.attrs.set(attr::kStride, bytes_per_partition(k_, t));
    ctx_.stats.add("tensors_rotated");
    ctx_.log->debug("{}: %{} over {} buffers", where, t.name, n);
    const std::vector<InstId> all = mark_users(r.c.readers, r.c.writers);
    relax_carried(r, n, loop);
    add_reuse_edges(all, r.c.writers, n, loop);
    restore_entry_order(r, n, loop);
  }

  // A tile of a split loop (one with a separation barrier: the split may have cut its orders
  // for a ring) that stays on one buffer gets them back as a ring of one: each iteration's
  // writers wait for the previous iteration's users, and each entry's for the previous entry's.
  void keep_one_buffer_order(const Ring& r, LoopId loop) {
    const std::vector<InstId> all = mark_users(r.c.readers, r.c.writers);
    const int64_t before = ctx_.stats.get("edges_added") + ctx_.stats.get("entry_edges_added");
    add_reuse_edges(all, r.c.writers, 1, loop);
    restore_entry_order(r, 1, loop);
    if (ctx_.stats.get("edges_added") + ctx_.stats.get("entry_edges_added") > before) ctx_.mark_deps_listed();
  }

  // The tensor's users in program order, marked as users and writers in role_ (cleared for
  // the previous tile): readers and writers each come in program order (they are picked from
  // users_by_tensor's lists), so their union is a merge, not a sort.
  std::vector<InstId> mark_users(const std::vector<InstId>& readers, const std::vector<InstId>& writers) {
    std::vector<InstId> all;
    all.reserve(readers.size() + writers.size());
    std::set_union(readers.begin(), readers.end(), writers.begin(), writers.end(), std::back_inserter(all),
                   [&](InstId a, InstId b) { return pos_[a] < pos_[b]; });
    for (InstId x : marked_) role_[static_cast<size_t>(x)] = 0;
    for (InstId x : all) role_[static_cast<size_t>(x)] |= kUser;
    for (InstId x : writers) role_[static_cast<size_t>(x)] |= kWriter;
    marked_ = all;
    return all;
  }
  bool is_user(InstId x) const { return (role_[static_cast<size_t>(x)] & kUser) != 0; }
  bool is_writer(InstId x) const { return (role_[static_cast<size_t>(x)] & kWriter) != 0; }

  // Buffers repeat every n iterations: carried WAR/WAW on the tensor move to distance n
  // (removed below n; add_reuse_edges puts them at n), unless the pair also conflicts on a
  // tensor that is not rotated.
  void relax_carried(const Ring& r, int64_t n, LoopId loop) {
    for (InstId w : r.c.writers) {
      for (const DepEdgeRef& e : g_.in_edges(w)) {
        if (!is_user(e.src) || e.props.loop != loop || e.props.distance == 0 || e.props.distance >= n) continue;
        if (e.props.kind != DepKind::Anti && e.props.kind != DepKind::Output) continue;
        bool other = false;
        const Instruction& src = k_.insts[e.src];
        for (const Access& wa : k_.insts[w].writes)
          for (const auto* list : {&src.reads, &src.writes})
            for (const Access& sa : *list)
              if (sa.tensor_id == wa.tensor_id && sa.tensor_id != static_cast<int>(r.ti) &&
                  !k_.tensors[sa.tensor_id].attrs.has(attr::kBuffers))
                other = true;
        if (other) continue;
        g_.remove(e.src, e.dst, e.props.distance, e.props.loop);
        ctx_.stats.add("edges_relaxed");
      }
    }
  }

  // Every user of iteration i - n must be done with the buffer (a reader has read, a
  // writer has written) before a writer of iteration i starts. An instruction starts after
  // each predecessor's event (any kind: at least its start; Anti: its reads done; Flow,
  // Output: its completion), so an order that a distance-0 edge of this iteration already
  // carries is not added again (n^2 edges otherwise): the writers after one ordered after
  // another writer (not by queue order, which the split may cut) inherit its order, and a
  // user of iteration i - n ordered before another user, by an edge that waits for what the
  // buffer needs from it, is covered by that user's edge. Such edges stay: only
  // separate-load-compute removes distance-0 edges after this pass, and only queue order.
  void add_reuse_edges(const std::vector<InstId>& all, const std::vector<InstId>& writers, int64_t n, LoopId loop) {
    std::vector<InstId> heads;  // writers no earlier writer orders
    for (InstId w : writers) {
      bool inherits = false;
      for (const DepEdgeRef& r : g_.incoming(w)) {
        inherits = r.props.distance == 0 && r.props.kind != DepKind::Ordered && is_writer(r.src) && r.src != w;
        if (inherits) break;
      }
      if (!inherits) heads.push_back(w);
    }
    // A covering user y stands for x only when the heads wait for all of y's instances of
    // iteration i - n, and y's last instance for x's last: the simulator honours an edge
    // per tile where tile_dependence.h has a map (a slice's write then waits only for the
    // instance of y touching that slice, which need not come after x's instance touching
    // it), so such an edge covers nothing, and neither does a per-tile x -> y edge.
    // (No map without a loop of the source's own inside the common one: the usual chain
    // of users in one loop body is settled without building a map.)
    auto per_tile = [&](InstId src, InstId dst, int distance) {
      const LoopId common = distance > 0 ? loop : k_.insts[dst].loop;
      return k_.insts[src].loop != common && tile_map(k_, src, dst, distance, distance > 0 ? loop : kNoId).has_value();
    };
    std::unordered_map<InstId, bool> whole;  // per covering user: every head waits for all of it
    auto stands_for_all = [&](InstId y) {
      const auto [it, fresh] = whole.emplace(y, true);
      if (fresh)
        it->second =
            std::none_of(heads.begin(), heads.end(), [&](InstId w) { return per_tile(y, w, static_cast<int>(n)); });
      return it->second;
    };
    std::vector<InstId> sources;  // the users of iteration i - n no other covers
    for (InstId x : all) {
      const bool completion = is_writer(x);
      bool covered = false;
      for (const DepEdgeRef& r : g_.outgoing(x)) {  // edges read in place: no copy per user
        const DepEdge& e = r.props;
        const InstId dst = r.dst;
        covered = e.distance == 0 && dst != x && is_user(dst) &&
                  (e.kind == DepKind::Flow || e.kind == DepKind::Output || (!completion && e.kind == DepKind::Anti)) &&
                  !per_tile(x, dst, 0) && stands_for_all(dst);
        if (covered) break;
      }
      if (!covered) sources.push_back(x);
    }
    for (InstId w : heads)
      for (InstId x : sources)
        if (g_.add(x, w, is_writer(x) ? DepKind::Output : DepKind::Anti, static_cast<int>(n), loop))
          ctx_.stats.add("edges_added");
  }

  // The ring starts again at buffer 0 each time the loop is entered. Under the split's
  // fence only the previous entry's last iteration may still be computing when the next
  // entry's first writes go, but a DMA queue passes the fence once it has issued, so a
  // transfer reading the tile may be older. When that iteration or such a transfer may
  // use buffer 0 ((trip - 1) mod n is 0, or a reader is a transfer), nothing separates
  // them, so the order across entries comes back: the dependences the analysis carries on
  // the enclosing loops between the tensor's users (the split cut them).
  void restore_entry_order(const Ring& r, int64_t n, LoopId loop) {
    bool transfer_reads = false;
    for (InstId reader : r.c.readers) {
      const OpcodeInfo* op = k_.target->opcode(k_.insts[reader].opcode);
      transfer_reads = transfer_reads || (op && is_dma_class(op->op_class));
    }
    if (k_.loops[loop].parent == kNoId || (!transfer_reads && (k_.loops[loop].trip_count() - 1) % n != 0)) return;
    if (!derived_) derived_ = analyze_dependences(k_);
    for (InstId w : r.c.writers)
      for (const DepEdgeRef& e : derived_->in_edges(w))
        if (e.props.distance > 0 && e.props.loop != loop && is_user(e.src) &&
            (e.props.kind == DepKind::Anti || e.props.kind == DepKind::Output) &&
            g_.add(e.src, w, e.props.kind, e.props.distance, e.props.loop))
          ctx_.stats.add("entry_edges_added");
  }

  // buffers=model: say why each other tile of the space keeps one buffer, at the innermost
  // loop around all its users (the loop a ring would have to follow), and whether a second
  // buffer would fit at all. A report reads these to tell what keeps a loop from its bound.
  void note_unringed_tiles() {
    for (size_t ti = 0; ti < k_.tensors.size(); ++ti) {
      const Tensor& t = k_.tensors[ti];
      if (t.space != o_.space || t.attrs.has(attr::kBuffers) || users_[ti].empty() || !wanted_[ti]) continue;
      LoopId loop = k_.insts[users_[ti][0]].loop;  // the innermost loop around all its users
      for (InstId u : users_[ti]) loop = k_.common_loop_of_loops(loop, k_.insts[u].loop);
      if (loop == kNoId) continue;
      const std::string why = rotation_candidate(k_, loop, static_cast<int>(ti), users_[ti], o_.nested).blocker;
      if (why.empty()) continue;  // ringable there: at its bound or capacity-bound, noted above
      const int64_t one = footprint(t, 1), more = footprint(t, 2) - one;
      const int64_t free = alloc_.free_for(static_cast<int>(ti), loop);
      ctx_.note("loop " + k_.loops[loop].iv + ": %" + t.name + " stays on one buffer: " + why +
                (footprint(t, 2) > free ? "; a second buffer would need " + std::to_string(more) + " " + unit_ + ", " +
                                              std::to_string(free - one) + " free"
                                        : ""));
    }
  }

  PassContext& ctx_;
  Kernel& k_;
  DepGraph& g_;
  const Options& o_;
  const SpaceInfo& space_;
  Allocator alloc_;  // what each ring may take: the space less what the tensors live beside it take
  const char* unit_;
  std::vector<bool> wanted_;  // by tensor: {tiles=} names it (all when empty)
  const std::vector<std::vector<InstId>> users_;
  const std::vector<int> pos_;
  std::optional<BoundsInput> bounds_;  // buffers=model
  std::optional<DepGraph> derived_;    // analysis of the accesses, when needed
  int at_bound_tiles_ = 0;             // left on one buffer: their loop runs at its bound without a ring
  int64_t plans_costed_ = 0;           // by plan_kernel's search (none when every wish fits)
  bool plan_exact_ = false;
  // Each ring's users and writers by instruction, marked in one array and cleared for the
  // next, rather than a hash set of each tile's users.
  enum : uint8_t { kUser = 1, kWriter = 2 };
  std::vector<uint8_t> role_;
  std::vector<InstId> marked_;
};

void AddressRotationPass::run(PassContext& ctx) {
  const SpaceInfo* space = ctx.kernel.target->space(o_.space);
  if (!space) {
    ctx.skip_unchanged("target '" + ctx.kernel.target->name + "' has no " + o_.space);
    return;
  }
  const std::vector<Tensor>& tensors = ctx.kernel.tensors;
  if (std::none_of(tensors.begin(), tensors.end(), [&](const Tensor& t) { return t.space == o_.space; })) {
    for (const std::string& name : o_.tiles) named_tile(ctx.kernel, name);
    note_named_tiles(ctx, o_);
    ctx.skip_unchanged(nothing_rewritten(o_.space));
    return;
  }
  KernelRotation(ctx, o_, *space).run();
}

}  // namespace tandem
