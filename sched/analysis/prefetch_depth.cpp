#include "sched/analysis/prefetch_depth.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_set>
#include <vector>

#include "sched/analysis/tile_dependence.h"

namespace tandem {

namespace {

bool within(const Kernel& k, LoopId inner, LoopId outer) {
  for (LoopId l = inner; l != kNoId; l = k.loops[l].parent)
    if (l == outer) return true;
  return false;
}

double ns(int64_t ps) { return static_cast<double>(ps) / 1000.0; }

// An instruction's first start and last end in one_buffer_chain_ns.
struct Span {
  double start = 0, end = 0, one = 0, instances = 1;
};

// one_buffer_chain_ns's state by instruction, kept from one call to the next and reset only
// for what a call reached: address-rotation asks once per tile and loop, and arrays the size
// of the program made per call would be quadratic in the loops.
struct ChainState {
  std::vector<int> waiting;  // -1: not reached; else its reached predecessors still to be timed
  std::vector<Span> at;
  std::vector<char> timed;
  void grow(size_t n) {
    if (waiting.size() < n) waiting.resize(n, -1), at.resize(n), timed.resize(n, 0);
  }
  // Puts `reached` back as unreached when the call ends, whichever way.
  struct Restore {
    ChainState& state;
    const std::vector<InstId>& reached;
    ~Restore() {
      for (InstId v : reached) {
        const auto i = static_cast<size_t>(v);
        state.waiting[i] = -1, state.at[i] = Span{}, state.timed[i] = 0;
      }
    }
  };
};

}  // namespace

double one_buffer_chain_ns(const BoundsInput& in, const DepGraph& g, LoopId loop, const std::vector<InstId>& writers,
                           const std::vector<InstId>& readers) {
  const Kernel& k = *in.kernel;
  auto inside = [&](InstId v) { return within(k, k.insts[v].loop, loop); };
  // The graph's edges read in place (DepGraph::in_edges/out_edges copy them into a vector per
  // call) and the walk's state in arrays by instruction; the result does not depend on the
  // order of the walk.
  const auto same_iteration = [](const DepEdgeRef& e) { return e.props.distance == 0; };
  // What the writers reach through one iteration's (distance-0) edges inside the loop, each
  // with how many of its reached predecessors are still to be timed (-1: not reached): only
  // that part of the loop is walked, not the whole program once per tile.
  thread_local ChainState state;
  state.grow(k.insts.size());
  std::vector<int>& waiting = state.waiting;
  std::vector<Span>& at = state.at;
  std::vector<char>& timed = state.timed;
  std::vector<InstId> reached, todo;
  const ChainState::Restore restore{state, reached};
  for (InstId w : writers)
    if (inside(w) && waiting[static_cast<size_t>(w)] < 0)
      waiting[static_cast<size_t>(w)] = 0, reached.push_back(w), todo.push_back(w);
  while (!todo.empty()) {
    const InstId v = todo.back();
    todo.pop_back();
    for (const DepEdgeRef& e : g.outgoing(v)) {
      const InstId dst = e.dst;
      if (same_iteration(e) && inside(dst) && waiting[static_cast<size_t>(dst)] < 0)
        waiting[static_cast<size_t>(dst)] = 0, reached.push_back(dst), todo.push_back(dst);
    }
  }
  for (InstId v : reached)
    for (const DepEdgeRef& e : g.incoming(v))
      waiting[static_cast<size_t>(v)] += same_iteration(e) && waiting[static_cast<size_t>(e.src)] >= 0;
  // Each one's first start and last end, predecessors first (the writers start at 0). An
  // instruction of a loop nested in this one runs once per nested iteration, in series (an
  // accumulation group's matmuls, a strip's loads). Fed by a nested loop's instruction
  // through an edge the simulator honours per tile (sibling loops, tile_dependence.h), its
  // first instance waits only for the first tile, its last for the last.
  for (InstId v : reached)
    if (waiting[static_cast<size_t>(v)] == 0) todo.push_back(v);
  bool unknown = false;
  while (!todo.empty()) {
    const InstId v = todo.back();
    todo.pop_back();
    const CostedInst& b = *in.insts[static_cast<size_t>(v)];
    unknown |= b.is_barrier || b.latency_ps <= 0;
    Span s;
    s.one = ns(b.latency_ps);
    for (LoopId l = k.insts[v].loop; l != loop && l != kNoId; l = k.loops[l].parent)
      s.instances *= static_cast<double>(k.loops[l].trip_count());
    double last_wait = 0;
    for (const DepEdgeRef& in_edge : g.incoming(v)) {
      const size_t src = static_cast<size_t>(in_edge.src);
      if (!same_iteration(in_edge) || !timed[src]) continue;
      const Span& p = at[src];
      const DepEdge& e = in_edge.props;
      const bool per_tile =
          p.instances > 1 && k.insts[src].loop != k.insts[v].loop && edge_tile_map(k, static_cast<InstId>(src), v, e);
      s.start = std::max(s.start, per_tile ? p.start + p.one : p.end);
      last_wait = std::max(last_wait, p.end);
    }
    s.end = std::max(s.start + s.one * s.instances, last_wait + s.one);
    at[static_cast<size_t>(v)] = s;
    timed[static_cast<size_t>(v)] = 1;
    for (const DepEdgeRef& out_edge : g.outgoing(v)) {
      const size_t dst = static_cast<size_t>(out_edge.dst);
      if (same_iteration(out_edge) && waiting[dst] >= 0 && --waiting[dst] == 0)
        todo.push_back(static_cast<InstId>(dst));
    }
  }
  double chain = 0;
  for (InstId r : readers)
    if (timed[static_cast<size_t>(r)]) chain = std::max(chain, at[static_cast<size_t>(r)].end);
  if (unknown) return 0;
  // A strip (every writer in a loop nested in this one) whose next iteration's writes wait
  // for this one's users through carried edges the simulator honours per tile: the next
  // iteration's write of slice j waits only for the last reader of slice j, not for the whole
  // strip's readers. The recurrence through the buffer is then per slice: the writes and the
  // reads each run as a stream, and one iteration on one buffer takes the longer stream plus
  // one slice's write and read (the first slice written before any read, the last read after
  // every write), not the whole strip's writes followed by all its reads.
  const std::unordered_set<InstId> users = [&] {
    std::unordered_set<InstId> u(writers.begin(), writers.end());
    u.insert(readers.begin(), readers.end());
    return u;
  }();
  bool strip = !writers.empty(), carried = false;
  double write_stream = 0, read_stream = 0, write_one = 0, read_one = 0;
  for (InstId w : writers) {
    const Span& s = at[static_cast<size_t>(w)];
    strip = strip && timed[static_cast<size_t>(w)] && s.instances > 1;
    if (!strip) break;
    write_stream += s.one * s.instances;
    write_one = std::max(write_one, s.one);
    for (const DepEdgeRef& in_edge : g.incoming(w)) {
      const DepEdge& e = in_edge.props;
      const InstId src = in_edge.src;
      if (e.distance == 0 || e.loop != loop || !users.count(src)) continue;
      carried = true;
      strip = strip && edge_tile_map(k, src, w, e).has_value();
    }
  }
  if (!strip || !carried) return chain;
  for (InstId r : readers)
    if (timed[static_cast<size_t>(r)]) {
      const Span& s = at[static_cast<size_t>(r)];
      read_stream += s.one * s.instances;
      read_one = std::max(read_one, s.one);
    }
  return std::min(chain, std::max(write_stream, read_stream) + write_one + read_one);
}

std::optional<PrefetchDepth> prefetch_depth(const BoundsInput& in, LoopId loop, int tensor,
                                            const std::vector<InstId>& writers, const std::vector<InstId>& readers) {
  const Kernel& k = *in.kernel;
  PrefetchDepth d;
  // A transfer holds the buffer from its issue to its last byte: a load writing it (w), a
  // store or gather reading it (r).
  double w = 0, r = 0;
  for (const auto* list : {&writers, &readers})
    for (InstId i : *list) {
      const CostedInst& b = *in.insts[static_cast<size_t>(i)];
      if (!b.moves_dma || b.units.empty() || in.units[static_cast<size_t>(b.units[0])].kind != UnitKind::DmaQueue)
        continue;
      double& slowest = list == &writers ? w : r;
      for (const Access& a : list == &writers ? k.insts[i].writes : k.insts[i].reads)
        if (a.tensor_id == tensor) slowest = std::max(slowest, ns(b.latency_ps));
    }
  d.load_latency_ns = std::max(w, r);
  if (d.load_latency_ns <= 0) return std::nullopt;
  const ResourceBound bound = loop_resource_bound(in, loop);
  d.ii_ns = ns(bound.ps);
  d.bound_resource = bound.resource;
  // The buffer lives from its writer's start until its last reader is done with it: a
  // transfer's latency at either end; a compute engine, in a schedule starting an iteration
  // every II, is done within one II (an index tile's life spans its load and the gather).
  d.lifetime_ns = (w > 0 ? w : d.ii_ns) + (r > 0 ? r : d.ii_ns);
  const double ahead = d.ii_ns > 0 ? std::ceil(d.lifetime_ns / d.ii_ns) : 1.0;
  d.steady_buffers = std::clamp<int64_t>(static_cast<int64_t>(std::min(ahead, 64.0)) + 1, 2, 16);
  d.buffers = d.steady_buffers;
  // A loop re-entered by an enclosing one restarts its ring at each entry, and the entry's
  // first loads wait for the previous entry's last readers: a ring as deep as an entry lets
  // all of an entry's loads issue at its start. The steady state does not see that.
  const Loop& l = k.loops[loop];
  if (l.parent != kNoId && l.trip_count() <= 16) d.buffers = std::max<int64_t>(d.buffers, l.trip_count());
  return d;
}

double one_buffer_turn_ns(const BoundsInput& in, const DepGraph& g, LoopId loop, InstId* slowest) {
  const Kernel& k = *in.kernel;
  auto transfer_in_body = [&](InstId x) {
    const CostedInst* c = in.insts[static_cast<size_t>(x)];
    return k.insts[x].loop == loop && c && c->moves_dma && !c->collective;
  };
  double longest = 0;
  std::vector<InstId> now, next;  // r's transfers tied to it within an iteration, and across
  for (const Stmt& st : k.loops[loop].body) {
    if (st.kind != Stmt::kInst) continue;
    const InstId r = st.id;
    const CostedInst* c = in.insts[static_cast<size_t>(r)];
    if (!c || c->is_barrier || c->moves_dma || c->latency_ps <= 0 || c->units.empty()) continue;
    now.clear(), next.clear();
    auto note = [&](InstId x, const DepEdge& e) {
      if (x == r || !transfer_in_body(x)) return;
      if (e.distance == 0) now.push_back(x);
      if (e.distance == 1 && e.loop == loop) next.push_back(x);
    };
    for (const DepEdgeRef& e : g.outgoing(r)) note(e.dst, e.props);
    for (const DepEdgeRef& e : g.incoming(r)) note(e.src, e.props);
    std::sort(now.begin(), now.end());
    std::sort(next.begin(), next.end());
    std::vector<InstId> tied;
    std::set_intersection(now.begin(), now.end(), next.begin(), next.end(), std::back_inserter(tied));
    tied.erase(std::unique(tied.begin(), tied.end()), tied.end());
    if (tied.empty()) continue;
    int64_t setup = 0, data = 0;
    for (InstId x : tied) {
      const CostedInst& t = *in.insts[static_cast<size_t>(x)];
      setup = std::max(setup, t.latency_ps - t.data_ps);
      data += t.data_ps;
    }
    const double turn = ns(c->latency_ps + setup + data);
    if (turn > longest) {
      longest = turn;
      if (slowest) *slowest = r;
    }
  }
  return longest;
}

}  // namespace tandem
