#include "sim/observe/race_access_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"

namespace tandem::race {

namespace {

constexpr size_t kNoLog = SIZE_MAX;
constexpr uint32_t kNoRank = UINT32_MAX;

// A tensor's rotation buffers and the loop variable it rotates over (`buffers` >= 2 and
// `rotate`); one buffer and no variable when it does not rotate.
std::pair<int64_t, std::optional<std::string>> rotation(const Tensor& t) {
  const auto buffers = t.attrs.get_int(attr::kBuffers);
  const auto loop_iv = t.attrs.get_string(attr::kRotate);
  if (buffers && loop_iv && *buffers >= 2) return {*buffers, loop_iv};
  return {1, std::nullopt};
}

// A write log per rotation buffer of each tensor something writes, in (tensor, buffer)
// order. Returns each tensor's first log (kNoLog: nothing writes it).
std::vector<size_t> create_write_logs(const SimProgram& p, std::vector<WriteLog>& logs) {
  const Kernel& k = *p.kernel;
  std::vector<size_t> first_log(k.tensors.size(), kNoLog);
  for (size_t id = 0; id < p.insts.size(); ++id)
    for (const Access& a : k.insts[id].writes) first_log[static_cast<size_t>(a.tensor_id)] = 0;
  for (size_t t = 0; t < k.tensors.size(); ++t) {
    if (first_log[t] == kNoLog) continue;
    first_log[t] = logs.size();
    for (int64_t b = 0; b < rotation(k.tensors[t]).first; ++b) {
      logs.emplace_back();
      logs.back().buffer = {static_cast<int>(t), b};
    }
  }
  return first_log;
}

// The plans of the instructions' accesses, each constant box given a key as it is first met.
class AccessPlanner {
 public:
  AccessPlanner(const SimProgram& p, const std::vector<size_t>& first_log) : p_(p), first_log_(first_log) {}

  // Reads, then the reads of accumulating writes (an accumulating write reads what it adds
  // to), then writes.
  void plan_instruction(size_t id, InstPlan& plan) {
    const Instruction& in = p_.kernel->insts[id];
    for (const Access& a : in.reads) add(id, a, true, kNoId, plan);
    if (in.attrs.has(attr::kAccumulate))
      for (const Access& a : in.writes) add(id, a, true, accumulation_start(*p_.kernel, static_cast<InstId>(id)), plan);
    for (const Access& a : in.writes) add(id, a, false, kNoId, plan);
  }

  // Each distinct constant box and its key.
  const std::map<std::vector<Interval>, uint32_t>& constant_boxes() const { return constant_boxes_; }

 private:
  void add(size_t id, const Access& a, bool read, LoopId fresh_at, InstPlan& plan) {
    if (std::optional<AccessPlan> ap = plan_access(id, a, read, fresh_at))
      (read ? plan.reads : plan.writes).push_back(std::move(*ap));
  }

  // None when the access is not followed: a tensor nothing writes, or a box that uses an
  // address register (its value is known only at run time).
  std::optional<AccessPlan> plan_access(size_t id, const Access& a, bool read, LoopId fresh_at) {
    const Kernel& k = *p_.kernel;
    const size_t log = first_log_[static_cast<size_t>(a.tensor_id)];
    if (log == kNoLog) return std::nullopt;
    AccessPlan ap{read, 0, kNoId, 0, fresh_at, 0, log, nullptr, {}, 0, 0, {}};
    if (fresh_at != kNoId) ap.fresh_lo = k.loops[static_cast<size_t>(fresh_at)].lo;
    const Tensor& t = k.tensors[static_cast<size_t>(a.tensor_id)];
    if (a.whole()) {
      for (int64_t d : t.shape) ap.base.push_back({0, d});
    } else {
      for (size_t d = 0; d < a.dims.size(); ++d) {
        const IndexRange& r = a.dims[d];
        ap.base.push_back({r.lo.constant, r.hi.constant});
        for (const auto& [e, hi] : {std::pair<const AffineExpr*, bool>{&r.lo, false}, {&r.hi, true}})
          for (const AffineTerm& term : e->terms) {
            if (term.loop == kNoId) return std::nullopt;
            ap.terms.push_back({d, hi, term.loop, term.coeff});
          }
      }
    }
    if (const auto [buffers, loop_iv] = rotation(t); loop_iv)
      for (LoopId l : p_.insts[id].nest)
        if (k.loops[static_cast<size_t>(l)].iv == *loop_iv) {
          ap.buffers = buffers;
          ap.rotate = l;
          ap.rotate_lo = k.loops[static_cast<size_t>(l)].lo;
          break;
        }
    ap.rank = static_cast<uint32_t>(ap.base.size());
    if (ap.terms.empty() &&
        std::all_of(ap.base.begin(), ap.base.end(), [](const Interval& d) { return d.first < d.second; }))
      ap.key = constant_boxes_.emplace(ap.base, static_cast<uint32_t>(constant_boxes_.size() + 1)).first->second;
    return ap;
  }

  const SimProgram& p_;
  const std::vector<size_t>& first_log_;
  std::map<std::vector<Interval>, uint32_t> constant_boxes_;
};

// The keys' boxes, once each, side by side in `keyed_boxes`.
void store_keyed_boxes(const std::map<std::vector<Interval>, uint32_t>& constant_boxes, ProgramPlan& plan) {
  plan.keyed.assign(constant_boxes.size() + 1, nullptr);
  std::vector<size_t> keyed_at(constant_boxes.size() + 1, 0);
  for (const auto& [box, key] : constant_boxes) {
    keyed_at[key] = plan.keyed_boxes.size();
    plan.keyed_boxes.insert(plan.keyed_boxes.end(), box.begin(), box.end());
  }
  for (size_t key = 1; key < plan.keyed.size(); ++key) plan.keyed[key] = plan.keyed_boxes.data() + keyed_at[key];
}

// Program order as a constant plus a product per enclosing loop.
void plan_program_order(const SimProgram& p, ProgramPlan& plan) {
  for (size_t id = 0; id < p.insts.size(); ++id) {
    const SimInst& inst = p.insts[id];
    InstPlan& ip = plan.insts[id];
    ip.seq_base = inst.seq_base;
    for (size_t i = 0; i < inst.nest.size(); ++i) {
      ip.seq_base -= p.kernel->loops[static_cast<size_t>(inst.nest[i])].lo * inst.seq_strides[i];
      ip.seq_terms.push_back({inst.nest[i], inst.seq_strides[i]});
    }
  }
}

// Boxes are stored at a fixed stride: the largest rank, for the pending reads (the plan's
// stride); per tensor, its rank, for its write logs (returned, kNoRank for a tensor no
// followed access touches). Every access has its tensor's rank (the parser and the structural
// verifier hold kernels to it), so events need not carry one.
std::vector<uint32_t> tensor_ranks(const Kernel& k, const std::vector<WriteLog>& logs, ProgramPlan& plan) {
  std::vector<uint32_t> tensor_rank(k.tensors.size(), kNoRank);
  for (const InstPlan& plans : plan.insts)
    for (const std::vector<AccessPlan>* list : {&plans.reads, &plans.writes})
      for (const AccessPlan& ap : *list) {
        const size_t t = static_cast<size_t>(logs[ap.log].buffer.first);
        if (tensor_rank[t] != kNoRank && tensor_rank[t] != ap.rank)
          throw std::logic_error("race checker: accesses of different ranks to %" + k.tensors[t].name);
        tensor_rank[t] = ap.rank;
        plan.stride = std::max<size_t>(plan.stride, ap.rank);
      }
  return tensor_rank;
}

// Each access's buffer-0 log by address.
void link_logs(ProgramPlan& plan, std::vector<WriteLog>& logs) {
  for (InstPlan& plans : plan.insts)
    for (std::vector<AccessPlan>* list : {&plans.reads, &plans.writes})
      for (AccessPlan& ap : *list) ap.log0 = logs.data() + ap.log;
}

// The instructions whose instances all read the same: each read has a key and no rotation
// (an accumulating read is left out at its group's first iteration: every accumulating read
// of an instruction has the same `fresh_at`, its instruction's accumulation start).
void plan_fixed_reads(ProgramPlan& plan) {
  for (InstPlan& ip : plan.insts) {
    if (ip.reads.empty() || !std::all_of(ip.reads.begin(), ip.reads.end(),
                                         [](const AccessPlan& ap) { return ap.key != 0 && ap.rotate == kNoId; }))
      continue;
    ip.fixed = true;
    for (const AccessPlan& ap : ip.reads) {
      ip.fixed_reads.push_back({ap.log0, ap.key});
      if (ap.fresh_at == kNoId) {
        ip.fixed_fresh.push_back({ap.log0, ap.key});
      } else {  // the same for each: the instruction's accumulation start (above)
        ip.fresh_at = ap.fresh_at;
        ip.fresh_lo = ap.fresh_lo;
      }
    }
  }
}

// Each log's rank and the stride of its stored boxes.
void set_log_ranks(const std::vector<uint32_t>& tensor_rank, std::vector<WriteLog>& logs) {
  for (WriteLog& log : logs) {
    const uint32_t rank = tensor_rank[static_cast<size_t>(log.buffer.first)];
    log.rank = rank == kNoRank ? 0 : rank;
    log.stride = std::max<size_t>(1, log.rank);
  }
}

}  // namespace

ProgramPlan plan_accesses(const SimProgram& p, std::vector<WriteLog>& logs) {
  ProgramPlan plan;
  plan.insts.resize(p.insts.size());
  const std::vector<size_t> first_log = create_write_logs(p, logs);
  AccessPlanner planner(p, first_log);
  for (size_t id = 0; id < p.insts.size(); ++id) planner.plan_instruction(id, plan.insts[id]);
  store_keyed_boxes(planner.constant_boxes(), plan);
  plan_program_order(p, plan);
  const std::vector<uint32_t> tensor_rank = tensor_ranks(*p.kernel, logs, plan);
  link_logs(plan, logs);
  plan_fixed_reads(plan);
  set_log_ranks(tensor_rank, logs);
  return plan;
}

}  // namespace tandem::race
