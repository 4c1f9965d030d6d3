// The metric table (sim/report/metrics.def): the name, unit, definition and value of every
// figure a simulation reports, so that the JSON document, the sweep CSV, the A/B table, the
// HTML report and docs/metrics.md cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "sim/observe/sim_result.h"

namespace tandem {

enum class MetricScope { Kernel, Unit, Loop, Iteration, Space, Instruction, Resource, DmaEngine };

enum class Metric {
#define METRIC(id, name, scope, unit, format, compared, definition) id,
#include "sim/report/metrics.def"
#undef METRIC
};

struct MetricInfo {
  Metric id;
  const char* name;  // the JSON field within its object; the sweep metric
  MetricScope scope;
  const char* unit;        // ns, cycles, fraction, count, bytes
  const char* format;      // printf format of one value
  bool compared;           // a row of the A/B table
  const char* definition;  // as docs/metrics.md gives it
};

const std::vector<MetricInfo>& metric_table();
const MetricInfo& metric_info(Metric m);
// The metric of `scope` called `name`, or nullptr.
const MetricInfo* find_metric(const std::string& name, MetricScope scope);
const char* metric_scope_name(MetricScope s);

// What a metric is measured on: the result, and the unit, loop or iteration its scope needs.
struct MetricSubject {
  const SimResult& result;
  const UnitResult* unit = nullptr;
  const LoopResult* loop = nullptr;
  const IterationResult* iteration = nullptr;
  const SpaceResult* space = nullptr;
  const InstProfile* inst = nullptr;
  // inst_share's denominator, the busy time of every instruction, when the caller has added
  // it up once (-1: metric_value adds it up, which per row of a profile is quadratic).
  Picos profile_busy = -1;
  const DemandResult* demand = nullptr;  // a resource of `loop`'s speed of light
  const Picos* engine_work = nullptr;    // one DMA engine's (SimResult::dma_engine_work)
};

// The busy time of every instruction of the profile (inst_share's denominator).
Picos profile_busy_ps(const SimResult& r);

double metric_value(Metric m, const MetricSubject& s);
// One value in the metric's format ("%.3f" for ns, "%.0f" for counts, ...).
std::string format_metric(Metric m, double v);

// The loop the kernel-level loop figures describe (sweeps, the HTML report's timeline): the
// one with the most dynamic iterations, the first on ties; nullptr without loops.
const LoopResult* main_loop(const SimResult& r);

}  // namespace tandem
