#include "sched/ir/kernel_queries.h"

#include <algorithm>

#include "sched/ir/attribute_keys.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

// Calls `visit` on each engine an instruction may run on, in engine_choices' order, until it
// returns false: its own engine, else the DMA queues for a DMA-only opcode, else the opcode's
// engines other than "dma". One walk for the three questions below, without building a list
// for the two that the passes ask per instruction or per edge.
template <class Visit>
void visit_engine_choices(const Kernel& k, InstId id, Visit visit) {
  const Instruction& in = k.insts[static_cast<size_t>(id)];
  if (!in.engine.empty()) {
    visit(in.engine);
    return;
  }
  const OpcodeInfo* op = k.target->opcode(in.opcode);
  if (!op) return;
  const bool dma_only = op->engines.size() == 1 && op->engines[0] == "dma";
  for (const std::string& e : dma_only ? k.target->dma_queues : op->engines)
    if ((dma_only || e != "dma") && !visit(e)) return;
}

}  // namespace

std::vector<std::string> engine_choices(const Kernel& k, InstId id) {
  std::vector<std::string> out;
  visit_engine_choices(k, id, [&](const std::string& e) {
    out.push_back(e);
    return true;
  });
  return out;
}

std::string known_engine(const Kernel& k, InstId id) {
  const std::string* only = nullptr;
  bool several = false;
  visit_engine_choices(k, id, [&](const std::string& e) {
    several = only != nullptr;
    only = &e;
    return !several;
  });
  return only && !several ? *only : "";
}

std::string preferred_engine(const Kernel& k, InstId id) {
  std::string first;
  visit_engine_choices(k, id, [&](const std::string& e) {
    first = e;
    return false;
  });
  return first;
}

int64_t partitions_of(const Kernel& k, const Tensor& t) {
  const SpaceInfo* s = k.target->space(t.space);
  return s && s->partitions > 0 && !t.shape.empty() ? t.shape[0] : 1;
}

int64_t bytes_per_partition(const Kernel& k, const Tensor& t) {
  const SpaceInfo* s = k.target->space(t.space);
  int64_t b = static_cast<int64_t>(dtype_bytes(t.dtype));
  for (size_t d = s && s->partitions > 0 ? 1 : 0; d < t.shape.size(); ++d) b *= t.shape[d];
  return b;
}

int64_t instances_within(const Kernel& k, LoopId inner, LoopId outer) {
  int64_t n = 1;
  for (LoopId l = inner; l != kNoId && l != outer; l = k.loops[static_cast<size_t>(l)].parent)
    n *= k.loops[static_cast<size_t>(l)].trip_count();
  return n;
}

int64_t dynamic_count(const Kernel& k, InstId id) { return instances_within(k, k.insts[static_cast<size_t>(id)].loop); }

std::vector<int> program_positions(const Kernel& k) {
  std::vector<int> pos(k.insts.size(), -1);
  const std::vector<InstId> order = k.program_order();
  for (size_t i = 0; i < order.size(); ++i) pos[static_cast<size_t>(order[i])] = static_cast<int>(i);
  return pos;
}

int64_t least_extent(const Kernel& k, const IndexRange& r) {
  // A tile that moves with a loop has the same terms at both ends: its extent is the
  // constants' difference, found without building hi - lo (an allocation per access; the
  // verifier asks for every access after every pass).
  const auto same = [](const AffineTerm& x, const AffineTerm& y) {
    return x.symbol == y.symbol && x.coeff == y.coeff && x.loop == y.loop;
  };
  if (std::equal(r.lo.terms.begin(), r.lo.terms.end(), r.hi.terms.begin(), r.hi.terms.end(), same))
    return r.hi.constant - r.lo.constant;
  return value_range(k, r.hi - r.lo).first;
}

int64_t pattern_count(const std::vector<StrideTerm>& pattern) {
  int64_t n = 1;
  for (const StrideTerm& t : pattern) n *= t.count;
  return n;
}

bool pattern_dense(std::vector<StrideTerm> pattern, int64_t extent) {
  // Dense when, innermost (smallest stride) first, each stride is the number of indices the
  // terms inside it span.
  std::sort(pattern.begin(), pattern.end(),
            [](const StrideTerm& a, const StrideTerm& b) { return a.stride < b.stride; });
  int64_t spanned = 1;
  for (const StrideTerm& t : pattern) {
    if (t.count == 1) continue;
    if (t.stride != spanned) return false;
    spanned *= t.count;
  }
  return spanned == extent;
}

std::pair<int64_t, int64_t> value_range(const Kernel& k, const AffineExpr& e) {
  return e.range([&](const AffineTerm& t) -> std::pair<int64_t, int64_t> {
    if (t.loop == kNoId) return {0, 0};
    const Loop& l = k.loops[static_cast<size_t>(t.loop)];
    return {l.lo, l.hi - 1};
  });
}

LoopId accumulation_start(const Kernel& k, InstId id) {
  const Instruction& in = k.insts[static_cast<size_t>(id)];
  const auto iv = in.attrs.get_string(attr::kStart);
  if (!iv) return kNoId;
  for (LoopId l = in.loop; l != kNoId; l = k.loops[static_cast<size_t>(l)].parent)
    if (k.loops[static_cast<size_t>(l)].iv == *iv) return l;
  return kNoId;
}

bool reads_accumulator(const Kernel& k, InstId id, const int64_t* ivs) {
  if (!k.insts[static_cast<size_t>(id)].attrs.has(attr::kAccumulate)) return false;
  const LoopId start = accumulation_start(k, id);
  return start == kNoId || ivs[start] != k.loops[static_cast<size_t>(start)].lo;
}

std::string start_problem(const Kernel& k, InstId id) {
  const Instruction& in = k.insts[static_cast<size_t>(id)];
  const AttrValue* v = in.attrs.find(attr::kStart);
  if (!v) return "";
  const std::string shown = "start = " + format_attr_value(*v);
  if (!std::holds_alternative<std::string>(*v))
    return shown +
           ": start names the loop whose first iteration starts the accumulation group, as a string "
           "(start = \"%k\")";
  if (!in.attrs.has(attr::kAccumulate))
    return shown + " needs {accumulate}: without it every instance overwrites what it writes";
  const LoopId start = accumulation_start(k, id);
  if (start == kNoId)
    return shown + ": no loop enclosing the instruction has the variable " + std::get<std::string>(*v);
  for (const Access& a : in.writes)
    for (const IndexRange& r : a.dims)
      for (const AffineExpr* e : {&r.lo, &r.hi})
        for (const AffineTerm& t : e->terms)
          if (t.loop == start)
            return shown + ": the accumulator %" + a.tensor + " moves with " + std::get<std::string>(*v) +
                   "; the instances after the first iteration would add to a group none started";
  return "";
}

bool is_load(const Kernel& k, InstId id) {
  const OpcodeInfo* op = k.target->opcode(k.insts[static_cast<size_t>(id)].opcode);
  return op && (op->op_class == OpClass::Load || op->op_class == OpClass::IndirectLoad);
}

void OpClassOf::look_up(size_t i) {
  if (i >= known_.size()) known_.resize(k_.insts.size(), 0);
  const OpcodeInfo* op = k_.target->opcode(k_.insts[i].opcode);
  known_[i] = op ? static_cast<int8_t>(1 + static_cast<int>(op->op_class)) : int8_t{-1};
}

LoadStage load_stage(const Kernel& k, const DepGraph& g, LoopId loop) {
  LoadStage s;
  for (const Stmt& st : k.loops[static_cast<size_t>(loop)].body)
    if (st.kind == Stmt::kInst && k.insts[static_cast<size_t>(st.id)].attrs.has(attr::kSeparationBarrier))
      s.barrier = st.id;
  if (s.barrier == kNoId) return s;
  for (const DepEdgeRef& e : g.in_edges(s.barrier))
    if (e.props.kind == DepKind::Flow && e.props.distance == 0 && k.insts[static_cast<size_t>(e.src)].loop == loop &&
        is_load(k, e.src))
      s.loads.push_back(e.src);
  return s;
}

}  // namespace tandem
