// Simulator benchmarks (the targets are in docs/performance.md), printed, never
// asserted. Every time is CPU time of the measured call, the minimum of 3 runs:
//  1. throughput: dynamic instructions per second of the SystemC simulator on a GEMM K loop
//     of about a million dynamic instructions, with and without the race checker, against a
//     plain priority-queue event loop doing the same scheduling work
//     (tests/oracle/event_loop.cpp) and feeding the same race checker, in the same run;
//  2. the race-checker strip family (a strip written slice by slice and read back R times):
//     time with and without the checker, and its growth exponent in R;
//  3. straight-line code (N instructions in one run, no loop): time with the checker and its
//     growth exponent in N (the checker's min_seq must advance within a run, or every read
//     waits to the end and is checked against every write: quadratic);
//  4. memory: peak resident set of a ten-million-iteration loop; and a DMA load in an inner
//     loop under an outer loop against the same body as one flat loop, in the same run: the
//     ratio of their rates and memory (each outer iteration must not hold its inner ones);
//  5. the SystemC ceiling: the GEMM K loop's three units as bare SystemC threads doing one
//     timed wait and one event notification per instance and nothing else, the rate no model
//     built on per-instance SystemC waits can pass on this machine; and the same as method
//     processes. The simulator pays neither on this loop: its units hand off to each other
//     directly and the DMA system runs ahead of SystemC's time (docs/performance.md).
// SystemC elaborates once per process, so each measurement runs in a child process.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_kernels.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sched/support/log.h"
#include "sched/target/target.h"
#include "sim/driver/simulator.h"
#include "sim/observe/race_checker.h"
#include "tests/oracle/event_loop.h"

#include <systemc>

using namespace tandem;

namespace {

std::string gemm_k(int64_t trips) {
  std::ostringstream s;
  s << "kernel @gemm_bench target = \"trn2\" {\n"
    << "  tensor %A : dram[128, " << 128 * trips << "] bf16\n"
    << "  tensor %B : dram[" << 128 * trips << ", 512] bf16\n"
    << "  tensor %a : sbuf[128, 128] bf16\n  tensor %b : sbuf[128, 512] bf16\n  tensor %acc : psum[128, 512] f32\n"
    << "  %z = memset %acc {value = 0}\n"
    << "  loop %k = 0 to " << trips << " {\n"
    << "    %la = load %a <- %A[0:128, %k*128 : %k*128 + 128]\n"
    << "    %lb = load %b <- %B[%k*128 : %k*128 + 128, 0:512]\n"
    << "    %mm = matmul %acc <- %a, %b {accumulate}\n  }\n}\n";
  return s.str();
}

std::string two_stage(int64_t trips) {
  std::ostringstream s;
  s << "kernel @long_loop target = \"trn2\" {\n"
    << "  tensor %X : dram[128, " << 16 * trips << "] f32\n  tensor %t : sbuf[128, 16] f32\n"
    << "  tensor %sum : sbuf[128, 16] f32\n"
    << "  loop %i = 0 to " << trips << " {\n"
    << "    %ld = load %t <- %X[0:128, %i*16 : %i*16 + 16]\n"
    << "    %ad = tensor_tensor %sum <- %sum, %t\n  }\n}\n";
  return s.str();
}

// A load and an activation of its tile (robust reproducer 07-nested-loop-dma-slowdown.kir):
// `trips` iterations as one loop, or as `outer` iterations of a loop of trips / outer.
std::string load_exp(int64_t trips, int64_t outer) {
  std::ostringstream s;
  s << "kernel @load_exp target = \"trn2\" {\n"
    << "  tensor %X : dram[128, 1024] f32\n  tensor %t : sbuf[128, 256] f32\n";
  if (outer > 1) s << "  loop %a = 0 to " << outer << " {\n";
  s << "  loop %d = 0 to " << (outer > 1 ? trips / outer : trips) << " {\n"
    << "    %l = load %t <- %X[0:128, 0:256]\n"
    << "    %e = activation %t <- %t {func = \"exp\"}\n  }\n";
  if (outer > 1) s << "  }\n";
  s << "}\n";
  return s.str();
}

// A strip of 64 tiles written slice by slice and read back, `rounds` times: each slice's
// next write comes a whole strip later, so the race checker keeps each slice's write live
// across many advances.
std::string strip(int64_t rounds) {
  std::ostringstream s;
  s << "kernel @strip target = \"trn1\" {\n"
    << "  tensor %B : dram[8192, 512] bf16\n  tensor %rt : sbuf[128, 64, 512] bf16\n  tensor %o : sbuf[128, 512] bf16\n"
    << "  loop %r = 0 to " << rounds << " {\n"
    << "    loop %k = 0 to 64 {\n      %ld = load %rt[0:128, %k, 0:512] <- %B[%k*128 : %k*128 + 128, 0:512]\n    }\n"
    << "    loop %j = 0 to 64 {\n      %cp = tensor_copy %o <- %rt[0:128, %j, 0:512]\n    }\n  }\n}\n";
  return s.str();
}

// N activations in one straight run, each reading and rewriting the same tile.
std::string straight_line(int64_t n) {
  std::ostringstream s;
  s << "kernel @straight target = \"trn2\" {\n  tensor %t : sbuf[128, 256] f32\n";
  for (int64_t j = 0; j < n; ++j) s << "  %a" << j << " = activation %t <- %t {func = \"exp\"}\n";
  s << "}\n";
  return s.str();
}

SimProgram lower(const std::string& text, Kernel& k, DepGraph& g) {
  k = parse_kernel(text, "bench.kir");
  g = build_dep_graph(k);
  run_pipeline(k, g, parse_pipeline("assign-engines"), RunOptions{}, std::cerr);
  return lower_for_simulation(k, g);
}

struct Measure {
  double seconds = 0;
  long long total_ps = 0;
  long long instances = 0;
  long peak_kb = 0;
  long long races = 0;
  long long waits = 0;         // units' waits in the SystemC kernel (hand-offs are not)
  long long deltas = 0;        // SystemC delta cycles
  long long ledger_spans = 0;  // SimResult::ledger_peak_spans
};

// Runs `fn` in a child process; it reports seconds, simulated ps and instance count.
Measure in_child(const std::function<Measure()>& fn) {
  int fd[2];
  if (pipe(fd) != 0) std::exit(2);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    Measure m = fn();
    if (write(fd[1], &m, sizeof m) != static_cast<ssize_t>(sizeof m)) _exit(2);
    _exit(0);
  }
  close(fd[1]);
  Measure m;
  if (read(fd[0], &m, sizeof m) != static_cast<ssize_t>(sizeof m)) {
    std::fprintf(stderr, "benchmark child failed\n");
    std::exit(2);
  }
  close(fd[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  m.peak_kb = usage.ru_maxrss;
  return m;
}

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The run with the least CPU time of three (the machine is shared).
Measure best_of_3(const std::function<Measure()>& run) {
  Measure best = run();
  for (int i = 0; i < 2; ++i) {
    Measure m = run();
    if (m.seconds < best.seconds) best = m;
  }
  return best;
}

// Simulates `text` with SystemC in a child process, timing simulate() alone; every instance
// simulated unless `fast_forward`.
Measure simulate_in_child(const std::string& text, size_t iterations_kept, bool check_races = true,
                          bool fast_forward = false) {
  return in_child([&] {
    Kernel k;
    DepGraph g;
    SimProgram p = lower(text, k, g);
    SimOptions o;
    o.iterations_kept = iterations_kept;
    o.check_races = check_races;
    o.fast_forward = fast_forward;
    const double t0 = cpu_now();
    SimResult r = simulate(p, o);
    return Measure{
        cpu_now() - t0,  r.total_ps,       p.dynamic_instructions, 0, static_cast<long long>(r.hazards.size()),
        r.systemc_waits, r.systemc_deltas, r.ledger_peak_spans};
  });
}

// The race checker fed by the event loop, as the ledger feeds it in the simulator.
class CheckerFeed : public BaselineObserver {
 public:
  explicit CheckerFeed(const SimProgram& p) : checker(p) {}
  void record(const InstanceRecord& r) override { checker.record(r); }
  void progress(Picos watermark, int64_t min_seq) override { checker.advance(watermark, min_seq); }
  RaceChecker checker;
};

// The plain event loop on `text` in a child process, with the race checker or without.
Measure event_loop_in_child(const std::string& text, bool check_races) {
  return in_child([&] {
    Kernel k;
    DepGraph g;
    SimProgram p = lower(text, k, g);
    std::unique_ptr<CheckerFeed> feed;
    const double t0 = cpu_now();
    if (check_races) feed = std::make_unique<CheckerFeed>(p);
    BaselineResult r = run_event_loop_baseline(p, feed.get());
    const double s = cpu_now() - t0;
    return Measure{s, r.total_ps, r.instances, 0, feed ? static_cast<long long>(feed->checker.hazards().size()) : 0};
  });
}

// The ceiling: two producer threads (the GEMM's A and B loads) and a consumer (the matmul),
// a window of two iterations between them; per instance one timed wait and one event
// notification, no model work. The simulator's units do at least this per instance (a
// transfer also meets the kernel when its data starts and the DMA system's completion).
struct BareGemmState : sc_core::sc_module {
  BareGemmState(sc_core::sc_module_name name, int64_t t) : sc_core::sc_module(name), trips(t) {}
  int64_t trips;
  int64_t loaded[2] = {0, 0};  // per load unit: iterations landed
  int64_t consumed = 0;        // iterations the matmul finished
  sc_core::sc_event loaded_event, consumed_event;
};

struct BareGemm : BareGemmState {
  SC_HAS_PROCESS(BareGemm);
  BareGemm(sc_core::sc_module_name name, int64_t t) : BareGemmState(name, t) {
    SC_THREAD(load_a);
    SC_THREAD(load_b);
    SC_THREAD(matmul);
  }
  void load(int q, double ns) {
    for (int64_t i = 0; i < trips; ++i) {
      while (i - consumed >= 2) wait(consumed_event);
      wait(sc_core::sc_time(ns, sc_core::SC_NS));
      ++loaded[q];
      loaded_event.notify(sc_core::SC_ZERO_TIME);
    }
  }
  void load_a() { load(0, 300); }
  void load_b() { load(1, 700); }
  void matmul() {
    for (int64_t i = 0; i < trips; ++i) {
      while (loaded[0] <= i || loaded[1] <= i) wait(loaded_event);
      wait(sc_core::sc_time(400, sc_core::SC_NS));
      ++consumed;
      consumed_event.notify(sc_core::SC_ZERO_TIME);
    }
  }
};

// The same synchronisation with each unit a method process: a state machine re-triggered by
// next_trigger, so no coroutine switch per wait. What a simulator whose stream units were
// methods could reach (its DMA queues' data phases are methods already).
struct BareGemmMethods : BareGemmState {
  bool busy[3] = {false, false, false};  // a unit's timed wait is running
  SC_HAS_PROCESS(BareGemmMethods);
  BareGemmMethods(sc_core::sc_module_name name, int64_t t) : BareGemmState(name, t) {
    SC_METHOD(load_a);
    SC_METHOD(load_b);
    SC_METHOD(matmul);
  }
  void load(int q, double ns) {
    if (busy[q]) {
      busy[q] = false;
      ++loaded[q];
      loaded_event.notify(sc_core::SC_ZERO_TIME);
    }
    if (loaded[q] == trips) return;
    if (loaded[q] - consumed >= 2) return next_trigger(consumed_event);
    busy[q] = true;
    next_trigger(sc_core::sc_time(ns, sc_core::SC_NS));
  }
  void load_a() { load(0, 300); }
  void load_b() { load(1, 700); }
  void matmul() {
    if (busy[2]) {
      busy[2] = false;
      ++consumed;
      consumed_event.notify(sc_core::SC_ZERO_TIME);
    }
    if (consumed == trips) return;
    if (loaded[0] <= consumed || loaded[1] <= consumed) return next_trigger(loaded_event);
    busy[2] = true;
    next_trigger(sc_core::sc_time(400, sc_core::SC_NS));
  }
};

template <typename Design>
Measure systemc_ceiling_in_child(int64_t trips) {
  return in_child([&] {
    auto* design = new Design("bare", trips);  // lives until the process ends, as SystemC needs
    const double t0 = cpu_now();
    sc_core::sc_start();
    const double s = cpu_now() - t0;
    return Measure{s, static_cast<long long>(sc_core::sc_time_stamp().value()), 3 * design->consumed, 0, 0,
                   0, static_cast<long long>(sc_core::sc_delta_count())};
  });
}

double rate(const Measure& m) { return static_cast<double>(m.instances) / m.seconds / 1e6; }

}  // namespace

constexpr const char* kUsage =
    "usage: sim_bench [GEMM_TRIPS=333334] [LOOP_TRIPS=10000000]\n"
    "Simulator throughput on a GEMM K loop of GEMM_TRIPS iterations (3 instructions each) with and\n"
    "without the race checker, against a plain event loop and bare SystemC processes; the\n"
    "race-checker strip family and straight-line code with their growth exponents; the GEMM\n"
    "with fast-forward (effective rate: dynamic instructions per CPU second); the peak\n"
    "memory of a two-stage loop of LOOP_TRIPS iterations; a load in an inner loop under an outer\n"
    "loop against one flat loop of LOOP_TRIPS / 5 iterations. CPU time, minimum of 3.\n";

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  if (const char* level = std::getenv("TANDEM_BENCH_LOG")) set_log_level(level);
  const std::vector<int64_t> counts = bench::positional_counts(argv[0], argc - 1, argv + 1, kUsage, {333334, 10000000});
  const int64_t gemm_trips = counts[0];  // 3 instructions each
  const int64_t long_trips = counts[1];

  const std::string gemm = gemm_k(gemm_trips);
  const Measure sim = best_of_3([&] { return simulate_in_child(gemm, 100); });
  const Measure sim_nc = best_of_3([&] { return simulate_in_child(gemm, 100, false); });
  const Measure base = best_of_3([&] { return event_loop_in_child(gemm, true); });
  const Measure base_nc = best_of_3([&] { return event_loop_in_child(gemm, false); });
  std::printf("GEMM K loop, %lld dynamic instructions (trn2); CPU time, minimum of 3\n", sim.instances);
  auto row = [](const char* what, const Measure& m) {
    std::printf("  %-34s %8.3f s  %7.2f M instructions/s  simulated %.3f ns  races %lld\n", what, m.seconds, rate(m),
                static_cast<double>(m.total_ps) / 1000, m.races);
  };
  row("SystemC simulator, race checker", sim);
  row("SystemC simulator, no checker", sim_nc);
  row("plain event loop, race checker", base);
  row("plain event loop, no checker", base_nc);
  std::printf("  race checker cost: simulator %.2fx, event loop %.2fx (target <= 1.5x)\n", sim.seconds / sim_nc.seconds,
              base.seconds / base_nc.seconds);
  std::printf(
      "  ratio simulator / event loop, both checking: %.2f; neither: %.2f (target >= 0.5; 20 M instructions/s)\n",
      rate(sim) / rate(base), rate(sim_nc) / rate(base_nc));
  const Measure ceiling = best_of_3([&] { return systemc_ceiling_in_child<BareGemm>(gemm_trips); });
  std::printf(
      "  SystemC ceiling (bare threads, one timed wait and one notification per instance): %.3f s, %.2f M "
      "instructions/s; the simulator without the checker reaches %.2f of it\n",
      ceiling.seconds, rate(ceiling), rate(sim_nc) / rate(ceiling));
  const Measure methods = best_of_3([&] { return systemc_ceiling_in_child<BareGemmMethods>(gemm_trips); });
  std::printf("  the same as bare method processes (next_trigger, no thread switch): %.3f s, %.2f M instructions/s%s\n",
              methods.seconds, rate(methods), methods.total_ps == ceiling.total_ps ? "" : " (NOT the same schedule)");
  auto per = [](long long n, const Measure& m) { return static_cast<double>(n) / static_cast<double>(m.instances); };
  std::printf(
      "  SystemC kernel per instance: simulator %.2f waits of a unit, %.2f delta cycles; ceiling %.2f delta "
      "cycles\n",
      per(sim_nc.waits, sim_nc), per(sim_nc.deltas, sim_nc), per(ceiling.deltas, ceiling));
  const bool same = sim.total_ps == base.total_ps && sim_nc.total_ps == base.total_ps && sim.races == base.races;
  std::printf("  same schedule and races: %s\n", same ? "yes" : "NO");
  // Fast-forward: steady periods skipped, their records given to the ledger (and checker).
  const Measure ff = best_of_3([&] { return simulate_in_child(gemm, 100, true, true); });
  const Measure ff_nc = best_of_3([&] { return simulate_in_child(gemm, 100, false, true); });
  row("fast-forward, race checker", ff);
  row("fast-forward, no checker", ff_nc);
  std::printf(
      "  fast-forward against every instance: %.2fx with the checker, %.2fx without (effective rates; the "
      "same schedule and races: %s)\n",
      rate(ff) / rate(sim), rate(ff_nc) / rate(sim_nc),
      ff.total_ps == sim.total_ps && ff_nc.total_ps == sim.total_ps && ff.races == sim.races ? "yes" : "NO");

  // The strip family: the checker's cost must grow like the dynamic instructions (exponent 1).
  std::printf("Race-checker strip family (trn1; R rounds of 128 instructions); CPU time, minimum of 3\n");
  std::vector<double> xs, ys;
  for (int64_t rounds : {64, 128, 256, 512, 1024, 2048}) {
    const std::string text = strip(rounds);
    const Measure on = best_of_3([&] { return simulate_in_child(text, 100); });
    const Measure off = best_of_3([&] { return simulate_in_child(text, 100, false); });
    std::printf("  R = %5lld  %8lld instructions  checker %7.3f s  no checker %7.3f s  races %lld\n",
                static_cast<long long>(rounds), on.instances, on.seconds, off.seconds, on.races);
    xs.push_back(static_cast<double>(rounds));
    ys.push_back(on.seconds);
  }
  std::printf("  growth exponent (checker on): %.2f (target: linear, <= 1.2)\n", bench::growth_exponent(xs, ys));

  std::printf("Straight-line code (trn2; N activations on one tile, no loop); CPU time, minimum of 3\n");
  xs.clear();
  ys.clear();
  for (int64_t n : {10000, 20000, 40000}) {
    const std::string text = straight_line(n);
    const Measure on = best_of_3([&] { return simulate_in_child(text, 100); });
    const Measure off = best_of_3([&] { return simulate_in_child(text, 100, false); });
    std::printf("  N = %6lld  checker %7.3f s  no checker %7.3f s  races %lld\n", static_cast<long long>(n), on.seconds,
                off.seconds, on.races);
    xs.push_back(static_cast<double>(n));
    ys.push_back(on.seconds);
  }
  std::printf("  growth exponent (checker on): %.2f (target: linear, <= 1.2)\n", bench::growth_exponent(xs, ys));

  const std::string loop = two_stage(long_trips);
  Measure mem = simulate_in_child(loop, 1000);
  std::printf("Loop of %lld iterations (%lld dynamic instructions)\n", static_cast<long long>(long_trips),
              mem.instances);
  std::printf("  %8.3f s  %7.2f M instructions/s  peak resident %.1f MB (target < 200 MB)\n", mem.seconds, rate(mem),
              static_cast<double>(mem.peak_kb) / 1024);

  // A nest of 4 outer iterations against the flat loop of the same iterations.
  const int64_t nest_trips = std::max<int64_t>(4, long_trips / 5);
  const Measure flat = best_of_3([&] { return simulate_in_child(load_exp(nest_trips, 1), 1000); });
  const Measure nested = best_of_3([&] { return simulate_in_child(load_exp(nest_trips, 4), 1000); });
  std::printf("Load in an inner loop under an outer loop (4 x %lld) against one loop of %lld iterations\n",
              static_cast<long long>(nest_trips / 4), static_cast<long long>(nest_trips));
  auto nest_row = [](const char* what, const Measure& m) {
    std::printf("  %-7s %8.3f s  %7.2f M instructions/s  peak resident %.1f MB  ledger holds %lld spans\n", what,
                m.seconds, rate(m), static_cast<double>(m.peak_kb) / 1024, m.ledger_spans);
  };
  nest_row("flat", flat);
  nest_row("nested", nested);
  std::printf(
      "  nested / flat: rate %.2f, peak resident %.2f, spans held %.2f (target: about 1, constant in the trips)%s\n",
      rate(nested) / rate(flat), static_cast<double>(nested.peak_kb) / static_cast<double>(flat.peak_kb),
      static_cast<double>(nested.ledger_spans) / static_cast<double>(std::max(1LL, flat.ledger_spans)),
      nested.total_ps == flat.total_ps ? "" : " (NOT the same simulated time)");
  return same && nested.total_ps == flat.total_ps ? 0 : 1;
}
