// The dependence graph: a Boost.Graph adjacency_list whose vertices are InstIds (vecS: the
// kernel's instruction arena maps 1:1 onto vertex indices) and whose edges carry the kind,
// the distance and the carrying loop. Bidirectional, because the passes walk predecessors
// (separate-load-compute's cut snapshots a load's incoming edges). Each end keeps its edges in the order
// added (vecS), and a removal keeps the others' order: the passes' choices depend on it.
//
// Two things keep it cheap at 100k instructions (docs/performance.md): the edges' properties
// sit in list nodes from a pool (std::list's allocator makes one heap allocation per edge),
// and the graph lives behind a pointer, because Boost 1.74's adjacency_list has no move (its
// swap copies): moving a DepGraph must not copy every edge.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/pool/pool_alloc.hpp>

#include "sched/ir/kernel.h"

namespace tandem {
// The container of a bidirectional adjacency_list's edge properties (its EdgeList
// selector): a list whose nodes come from a pool. The scheduler runs on one thread per
// process (sweeps fork or use MPI ranks), hence no lock.
struct PooledListS {};
}  // namespace tandem

namespace boost {
template <class ValueType>
struct container_gen<tandem::PooledListS, ValueType> {
  using type = std::list<ValueType, boost::fast_pool_allocator<ValueType, boost::default_user_allocator_new_delete,
                                                               boost::details::pool::null_mutex>>;
};
template <>
struct parallel_edge_traits<tandem::PooledListS> {
  using type = allow_parallel_edge_tag;
};
}  // namespace boost

namespace tandem {

// Ordered by strength: adding an edge that exists keeps the stronger kind (docs/ir.md, Dependences).
enum class DepKind : uint8_t { Invalid = 0, Ordered = 1, Anti = 2, Output = 3, Flow = 4 };
static_assert(DepKind::Invalid < DepKind::Ordered && DepKind::Ordered < DepKind::Anti &&
                  DepKind::Anti < DepKind::Output && DepKind::Output < DepKind::Flow,
              "dependence kinds are ordered by strength");

const char* dep_kind_name(DepKind k);

struct DepEdge {
  DepKind kind = DepKind::Invalid;
  int distance = 0;     // iterations of `loop` between source and destination instances
  LoopId loop = kNoId;  // the carrying loop when distance > 0
  bool is_explicit = false;
  // The dependence analysis left out an edge because this one orders it (docs/ir.md, Implied
  // edges): the simulator honours it whole-loop, never per tile (sched/analysis/tile_dependence.h).
  bool implies = false;
};

struct DepEdgeRef {
  InstId src;
  InstId dst;
  DepEdge props;
};

class DepGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, DepEdge,
                                      boost::no_property, PooledListS>;
  using Edge = Graph::edge_descriptor;

  // One edge of the graph as the passes see it.
  static DepEdgeRef ref(const Graph& g, Edge e) {
    return {static_cast<InstId>(boost::source(e, g)), static_cast<InstId>(boost::target(e, g)), g[e]};
  }

  // An instruction's outgoing or incoming edges, read in place, in the order added. Valid
  // until that instruction's edges change.
  template <class BoostIterator>
  class EdgeRange {
   public:
    class iterator {
     public:
      iterator(const Graph* g, BoostIterator it) : g_(g), it_(it) {}
      DepEdgeRef operator*() const { return ref(*g_, *it_); }
      iterator& operator++() {
        ++it_;
        return *this;
      }
      bool operator!=(const iterator& o) const { return it_ != o.it_; }

     private:
      const Graph* g_;
      BoostIterator it_;
    };
    EdgeRange(const Graph* g, std::pair<BoostIterator, BoostIterator> r) : g_(g), r_(r) {}
    iterator begin() const { return {g_, r_.first}; }
    iterator end() const { return {g_, r_.second}; }

   private:
    const Graph* g_;
    std::pair<BoostIterator, BoostIterator> r_;
  };
  using OutRange = EdgeRange<boost::graph_traits<Graph>::out_edge_iterator>;
  using InRange = EdgeRange<boost::graph_traits<Graph>::in_edge_iterator>;

  explicit DepGraph(size_t num_insts = 0) : g_(std::make_unique<Graph>(num_insts)) {}
  DepGraph(const DepGraph& o) : g_(std::make_unique<Graph>(*o.g_)), last_addition_(o.last_addition_) {}
  DepGraph& operator=(const DepGraph& o) {
    *g_ = *o.g_;
    last_addition_ = o.last_addition_;
    return *this;
  }
  DepGraph(DepGraph&&) noexcept = default;
  DepGraph& operator=(DepGraph&&) noexcept = default;

  // Makes room for instructions appended to the kernel's arena after construction.
  void grow(size_t num_insts);
  // Room for each instruction's outgoing and incoming edges, for a caller that knows how many
  // it will add (the analysis): one allocation per list rather than one per doubling.
  void reserve_edges(const std::vector<uint32_t>& out_degree, const std::vector<uint32_t>& in_degree);
  size_t num_vertices() const { return boost::num_vertices(*g_); }
  size_t num_edges() const { return boost::num_edges(*g_); }

  // Adds src -> dst (same distance and loop identify an edge); an existing edge keeps the
  // stronger kind. Returns true when the graph changed.
  bool add(InstId src, InstId dst, DepKind kind, int distance = 0, LoopId loop = kNoId, bool is_explicit = false);
  // Adds without looking for an existing edge; the caller guarantees uniqueness. An end
  // beyond the instructions adds vertices up to it (the structural verifier reports it).
  void add_unique(InstId src, InstId dst, const DepEdge& e) {
    boost::add_edge(src, dst, e, *g_);
    last_addition_ = ++additions_;
  }
  bool remove(InstId src, InstId dst, int distance = 0, LoopId loop = kNoId);

  // In place (see EdgeRange).
  OutRange outgoing(InstId src) const { return {g_.get(), boost::out_edges(src, *g_)}; }
  InRange incoming(InstId dst) const { return {g_.get(), boost::in_edges(dst, *g_)}; }
  // Every edge, in the order added.
  template <class F>
  void for_each_edge(F&& f) const {
    for (auto [it, end] = boost::edges(*g_); it != end; ++it) f(ref(*g_, *it));
  }

  // Copies, for a caller that changes the graph while it walks them.
  std::vector<DepEdgeRef> in_edges(InstId dst) const;
  std::vector<DepEdgeRef> out_edges(InstId src) const;
  std::vector<DepEdgeRef> edges() const;
  const DepEdge* find(InstId src, InstId dst, int distance = 0, LoopId loop = kNoId) const;

  const Graph& graph() const { return *g_; }

  // When an edge was last added, on a clock shared by every graph of the process (a copy
  // keeps its original's): equal readings mean no edge was added in between, so the graph is
  // still acyclic if it was (removing an edge or strengthening its kind cannot close a
  // cycle). The pass manager checks acyclicity after a pass only when this changed.
  uint64_t last_addition() const { return last_addition_; }

 private:
  std::optional<Edge> lookup(InstId src, InstId dst, int distance, LoopId loop) const;
  std::unique_ptr<Graph> g_;              // never null but in a moved-from graph
  uint64_t last_addition_ = 0;            // 0: no edge was ever added
  static inline uint64_t additions_ = 0;  // one thread per process (see PooledListS)
};

}  // namespace tandem
