#include "sim/driver/simulator.h"

#include <memory>
#include <stdexcept>

#include <systemc>

#include "sim/units/compute_engine.h"
#include "sim/units/core_barrier.h"
#include "sim/units/dma_queue.h"
#include "sim/units/dma_system.h"
#include "sim/observe/ledger.h"
#include "sim/units/port_arbiter.h"
#include "sim/observe/race_checker.h"
#include "sim/observe/trace_writer.h"

namespace tandem {

SimResult simulate(const SimProgram& p, const SimOptions& options) {
  static bool elaborated = false;
  if (elaborated) throw std::logic_error("simulate() runs once per process (SystemC elaborates once)");
  elaborated = true;

  // The modules live until the process ends: SystemC does not support tearing a design down.
  auto* ctx = new SimContext{p, options.perturb_seed, options.perturb_spread, {}, {}, nullptr, nullptr, nullptr, {}};
  std::unique_ptr<TraceWriter> trace;
  if (!options.trace_path.empty()) {
    trace = std::make_unique<TraceWriter>(options.trace_path, p);
  }
  for (const SimChannel& c : p.channels) {
    const SimInst& src = p.insts[static_cast<size_t>(c.src)];
    ctx->semaphores.push_back(std::make_unique<Semaphore>(c, src.is_barrier ? -1 : src.units[0], options.window));
  }
  ctx->barriers.assign(p.insts.size(), nullptr);
  for (const SimInst& inst : p.insts)
    if (inst.is_barrier && !inst.units.empty())
      ctx->barriers[static_cast<size_t>(inst.id)] = new CoreBarrier(("barrier_" + inst.name.substr(1)).c_str(), inst);
  if (p.model->dma.engines > 0) ctx->dma = new DmaSystem("dma", p.model->dma);
  if (!p.ports.empty()) ctx->ports = new PortArbiter("ports", p.ports.size());
  for (size_t u = 0; u < p.units.size(); ++u) {
    const SimUnit& unit = p.units[u];
    if (unit.kind == UnitKind::DmaQueue)
      ctx->units.push_back(new DmaQueue(unit.name.c_str(), *ctx, static_cast<int>(u)));
    else
      ctx->units.push_back(new ComputeEngine(unit.name.c_str(), *ctx, static_cast<int>(u)));
  }
  auto* checker = options.check_races ? new RaceChecker(p) : nullptr;
  auto* ledger = new Ledger(*ctx, options.iterations_kept, options.capture_timeline, trace.get(), checker);
  ctx->observer = ledger;

  sc_core::sc_start();

  std::string stuck;
  for (StreamUnit* u : ctx->units)
    if (!u->done()) stuck += (stuck.empty() ? "" : "; ") + u->describe_wait();
  if (!stuck.empty()) throw Error("the schedule deadlocks: " + stuck);

  SimResult r = ledger->finish();
  if (trace) trace->finish();
  r.checked = checker != nullptr;
  if (checker)
    for (const Hazard& h : checker->hazards())
      r.hazards.push_back({h.kind, p.insts[static_cast<size_t>(h.first)].name, p.insts[static_cast<size_t>(h.second)].name,
                           h.message});
  // Jitter may shorten durations by up to the spread: the bound shrinks with them.
  const double slack = options.perturb_seed ? 1.0 - options.perturb_spread : 1.0;
  if (static_cast<double>(r.total_ps) < static_cast<double>(r.lower_bound_ps) * slack - 1)
    throw std::logic_error("simulated time " + std::to_string(r.total_ps) + " ps is below the model's lower bound " +
                           std::to_string(r.lower_bound_ps) + " ps (" + r.lower_bound_resource + ")");
  return r;
}

}  // namespace tandem
