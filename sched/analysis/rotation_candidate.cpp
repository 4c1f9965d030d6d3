#include "sched/analysis/rotation_candidate.h"
#include "sched/ir/attribute_keys.h"

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

RotationCandidate rotation_candidate(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& order) {
  RotationCandidate c;
  const Tensor& t = k.tensors[static_cast<size_t>(tensor)];
  const std::string name = "%" + t.name;
  const auto& spaces = rotatable_spaces();
  if (std::find(spaces.begin(), spaces.end(), t.space) == spaces.end()) {
    c.blocker = name + " is in " + t.space + ", which address-rotation does not ring";
    return c;
  }
  if (auto n = t.attrs.get_int(attr::kBuffers)) {
    c.blocker = name + " already has " + std::to_string(*n) + " buffers";
    return c;
  }
  bool seen = false, written_first = false;
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
    if (in.attrs.has(attr::kAccumulate) && writes) reads = true;
    // Rotation follows the loop whose own body rewrites the tensor: a write in a nested loop
    // belongs to that loop.
    if (writes && in.loop != loop) return blocked(name + " is written in a loop nested in it");
    // The value must not flow between iterations: the first touch in the body is a write that
    // is not also a read.
    if (!seen) written_first = writes && !reads;
    seen = true;
    if (reads && !written_first) return blocked("the value of " + name + " flows from one iteration to the next");
    if (reads) c.readers.push_back(id);
    if (writes) c.writers.push_back(id);
  }
  if (c.writers.empty()) c.blocker = "the loop does not write " + name;
  return c;
}

}  // namespace tandem
