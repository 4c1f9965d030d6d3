#include "sched/analysis/capacity.h"

#include <climits>
#include <set>
#include <vector>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

// " written by %x, %y": the instructions that fill a tensor, for the message.
std::string writers_of(const Kernel& k, int tensor) {
  std::string s;
  std::set<std::string> seen;
  for (const Instruction& in : k.insts) {
    if (in.erased) continue;
    for (const Access& a : in.writes)
      if (a.tensor_id == tensor && !in.name.empty() && seen.insert(in.name).second)
        s += (s.empty() ? " written by %" : ", %") + in.name;
  }
  return s;
}

// "%a 2 x 512 written by %x, ...": the space's tensors up to `last`, for the message. Built
// only when the space overflows: it reads every instruction once per tensor.
std::string tensor_list(const Kernel& k, const Tensor& last) {
  std::string list;
  for (const Tensor& t : k.tensors) {
    if (t.space != last.space) continue;
    const int64_t buffers = t.attrs.get_int(attr::kBuffers).value_or(1);
    list += (list.empty() ? "" : ", ") + std::string("%") + t.name + " " +
            (buffers > 1 ? std::to_string(buffers) + " x " : "") + std::to_string(bytes_per_partition(k, t)) +
            writers_of(k, static_cast<int>(&t - k.tensors.data()));
    if (&t == &last) break;
  }
  return list;
}

}  // namespace

int64_t space_allocation(const Kernel& k, const std::string& name) {
  const SpaceInfo* space = k.target->space(name);
  if (!space) return 0;
  __int128 used = 0;
  for (const Tensor& t : k.tensors) {
    if (t.space != name) continue;
    const int64_t per_buffer = bytes_per_partition(k, t), buffers = t.attrs.get_int(attr::kBuffers).value_or(1);
    if (int64_t all; __builtin_mul_overflow(per_buffer, buffers, &all)) return INT64_MAX;
    used += space->footprint(per_buffer, buffers);
  }
  return used > INT64_MAX ? INT64_MAX : static_cast<int64_t>(used);
}

std::optional<CapacityProblem> find_capacity_problem(const Kernel& k) {
  // Each space's capacity holds all its tensors, every buffer of them, counted by the space's
  // one capacity rule (SpaceInfo::footprint: whole banks per buffer in PSUM, bytes per
  // partition elsewhere; address-rotation counts the same way). A space without partitions
  // (LDS) holds whole tensors.
  // One walk over the tensors for every space (the verifier asks after every pass, and a
  // kernel may have 100k tensors): each space's first failing tensor, reported for the first
  // space in the target's order, as a walk per space would.
  struct Tally {
    const std::string* name;
    const SpaceInfo* space;
    __int128 used = 0;  // each footprint is below 2^63: no overflow
    const Tensor* failed = nullptr;
    int64_t failed_buffers = 0;
    bool too_many_bytes = false;  // per buffer x buffers overflows 64 bits
  };
  std::vector<Tally> tallies;
  for (const auto& [name, space] : k.target->spaces)
    if (space.capacity() != 0 && !space.is_register_file()) tallies.push_back({&name, &space});
  Tally* tally = nullptr;  // the previous tensor's space's, or nullptr when not counted
  const std::string* tally_space = nullptr;
  for (const Tensor& t : k.tensors) {
    if (!tally_space || t.space != *tally_space) {  // most tensors share the previous one's space
      tally = nullptr;
      tally_space = &t.space;
      for (Tally& x : tallies)
        if (*x.name == t.space) tally = &x;
    }
    if (!tally || tally->failed) continue;
    const int64_t per_buffer = bytes_per_partition(k, t);
    const int64_t buffers = t.attrs.get_int(attr::kBuffers).value_or(1);
    if (int64_t all; __builtin_mul_overflow(per_buffer, buffers, &all)) {
      tally->failed = &t, tally->failed_buffers = buffers, tally->too_many_bytes = true;
      continue;
    }
    tally->used += tally->space->footprint(per_buffer, buffers);
    if (tally->used > tally->space->capacity()) tally->failed = &t;
  }
  for (const Tally& x : tallies) {
    if (!x.failed) continue;
    const Tensor& t = *x.failed;
    const std::string& name = *x.name;
    const SpaceInfo& space = *x.space;
    if (x.too_many_bytes)
      return CapacityProblem{t.loc, "tensor %" + t.name + " with buffers = " + std::to_string(x.failed_buffers) +
                                        " needs more bytes per partition than 64 bits count"};
    const __int128 used = x.used;
    const std::string list = tensor_list(k, t);
    if (space.banks > 0)
      return CapacityProblem{t.loc, "tensors in " + name + " need " + std::to_string(static_cast<int64_t>(used)) + " banks of " +
                                        std::to_string(space.bank_bytes()) + " bytes but " + name + " has " +
                                        std::to_string(space.banks) + " (" + list + ")"};
    return CapacityProblem{t.loc, "tensors in " + name + " need " + std::to_string(static_cast<int64_t>(used)) +
                                      " bytes per partition but " + name + " has " +
                                      std::to_string(space.bytes_per_partition) + " (" + list + ")"};
  }
  return std::nullopt;
}

}  // namespace tandem
