#include "sched/analysis/inst_cost.h"

#include <algorithm>

#include "sched/ir/kernel_queries.h"

namespace tandem {

namespace {

int64_t extent(const Kernel& k, const IndexRange& d) { return std::max<int64_t>(1, value_range(k, d.hi - d.lo).second); }

// Contiguous runs per partition row of an access (its descriptors per partition, ARCH-v2):
// the first dimension is the partition (or, off chip, the row a partition receives); a run
// ends at the innermost dimension the access does not cover whole.
int64_t runs_per_row(const Kernel& k, const Access& a) {
  const Tensor& t = k.tensors[a.tensor_id];
  if (a.whole()) return 1;
  int64_t runs = 1;
  size_t partial = 0;
  for (size_t d = 1; d < a.dims.size(); ++d)
    if (extent(k, a.dims[d]) < t.shape[d]) partial = d;
  for (size_t d = 1; d < partial; ++d) runs *= extent(k, a.dims[d]);
  return runs;
}

}  // namespace

OperandShape operand_shape(const Kernel& k, const Access& a) {
  const Tensor& tensor = k.tensors[a.tensor_id];
  std::vector<int64_t> ext = tensor.shape;
  if (!a.whole())
    for (size_t d = 0; d < a.dims.size(); ++d) ext[d] = extent(k, a.dims[d]);
  OperandShape s;
  const SpaceInfo* space = k.target->space(tensor.space);
  size_t first_free = 0;
  if (space && space->partitions > 0) {
    s.partitions = ext[0];
    first_free = 1;
  }
  for (size_t d = first_free; d < ext.size(); ++d) s.free *= ext[d];
  s.dtype = tensor.dtype;
  s.elem_bytes = tensor.register_file && space ? space->register_bytes : static_cast<int64_t>(dtype_bytes(tensor.dtype));
  return s;
}

bool is_transfer(const Kernel& k, const Instruction& in) {
  const OpcodeInfo* op = k.target->opcode(in.opcode);
  if (!op || !is_dma_class(op->op_class)) return false;
  if (!in.engine.empty()) return k.target->is_dma_queue(in.engine);
  return std::find(op->engines.begin(), op->engines.end(), "dma") != op->engines.end();
}

DmaShape transfer_shape(const Kernel& k, const Instruction& in) {
  DmaShape s;
  for (const Access& a : in.writes) s.bytes = std::max(s.bytes, static_cast<double>(operand_shape(k, a).bytes()));
  for (const auto* list : {&in.writes, &in.reads})
    for (const Access& a : *list) {
      s.runs_per_partition = std::max(s.runs_per_partition, runs_per_row(k, a));
      const Tensor& t = k.tensors[a.tensor_id];
      const SpaceInfo* sp = k.target->space(t.space);
      if (!sp || sp->partitions == 0 || s.partitions) continue;
      if (a.whole()) {
        s.partitions = t.shape[0];
      } else {
        s.first_partition = std::max<int64_t>(0, a.dims[0].lo.constant);
        s.partitions = extent(k, a.dims[0]);
      }
    }
  return s;
}

std::optional<DmaTransfer> transfer_of(const Kernel& k, const Instruction& in) {
  if (!k.target || !is_transfer(k, in)) return std::nullopt;
  return dma_transfer(k.target->dma, transfer_shape(k, in));
}

}  // namespace tandem
