#include "sim/driver/simulator.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <systemc>

#include "sched/support/error.h"
#include "sched/support/log.h"
#include "sim/driver/progress_line.h"
#include "sim/lower/implied_channels.h"
#include "sim/observe/ledger.h"
#include "sim/observe/race_checker.h"
#include "sim/observe/trace_writer.h"
#include "sim/units/compute_engine.h"
#include "sim/units/core_barrier.h"
#include "sim/units/dma_queue.h"
#include "sim/units/dma_system.h"
#include "sim/units/fast_forward.h"
#include "sim/units/port_arbiter.h"

namespace tandem {

namespace {

// SystemC's reports never reach stdout (it carries only the requested output): information
// goes to the debug log, warnings to the log on stderr, and errors and fatal errors are thrown
// as the report, which simulate() turns into one line.
void report_handler(const sc_core::sc_report& r, const sc_core::sc_actions& actions) {
  using namespace sc_core;
  const std::string text = std::string(r.get_msg_type()) + ": " + r.get_msg();
  if (r.get_severity() == SC_INFO) logger("systemc")->debug("{}", printable(text, 400));
  if (r.get_severity() == SC_WARNING) logger("systemc")->warn("{}", printable(text, 400));
  sc_actions rest = actions & ~(SC_DISPLAY | SC_LOG);
  if (r.get_severity() >= SC_ERROR) rest = (rest & ~(SC_ABORT | SC_STOP | SC_INTERRUPT)) | SC_THROW;
  sc_report_handler::default_handler(r, rest);
}

// SystemC object names may not hold '.' (or spaces); kernel names may ('%separation_barrier.1').
std::string systemc_name(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

// The context (and through it the ledger, the checker and the barriers) stays reachable for
// the whole process, also when no module refers to it (an empty kernel): not a leak.
SimContext* volatile g_context = nullptr;

[[noreturn]] void rethrow_systemc(const sc_core::sc_report& r) {
  throw std::runtime_error("SystemC " + std::string(r.get_msg_type()) + ": " + printable(r.get_msg(), 400));
}

// While the simulation runs, a thread shows how many instances the ledger has recorded;
// the last line gives the whole run's rate.
class ProgressWatch {
 public:
  ProgressWatch(bool on, int64_t total, const Ledger& ledger, const FastForward* fast_forward)
      : line_(on), total_(total), ledger_(ledger), fast_forward_(fast_forward) {
    if (on) thread_ = std::thread([this] { watch(); });
  }
  ~ProgressWatch() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
    if (!std::uncaught_exceptions()) show(true);  // a failed run reports its error instead
    line_.finish();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) show(false);
  }
  void show(bool last) {
    const int64_t done = ledger_.recorded();
    const double s = line_.seconds();
    const double rate = s > 0 ? static_cast<double>(done) / s : 0;
    char text[200];
    const int64_t skipped = fast_forward_ ? fast_forward_->skipped_instances() : 0;
    if (last && skipped > 0)
      std::snprintf(text, sizeof text,
                    "tandem sim: %lld dynamic instructions in %.1f s (%.2f M/s), %lld of them in steady periods "
                    "fast-forwarded",
                    static_cast<long long>(done), s, rate / 1e6, static_cast<long long>(skipped));
    else if (last)
      std::snprintf(text, sizeof text, "tandem sim: %lld dynamic instructions simulated in %.1f s (%.2f M/s)",
                    static_cast<long long>(done), s, rate / 1e6);
    else
      std::snprintf(text, sizeof text,
                    "tandem sim: %lld of %lld dynamic instructions (%.0f %%), %.0f s, about %.0f s left",
                    static_cast<long long>(done), static_cast<long long>(total_),
                    total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 0.0, s,
                    rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0);
    line_.show(text, last);
  }

  ProgressLine line_;
  int64_t total_;
  const Ledger& ledger_;
  const FastForward* fast_forward_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

SimResult run_simulation(const SimProgram& p, const SimOptions& options) {
  // The modules live until the process ends: SystemC does not support tearing a design down.
  auto* ctx = new SimContext{
      p, options.perturb_seed, options.perturb_spread, {}, {}, nullptr, nullptr, nullptr, nullptr, {}, {}};
  g_context = ctx;
  std::unique_ptr<TraceWriter> trace;
  if (!options.trace_path.empty()) {
    trace = std::make_unique<TraceWriter>(options.trace_path, p, options.trace_filter);
  }
  for (const SimChannel& c : p.channels) {
    const SimInst& src = p.insts[static_cast<size_t>(c.src)];
    ctx->semaphores.push_back(std::make_unique<Semaphore>(c, static_cast<int>(ctx->semaphores.size()),
                                                          src.is_barrier ? -1 : src.units[0], options.window));
  }
  // The units skip the channels others imply; jitter may shorten a duration by the spread.
  ctx->channel_ports =
      ChannelPorts(p, ctx->semaphores, implied_channels(p, options.perturb_seed ? options.perturb_spread : 0.0));
  ctx->barriers.assign(p.insts.size(), nullptr);
  for (const SimInst& inst : p.insts)
    if (inst.is_barrier && !inst.units.empty())
      ctx->barriers[static_cast<size_t>(inst.id)] = new CoreBarrier(
          ("barrier_" + std::to_string(inst.id) + "_" + systemc_name(inst.name.substr(1))).c_str(), inst);
  if (p.model->dma.engines > 0) ctx->dma = new DmaSystem("dma", p.model->dma, *ctx);
  if (!p.ports.empty()) ctx->ports = new PortArbiter("ports", p.ports.size());
  for (size_t u = 0; u < p.units.size(); ++u) {
    const CostedUnit& unit = p.units[u];
    if (unit.kind == UnitKind::DmaQueue)
      ctx->units.push_back(new DmaQueue(systemc_name(unit.name).c_str(), *ctx, static_cast<int>(u)));
    else
      ctx->units.push_back(new ComputeEngine(systemc_name(unit.name).c_str(), *ctx, static_cast<int>(u)));
  }
  auto* checker = options.check_races ? new RaceChecker(p) : nullptr;
  auto* ledger = new Ledger(*ctx, options.iterations_kept, options.capture_timeline, trace.get(), checker);
  ctx->observer = ledger;
  if (options.fast_forward && options.perturb_seed == 0 && ctx->dma) {
    ctx->fast_forward = new FastForward(*ctx, *ledger);
    ctx->observer = ctx->fast_forward;
  }

  {
    ProgressWatch watch(options.progress, p.dynamic_instructions, *ledger, ctx->fast_forward);
    sc_core::sc_start();
  }
  if (ctx->failure) std::rethrow_exception(ctx->failure);

  std::string stuck;
  for (StreamUnit* u : ctx->units)
    if (!u->done()) stuck += (stuck.empty() ? "" : "; ") + u->describe_wait();
  if (!stuck.empty()) throw Error("the schedule deadlocks: " + stuck);

  SimResult r = ledger->finish();
  if (trace) trace->finish();
  r.checked = checker != nullptr;
  r.systemc_waits = ctx->kernel_waits;
  r.systemc_deltas = static_cast<int64_t>(sc_core::sc_delta_count());
  r.ledger_peak_spans = ledger->peak_spans();
  r.fast_forwarded = ctx->fast_forward ? ctx->fast_forward->skipped_instances() : 0;
  if (checker)
    for (const Hazard& h : checker->hazards())
      r.hazards.push_back(
          {h.kind, p.insts[static_cast<size_t>(h.first)].name, p.insts[static_cast<size_t>(h.second)].name, h.message});
  // Jitter may shorten durations by up to the spread: the bound shrinks with them.
  const double slack = options.perturb_seed ? 1.0 - options.perturb_spread : 1.0;
  if (static_cast<double>(r.total_ps) < static_cast<double>(r.lower_bound_ps) * slack - 1)
    throw std::logic_error("simulated time " + std::to_string(r.total_ps) + " ps is below the model's lower bound " +
                           std::to_string(r.lower_bound_ps) + " ps (" + r.lower_bound_resource + ")");
  // Each loop's span holds its busiest resource's work (docs/metrics.md): so efficiency <= 1.
  for (const LoopResult& l : r.loops)
    if (static_cast<double>(l.span_ps) < static_cast<double>(l.span_bound_ps) * slack - 1)
      throw std::logic_error("loop " + l.iv + ": span " + std::to_string(l.span_ps) + " ps is below its bound " +
                             std::to_string(l.span_bound_ps) + " ps (" + l.bound_resource + ")");
  return r;
}

}  // namespace

namespace {

// Simulated time is whole picoseconds in 64 bits, and the DMA bandwidth model multiplies times
// by rates: a run must stay far below 2^63 ps. Its time is at most every instance's duration
// one after another (the units never all wait: a deadlock is reported apart).
constexpr long double kTimeLimitPs = 1e16L;  // 10^4 s

void check_time_limit(const SimProgram& p, const SimOptions& options) {
  long double serial = 0;
  for (const SimInst& inst : p.insts)
    serial += static_cast<long double>(inst.dynamic_count) *
              (static_cast<long double>(inst.latency_ps) + inst.data_ps + inst.link_ps + inst.pipe_ps);
  serial *= 1 + (options.perturb_seed ? options.perturb_spread : 0.0);
  if (serial > kTimeLimitPs)
    throw Error(p.model->file + ": on this model the kernel could run up to " +
                fmt::format("{:.3g}", static_cast<double>(serial / 1e12L)) +
                " s of simulated time (its instances one after another), past the simulator's limit of 10^4 s; "
                "check the model's clocks, costs and bandwidths");
}

}  // namespace

SimResult simulate(const SimProgram& p, const SimOptions& options) {
  check_time_limit(p, options);
  static bool elaborated = false;
  if (elaborated) throw std::logic_error("simulate() runs once per process (SystemC elaborates once)");
  elaborated = true;
  sc_core::sc_report_handler::set_handler(report_handler);
  try {
    return run_simulation(p, options);
  } catch (const sc_core::sc_report& r) {
    rethrow_systemc(r);
  }
}

}  // namespace tandem
