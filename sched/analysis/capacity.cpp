#include "sched/analysis/capacity.h"

#include "sched/target/target.h"

namespace tandem {

namespace {

// " written by %x, %y": the instructions that fill a tensor, for the message.
std::string writers_of(const Kernel& k, int tensor) {
  std::string s;
  for (const Instruction& in : k.insts) {
    if (in.erased) continue;
    for (const Access& a : in.writes)
      if (a.tensor_id == tensor && !in.name.empty() && s.find("%" + in.name) == std::string::npos)
        s += (s.empty() ? " written by %" : ", %") + in.name;
  }
  return s;
}

}  // namespace

std::optional<CapacityProblem> find_capacity_problem(const Kernel& k) {
  // A space without partitions (LDS) holds whole tensors.
  for (const auto& [name, space] : k.target->spaces) {
    if (space.bytes_per_partition == 0 || space.is_register_file()) continue;
    const int64_t bank_bytes = space.banks > 0 ? space.bytes_per_partition / space.banks : 0;
    int64_t used = 0, banks = 0;
    std::string list;
    for (const Tensor& t : k.tensors) {
      if (t.space != name) continue;
      int64_t per_partition = static_cast<int64_t>(dtype_bytes(t.dtype));
      for (size_t d = space.partitions > 0 ? 1 : 0; d < t.shape.size(); ++d) per_partition *= t.shape[d];
      per_partition *= t.attrs.get_int("buffers").value_or(1);
      used += per_partition;
      if (bank_bytes) banks += (per_partition + bank_bytes - 1) / bank_bytes;
      list += (list.empty() ? "" : ", ") + std::string("%") + t.name + " " + std::to_string(per_partition) +
              writers_of(k, static_cast<int>(&t - k.tensors.data()));
      if (bank_bytes && banks > space.banks)
        return CapacityProblem{t.loc, "tensors in " + name + " need " + std::to_string(banks) + " banks of " +
                                          std::to_string(bank_bytes) + " bytes but " + name + " has " +
                                          std::to_string(space.banks) + " (" + list + ")"};
      if (used > space.bytes_per_partition)
        return CapacityProblem{t.loc, "tensors in " + name + " need " + std::to_string(used) +
                                          " bytes per partition but " + name + " has " +
                                          std::to_string(space.bytes_per_partition) + " (" + list + ")"};
    }
  }
  return std::nullopt;
}

}  // namespace tandem
