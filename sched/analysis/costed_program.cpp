#include "sched/analysis/costed_program.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "sched/analysis/inst_cost.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/error.h"

namespace tandem {

namespace {

class Costing {
 public:
  Costing(const Kernel& k, Placement placement) : k_(k), t_(*k.target), strict_(placement == Placement::Assigned) {
    p_.kernel = &k;
    p_.dma_fixed_ps = transfer_times(t_.dma, DmaTransfer{}).cycles_ps;
  }

  CostedProgram run() {
    const std::vector<InstId> order = k_.program_order();
    place(order);
    p_.insts.resize(k_.insts.size());
    for (InstId id : order) cost(id);
    return std::move(p_);
  }

 private:
  [[noreturn]] void fail(InstId id, const std::string& msg) const {
    throw Error(k_.insts[static_cast<size_t>(id)].loc, k_.display_name(id) + ": " + msg);
  }

  // Each instruction's engine or queue, and the units in their order: compute engines by
  // name, then queues by number.
  void place(const std::vector<InstId>& order) {
    where_.resize(k_.insts.size());
    size_t next_queue = 0;
    std::vector<std::string> engines, queues;
    for (InstId id : order) {
      std::string& w = where_[static_cast<size_t>(id)];
      w = k_.insts[static_cast<size_t>(id)].engine;
      if (w.empty() && !strict_) {
        const std::vector<std::string> choices = engine_choices(k_, id);
        if (choices.empty()) continue;  // a barrier or branch
        w = t_.is_dma_queue(choices[0]) ? choices[next_queue++ % choices.size()] : choices[0];
      }
      if (w.empty()) continue;
      auto& list = t_.is_dma_queue(w) ? queues : engines;
      if (std::find(list.begin(), list.end(), w) == list.end()) list.push_back(w);
    }
    std::sort(engines.begin(), engines.end());
    std::sort(queues.begin(), queues.end(), [](const std::string& a, const std::string& b) {
      return std::stoi(a.substr(1)) < std::stoi(b.substr(1));
    });
    for (const auto& e : engines) p_.units.push_back({e, UnitKind::Compute});
    for (const auto& q : queues) p_.units.push_back({q, UnitKind::DmaQueue});
  }

  int unit_index(const std::string& name) const {
    for (size_t u = 0; u < p_.units.size(); ++u)
      if (p_.units[u].name == name) return static_cast<int>(u);
    return -1;
  }

  void cost(InstId id) {
    const Instruction& in = k_.insts[static_cast<size_t>(id)];
    const OpcodeInfo* op = t_.opcode(in.opcode);
    CostedInst& c = p_.insts[static_cast<size_t>(id)];
    c.id = id;
    c.name = k_.display_name(id);
    c.nest = k_.loop_nest(id);
    c.dynamic_count = dynamic_count(k_, id);
    if (!op) return;
    c.op_class = op->op_class;
    c.wmma = op->has(OpTag::Wmma);
    if (op->op_class == OpClass::Branch) {
      if (strict_) fail(id, "branch instructions are not simulated");
      return;
    }
    if (op->op_class == OpClass::Barrier) return cost_barrier(c, in);
    const std::string& w = where_[static_cast<size_t>(id)];
    if (w.empty()) {
      if (strict_) fail(id, "has no engine or DMA queue (run assign-engines)");
      return;
    }
    if (strict_) check_accesses(id, in);
    if (t_.is_dma_queue(w)) return cost_transfer(c, in, w);
    if (const EngineInfo* e = t_.engine(w)) cost_compute(c, in, *e, w);
  }

  void cost_barrier(CostedInst& c, const Instruction& in) {
    c.is_barrier = true;
    const std::optional<std::string> fence = in.attrs.get_string(attr::kFence);
    if (!fence) {
      for (size_t u = 0; u < p_.units.size(); ++u) c.units.push_back(static_cast<int>(u));
      return;
    }
    std::stringstream ss(*fence);
    for (std::string name; std::getline(ss, name, ',');) {
      const int u = unit_index(name);
      // An engine that runs nothing here has nothing to wait for (prefetch-schedule fences
      // every engine an unassigned instruction might have landed on).
      if (u < 0 && (!strict_ || t_.engine(name) || t_.is_dma_queue(name))) continue;
      if (u < 0) fail(c.id, "fences '" + name + "', which is no engine or DMA queue of target '" + t_.name + "'");
      c.units.push_back(u);
    }
  }

  void check_accesses(InstId id, const Instruction& in) const {
    for (const Access& a : in.writes) check_access(id, in, a, true);
    for (const Access& a : in.reads) check_access(id, in, a, false);
  }

  void check_access(InstId id, const Instruction& in, const Access& a, bool write) const {
    const Tensor& t = k_.tensors[static_cast<size_t>(a.tensor_id)];
    const SpaceInfo* space = t_.space(t.space);
    if (!space) return;
    const std::string who = t_.is_dma_queue(in.engine) ? "dma" : in.engine;
    if (space->allows(who, write)) return;
    const std::set<std::string>& allowed = write ? space->writers : space->readers;
    std::string list;
    for (const auto& e : allowed) list += (list.empty() ? "" : ", ") + e;
    fail(id, who + " may not " + (write ? "write " : "read ") + t.space + " (tensor " + (t.register_file ? "" : "%") +
                 t.name + "); " + t.space + (write ? " writers: " : " readers: ") + list);
  }

  // The queue holds the setup stage; the data phase runs alone on its engines.
  void cost_transfer(CostedInst& c, const Instruction& in, const std::string& queue) {
    if (!strict_ && !is_transfer(k_, in)) return;
    c.dma = dma_transfer(t_.dma, transfer_shape(k_, in));
    c.moves_dma = true;
    c.units = {unit_index(queue)};
    const InstTimes times = transfer_times(t_.dma, c.dma);
    c.cycles_ps = times.cycles_ps;
    c.latency_ps = times.latency_ps;
    c.data_ps = times.data_ps;
  }

  void cost_compute(CostedInst& c, const Instruction& in, const EngineInfo& e, const std::string& engine) {
    c.units = {unit_index(engine)};
    const std::optional<ComputeCycles> cycles = compute_cycles(k_, in, e);
    if (strict_) check_compute_cost(c.id, in, cycles, engine);
    // Without a cost on the engine the lowering refuses the kernel; the bounds count nothing.
    if (cycles && e.clock_ghz > 0) {
      const InstTimes times = compute_times(*cycles, e);
      c.cycles_ps = times.cycles_ps;
      c.latency_ps = times.latency_ps;
    }
    // A collective's bytes cross every DMA engine, and it holds its engine through start-up
    // and the link transfer.
    if (const std::optional<CollectiveCost> cc = collective_cost(k_, in)) {
      c.collective = true;
      c.moves_dma = true;
      c.dma = cc->dma;
      c.link_ps = cc->link_ps;
      c.cycles_ps += c.link_ps;
      c.latency_ps += c.link_ps;
    }
    add_conflict_ports(c, in, engine);
    add_register_pipe(c, in, e, engine);
  }

  void check_compute_cost(InstId id, const Instruction& in, const std::optional<ComputeCycles>& cost,
                          const std::string& engine) const {
    if (!cost) fail(id, "'" + in.opcode + "' has no cost on " + engine);
    const double cycles = cost->cycles, latency = cost->latency;
    if (!(cycles >= 0) || !(latency >= 0) || !std::isfinite(cycles) || !std::isfinite(latency))
      fail(id, "cost formula of '" + in.opcode + "' on " + engine + " gives " + std::to_string(cycles) +
                   " cycles; a cost must be a finite number >= 0");
    // At the slowest clock a model may have (1 MHz), 10^12 cycles are 10^18 ps: still a
    // 64-bit time, with room to add the kernel's instances up.
    if (cycles > 1e12 || latency > 1e12)
      fail(id, "cost of '" + in.opcode + "' on " + engine + " is " + std::to_string(std::max(cycles, latency)) +
                   " cycles; a cost must be at most 10^12 cycles");
  }

  // The model's conflict rules: an engine touching the rule's space holds its port.
  void add_conflict_ports(CostedInst& c, const Instruction& in, const std::string& engine) {
    for (const ConflictRule& rule : t_.conflicts) {
      if (std::find(rule.engines.begin(), rule.engines.end(), engine) == rule.engines.end()) continue;
      bool touches = false;
      for (const auto* list : {&in.reads, &in.writes})
        for (const Access& a : *list) touches |= k_.tensors[static_cast<size_t>(a.tensor_id)].space == rule.space;
      if (touches) c.ports.push_back(port_index(rule));
    }
  }

  // A register load from a bandwidth-limited space (the LDS) moves its registers' bytes once
  // per lane through that space's pipe on this engine.
  void add_register_pipe(CostedInst& c, const Instruction& in, const EngineInfo& e, const std::string& engine) {
    for (const Access& r : in.reads) {
      const SpaceInfo* from = t_.space(k_.tensors[static_cast<size_t>(r.tensor_id)].space);
      if (!from || from->bandwidth_bytes_per_cycle <= 0) continue;
      double bytes = 0;
      for (const Access& w : in.writes) {
        const Tensor& t = k_.tensors[static_cast<size_t>(w.tensor_id)];
        const SpaceInfo* rf = t_.space(t.space);
        if (t.register_file && rf)
          bytes += static_cast<double>((w.dims[0].hi.constant - w.dims[0].lo.constant) * rf->register_bytes * e.lanes);
      }
      if (bytes <= 0) continue;
      c.pipe = pipe_index(engine + ":" + from->name);
      c.pipe_ps = std::llround(bytes / from->bandwidth_bytes_per_cycle * 1000.0 / e.clock_ghz);
      break;
    }
  }

  int pipe_index(const std::string& name) {
    for (size_t i = 0; i < p_.pipes.size(); ++i)
      if (p_.pipes[i] == name) return static_cast<int>(i);
    p_.pipes.push_back(name);
    return static_cast<int>(p_.pipes.size() - 1);
  }

  int port_index(const ConflictRule& rule) {
    std::string name = rule.space + ":";
    for (size_t i = 0; i < rule.engines.size(); ++i) name += (i ? "+" : "") + rule.engines[i];
    for (size_t i = 0; i < p_.ports.size(); ++i)
      if (p_.ports[i] == name) return static_cast<int>(i);
    p_.ports.push_back(name);
    return static_cast<int>(p_.ports.size() - 1);
  }

  const Kernel& k_;
  const Target& t_;
  const bool strict_;
  std::vector<std::string> where_;  // per instruction: its engine or queue, "" if none
  CostedProgram p_;
};

}  // namespace

CostedProgram cost_program(const Kernel& k, Placement placement) { return Costing(k, placement).run(); }

}  // namespace tandem
