#include "sched/analysis/inst_cost.h"

#include <algorithm>
#include <cmath>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"

namespace tandem {

namespace {

// The indices a dimension of an access visits: its pattern's, or its range's length.
int64_t extent(const Kernel& k, const IndexRange& d) {
  if (d.strided()) return pattern_count(d.pattern);
  return std::max<int64_t>(1, value_range(k, d.hi - d.lo).second);
}

// Contiguous runs within one dimension's indices: a strided pattern breaks them after each
// index, or after each run of its innermost term when that term has stride 1.
int64_t runs_within(const Kernel& k, const IndexRange& d) {
  if (!d.strided()) return 1;
  const StrideTerm& inner = d.pattern.back();
  return extent(k, d) / (inner.stride == 1 ? inner.count : 1);
}

// Contiguous runs per partition row of an access (its descriptors per partition, ARCH-v2):
// the first dimension is the partition (or, off chip, the row a partition receives); a run
// ends at the innermost dimension the access does not cover whole or visits strided. A strided
// first dimension gives each partition the rows its inner terms visit.
int64_t runs_per_row(const Kernel& k, const Access& a) {
  const Tensor& t = k.tensors[a.tensor_id];
  if (a.whole()) return 1;
  int64_t runs = 1;
  size_t partial = 0;
  for (size_t d = 1; d < a.dims.size(); ++d)
    if (extent(k, a.dims[d]) < t.shape[d] || runs_within(k, a.dims[d]) > 1) partial = d;
  for (size_t d = 1; d < partial; ++d) runs *= extent(k, a.dims[d]);
  if (partial) runs *= runs_within(k, a.dims[partial]);
  if (a.dims[0].strided()) runs *= extent(k, a.dims[0]) / a.dims[0].pattern.front().count;
  return runs;
}

// Contiguous runs of an access to a space without partitions (HBM): every dimension, the first
// included, is an ordinary one; a run ends at the innermost dimension the access does not
// cover whole or visits strided. `%X[0, 0:64, 0:8, 0:8]` of `[1, 64, 56, 56]` is 512 runs.
int64_t runs_total(const Kernel& k, const Access& a) {
  const Tensor& t = k.tensors[a.tensor_id];
  if (a.whole()) return 1;
  int64_t partial = -1;
  for (size_t d = 0; d < a.dims.size(); ++d)
    if (extent(k, a.dims[d]) < t.shape[d] || runs_within(k, a.dims[d]) > 1) partial = static_cast<int64_t>(d);
  if (partial < 0) return 1;
  int64_t runs = runs_within(k, a.dims[partial]);
  for (int64_t d = 0; d < partial; ++d) runs *= extent(k, a.dims[d]);
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
  s.elem_bytes =
      tensor.register_file && space ? space->register_bytes : static_cast<int64_t>(dtype_bytes(tensor.dtype));
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
  int64_t off_chip_runs = 0;  // the most runs of an operand without partitions, in all
  for (const auto* list : {&in.writes, &in.reads})
    for (const Access& a : *list) {
      const Tensor& t = k.tensors[a.tensor_id];
      const SpaceInfo* sp = k.target->space(t.space);
      if (!sp || sp->partitions == 0)
        off_chip_runs = std::max(off_chip_runs, runs_total(k, a));
      else
        s.runs_per_partition = std::max(s.runs_per_partition, runs_per_row(k, a));
      if (!sp || sp->partitions == 0 || s.partitions) continue;
      if (a.whole()) {
        s.partitions = t.shape[0];
      } else {
        s.first_partition = std::max<int64_t>(0, a.dims[0].lo.constant);
        s.partitions = extent(k, a.dims[0]);
      }
    }
  // Descriptors (ARCH-v2: one per contiguous run): an off-chip run cannot span the partitions it
  // lands in, so a transfer with a partitioned side needs the larger of that side's runs and the
  // off-chip side's; with none, the runs per row of the first dimension, one row per engine.
  if (s.partitions > 0)
    s.descriptors = std::max<double>(static_cast<double>(s.runs_per_partition * s.partitions), off_chip_runs);
  else
    for (const auto* list : {&in.writes, &in.reads})
      for (const Access& a : *list) s.runs_per_partition = std::max(s.runs_per_partition, runs_per_row(k, a));
  // A transfer in transposed order (an HBM view walked along a later dimension first) has no two
  // consecutive elements adjacent on both sides: every element is its own run.
  if (in.attrs.has(attr::kElementwise))
    for (const Access& a : in.writes) {
      const OperandShape w = operand_shape(k, a);
      s.descriptors = std::max(s.descriptors, static_cast<double>(w.partitions * w.free));
    }
  return s;
}

std::optional<DmaTransfer> transfer_of(const Kernel& k, const Instruction& in) {
  if (!k.target || !is_transfer(k, in)) return std::nullopt;
  return dma_transfer(k.target->dma, transfer_shape(k, in));
}

namespace {

// Operands read from a space with accumulation banks (PSUM): the ISA charges VectorE's
// tensor_tensor N, not 2N, cycles then.
int64_t accumulator_inputs(const Kernel& k, const Instruction& in) {
  int64_t n = 0;
  for (const Access& a : in.reads) {
    const SpaceInfo* sp = k.target->space(k.tensors[a.tensor_id].space);
    n += sp && sp->banks > 0;
  }
  return n;
}

// Every operand a 16-bit float (bf16, f16, fp16).
bool all_16bit(const std::vector<OperandShape>& reads, const std::vector<OperandShape>& writes) {
  for (const auto* list : {&reads, &writes})
    for (const OperandShape& sh : *list)
      if (sh.dtype != "bf16" && sh.dtype != "f16" && sh.dtype != "fp16") return false;
  return !reads.empty();
}

int64_t largest_bytes(const std::vector<OperandShape>& reads, const std::vector<OperandShape>& writes) {
  int64_t bytes = 0;
  for (const auto* list : {&reads, &writes})
    for (const OperandShape& sh : *list) bytes = std::max(bytes, sh.bytes());
  return bytes;
}

}  // namespace

std::optional<CollectiveCost> collective_cost(const Kernel& k, const Instruction& in) {
  const Target& t = *k.target;
  const OpcodeInfo* op = t.opcode(in.opcode);
  if (!op || op->op_class != OpClass::Collective || !(t.collective.link_bandwidth_bytes_per_ns > 0))
    return std::nullopt;
  std::vector<OperandShape> reads, writes;
  for (const Access& a : in.reads) reads.push_back(operand_shape(k, a));
  for (const Access& a : in.writes) writes.push_back(operand_shape(k, a));
  const int64_t ranks = std::max<int64_t>(1, in.attrs.get_int(attr::kRanks).value_or(1));
  const std::string kind = in.attrs.get_string(attr::kOp).value_or("all_reduce");
  const double share = static_cast<double>(ranks - 1) / static_cast<double>(ranks);
  const double volume = static_cast<double>(largest_bytes(reads, writes)) * (kind == "all_reduce" ? 2 * share : share);
  CollectiveCost c;
  c.dma = {volume, 0, static_cast<int>(t.dma.engines), 1.0};
  c.link_ps = std::llround(volume / t.collective.link_bandwidth_bytes_per_ns * 1000);
  return c;
}

std::optional<ComputeCycles> compute_cycles(const Kernel& k, const Instruction& in, const EngineInfo& engine) {
  const auto it = engine.costs.find(in.opcode);
  if (it == engine.costs.end()) return std::nullopt;
  const OpCost& cost = it->second;
  std::vector<OperandShape> reads, writes;
  for (const Access& a : in.reads) reads.push_back(operand_shape(k, a));
  for (const Access& a : in.writes) writes.push_back(operand_shape(k, a));
  const int64_t bytes = largest_bytes(reads, writes);
  const OperandShape out = !writes.empty() ? writes[0] : !reads.empty() ? reads[0] : OperandShape{};
  const OperandShape in0 = !reads.empty() ? reads[0] : out;
  const OperandShape in1 = reads.size() > 1 ? reads[1] : in0;
  // N: elements per partition of the largest operand (a reduction's input, not its output).
  int64_t n = 0;
  for (const auto* list : {&reads, &writes})
    for (const OperandShape& sh : *list) n = std::max(n, sh.free);
  const std::vector<double> vars = {static_cast<double>(n),
                                    static_cast<double>(out.partitions),
                                    static_cast<double>(in0.free),
                                    static_cast<double>(in1.free),
                                    (in0.dtype == "f32" || in0.dtype == "fp32") ? 1.0 : 0.0,
                                    static_cast<double>(bytes),
                                    static_cast<double>(std::max<int64_t>(1, in0.elem_bytes)),
                                    engine.min_ii_cycles,
                                    static_cast<double>(in.attrs.get_int(attr::kRanks).value_or(1)),
                                    static_cast<double>(accumulator_inputs(k, in)),
                                    all_16bit(reads, writes) ? 1.0 : 0.0,
                                    in.attrs.has(attr::kDoubleRow) ? 1.0 : 0.0};
  ComputeCycles c;
  c.cycles = cost.cycles.eval(vars);
  c.latency = cost.latency ? cost.latency->eval(vars) : c.cycles;
  if (auto v = in.attrs.get_int(attr::kIssueCycles)) c.cycles = static_cast<double>(*v);
  if (auto v = in.attrs.get_int(attr::kLatencyCycles)) c.latency = static_cast<double>(*v);
  return c;
}

InstTimes compute_times(const ComputeCycles& c, const EngineInfo& engine) {
  InstTimes t;
  t.cycles_ps = std::llround(c.cycles * 1000.0 / engine.clock_ghz);
  t.latency_ps = std::max(t.cycles_ps, static_cast<int64_t>(std::llround(c.latency * 1000.0 / engine.clock_ghz)));
  return t;
}

InstTimes transfer_times(const DmaModel& dma, const DmaTransfer& t) {
  InstTimes out;
  out.cycles_ps = std::llround(dma.fixed_cost_ns * 1000);
  out.data_ps = static_cast<int64_t>(std::floor(dma_data_ns(dma, t) * 1000 + 1e-6));
  out.latency_ps = out.cycles_ps + out.data_ps;
  return out;
}

}  // namespace tandem
