#include "sched/analysis/tile_dependence.h"

#include <algorithm>
#include <map>

#include "sched/ir/kernel_queries.h"
#include "sched/support/box.h"

namespace tandem {

namespace {

constexpr int64_t kMaxPairs = int64_t{1} << 18;

struct Touch {
  int tensor;
  bool write;
  Box box;
};

// One dimension's terms in the common loops, for all four bounds of a tensor's accesses.
using CommonPart = std::vector<std::pair<LoopId, int64_t>>;

CommonPart common_part(const AffineExpr& e, const std::vector<bool>& is_common) {
  CommonPart out;
  for (const AffineTerm& t : e.terms)
    if (is_common[static_cast<size_t>(t.loop)]) out.push_back({t.loop, t.coeff});
  std::sort(out.begin(), out.end());
  return out;
}

// The loop a ringed tensor's buffer turns with, as the instruction sees it (kNoId: one buffer).
LoopId ring_loop(const Kernel& k, const Instruction& in, int tensor) {
  const Tensor& t = k.tensors[static_cast<size_t>(tensor)];
  const auto buffers = t.attrs.get_int(attr::kBuffers);
  const auto iv = t.attrs.get_string(attr::kRotate);
  if (!buffers || !iv || *buffers < 2) return kNoId;
  for (LoopId l = in.loop; l != kNoId; l = k.loops[static_cast<size_t>(l)].parent)
    if (k.loops[static_cast<size_t>(l)].iv == *iv) return l;
  return kNoId;
}

}  // namespace

std::optional<TileMap> tile_map(const Kernel& k, InstId src, InstId dst, int distance, LoopId loop) {
  if (src == dst && distance == 0) return std::nullopt;
  const Instruction& s = k.insts[static_cast<size_t>(src)];
  const Instruction& d = k.insts[static_cast<size_t>(dst)];
  const std::vector<LoopId> ns = k.loop_nest(src), nd = k.loop_nest(dst);
  size_t cd = 0;  // loops common to both, outermost first (a carried edge: up to its loop)
  if (distance == 0) {
    while (cd < ns.size() && cd < nd.size() && ns[cd] == nd[cd]) ++cd;
  } else {
    while (cd < ns.size() && ns[cd] != loop) ++cd;
    if (cd == ns.size() || cd >= nd.size() || nd[cd] != loop) return std::nullopt;
    if (k.loops[static_cast<size_t>(loop)].trip_count() <= distance) return std::nullopt;
    ++cd;
  }
  if (ns.size() == cd) return std::nullopt;  // one source instance per common iteration
  TileMap m;
  m.common = cd ? ns[cd - 1] : kNoId;
  m.src_loops.assign(ns.begin() + static_cast<long>(cd), ns.end());
  m.dst_loops.assign(nd.begin() + static_cast<long>(cd), nd.end());
  int64_t dst_instances = 1;
  for (LoopId l : m.src_loops) m.src_instances *= k.loops[static_cast<size_t>(l)].trip_count();
  for (LoopId l : m.dst_loops) dst_instances *= k.loops[static_cast<size_t>(l)].trip_count();
  if (m.src_instances > kMaxPairs / dst_instances) return std::nullopt;
  // The simulator buffers distance + 2 iterations of source keys (sim/units/semaphore.h).
  if (m.src_instances > kMaxPairs / (distance + 2)) return std::nullopt;

  // Accesses: no address register; per tensor and dimension, one common part for all bounds.
  std::vector<bool> is_common(k.loops.size(), false);
  for (size_t i = 0; i < cd; ++i) is_common[static_cast<size_t>(ns[i])] = true;
  std::map<std::pair<int, size_t>, CommonPart> parts;
  for (const Instruction* in : {&s, &d})
    for (const auto* list : {&in->reads, &in->writes})
      for (const Access& a : *list) {
        if (k.tensors[static_cast<size_t>(a.tensor_id)].register_file) return std::nullopt;
        for (size_t dim = 0; dim < a.dims.size(); ++dim)
          for (const AffineExpr* e : {&a.dims[dim].lo, &a.dims[dim].hi}) {
            if (e->uses_register()) return std::nullopt;
            CommonPart p = common_part(*e, is_common);
            auto [it, fresh] = parts.emplace(std::make_pair(a.tensor_id, dim), p);
            if (!fresh && it->second != p) return std::nullopt;
          }
      }
  if (s.reads.empty() && s.writes.empty()) return std::nullopt;
  if (d.reads.empty() && d.writes.empty()) return std::nullopt;

  // The boxes of every instance of an iteration of `common` (its loops at their first value:
  // the common parts cancel; a carried edge's destination `distance` iterations on), in
  // execution order.
  std::vector<int64_t> ivs(k.loops.size(), 0);
  for (size_t i = 0; i < cd; ++i) ivs[static_cast<size_t>(ns[i])] = k.loops[static_cast<size_t>(ns[i])].lo;
  const auto value = [&](const AffineTerm& t) -> std::optional<int64_t> { return ivs[static_cast<size_t>(t.loop)]; };
  const auto instances = [&](const Instruction& in, const std::vector<LoopId>& loops, InstId id) {
    std::vector<std::vector<Touch>> out;
    for (LoopId l : loops) ivs[static_cast<size_t>(l)] = k.loops[static_cast<size_t>(l)].lo;
    while (true) {
      std::vector<Touch> touches;
      // An accumulation group started by a common loop reads in some common iterations and
      // not others: count the read, so that the map holds in every iteration.
      const LoopId start = in.attrs.has(attr::kAccumulate) ? accumulation_start(k, id) : kNoId;
      const bool accumulates =
          reads_accumulator(k, id, ivs.data()) || (start != kNoId && is_common[static_cast<size_t>(start)]);
      for (const auto* list : {&in.reads, &in.writes})
        for (const Access& a : *list) {
          Touch t{a.tensor_id, list == &in.writes, {}};
          box_of(k.tensors[static_cast<size_t>(a.tensor_id)], a, value, t.box);
          // A ringed tensor (address-rotation): which buffer, as one more dimension. Two
          // instances in different buffers do not touch the same bytes (the race checker's
          // buffer_of): a ring in a loop nested in the common one pairs entry i's k-th
          // writer with entry i - d's k-th reader only.
          if (const LoopId r = ring_loop(k, in, a.tensor_id); r != kNoId) {
            const int64_t n = *k.tensors[static_cast<size_t>(a.tensor_id)].attrs.get_int(attr::kBuffers);
            const int64_t b = (ivs[static_cast<size_t>(r)] - k.loops[static_cast<size_t>(r)].lo) % n;
            t.box.push_back({b, b + 1});
          }
          touches.push_back(t);
          if (t.write && accumulates) touches.push_back({t.tensor, false, t.box});
        }
      out.push_back(std::move(touches));
      size_t n = loops.size();  // odometer, innermost fastest
      while (n > 0) {
        const Loop& l = k.loops[static_cast<size_t>(loops[n - 1])];
        if (++ivs[static_cast<size_t>(loops[n - 1])] < l.hi) break;
        ivs[static_cast<size_t>(loops[n - 1])] = l.lo;
        --n;
      }
      if (n == 0) return out;
    }
  };
  const std::vector<std::vector<Touch>> si = instances(s, m.src_loops, src);
  if (distance > 0) ivs[static_cast<size_t>(loop)] += distance;
  const std::vector<std::vector<Touch>> di = instances(d, m.dst_loops, dst);
  const auto conflict = [](const std::vector<Touch>& a, const std::vector<Touch>& b) {
    for (const Touch& x : a)
      for (const Touch& y : b)
        if (x.tensor == y.tensor && (x.write || y.write) && overlaps(x.box, y.box)) return true;
    return false;
  };
  int64_t latest = 0;
  bool whole = true;
  for (const std::vector<Touch>& dt : di) {
    for (int64_t i = m.src_instances - 1; i > latest; --i)
      if (conflict(si[static_cast<size_t>(i)], dt)) {
        latest = i;
        break;
      }
    m.wait_for.push_back(latest);
    whole &= latest == m.src_instances - 1;
  }
  if (whole) return std::nullopt;
  return m;
}

std::optional<TileMap> edge_tile_map(const Kernel& k, InstId src, InstId dst, const DepEdge& e) {
  if (e.is_explicit || e.implies || e.kind == DepKind::Ordered) return std::nullopt;
  return tile_map(k, src, dst, e.distance, e.distance > 0 ? e.loop : kNoId);
}

}  // namespace tandem
