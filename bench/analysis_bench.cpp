// Dependence analysis scaling: parse and analyse generated regions of 10k, 100k and 1M
// instructions (an unrolled GEMM: loads into 8 rotating tiles, accumulate, drain every 64
// steps), straight-line and as one loop body. The target (docs/performance.md): a
// 100 000-instruction region analysed in well under a second, growing no faster than n log n.
#include <benchmark/benchmark.h>

#include <sstream>

#include "bench/bench_kernels.h"
#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"

namespace {

using tandem::bench::unrolled_gemm;

void BM_Parse(benchmark::State& state) {
  std::string text = unrolled_gemm(state.range(0), false);
  for (auto _ : state) benchmark::DoNotOptimize(tandem::parse_kernel(text, "bench.kir"));
  state.SetComplexityN(state.range(0));
  state.counters["insts/s"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void analyze(benchmark::State& state, bool in_loop) {
  tandem::Kernel k = tandem::parse_kernel(unrolled_gemm(state.range(0), in_loop), "bench.kir");
  size_t edges = 0;
  for (auto _ : state) edges = tandem::analyze_dependences(k).num_edges();
  state.SetComplexityN(state.range(0));
  state.counters["edges"] = static_cast<double>(edges);
  state.counters["insts/s"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AnalyzeStraightLine(benchmark::State& state) { analyze(state, false); }
void BM_AnalyzeLoopBody(benchmark::State& state) { analyze(state, true); }

}  // namespace

BENCHMARK(BM_Parse)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_AnalyzeStraightLine)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_AnalyzeLoopBody)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Complexity();

BENCHMARK_MAIN();
