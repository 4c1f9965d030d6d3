#include "sched/ir/dep_graph.h"

#include <algorithm>

namespace tandem {

const char* dep_kind_name(DepKind k) {
  switch (k) {
    case DepKind::Invalid: return "invalid";
    case DepKind::Ordered: return "ordered";
    case DepKind::Anti: return "anti";
    case DepKind::Output: return "output";
    case DepKind::Flow: return "flow";
  }
  return "?";
}

void DepGraph::grow(size_t n) {
  if (out_.size() < n) out_.resize(n), in_.resize(n);
  // Between passes, nobody holds a range: drop removed edges once they are the majority.
  if (edges_.size() - live_ > live_) compact();
}

// Renumbers the live edges in their order; each instruction's lists keep theirs.
void DepGraph::compact() {
  std::vector<uint32_t> renumber(edges_.size(), kNone);
  size_t next = 0;
  for (size_t i = 0; i < edges_.size(); ++i)
    if (!removed_[i]) {
      renumber[i] = static_cast<uint32_t>(next);
      edges_[next++] = edges_[i];
    }
  edges_.resize(next);
  removed_.assign(next, 0);
  for (std::vector<Incident>* lists : {&out_, &in_})
    for (Incident& ids : *lists)
      for (uint32_t& id : ids) id = renumber[id];
}

static bool same_key(const DepEdge& e, int distance, LoopId loop) {
  return e.distance == distance && (distance == 0 || e.loop == loop);
}

// The edge src -> dst with this key, found from whichever end has fewer edges (a barrier
// has an edge to every instruction of a stage, each of which has a few).
uint32_t DepGraph::lookup(InstId src, InstId dst, int distance, LoopId loop) const {
  if (static_cast<size_t>(std::max(src, dst)) >= out_.size()) return kNone;
  const Incident& outs = out_[static_cast<size_t>(src)];
  const Incident& ins = in_[static_cast<size_t>(dst)];
  if (outs.size() <= ins.size()) {
    for (uint32_t id : outs)
      if (edges_[id].dst == dst && same_key(edges_[id].props, distance, loop)) return id;
  } else {
    for (uint32_t id : ins)
      if (edges_[id].src == src && same_key(edges_[id].props, distance, loop)) return id;
  }
  return kNone;
}

void DepGraph::add_unique(InstId src, InstId dst, const DepEdge& e) {
  // An end beyond the instructions adds vertices up to it (the structural verifier reports
  // the mismatch).
  if (const size_t need = static_cast<size_t>(std::max(src, dst)) + 1; need > out_.size()) out_.resize(need), in_.resize(need);
  const uint32_t id = static_cast<uint32_t>(edges_.size());
  edges_.push_back({src, dst, e});
  removed_.push_back(0);
  out_[static_cast<size_t>(src)].push_back(id);
  in_[static_cast<size_t>(dst)].push_back(id);
  ++live_;
}

bool DepGraph::add(InstId src, InstId dst, DepKind kind, int distance, LoopId loop, bool is_explicit) {
  if (distance == 0) loop = kNoId;
  if (const uint32_t found = lookup(src, dst, distance, loop); found != kNone) {
    DepEdge& e = edges_[found].props;
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
  const uint32_t found = lookup(src, dst, distance, loop);
  if (found == kNone) return false;
  Incident& outs = out_[static_cast<size_t>(src)];
  Incident& ins = in_[static_cast<size_t>(dst)];
  outs.erase(std::find(outs.begin(), outs.end(), found));
  ins.erase(std::find(ins.begin(), ins.end(), found));
  removed_[found] = 1;
  --live_;
  return true;
}

std::vector<DepEdgeRef> DepGraph::in_edges(InstId dst) const {
  std::vector<DepEdgeRef> out;
  out.reserve(in_[static_cast<size_t>(dst)].size());
  for (const DepEdgeRef& e : incoming(dst)) out.push_back(e);
  return out;
}

std::vector<DepEdgeRef> DepGraph::out_edges(InstId src) const {
  std::vector<DepEdgeRef> out;
  out.reserve(out_[static_cast<size_t>(src)].size());
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
  const uint32_t found = lookup(src, dst, distance, loop);
  return found == kNone ? nullptr : &edges_[found].props;
}

}  // namespace tandem
