// Dependence analysis scaling: parse and analyse generated regions of 10k, 100k and 1M
// instructions (an unrolled GEMM: loads into 8 rotating tiles, accumulate, drain every 64
// steps), straight-line and as one loop body. DESIGN.md's target: a 100 000-instruction
// region analysed in well under a second, growing no faster than n log n.
#include <benchmark/benchmark.h>

#include <sstream>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"

namespace {

std::string unrolled_gemm(int64_t instructions, bool in_loop) {
  std::ostringstream s;
  s << "kernel @bench target = \"trn2\" {\n"
    << "  tensor %A : dram[128, 1048576] bf16\n  tensor %B : dram[1048576, 512] bf16\n"
    << "  tensor %C : dram[128, 512] bf16\n  tensor %acc : psum[128, 512] f32\n"
    << "  tensor %o : sbuf[128, 512] bf16\n";
  for (int t = 0; t < 8; ++t) s << "  tensor %a" << t << " : sbuf[128, 128] bf16\n  tensor %b" << t << " : sbuf[128, 128] bf16\n";
  if (in_loop) s << "  loop %r = 0 to 4 {\n";
  int64_t emitted = 0;
  for (int64_t j = 0; emitted < instructions; ++j) {
    int t = static_cast<int>(j % 8);
    int64_t col = (j * 128) % 1048576;
    s << "  load %a" << t << " <- %A[0:128, " << col << ":" << col + 128 << "]\n";
    s << "  load %b" << t << " <- %B[" << col << ":" << col + 128 << ", 0:128]\n";
    s << "  matmul %acc[0:128, 0:128] <- %a" << t << ", %b" << t << " {accumulate}\n";
    emitted += 3;
    if (j % 64 == 63) {
      s << "  activation %o[0:128, 0:128] <- %acc[0:128, 0:128]\n  save %C[0:128, 0:128] <- %o[0:128, 0:128]\n";
      emitted += 2;
    }
  }
  if (in_loop) s << "  }\n";
  s << "}\n";
  return s.str();
}

void BM_Parse(benchmark::State& state) {
  std::string text = unrolled_gemm(state.range(0), false);
  for (auto _ : state) benchmark::DoNotOptimize(tandem::parse_kernel(text, "bench.kir"));
  state.SetComplexityN(state.range(0));
  state.counters["insts/s"] = benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void analyze(benchmark::State& state, bool in_loop) {
  tandem::Kernel k = tandem::parse_kernel(unrolled_gemm(state.range(0), in_loop), "bench.kir");
  size_t edges = 0;
  for (auto _ : state) edges = tandem::analyze_dependences(k).num_edges();
  state.SetComplexityN(state.range(0));
  state.counters["edges"] = static_cast<double>(edges);
  state.counters["insts/s"] = benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AnalyzeStraightLine(benchmark::State& state) { analyze(state, false); }
void BM_AnalyzeLoopBody(benchmark::State& state) { analyze(state, true); }

}  // namespace

BENCHMARK(BM_Parse)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_AnalyzeStraightLine)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_AnalyzeLoopBody)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Complexity();

BENCHMARK_MAIN();
