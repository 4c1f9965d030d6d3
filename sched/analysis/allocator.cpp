#include "sched/analysis/allocator.h"

#include <algorithm>
#include <climits>
#include <set>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

using Wide = __int128;  // a sum of footprints, each below 2^63: never overflows

// Range add and range maximum over the positions, the usage of one space at each.
class MaxTree {
 public:
  explicit MaxTree(int n) : n_(std::max(n, 1)), max_(nodes(n_), 0), add_(max_.size(), 0) {}
  void add(int lo, int hi, Wide v) { add(1, 0, n_ - 1, lo, hi, v); }
  Wide max(int lo, int hi) const { return max(1, 0, n_ - 1, lo, hi); }
  Wide max() const { return max_[1]; }
  // The first position whose usage exceeds `limit`, or -1.
  int first_above(Wide limit) const { return max_[1] > limit ? first_above(1, 0, n_ - 1, limit, 0) : -1; }

 private:
  void add(size_t node, int l, int r, int lo, int hi, Wide v) {
    if (hi < l || r < lo) return;
    if (lo <= l && r <= hi) {
      max_[node] += v, add_[node] += v;
      return;
    }
    const int m = (l + r) / 2;
    add(2 * node, l, m, lo, hi, v);
    add(2 * node + 1, m + 1, r, lo, hi, v);
    max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
  }
  Wide max(size_t node, int l, int r, int lo, int hi) const {
    if (hi < l || r < lo) return 0;
    if (lo <= l && r <= hi) return max_[node];
    const int m = (l + r) / 2;
    return add_[node] + std::max(max(2 * node, l, m, lo, hi), max(2 * node + 1, m + 1, r, lo, hi));
  }
  int first_above(size_t node, int l, int r, Wide limit, Wide above) const {
    if (l == r) return l;
    const int m = (l + r) / 2;
    above += add_[node];
    if (above + max_[2 * node] > limit) return first_above(2 * node, l, m, limit, above);
    return first_above(2 * node + 1, m + 1, r, limit, above);
  }

  // Node i has children 2i and 2i + 1, each over half of its range, so a leaf lies at depth
  // ceil(log2 n) at most and every index is below twice the power of two at or above n.
  static size_t nodes(int n) {
    size_t p = 1;
    while (p < static_cast<size_t>(n)) p *= 2;
    return 2 * p;
  }

  int n_;
  std::vector<Wide> max_, add_;  // a node's maximum includes its own pending add
};

// One constant index: `3` in `%qk[0:128, 3, %j, 0:512]`.
bool constant_point(const IndexRange& r) {
  return !r.strided() && r.lo.terms.empty() && r.hi.terms.empty() && !r.lo.uses_register() &&
         r.hi.constant == r.lo.constant + 1;
}

bool encloses(const Kernel& k, LoopId outer, LoopId inner) {
  for (LoopId l = inner; l != kNoId; l = k.loops[static_cast<size_t>(l)].parent)
    if (l == outer) return true;
  return false;
}

// Does the access replace every element of the tensor over one iteration of `outer` (every
// iteration of the loops inside `outer` around it taken together)? Per dimension: a constant
// [0, extent), or a range of one extent that one loop inside `outer` moves by at most that
// extent per iteration, from 0 to the end (a tile of a block dimension written in turn).
// `block_dims`: dimensions whose one block, fixed within `outer`, stands for the tensor.
bool covers_whole(const Kernel& k, const Tensor& t, const Access& a, LoopId outer, const std::vector<int>& block_dims) {
  if (a.whole()) return true;
  if (a.dims.size() != t.shape.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (std::find(block_dims.begin(), block_dims.end(), static_cast<int>(d)) != block_dims.end()) continue;
    const IndexRange& r = a.dims[d];
    if (r.strided()) return false;
    if (r.lo.terms.empty() && r.hi.terms.empty()) {
      if (r.lo.constant != 0 || r.hi.constant != t.shape[d]) return false;
      continue;
    }
    if (r.lo.terms.size() != 1 || r.hi.terms.size() != 1 || r.lo.uses_register()) return false;
    const AffineTerm& lo = r.lo.terms[0];
    const AffineTerm& hi = r.hi.terms[0];
    if (lo.loop != hi.loop || lo.coeff != hi.coeff || lo.loop < 0 || lo.loop == outer ||
        (outer != kNoId && !encloses(k, outer, lo.loop)))
      return false;
    const int64_t extent = r.hi.constant - r.lo.constant;
    const int64_t step = lo.coeff < 0 ? -lo.coeff : lo.coeff;
    const int64_t span = step * (k.loops[static_cast<size_t>(lo.loop)].trip_count() - 1);
    const int64_t first = r.lo.constant + (lo.coeff < 0 ? -span : 0);
    if (extent < step || first != 0 || first + span + extent != t.shape[d]) return false;
  }
  return true;
}

// Constant boxes, pairwise disjoint, whose volumes add up to the tensor's: together they write
// every element of it (a tile filled in parts, each part by its own instruction). The split
// dimensions (`split`) are one index each.
bool boxes_tile(const Tensor& t, const std::vector<const Access*>& parts, const std::vector<int>& split) {
  int64_t total = 1;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (std::find(split.begin(), split.end(), static_cast<int>(d)) == split.end()) total *= t.shape[d];
  int64_t sum = 0;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> boxes;
  for (const Access* a : parts) {
    if (a->whole()) return true;
    if (a->dims.size() != t.shape.size()) return false;
    std::vector<std::pair<int64_t, int64_t>> box;
    int64_t volume = 1;
    for (size_t d = 0; d < a->dims.size(); ++d) {
      const IndexRange& r = a->dims[d];
      if (r.strided() || !r.lo.terms.empty() || !r.hi.terms.empty()) return false;
      if (r.lo.constant < 0 || r.hi.constant > t.shape[d] || r.hi.constant <= r.lo.constant) return false;
      box.emplace_back(r.lo.constant, r.hi.constant);
      volume *= r.hi.constant - r.lo.constant;
    }
    for (const auto& other : boxes) {
      bool overlap = true;
      for (size_t d = 0; d < box.size() && overlap; ++d)
        overlap = box[d].first < other[d].second && other[d].first < box[d].second;
      if (overlap) return false;
    }
    boxes.push_back(std::move(box));
    sum += volume;
  }
  return !boxes.empty() && sum == total;
}

// Is every access of the part (`is_part`) that `reads` lists a constant box inside one of `parts`?
template <class IsPart>
bool reads_within(const IsPart& is_part, const std::vector<Access>& reads, const std::vector<const Access*>& parts) {
  auto constant_box = [](const Access& a) {
    for (const IndexRange& r : a.dims)
      if (r.strided() || !r.lo.terms.empty() || !r.hi.terms.empty()) return false;
    return !a.whole();
  };
  for (const Access& a : reads) {
    if (!is_part(a)) continue;
    if (!constant_box(a)) return false;
    bool inside = false;
    for (const Access* part : parts) {
      if (!part->whole() && (!constant_box(*part) || part->dims.size() != a.dims.size())) continue;
      bool all = true;
      for (size_t d = 0; d < a.dims.size() && all && !part->whole(); ++d)
        all = part->dims[d].lo.constant <= a.dims[d].lo.constant && a.dims[d].hi.constant <= part->dims[d].hi.constant;
      inside = inside || all;
    }
    if (!inside) return false;
  }
  return true;
}

}  // namespace

struct Allocator::SpaceUse {
  const std::string* name;
  const SpaceInfo* space;
  MaxTree usage;
};

Allocator::Allocator(const Kernel& k) : k_(k) {
  for (const auto& [name, space] : k.target->spaces)
    if (space.capacity() != 0 && !space.is_register_file()) spaces_.push_back({&name, &space, MaxTree(0)});
  compute_live_ranges();
}

Allocator::~Allocator() = default;

void Allocator::compute_live_ranges() {
  // Positions: each loop opens and closes around its body.
  inst_pos_.assign(k_.insts.size(), -1);
  loop_span_.assign(k_.loops.size(), {-1, -1});
  auto walk = [&](const std::vector<Stmt>& block, auto& self) -> void {
    for (const Stmt& s : block) {
      if (s.kind == Stmt::kInst) {
        if (k_.insts[static_cast<size_t>(s.id)].erased) continue;
        inst_pos_[static_cast<size_t>(s.id)] = static_cast<int>(at_.size());
        at_.push_back(s.id);
        continue;
      }
      loop_span_[static_cast<size_t>(s.id)].first = static_cast<int>(at_.size());
      at_.push_back(-1 - s.id);
      self(k_.loops[static_cast<size_t>(s.id)].body, self);
      loop_span_[static_cast<size_t>(s.id)].second = static_cast<int>(at_.size());
      at_.push_back(-1 - s.id);
    }
  };
  walk(k_.body, walk);
  for (SpaceUse& s : spaces_) s.usage = MaxTree(static_cast<int>(at_.size()));
  split_tensors();

  // Each part's space, bytes per partition and placement.
  const size_t n = parts_.size();
  space_of_.assign(n, nullptr);
  bytes_.assign(n, 0);
  placed_.assign(n, {0, 0});
  for (size_t p = 0; p < n; ++p) {
    const Tensor& t = k_.tensors[static_cast<size_t>(parts_[p].tensor)];
    for (SpaceUse& s : spaces_)
      if (*s.name == t.space) {
        space_of_[p] = &s;
        bytes_[p] = bytes_per_partition(k_, t);
        for (int d : split_dims_[static_cast<size_t>(parts_[p].tensor)]) bytes_[p] /= t.shape[static_cast<size_t>(d)];
      }
    if (const auto address = t.attrs.get_int(attr::kAddress); address && space_of_[p])
      placed_[p] = {*address, *address + t.attrs.get_int(attr::kExtent).value_or(bytes_[p])};
  }
  collect_uses();

  blocks_.assign(n, {});
  for (size_t p = 0; p < n; ++p)
    if (!uses_[p].empty()) blocks_[p] = find_blocks(static_cast<int>(p));

  // Live ranges with the tensors' present buffers; a placed tensor's bytes are its space's
  // from the first position to the last.
  live_.assign(n, {});
  buffers_.assign(n, 1);
  for (SpaceUse& s : spaces_)
    if (const int64_t placed = placed_usage(s); placed > 0) s.usage.add(0, static_cast<int>(at_.size()) - 1, placed);
  for (size_t p = 0; p < n; ++p) {
    if (uses_[p].empty()) continue;
    if (placed_[p].second > placed_[p].first) {
      live_[p] = {0, static_cast<int>(at_.size()) - 1};
      continue;
    }
    const Tensor& tensor = k_.tensors[static_cast<size_t>(parts_[p].tensor)];
    buffers_[p] = std::max<int64_t>(1, tensor.attrs.get_int(attr::kBuffers).value_or(1));
    LoopId rotated_on = kNoId;
    if (const auto iv = tensor.attrs.get_string(attr::kRotate))
      for (LoopId l = k_.insts[static_cast<size_t>(at_[static_cast<size_t>(uses_[p].front())])].loop; l != kNoId;
           l = k_.loops[static_cast<size_t>(l)].parent)
        if (k_.loops[static_cast<size_t>(l)].iv == *iv) rotated_on = l;
    live_[p] = extend_over_carrying_loops(static_cast<int>(p), {uses_[p].front(), uses_[p].back()}, rotated_on);
    space_of_[p]->usage.add(live_[p].first, live_[p].last, footprint(static_cast<int>(p), buffers_[p]));
  }
}

void Allocator::collect_uses() {
  // Each part's users, in position order, and the one index each part takes of a dimension
  // (-1: none seen yet, -2: more than one): a part every access of which takes the same index
  // of a dimension is that index's tile alone (`%qk[0:128, 2, 0, 0:512]` where the other parts
  // of %qk take every `%qk[:, c, %j]`).
  const size_t n = parts_.size();
  uses_.assign(n, {});
  std::vector<std::vector<int64_t>> index_at(n);
  for (size_t pos = 0; pos < at_.size(); ++pos) {
    if (at_[pos] < 0) continue;
    const Instruction& in = k_.insts[static_cast<size_t>(at_[pos])];
    for (const auto* list : {&in.writes, &in.reads})
      for (const Access& a : *list) {
        const int part = part_of(a);
        if (part < 0 || !space_of_[static_cast<size_t>(part)]) continue;
        std::vector<int>& u = uses_[static_cast<size_t>(part)];
        if (u.empty() || u.back() != static_cast<int>(pos)) u.push_back(static_cast<int>(pos));
        std::vector<int64_t>& at = index_at[static_cast<size_t>(part)];
        const bool first = at.empty();
        if (first) at.assign(k_.tensors[static_cast<size_t>(a.tensor_id)].shape.size(), -1);
        const bool dims = a.dims.size() == at.size() && !a.whole();
        for (size_t d = 0; d < at.size(); ++d) {
          const bool point = dims && constant_point(a.dims[d]);
          if (!point || (!first && at[d] != a.dims[d].lo.constant)) at[d] = -2;
          if (point && first) at[d] = a.dims[d].lo.constant;
        }
      }
  }
  fixed_dims_.assign(n, {});
  for (size_t p = 0; p < n; ++p) {
    const Tensor& tensor = k_.tensors[static_cast<size_t>(parts_[p].tensor)];
    fixed_dims_[p] = split_dims_[static_cast<size_t>(parts_[p].tensor)];
    for (size_t d = space_of_[p] && space_of_[p]->space->partitions > 0 ? 1 : 0; d < index_at[p].size(); ++d)
      if (index_at[p][d] >= 0 && tensor.shape[d] > 1 && !tensor.attrs.has(attr::kAddress) &&
          std::find(fixed_dims_[p].begin(), fixed_dims_[p].end(), static_cast<int>(d)) == fixed_dims_[p].end()) {
        fixed_dims_[p].push_back(static_cast<int>(d));
        bytes_[p] /= tensor.shape[d];
      }
  }
}

void Allocator::split_tensors() {
  const size_t nt = k_.tensors.size();
  std::vector<char> bounded(nt, 0), accessed(nt, 0);
  std::vector<std::vector<char>> constant(nt);
  for (size_t t = 0; t < nt; ++t) {
    const Tensor& tensor = k_.tensors[t];
    for (const SpaceUse& s : spaces_)
      if (*s.name == tensor.space) {
        bounded[t] = 1;
        if (!tensor.attrs.has(attr::kAddress)) {
          constant[t].assign(tensor.shape.size(), 1);
          if (s.space->partitions > 0 && !constant[t].empty()) constant[t][0] = 0;
        }
      }
  }
  auto each_access = [&](const auto& f) {
    for (int32_t x : at_)
      if (x >= 0)
        for (const auto* list : {&k_.insts[static_cast<size_t>(x)].writes, &k_.insts[static_cast<size_t>(x)].reads})
          for (const Access& a : *list)
            if (a.tensor_id >= 0 && static_cast<size_t>(a.tensor_id) < nt && bounded[static_cast<size_t>(a.tensor_id)])
              f(a, static_cast<size_t>(a.tensor_id));
  };
  // A dimension splits a tensor when every access indexes it with one constant.
  each_access([&](const Access& a, size_t t) {
    accessed[t] = 1;
    std::vector<char>& c = constant[t];
    if (a.whole() || a.dims.size() != c.size()) {
      std::fill(c.begin(), c.end(), 0);
      return;
    }
    for (size_t d = 0; d < c.size(); ++d)
      if (!constant_point(a.dims[d])) c[d] = 0;
  });
  split_dims_.assign(nt, {});
  for (size_t t = 0; t < nt; ++t)
    for (size_t d = 0; d < constant[t].size(); ++d)
      if (accessed[t] && constant[t][d] && k_.tensors[t].shape[d] > 1) split_dims_[t].push_back(static_cast<int>(d));
  // One part per tensor that no dimension splits; a split tensor's parts in order of first use.
  parts_.clear();
  parts_of_.assign(nt, {});
  part_by_key_.assign(nt, {});
  for (size_t t = 0; t < nt; ++t)
    if (split_dims_[t].empty()) {
      parts_of_[t].push_back(static_cast<int>(parts_.size()));
      parts_.push_back({static_cast<int>(t), {}});
    }
  each_access([&](const Access& a, size_t t) {
    if (split_dims_[t].empty()) return;
    std::vector<int64_t> key;
    for (int d : split_dims_[t]) key.push_back(a.dims[static_cast<size_t>(d)].lo.constant);
    if (part_by_key_[t].count(key)) return;
    part_by_key_[t].emplace(key, static_cast<int>(parts_.size()));
    parts_of_[t].push_back(static_cast<int>(parts_.size()));
    parts_.push_back({static_cast<int>(t), std::move(key)});
  });
}

int Allocator::part_of(const Access& a) const {
  if (a.tensor_id < 0 || static_cast<size_t>(a.tensor_id) >= parts_of_.size()) return -1;
  const size_t t = static_cast<size_t>(a.tensor_id);
  if (split_dims_[t].empty()) return parts_of_[t].empty() ? -1 : parts_of_[t].front();
  if (a.dims.size() != k_.tensors[t].shape.size()) return -1;
  std::vector<int64_t> key;
  for (int d : split_dims_[t]) key.push_back(a.dims[static_cast<size_t>(d)].lo.constant);
  const auto it = part_by_key_[t].find(key);
  return it == part_by_key_[t].end() ? -1 : it->second;
}

std::string Allocator::part_name(int part) const {
  const Part& p = parts_[static_cast<size_t>(part)];
  std::string name = "%" + k_.tensors[static_cast<size_t>(p.tensor)].name;
  if (p.key.empty()) return name;
  // The part as an index: `%qk[:, 3]` for dimension 1 split.
  const std::vector<int>& dims = split_dims_[static_cast<size_t>(p.tensor)];
  name += "[";
  for (size_t d = 0, i = 0; d <= static_cast<size_t>(dims.back()); ++d) {
    name += d ? ", " : "";
    name += i < dims.size() && dims[i] == static_cast<int>(d) ? std::to_string(p.key[i++]) : ":";
  }
  return name + "]";
}

int64_t Allocator::placed_usage(const SpaceUse& s) const {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t t = 0; t < placed_.size(); ++t)
    if (space_of_[t] == &s && !uses_[t].empty() && placed_[t].second > placed_[t].first) {
      if (s.space->banks > 0) {
        const int64_t bank = s.space->bank_bytes();
        ranges.emplace_back(placed_[t].first / bank, (placed_[t].second + bank - 1) / bank);
      } else {
        ranges.push_back(placed_[t]);
      }
    }
  std::sort(ranges.begin(), ranges.end());
  int64_t used = 0, end = INT64_MIN;
  for (const auto& [first, last] : ranges) {
    if (last <= end) continue;
    used += last - std::max(first, end);
    end = last;
  }
  return used;
}

std::optional<CapacityProblem> Allocator::placed_problem() const {
  for (size_t t = 0; t < placed_.size(); ++t) {
    const Tensor& tensor = k_.tensors[static_cast<size_t>(parts_[t].tensor)];
    if (!space_of_[t] || uses_[t].empty() || !tensor.attrs.has(attr::kAddress)) continue;
    const auto [first, end] = placed_[t];
    const SpaceInfo& space = *space_of_[t]->space;
    if (first < 0 || end <= first || end > space.bytes_per_partition)
      return CapacityProblem{tensor.loc, "tensor %" + tensor.name + " is placed at bytes [" + std::to_string(first) +
                                             ", " + std::to_string(end) + ") of each partition, but " + tensor.space +
                                             " has " + std::to_string(space.bytes_per_partition)};
    if (tensor.attrs.has(attr::kBuffers))
      return CapacityProblem{tensor.loc, "tensor %" + tensor.name + " is placed (address = " + std::to_string(first) +
                                             ") and has buffers: a placed tensor is one buffer"};
  }
  return std::nullopt;
}

LiveInterval Allocator::extend_over_carrying_loops(int part, LiveInterval iv, LoopId rotated_on) const {
  const std::vector<int>& uses = uses_[static_cast<size_t>(part)];
  const int tensor = parts_[static_cast<size_t>(part)].tensor;
  const Tensor& t = k_.tensors[static_cast<size_t>(tensor)];
  const std::vector<int>& split = fixed_dims_[static_cast<size_t>(part)];
  auto is_part = [&](const Access& a) { return in_part(a, part); };
  // Does the first use inside `loop` replace the whole tensor, so that nothing an earlier
  // iteration left in it is read? An accumulation replaces it only when its group starts
  // inside the loop (`start` names a loop the loop encloses).
  // A first use inside a loop nested in `loop` replaces it when that loop replaces it at the
  // top of each of its own iterations, or only writes the tensor and its writes cover all of
  // it over its iterations (a block dimension filled tile by tile).
  auto writes_only = [&](InstId id, LoopId loop) {
    const Instruction& in = k_.insts[static_cast<size_t>(id)];
    for (const Access& a : in.reads)
      if (is_part(a)) return false;
    if (!in.attrs.has(attr::kAccumulate)) return true;
    const LoopId start = accumulation_start(k_, id);
    return start != kNoId && start != loop && encloses(k_, loop, start);
  };
  auto covers = [&](InstId id, LoopId loop) {
    std::vector<int> block_dims = split;
    for (const Block& b : blocks_[static_cast<size_t>(part)])
      if (encloses(k_, b.loop, loop)) block_dims.push_back(b.dim);
    for (const Access& a : k_.insts[static_cast<size_t>(id)].writes)
      if (is_part(a) && covers_whole(k_, t, a, loop, block_dims)) return true;
    return false;
  };
  // The first uses directly in `loop` write parts that together cover the tensor; between
  // them, instructions may read what this iteration's parts already wrote.
  auto covered_together = [&](std::vector<int>::const_iterator first, LoopId loop) {
    std::vector<const Access*> parts;
    for (auto u = first; u != uses.end(); ++u) {
      const InstId user = at_[static_cast<size_t>(*u)];
      const Instruction& in = k_.insts[static_cast<size_t>(user)];
      if (in.loop != loop) break;
      if (writes_only(user, loop)) {
        for (const Access& a : in.writes)
          if (is_part(a)) parts.push_back(&a);
        continue;
      }
      const bool writes = std::any_of(in.writes.begin(), in.writes.end(), is_part);
      if (writes || !reads_within(is_part, in.reads, parts)) break;
    }
    return boxes_tile(t, parts, split);
  };
  auto replaced_at_top = [&](LoopId loop, int open, const auto& self) -> bool {
    const auto first = std::lower_bound(uses.begin(), uses.end(), open);
    const InstId id = at_[static_cast<size_t>(*first)];
    LoopId producer = kNoId;  // the loop directly inside `loop` that holds the first use
    for (LoopId l = k_.insts[static_cast<size_t>(id)].loop; l != loop && l != kNoId;
         l = k_.loops[static_cast<size_t>(l)].parent)
      producer = l;
    if (producer == kNoId) return (writes_only(id, loop) && covers(id, loop)) || covered_together(first, loop);
    if (self(producer, loop_span_[static_cast<size_t>(producer)].first, self)) return true;
    bool covered = false;
    for (auto u = first; u != uses.end() && *u <= loop_span_[static_cast<size_t>(producer)].second; ++u) {
      const InstId user = at_[static_cast<size_t>(*u)];
      if (!writes_only(user, loop)) return false;
      covered = covered || covers(user, loop);
    }
    return covered;
  };
  std::vector<LoopId> seen;
  for (int p : uses)
    for (LoopId l = k_.insts[static_cast<size_t>(at_[static_cast<size_t>(p)])].loop; l != kNoId;
         l = k_.loops[static_cast<size_t>(l)].parent) {
      if (std::find(seen.begin(), seen.end(), l) != seen.end()) break;  // its enclosing ones are in too
      seen.push_back(l);
    }
  if (rotated_on != kNoId && std::find(seen.begin(), seen.end(), rotated_on) == seen.end()) seen.push_back(rotated_on);
  for (LoopId l : seen) {
    const auto [open, close] = loop_span_[static_cast<size_t>(l)];
    const bool used_outside = uses.front() < open || uses.back() > close;
    const bool one_iteration = k_.loops[static_cast<size_t>(l)].trip_count() == 1;  // nothing to carry
    if (l == rotated_on || used_outside || (!one_iteration && !replaced_at_top(l, open, replaced_at_top))) {
      iv.first = std::min(iv.first, open);
      iv.last = std::max(iv.last, close);
    }
  }
  return iv;
}

std::vector<Allocator::Block> Allocator::find_blocks(int part) const {
  const int tensor = parts_[static_cast<size_t>(part)].tensor;
  const Tensor& t = k_.tensors[static_cast<size_t>(tensor)];
  const SpaceInfo& space = *space_of_[static_cast<size_t>(part)]->space;
  if (t.attrs.has(attr::kBuffers)) return {};
  // The loop around all uses, then its enclosing ones: each over which every access takes
  // block `%i` (exactly) of one dimension as long as the loop runs.
  const std::vector<int>& uses = uses_[static_cast<size_t>(part)];
  auto inst_at = [&](int p) -> const Instruction& {
    return k_.insts[static_cast<size_t>(at_[static_cast<size_t>(p)])];
  };
  LoopId common = inst_at(uses.front()).loop;
  for (int p : uses) common = k_.common_loop_of_loops(common, inst_at(p).loop);
  std::vector<Block> found;
  for (LoopId l = common; l != kNoId; l = k_.loops[static_cast<size_t>(l)].parent) {
    const Loop& loop = k_.loops[static_cast<size_t>(l)];
    for (size_t d = space.partitions > 0 ? 1 : 0; d < t.shape.size(); ++d) {
      if (loop.lo != 0 || loop.trip_count() != t.shape[d] || t.shape[d] < 2) continue;
      if (std::any_of(found.begin(), found.end(), [&](const Block& b) { return b.dim == static_cast<int>(d); }))
        continue;
      bool every = true;
      for (int p : uses)
        for (const auto* list : {&inst_at(p).writes, &inst_at(p).reads})
          for (const Access& a : *list) {
            if (!in_part(a, part)) continue;
            if (a.whole() || a.dims.size() != t.shape.size()) {
              every = false;
              continue;
            }
            const IndexRange& r = a.dims[d];
            every = every && !r.strided() && r.lo.constant == 0 && r.lo.terms.size() == 1 && r.lo.terms[0].loop == l &&
                    r.lo.terms[0].coeff == 1 && r.hi.constant == 1 && r.hi.terms.size() == 1 &&
                    r.hi.terms[0].loop == l && r.hi.terms[0].coeff == 1;
          }
      if (every) {
        found.push_back({l, static_cast<int>(d)});
        break;
      }
    }
  }
  return found;
}

LiveInterval Allocator::live(int tensor) const {
  LiveInterval hull;
  for (int p : parts_of_[static_cast<size_t>(tensor)]) {
    const LiveInterval iv = live_[static_cast<size_t>(p)];
    if (iv.empty()) continue;
    hull.first = hull.empty() ? iv.first : std::min(hull.first, iv.first);
    hull.last = std::max(hull.last, iv.last);
  }
  return hull;
}

LiveInterval Allocator::live_part_if_rotated(int part, LoopId loop) const {
  const LiveInterval now = live_[static_cast<size_t>(part)];
  if (now.empty()) return now;
  return extend_over_carrying_loops(part, now, loop);
}

LiveInterval Allocator::live_if_rotated(int tensor, LoopId loop) const {
  LiveInterval hull;
  for (int p : parts_of_[static_cast<size_t>(tensor)]) {
    const LiveInterval iv = live_part_if_rotated(p, loop);
    if (iv.empty()) continue;
    hull.first = hull.empty() ? iv.first : std::min(hull.first, iv.first);
    hull.last = std::max(hull.last, iv.last);
  }
  return hull;
}

int64_t Allocator::footprint(int part, int64_t buffers) const {
  const Tensor& t = k_.tensors[static_cast<size_t>(parts_[static_cast<size_t>(part)].tensor)];
  int64_t per_buffer = bytes_[static_cast<size_t>(part)];
  for (const Block& b : blocks_[static_cast<size_t>(part)]) per_buffer /= t.shape[static_cast<size_t>(b.dim)];
  if (int64_t all; __builtin_mul_overflow(per_buffer, buffers, &all)) return INT64_MAX;
  return space_of_[static_cast<size_t>(part)]->space->footprint(per_buffer, buffers);
}

int64_t Allocator::free_for(int tensor, LoopId loop) {
  const std::vector<int>& parts = parts_of_[static_cast<size_t>(tensor)];
  SpaceUse* s = parts.empty() ? nullptr : space_of_[static_cast<size_t>(parts.front())];
  const LiveInterval ring = live_if_rotated(tensor, loop);
  if (!s || ring.empty()) return INT64_MAX;
  auto take_out = [&](int sign) {
    for (int p : parts) {
      const LiveInterval now = live_[static_cast<size_t>(p)];
      if (!now.empty())
        s->usage.add(now.first, now.last, sign * static_cast<Wide>(footprint(p, buffers_[static_cast<size_t>(p)])));
    }
  };
  take_out(-1);
  const Wide others = s->usage.max(ring.first, ring.last);
  take_out(1);
  const Wide free = s->space->capacity() - others;
  return free < 0 ? 0 : static_cast<int64_t>(free);
}

void Allocator::rotate(int tensor, int64_t buffers, LoopId loop) {
  for (int p : parts_of_[static_cast<size_t>(tensor)]) {
    SpaceUse* s = space_of_[static_cast<size_t>(p)];
    const LiveInterval now = live_[static_cast<size_t>(p)];
    if (!s || now.empty()) continue;
    s->usage.add(now.first, now.last, -static_cast<Wide>(footprint(p, buffers_[static_cast<size_t>(p)])));
    live_[static_cast<size_t>(p)] = live_part_if_rotated(p, loop);
    buffers_[static_cast<size_t>(p)] = buffers;
    const LiveInterval ring = live_[static_cast<size_t>(p)];
    s->usage.add(ring.first, ring.last, footprint(p, buffers));
  }
}

int64_t Allocator::peak(const std::string& space) const {
  for (const SpaceUse& s : spaces_)
    if (*s.name == space) {
      const Wide m = s.usage.max();
      return m > INT64_MAX ? INT64_MAX : static_cast<int64_t>(m);
    }
  return 0;
}

std::string Allocator::where(int position) const {
  const int32_t x = at_[static_cast<size_t>(position)];
  if (x < 0) {
    const LoopId l = -1 - x;
    return (loop_span_[static_cast<size_t>(l)].first == position ? "the start of loop " : "the end of loop ") +
           k_.loops[static_cast<size_t>(l)].iv;
  }
  const Instruction& in = k_.insts[static_cast<size_t>(x)];
  return in.name.empty() ? "a " + in.opcode : "%" + in.name;
}

SourceLoc Allocator::loc_at(int position) const {
  const int32_t x = at_[static_cast<size_t>(position)];
  return x < 0 ? k_.loops[static_cast<size_t>(-1 - x)].loc : k_.insts[static_cast<size_t>(x)].loc;
}

std::optional<CapacityProblem> Allocator::first_problem() const {
  for (size_t t = 0; t < parts_.size(); ++t) {
    if (!space_of_[t] || uses_[t].empty()) continue;
    const Tensor& tensor = k_.tensors[static_cast<size_t>(parts_[t].tensor)];
    if (int64_t all; __builtin_mul_overflow(bytes_[t], buffers_[t], &all))
      return CapacityProblem{tensor.loc, "tensor %" + tensor.name + " with buffers = " + std::to_string(buffers_[t]) +
                                             " needs more bytes per partition than 64 bits count"};
  }
  if (auto problem = placed_problem()) return problem;
  for (const SpaceUse& s : spaces_) {
    const int p = s.usage.first_above(s.space->capacity());
    if (p < 0) continue;
    const Wide used = s.usage.max(p, p);
    // The tensors live there, each with its buffers and writers, in declaration order: the
    // kMaxListed largest when that leaves out two or more, and how many others.
    constexpr size_t kMaxListed = 8;
    std::vector<size_t> live_there;
    for (size_t t = 0; t < parts_.size(); ++t)
      if (space_of_[t] == &s && !live_[t].empty() && p >= live_[t].first && p <= live_[t].last) live_there.push_back(t);
    const size_t others = live_there.size() > kMaxListed + 1 ? live_there.size() - kMaxListed : 0;
    if (others > 0) {
      std::stable_sort(live_there.begin(), live_there.end(), [&](size_t a, size_t b) {
        return footprint(static_cast<int>(a), buffers_[a]) > footprint(static_cast<int>(b), buffers_[b]);
      });
      live_there.resize(kMaxListed);
      std::sort(live_there.begin(), live_there.end());
    }
    std::string list;
    for (size_t t : live_there) {
      // Its writers, the first kMaxWriters by name.
      constexpr size_t kMaxWriters = 4;
      std::string writers;
      std::set<std::string> named;
      for (int u : uses_[t])
        for (const Access& a : k_.insts[static_cast<size_t>(at_[static_cast<size_t>(u)])].writes) {
          const std::string& w = k_.insts[static_cast<size_t>(at_[static_cast<size_t>(u)])].name;
          if (in_part(a, static_cast<int>(t)) && !w.empty() && named.insert(w).second && named.size() <= kMaxWriters)
            writers += (writers.empty() ? " written by %" : ", %") + w;
        }
      if (named.size() > kMaxWriters) writers += " and " + std::to_string(named.size() - kMaxWriters) + " more";
      const bool placed = placed_[t].second > placed_[t].first;
      list += (list.empty() ? "" : ", ") + part_name(static_cast<int>(t)) + " " +
              (placed ? "placed at bytes [" + std::to_string(placed_[t].first) + ", " +
                            std::to_string(placed_[t].second) + ")"
                      : (buffers_[t] > 1 ? std::to_string(buffers_[t]) + " x " : "") + std::to_string(bytes_[t])) +
              (placed || blocks_[t].empty() ? "" : " (one block live at a time)") + writers;
    }
    if (others > 0) list += ", and " + std::to_string(others) + " more";
    const std::string& name = *s.name;
    const std::string need = std::to_string(static_cast<int64_t>(used > INT64_MAX ? INT64_MAX : used));
    const std::string head = "at " + where(p) + ", the tensors live in " + name + " need " + need;
    if (s.space->banks > 0)
      return CapacityProblem{loc_at(p), head + " banks of " + std::to_string(s.space->bank_bytes()) + " bytes but " +
                                            name + " has " + std::to_string(s.space->banks) + " (" + list + ")"};
    return CapacityProblem{loc_at(p), head + " bytes per partition but " + name + " has " +
                                          std::to_string(s.space->bytes_per_partition) + " (" + list + ")"};
  }
  return std::nullopt;
}

std::optional<Overflow> Allocator::first_overflow() const {
  if (placed_problem()) return std::nullopt;
  for (const SpaceUse& s : spaces_) {
    const int p = s.usage.first_above(s.space->capacity());
    if (p < 0) continue;
    Overflow o;
    o.space = *s.name;
    const int32_t x = at_[static_cast<size_t>(p)];
    if (x >= 0) o.inst = x;
    if (x < 0) o.loop = -1 - x;
    o.loop_end = x < 0 && loop_span_[static_cast<size_t>(o.loop)].second == p;
    const Wide over = s.usage.max(p, p) - static_cast<Wide>(s.space->capacity());
    o.excess = over > static_cast<Wide>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(over);
    for (size_t t = 0; t < parts_of_.size(); ++t) {
      if (parts_of_[t].size() != 1 || !split_dims_[t].empty()) continue;
      const size_t part = static_cast<size_t>(parts_of_[t].front());
      const LiveInterval iv = live_[part];
      if (space_of_[part] == &s && !iv.empty() && p >= iv.first && p <= iv.last && fixed_dims_[part].empty() &&
          blocks_[part].empty() && placed_[part].second <= placed_[part].first && buffers_[part] == 1 &&
          !k_.tensors[t].attrs.has(attr::kRotate))
        o.whole_tensors.push_back(static_cast<int>(t));
    }
    return o;
  }
  return std::nullopt;
}

bool Allocator::live_at(int tensor, InstId inst) const {
  const LiveInterval iv = live(tensor);
  const int p = inst_pos_[static_cast<size_t>(inst)];
  return !iv.empty() && p >= iv.first && p <= iv.last;
}

bool Allocator::live_at_loop(int tensor, LoopId loop, bool loop_end) const {
  const LiveInterval iv = live(tensor);
  const auto [open, close] = loop_span_[static_cast<size_t>(loop)];
  const int p = loop_end ? close : open;
  return !iv.empty() && p >= iv.first && p <= iv.last;
}

std::optional<CapacityProblem> find_capacity_problem(const Kernel& k) { return Allocator(k).first_problem(); }

int64_t space_allocation(const Kernel& k, const std::string& space) { return Allocator(k).peak(space); }

}  // namespace tandem
