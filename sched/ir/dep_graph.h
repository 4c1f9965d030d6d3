// The dependence graph: a Boost.Graph adjacency_list whose vertices are InstIds (vecS: the
// kernel's instruction arena maps 1:1 onto vertex indices) and whose edges carry the kind,
// the distance and the carrying loop. Bidirectional, because the passes walk predecessors
// (seed 000's cut snapshots a load's incoming edges).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sched/ir/kernel.h"

namespace tandem {

// Ordered by strength: adding an edge that exists keeps the stronger kind (seed 000).
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
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, DepEdge>;
  using Edge = Graph::edge_descriptor;

  explicit DepGraph(size_t num_insts = 0) : g_(num_insts) {}

  // Makes room for instructions appended to the kernel's arena after construction.
  void grow(size_t num_insts);
  size_t num_vertices() const { return boost::num_vertices(g_); }
  size_t num_edges() const { return boost::num_edges(g_); }

  // Adds src -> dst (same distance and loop identify an edge); an existing edge keeps the
  // stronger kind. Returns true when the graph changed.
  bool add(InstId src, InstId dst, DepKind kind, int distance = 0, LoopId loop = kNoId, bool is_explicit = false);
  // Adds without looking for an existing edge; the caller guarantees uniqueness.
  void add_unique(InstId src, InstId dst, const DepEdge& e) { boost::add_edge(src, dst, e, g_); }
  bool remove(InstId src, InstId dst, int distance = 0, LoopId loop = kNoId);

  std::vector<DepEdgeRef> in_edges(InstId dst) const;
  std::vector<DepEdgeRef> out_edges(InstId src) const;
  std::vector<DepEdgeRef> edges() const;
  const DepEdge* find(InstId src, InstId dst, int distance = 0, LoopId loop = kNoId) const;

  const Graph& graph() const { return g_; }

 private:
  std::optional<Edge> lookup(InstId src, InstId dst, int distance, LoopId loop) const;
  Graph g_;
};

}  // namespace tandem
