#include "sched/ir/dep_graph.h"

#include <algorithm>

namespace tandem {

const char* dep_kind_name(DepKind k) {
  switch (k) {
    case DepKind::Invalid:
      return "invalid";
    case DepKind::Ordered:
      return "ordered";
    case DepKind::Anti:
      return "anti";
    case DepKind::Output:
      return "output";
    case DepKind::Flow:
      return "flow";
  }
  return "?";
}

void DepGraph::grow(size_t n) {
  while (boost::num_vertices(*g_) < n) boost::add_vertex(*g_);
}

void DepGraph::reserve_edges(const std::vector<uint32_t>& out_degree, const std::vector<uint32_t>& in_degree) {
  for (size_t v = 0; v < num_vertices(); ++v) {
    if (v < out_degree.size()) g_->out_edge_list(v).reserve(out_degree[v]);
    if (v < in_degree.size()) in_edge_list(*g_, v).reserve(in_degree[v]);
  }
}

static bool same_key(const DepEdge& e, int distance, LoopId loop) {
  return e.distance == distance && (distance == 0 || e.loop == loop);
}

// The edge src -> dst with this key, found from whichever end has fewer edges (a barrier
// has an edge to every instruction of a stage, each of which has a few).
std::optional<DepGraph::Edge> DepGraph::lookup(InstId src, InstId dst, int distance, LoopId loop) const {
  if (static_cast<size_t>(std::max(src, dst)) >= num_vertices()) return std::nullopt;
  if (boost::out_degree(src, *g_) <= boost::in_degree(dst, *g_)) {
    for (auto [it, end] = boost::out_edges(src, *g_); it != end; ++it)
      if (static_cast<InstId>(boost::target(*it, *g_)) == dst && same_key((*g_)[*it], distance, loop)) return *it;
  } else {
    for (auto [it, end] = boost::in_edges(dst, *g_); it != end; ++it)
      if (static_cast<InstId>(boost::source(*it, *g_)) == src && same_key((*g_)[*it], distance, loop)) return *it;
  }
  return std::nullopt;
}

bool DepGraph::add(InstId src, InstId dst, DepKind kind, int distance, LoopId loop, bool is_explicit) {
  if (distance == 0) loop = kNoId;
  if (const std::optional<Edge> found = lookup(src, dst, distance, loop)) {
    DepEdge& e = (*g_)[*found];
    bool changed = false;
    if (kind > e.kind) {
      e.kind = kind;
      changed = true;
    }
    if (is_explicit && !e.is_explicit) {
      e.is_explicit = true;
      changed = true;
    }
    return changed;
  }
  add_unique(src, dst, DepEdge{kind, distance, loop, is_explicit});
  return true;
}

bool DepGraph::remove(InstId src, InstId dst, int distance, LoopId loop) {
  if (distance == 0) loop = kNoId;
  const std::optional<Edge> found = lookup(src, dst, distance, loop);
  if (found) boost::remove_edge(*found, *g_);
  return found.has_value();
}

std::vector<DepEdgeRef> DepGraph::in_edges(InstId dst) const {
  std::vector<DepEdgeRef> out;
  out.reserve(boost::in_degree(dst, *g_));
  for (const DepEdgeRef& e : incoming(dst)) out.push_back(e);
  return out;
}

std::vector<DepEdgeRef> DepGraph::out_edges(InstId src) const {
  std::vector<DepEdgeRef> out;
  out.reserve(boost::out_degree(src, *g_));
  for (const DepEdgeRef& e : outgoing(src)) out.push_back(e);
  return out;
}

std::vector<DepEdgeRef> DepGraph::edges() const {
  std::vector<DepEdgeRef> out;
  out.reserve(num_edges());
  for_each_edge([&](const DepEdgeRef& e) { out.push_back(e); });
  return out;
}

const DepEdge* DepGraph::find(InstId src, InstId dst, int distance, LoopId loop) const {
  if (distance == 0) loop = kNoId;
  const std::optional<Edge> found = lookup(src, dst, distance, loop);
  return found ? &(*g_)[*found] : nullptr;
}

}  // namespace tandem
