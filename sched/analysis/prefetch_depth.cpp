#include "sched/analysis/prefetch_depth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "sched/analysis/inst_cost.h"
#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

struct TransferCost {
  double data_ns = 0;      // first to last byte
  double engine_ns = 0;    // summed over the DMA engines it uses
};

// A transfer's data time and DMA engine work, as the lowering counts them (inst_cost.h).
std::optional<TransferCost> transfer_cost(const Kernel& k, const Instruction& in) {
  const std::optional<DmaTransfer> t = transfer_of(k, in);
  if (!t) return std::nullopt;
  TransferCost c;
  c.data_ns = dma_data_ns(k.target->dma, *t);
  c.engine_ns = c.data_ns * static_cast<double>(t->engine_count);
  return c;
}

// A compute instruction's latency in ns on the engine it runs on (or would under
// assign-engines' default policy); 0 when not known.
// (cycles: its occupancy instead, and the engine's name in *engine.)
double compute_latency_ns(const Kernel& k, InstId id, bool cycles = false, std::string* engine = nullptr) {
  const Instruction& in = k.insts[id];
  const OpcodeInfo* op = k.target->opcode(in.opcode);
  if (!op || op->op_class == OpClass::Barrier || op->op_class == OpClass::Branch) return 0;
  const std::string name = preferred_engine(k, id);
  const EngineInfo* e = k.target->engine(name);
  if (!e || e->clock_ghz <= 0) return 0;
  const auto c = compute_cycles(k, in, *e);
  if (engine) *engine = name;
  return c ? (cycles ? c->cycles : c->latency) / e->clock_ghz : 0;
}

bool within(const Kernel& k, LoopId inner, LoopId outer) {
  for (LoopId l = inner; l != kNoId; l = k.loops[l].parent)
    if (l == outer) return true;
  return false;
}

// On one buffer, from a writer's start to its last reader's end within one iteration: the
// longest path by latency over the iteration's dependences (a transfer: fixed cost plus data;
// a compute instruction: its cost's latency). 0 when a latency on the way is not known.
}  // namespace

double one_buffer_chain_ns(const Kernel& k, const DepGraph& g, LoopId loop, const std::vector<InstId>& writers,
                           const std::vector<InstId>& readers) {
  std::map<InstId, double> end;  // instructions reached from a writer: their latest end
  bool unknown = false;
  auto latency = [&](InstId i) {
    if (const auto c = transfer_cost(k, k.insts[i])) return k.target->dma.fixed_cost_ns + c->data_ns;
    const double ns = compute_latency_ns(k, i);
    unknown |= ns <= 0;
    return ns;
  };
  for (InstId v : k.program_order()) {
    const Instruction& in = k.insts[v];
    if (in.erased || !within(k, in.loop, loop)) continue;
    double start = -1;
    if (std::find(writers.begin(), writers.end(), v) != writers.end()) start = 0;
    for (const DepEdgeRef& e : g.in_edges(v)) {
      const auto it = end.find(e.src);
      if (e.props.distance == 0 && it != end.end()) start = std::max(start, it->second);
    }
    if (start >= 0) end[v] = start + latency(v);
  }
  double chain = 0;
  for (InstId r : readers)
    if (const auto it = end.find(r); it != end.end()) chain = std::max(chain, it->second);
  return unknown ? 0 : chain;
}

double loop_ii_ns(const Kernel& k, LoopId loop, double* dma_ii_ns) {
  double engine_ns = 0;
  std::map<std::string, double> compute_ns;  // per compute engine (assign-engines' default choice)
  for (InstId i = 0; i < static_cast<InstId>(k.insts.size()); ++i) {
    const Instruction& in = k.insts[i];
    if (in.erased || !within(k, in.loop, loop)) continue;
    const double n = static_cast<double>(instances_within(k, in.loop, loop));
    std::string engine;
    if (const auto c = transfer_cost(k, in))
      engine_ns += c->engine_ns * n;
    else if (const double ns = compute_latency_ns(k, i, true, &engine); ns > 0)
      compute_ns[engine] += ns * n;
  }
  const double dma = engine_ns / static_cast<double>(std::max<int64_t>(1, k.target->dma.engines));
  if (dma_ii_ns) *dma_ii_ns = dma;
  double ii = dma;
  for (const auto& [engine, ns] : compute_ns) ii = std::max(ii, ns);
  return ii;
}

std::optional<PrefetchDepth> prefetch_depth(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& writers,
                                            const std::vector<InstId>& readers) {
  if (!k.target) return std::nullopt;
  PrefetchDepth d;
  // A transfer holds the buffer from its issue to its last byte: a load writing it (w), a
  // store or gather reading it (r).
  double w = 0, r = 0;
  for (const auto* list : {&writers, &readers})
    for (InstId i : *list) {
      const Instruction& in = k.insts[i];
      const auto c = transfer_cost(k, in);
      if (!c) continue;
      const double latency = k.target->dma.fixed_cost_ns + c->data_ns;
      for (const Access& a : in.writes)
        if (a.tensor_id == tensor && list == &writers) w = std::max(w, latency);
      for (const Access& a : in.reads)
        if (a.tensor_id == tensor && list == &readers) r = std::max(r, latency);
    }
  const bool loaded = w > 0 || r > 0;
  d.load_latency_ns = std::max(w, r);
  if (!loaded) return std::nullopt;
  loop_ii_ns(k, loop, &d.dma_ii_ns);
  // The buffer lives from its writer's start until its last reader is done with it: a
  // transfer's latency at either end; a compute engine, in a schedule starting an iteration
  // every II, is done within one II (an index tile's life spans its load and the gather).
  d.lifetime_ns = (w > 0 ? w : d.dma_ii_ns) + (r > 0 ? r : d.dma_ii_ns);
  const double ahead = d.dma_ii_ns > 0 ? std::ceil(d.lifetime_ns / d.dma_ii_ns) : 1.0;
  d.steady_buffers = std::clamp<int64_t>(static_cast<int64_t>(std::min(ahead, 64.0)) + 1, 2, 16);
  d.buffers = d.steady_buffers;
  // A loop re-entered by an enclosing one restarts its ring at each entry, and the entry's
  // first loads wait for the previous entry's last readers: a ring as deep as an entry lets
  // all of an entry's loads issue at its start. The steady state does not see that.
  const Loop& l = k.loops[loop];
  if (l.parent != kNoId && l.trip_count() <= 16) d.buffers = std::max<int64_t>(d.buffers, l.trip_count());
  return d;
}

}  // namespace tandem
