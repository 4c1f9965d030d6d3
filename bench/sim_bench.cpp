// Simulator benchmarks (DESIGN.md, Performance targets), printed, never asserted:
//  1. throughput: dynamic instructions per second of the SystemC simulator on a GEMM K loop
//     of about a million dynamic instructions, against a plain priority-queue event loop
//     doing the same scheduling work (tests/oracle/event_loop.cpp), in the same run;
//  2. memory: peak resident set of a ten-million-iteration loop.
// SystemC elaborates once per process, so each measurement runs in a child process.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>

#include "tests/oracle/event_loop.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"
#include "sched/passes/pass_manager.h"
#include "sched/target/target.h"
#include "sim/driver/simulator.h"

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

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Simulates `text` with SystemC in a child process, timing simulate() alone.
Measure simulate_in_child(const std::string& text, size_t iterations_kept) {
  return in_child([&] {
    Kernel k;
    DepGraph g;
    SimProgram p = lower(text, k, g);
    SimOptions o;
    o.iterations_kept = iterations_kept;
    auto t0 = std::chrono::steady_clock::now();
    SimResult r = simulate(p, o);
    return Measure{seconds_since(t0), r.total_ps, p.dynamic_instructions, 0};
  });
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  const int64_t gemm_trips = argc > 1 ? std::atoll(argv[1]) : 333334;    // 3 instructions each
  const int64_t long_trips = argc > 2 ? std::atoll(argv[2]) : 10000000;

  const std::string gemm = gemm_k(gemm_trips);
  Measure sim = simulate_in_child(gemm, 100);
  Measure base = in_child([&] {
    Kernel k;
    DepGraph g;
    SimProgram p = lower(gemm, k, g);
    auto t0 = std::chrono::steady_clock::now();
    BaselineResult r = run_event_loop_baseline(p);
    return Measure{seconds_since(t0), r.total_ps, r.instances, 0};
  });
  const double sim_rate = static_cast<double>(sim.instances) / sim.seconds / 1e6;
  const double base_rate = static_cast<double>(base.instances) / base.seconds / 1e6;
  std::printf("GEMM K loop, %lld dynamic instructions (trn2)\n", sim.instances);
  std::printf("  SystemC simulator   %8.3f s  %7.2f M instructions/s  simulated %.3f ns\n", sim.seconds, sim_rate,
              static_cast<double>(sim.total_ps) / 1000);
  std::printf("  plain event loop    %8.3f s  %7.2f M instructions/s  simulated %.3f ns\n", base.seconds, base_rate,
              static_cast<double>(base.total_ps) / 1000);
  std::printf("  ratio simulator / event loop: %.2f (target >= 0.33; 20 M instructions/s)\n", sim_rate / base_rate);
  std::printf("  same schedule: %s\n", sim.total_ps == base.total_ps ? "yes" : "NO");

  const std::string loop = two_stage(long_trips);
  Measure mem = simulate_in_child(loop, 1000);
  std::printf("Loop of %lld iterations (%lld dynamic instructions)\n", static_cast<long long>(long_trips), mem.instances);
  std::printf("  %8.3f s  %7.2f M instructions/s  peak resident %.1f MB (target < 200 MB)\n", mem.seconds,
              static_cast<double>(mem.instances) / mem.seconds / 1e6, static_cast<double>(mem.peak_kb) / 1024);
  return sim.total_ps == base.total_ps ? 0 : 1;
}
