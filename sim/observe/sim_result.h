// What one simulation reports (docs/metrics.md defines every field). Times are integer
// picoseconds inside; outputs print nanoseconds and reference-clock cycles.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/units/instance_record.h"

namespace tandem {

using StallArray = std::array<Picos, static_cast<size_t>(StallReason::Count)>;

struct UnitResult {
  std::string name;
  bool is_queue = false;
  Picos busy_ps = 0;   // compute: occupancy; queue: data phases
  Picos setup_ps = 0;  // queue: its transfers' setups (one at a time)
  int64_t instances = 0;
  StallArray stall_ps{};
  double bytes = 0;  // queues
};

struct IterationResult {
  int64_t index = 0;  // among all iterations of the loop in the run
  int64_t iv = 0;
  Picos start_ps = 0;
  Picos end_ps = 0;
  Picos dma_in_flight_ps = 0;     // union of its transfers, issue to last byte
  Picos dma_moving_ps = 0;        // its transfers' data phases, summed
  Picos dma_waiting_ps = 0;       // its transfers' issue to first byte, summed
  Picos compute_busy_ps = 0;      // union of its compute instances
  double overlap = 0;             // fraction of dma_in_flight during which some compute engine was busy
  Picos compute_dma_wait_ps = 0;  // engine time its compute instances waited on DMA transfers
  StallArray stall_ps{};
  Picos wmma_bubble_ps = 0;  // time its WMMAs waited to issue after the stream was free
};

inline double ps_to_ns(Picos ps) { return static_cast<double>(ps) / 1000.0; }

// A resource's work per iteration of a loop, whatever the schedule (sched/analysis/
// loop_bounds.h, resource_demands): the loop's speed of light.
struct DemandResult {
  std::string resource;  // "pe", "q0 setup", "q0 data", "dma engine 3"
  Picos ps = 0;
};

struct LoopResult {
  LoopId id = kNoId;
  std::string iv;
  int64_t trip_count = 0;
  int64_t dynamic_iterations = 0;  // trip count x the enclosing loops' trip counts
  Picos ii_ps = 0;                 // steady-state interval between iterations' ends (docs/metrics.md)
  Picos resource_bound_ps = 0;     // busiest resource's work per iteration
  std::string bound_resource;
  Picos recurrence_bound_ps = 0;  // max over dependence cycles of latency / distance
  std::string recurrence_cause;   // that cycle's instructions, "%ld -> %mm -> %ld"
  Picos ii_bound_ps = 0;          // max of the two
  Picos span_ps = 0;              // summed over entries: earliest start to latest end
  Picos span_bound_ps = 0;        // resource_bound x dynamic_iterations: span cannot beat it
  double efficiency = 0;          // span_bound / span
  Picos dma_in_flight_ps = 0;     // summed over iterations
  Picos dma_moving_ps = 0;
  Picos dma_waiting_ps = 0;
  Picos overlapped_dma_ps = 0;
  Picos exposed_dma_ps = 0;  // wall time: some transfer moving, no compute engine of the loop busy
  Picos wmma_bubble_ps = 0;  // summed over iterations
  int64_t wmma_instances = 0;
  std::vector<DemandResult> demands;  // every resource with work, most first; equal DMA engines as one
  Picos compute_demand_ps = 0;        // the compute engines' work per iteration, summed
  Picos dma_demand_ps = 0;            // the busiest DMA resource's (queue stage or DMA engine)
  bool folded = false;                // iterations[] keeps only the first and last ones
  std::vector<IterationResult> iterations;

  // Fraction of the loop's DMA time during which some compute engine was busy.
  double overlap() const {
    return dma_in_flight_ps > 0 ? static_cast<double>(overlapped_dma_ps) / static_cast<double>(dma_in_flight_ps) : 0.0;
  }
  // The most of the DMA's time per iteration that compute could overlap under any schedule:
  // the compute engines' summed work over the busiest DMA resource's, at most 1.
  double hideable_dma() const {
    return dma_demand_ps > 0
               ? std::min(1.0, static_cast<double>(compute_demand_ps) / static_cast<double>(dma_demand_ps))
               : 0.0;
  }
  // What sets the loop's pace: "the recurrence" when it needs more than any resource, else the
  // busiest resource (a queue's stage named).
  std::string limiter() const {
    if (recurrence_bound_ps > resource_bound_ps) return "the recurrence " + recurrence_cause;
    return demands.empty() ? bound_resource : demands.front().resource;
  }
  // WMMA issue bubbles per iteration, in cycles of a `ghz` clock.
  double wmma_bubble_cycles_per_iteration(double ghz) const {
    return dynamic_iterations > 0
               ? static_cast<double>(wmma_bubble_ps) * ghz / 1000.0 / static_cast<double>(dynamic_iterations)
               : 0.0;
  }
};

struct HazardReport {
  std::string kind;  // RAW, WAR, WAW
  std::string first;
  std::string second;
  std::string message;
};

// One unit's busy span in a captured iteration (the report's timeline).
struct TimelineSpan {
  std::string unit;
  std::string inst;
  int64_t iteration = 0;
  Picos start_ps = 0;  // DMA: issue; compute: start
  Picos end_ps = 0;    // DMA: last byte; compute: the unit is free again
};

// A space with a capacity (SBUF, PSUM): what the kernel's tensors take of it by the capacity
// rule (sched/analysis/allocator.h), in the space's capacity unit.
struct SpaceResult {
  std::string name;
  std::string unit;  // "bytes per partition" or "banks"
  int64_t allocated = 0;
  int64_t capacity = 0;
  std::vector<std::string> spilled;  // tensors the kernel's `spill` moved out to DRAM ("%u_i")
};

// One static instruction over the run (tandem sim --profile).
struct InstProfile {
  std::string name;
  std::string opcode;
  std::string unit;
  int64_t instances = 0;
  Picos busy_ps = 0;  // as UnitResult::busy_ps
  StallArray stall_ps{};
};

// One change `tandem sim --advise` tried (sim/driver/advise.h): a pipeline or a model change
// simulated on its own, or a hint it could not simulate.
struct Advice {
  std::string change;   // what changes, in words
  std::string command;  // the tandem sim command that reproduces it ("" for a hint)
  bool simulated = false;
  Picos total_ps = 0;    // simulated: its total
  double gain = 0;       // simulated: the run's total over its total
  std::string rejected;  // simulated but not advised: it races, fails --verify, or does not run
};

// Where a result came from: every JSON document, summary and report carries it.
struct Provenance {
  std::string tandem;       // tandem_version(): version and git commit
  std::string model_file;   // the model file read, absolute
  std::string model_hash;   // content_hash of its bytes
  std::string pipeline;     // the pass pipeline as given
  std::string model_edits;  // the fields set on the model file (tandem sim --set): " --set FIELD=VALUE" each
};

struct SimResult {
  std::string kernel;
  std::string model;
  Provenance provenance;
  double reference_clock_ghz = 1;
  Picos total_ps = 0;
  Picos lower_bound_ps = 0;
  std::string lower_bound_resource;
  int64_t dynamic_instructions = 0;
  int64_t semaphores = 0;            // cross-unit channels
  int64_t semaphores_available = 0;  // the model's semaphores (0: not modelled)
  double dma_bytes = 0;
  int64_t dma_engines = 0;
  Picos dma_engine_busy_ps = 0;        // summed over engines: bytes over bandwidth at each transfer's efficiency
  std::vector<Picos> dma_engine_work;  // per DMA engine, in engine order
  int64_t dma_queues_available = 0;
  std::vector<UnitResult> units;
  std::vector<SpaceResult> spaces;
  std::vector<InstProfile> profile;  // by busy time, longest first
  std::vector<LoopResult> loops;
  std::vector<HazardReport> hazards;  // races the checker found (docs/checker.md)
  std::vector<Advice> advice;         // tandem sim --advise only
  bool checked = false;               // the race checker ran
  int perturbed_runs = 0;             // perturbed runs whose races `hazards` includes (tandem sim --perturb-runs)
  double perturb_spread = 0;          // their spread
  std::string timeline_loop;          // the captured loop (the one with the most iterations), if any
  std::vector<TimelineSpan> timeline;
  // How the run met the SystemC kernel (bench/sim_bench; not part of tandem.sim/1): the units'
  // waits there (for simulated time, a port's grant; hand-offs are not), and delta cycles.
  int64_t systemc_waits = 0;
  int64_t systemc_deltas = 0;
  // The most busy intervals and spans the ledger still held after a finalization (its memory;
  // tests and bench/sim_bench, not part of tandem.sim/1): bounded by how far the units run
  // ahead of each other, not by the instances of a loop or of an outer loop's iteration.
  int64_t ledger_peak_spans = 0;
  // Dynamic instances of periods fast-forward skipped (their records replayed, not simulated;
  // `tandem sim --progress`, not part of tandem.sim/1).
  int64_t fast_forwarded = 0;
};

}  // namespace tandem
