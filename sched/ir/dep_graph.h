// The dependence graph: vertices are InstIds (the kernel's instruction arena maps 1:1 onto
// vertex indices) and edges carry the kind, the distance and the carrying loop. Both ends
// keep their edges, because the passes walk predecessors (seed 000's cut snapshots a load's
// incoming edges).
//
// Flat storage: one array of every edge in the order added, and per instruction the indices
// of its outgoing and incoming ones, in the order added (a removal keeps the others' order).
// It replaced a Boost adjacency_list with list-based edges: one heap node per edge, vectors
// of list iterators per vertex, and no move (every move of a graph copied it).
#pragma once

#include <cstdint>
#include <vector>

#include <boost/container/small_vector.hpp>

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
  // An instruction's edges: most have a few, kept inline.
  using Incident = boost::container::small_vector<uint32_t, 4>;

 public:
  // An instruction's outgoing or incoming edges, read in place, in the order added. Valid
  // until that instruction's edges change (a reference to an edge: until any edge is added).
  class EdgeRange {
   public:
    class iterator {
     public:
      iterator(const DepEdgeRef* edges, const uint32_t* at) : edges_(edges), at_(at) {}
      const DepEdgeRef& operator*() const { return edges_[*at_]; }
      const DepEdgeRef* operator->() const { return &edges_[*at_]; }
      iterator& operator++() {
        ++at_;
        return *this;
      }
      bool operator!=(const iterator& o) const { return at_ != o.at_; }

     private:
      const DepEdgeRef* edges_;
      const uint32_t* at_;
    };
    EdgeRange(const DepEdgeRef* edges, const Incident& ids) : edges_(edges), ids_(&ids) {}
    iterator begin() const { return {edges_, ids_->data()}; }
    iterator end() const { return {edges_, ids_->data() + ids_->size()}; }
    size_t size() const { return ids_->size(); }

   private:
    const DepEdgeRef* edges_;
    const Incident* ids_;
  };

  explicit DepGraph(size_t num_insts = 0) : out_(num_insts), in_(num_insts) {}

  // Makes room for instructions appended to the kernel's arena after construction.
  void grow(size_t num_insts);
  size_t num_vertices() const { return out_.size(); }
  size_t num_edges() const { return live_; }
  // Room for this many edges in all, added without moving the others.
  void reserve_edges(size_t n) { edges_.reserve(n), removed_.reserve(n); }

  // Adds src -> dst (same distance and loop identify an edge); an existing edge keeps the
  // stronger kind. Returns true when the graph changed.
  bool add(InstId src, InstId dst, DepKind kind, int distance = 0, LoopId loop = kNoId, bool is_explicit = false);
  // Adds without looking for an existing edge; the caller guarantees uniqueness.
  void add_unique(InstId src, InstId dst, const DepEdge& e);
  bool remove(InstId src, InstId dst, int distance = 0, LoopId loop = kNoId);

  // In place (see EdgeRange).
  EdgeRange outgoing(InstId src) const { return {edges_.data(), out_[static_cast<size_t>(src)]}; }
  EdgeRange incoming(InstId dst) const { return {edges_.data(), in_[static_cast<size_t>(dst)]}; }
  // Every edge, in the order added.
  template <class F>
  void for_each_edge(F&& f) const {
    for (size_t i = 0; i < edges_.size(); ++i)
      if (!removed_[i]) f(edges_[i]);
  }

  // Copies, for a caller that changes the graph while it walks them.
  std::vector<DepEdgeRef> in_edges(InstId dst) const;
  std::vector<DepEdgeRef> out_edges(InstId src) const;
  std::vector<DepEdgeRef> edges() const;
  const DepEdge* find(InstId src, InstId dst, int distance = 0, LoopId loop = kNoId) const;

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t lookup(InstId src, InstId dst, int distance, LoopId loop) const;
  void compact();

  std::vector<DepEdgeRef> edges_;  // in the order added, removed ones included
  std::vector<uint8_t> removed_;
  std::vector<Incident> out_, in_;  // indices into edges_
  size_t live_ = 0;
};

}  // namespace tandem
