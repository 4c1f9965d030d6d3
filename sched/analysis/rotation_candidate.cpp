#include "sched/analysis/rotation_candidate.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/box.h"

#include <algorithm>

namespace tandem {

const std::vector<std::string>& rotatable_spaces() {
  static const std::vector<std::string> spaces = {"sbuf", "psum"};
  return spaces;
}

namespace {

bool uses_loop(const Access& a, LoopId loop) {
  for (const IndexRange& r : a.dims)
    if (r.lo.coeff_of_loop(loop) != 0 || r.hi.coeff_of_loop(loop) != 0) return true;
  return false;
}

// The instruction's accumulation group starts at the first iteration of a loop in `loop`'s
// own body (kernel_queries.h, accumulation_start): each iteration of `loop` starts it afresh,
// as a memset in the body would. (A ring follows that loop, not one further out.)
bool starts_inside(const Kernel& k, InstId id, LoopId loop) {
  const LoopId start = accumulation_start(k, id);
  return start != kNoId && k.loops[static_cast<size_t>(start)].parent == loop;
}

// Reads `tensor` as an operand, not only as its own accumulator.
bool reads_explicitly(const Instruction& in, int tensor) {
  for (const Access& a : in.reads)
    if (a.tensor_id == tensor) return true;
  return false;
}

// The writers' instances in one iteration of `loop` cover `tensor` exactly once: their boxes
// (over the loops nested in `loop`) lie in the tensor, do not overlap and add up to its
// volume. Indices must use only those nested loops; at most kMaxInstances instances.
bool rewritten_whole(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& writers) {
  constexpr size_t kMaxInstances = 4096;
  const Tensor& t = k.tensors[static_cast<size_t>(tensor)];
  std::vector<Box> boxes;
  std::vector<int64_t> ivs(k.loops.size(), 0);
  for (InstId w : writers) {
    std::vector<LoopId> nested;  // w's loops inside `loop`, outermost first
    for (LoopId l = k.insts[w].loop; l != loop; l = k.loops[static_cast<size_t>(l)].parent) {
      if (l == kNoId) return false;
      nested.insert(nested.begin(), l);
    }
    std::vector<bool> inside(k.loops.size(), false);
    for (LoopId l : nested) inside[static_cast<size_t>(l)] = true;
    for (const Access& a : k.insts[w].writes) {
      if (a.tensor_id != tensor) continue;
      for (const IndexRange& r : a.dims)
        for (const AffineExpr* e : {&r.lo, &r.hi}) {
          if (e->uses_register()) return false;
          for (const AffineTerm& term : e->terms)
            if (term.loop == kNoId || !inside[static_cast<size_t>(term.loop)]) return false;
        }
      for (LoopId l : nested) ivs[static_cast<size_t>(l)] = k.loops[static_cast<size_t>(l)].lo;
      while (true) {  // odometer over the nested loops, innermost fastest
        Box b;
        if (!box_of(
                t, a,
                [&](const AffineTerm& term) -> std::optional<int64_t> { return ivs[static_cast<size_t>(term.loop)]; },
                b))
          return false;
        boxes.push_back(std::move(b));
        if (boxes.size() > kMaxInstances) return false;
        size_t n = nested.size();
        while (n > 0) {
          const Loop& l = k.loops[static_cast<size_t>(nested[n - 1])];
          if (++ivs[static_cast<size_t>(nested[n - 1])] < l.hi) break;
          ivs[static_cast<size_t>(nested[n - 1])] = l.lo;
          --n;
        }
        if (n == 0) break;
      }
    }
  }
  Box whole;
  int64_t volume = 1, covered = 0;
  for (int64_t d : t.shape) whole.push_back({0, d}), volume *= d;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].size() != whole.size() || !contains(whole, boxes[i])) return false;
    int64_t v = 1;
    for (const auto& [lo, hi] : boxes[i]) v *= hi - lo;
    covered += v;
    for (size_t j = 0; j < i; ++j)
      if (overlaps(boxes[i], boxes[j])) return false;
  }
  return covered == volume;
}

}  // namespace

std::vector<std::vector<InstId>> users_by_tensor(const Kernel& k) {
  std::vector<std::vector<InstId>> users(k.tensors.size());
  for (InstId id : k.program_order()) {
    const Instruction& in = k.insts[id];
    for (const auto* list : {&in.reads, &in.writes})
      for (const Access& a : *list) {
        if (a.tensor_id < 0 || static_cast<size_t>(a.tensor_id) >= users.size()) continue;
        std::vector<InstId>& u = users[static_cast<size_t>(a.tensor_id)];
        if (u.empty() || u.back() != id) u.push_back(id);
      }
  }
  return users;
}

RotationCandidate rotation_candidate(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& order,
                                     bool nested_rewrites) {
  RotationCandidate c;
  const Tensor& t = k.tensors[static_cast<size_t>(tensor)];
  const std::string name = "%" + t.name;
  const auto& spaces = rotatable_spaces();
  if (std::find(spaces.begin(), spaces.end(), t.space) == spaces.end()) {
    c.blocker = name + " is in " + t.space + ", which address-rotation does not ring";
    return c;
  }
  if (auto address = t.attrs.get_int(attr::kAddress)) {
    c.blocker = name + " is placed by the kernel (address = " + std::to_string(*address) + ")";
    return c;
  }
  if (auto n = t.attrs.get_int(attr::kBuffers)) {
    c.blocker = name + " already has " + std::to_string(*n) + " buffers";
    return c;
  }
  bool seen = false, written_first = false, read_seen = false;
  std::vector<InstId> nested_writers;  // plain writes in loops nested in this one
  for (InstId id : order) {
    const Instruction& in = k.insts[id];
    bool reads = false, writes = false, moving = false;
    for (const Access& a : in.reads)
      if (a.tensor_id == tensor) reads = true, moving |= uses_loop(a, loop);
    for (const Access& a : in.writes)
      if (a.tensor_id == tensor) writes = true, moving |= uses_loop(a, loop);
    if (!reads && !writes) continue;
    const auto blocked = [&](const std::string& why) {
      c.blocker = why + " (" + k.display_name(id) + ")";
      return c;
    };
    // One address for every iteration: a tile indexed by the loop variable is not rewritten.
    if (moving) return blocked("the address of " + name + " moves with " + k.loops[loop].iv);
    if (!k.in_loop(id, loop)) return blocked(name + " is also used outside the loop");
    // An accumulation group: the instance at the first iteration of its `start` loop
    // overwrites, so a group started in a loop nested in this one is fresh every iteration.
    const bool accumulates = in.attrs.has(attr::kAccumulate) && writes;
    const bool starts_group = accumulates && starts_inside(k, id, loop);
    if (accumulates) reads = true;
    // Rotation follows the loop whose own body rewrites the tensor: a write in a nested loop
    // belongs to that loop, except an accumulation group's, whose value lives until this
    // loop's body reads it (a PSUM accumulator started each iteration: memset, or matmul
    // `{accumulate, start = "%k"}` with %k nested in this loop).
    const bool group = accumulates && (written_first || (!seen && starts_group));
    if (writes && in.loop != loop && !group) {
      // Or a tile that nested loops rewrite whole, piece by piece, before any read (a strip
      // loaded tile by tile): checked once all its users are seen.
      if (!nested_rewrites || accumulates || reads_explicitly(in, tensor))
        return blocked(name + " is written in a loop nested in it");
      nested_writers.push_back(id);
    }
    if (writes && read_seen && !nested_writers.empty())
      return blocked(name + " is written in a loop nested in it after a read of it");
    read_seen = read_seen || reads;
    // The value must not flow between iterations: the first touch in the body is a write that
    // is not also a read (or the start of an accumulation group).
    if (!seen) written_first = writes && (!reads || (starts_group && !reads_explicitly(in, tensor)));
    seen = true;
    if (reads && !written_first) return blocked("the value of " + name + " flows from one iteration to the next");
    if (reads) c.readers.push_back(id);
    if (writes) c.writers.push_back(id);
  }
  if (c.writers.empty()) c.blocker = "the loop does not write " + name;
  if (c.ringable() && !nested_writers.empty() && !rewritten_whole(k, loop, tensor, c.writers))
    c.blocker = name + " is written in a loop nested in it, not whole in every iteration (" +
                k.display_name(nested_writers.front()) + ")";
  return c;
}

}  // namespace tandem
