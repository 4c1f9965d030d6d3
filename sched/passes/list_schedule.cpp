#include "sched/passes/list_schedule.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <queue>

#include <spdlog/spdlog.h>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/range/iterator_range.hpp>

#include "sched/ir/kernel_queries.h"

#include "sched/ir/attribute_keys.h"
#include "sched/passes/shown_name.h"
#include "sched/target/target.h"

namespace tandem {

const std::vector<OptionRow<ListSchedulePass::Options>>& ListSchedulePass::option_rows() {
  static const std::vector<OptionRow<Options>> rows = {
      choice_option("priority", &Options::program_order, {{"critical-path", false}, {"program-order", true}},
                    "critical-path",
                    "critical-path: longest path to the end of the run first; program-order: keep the text's order"),
  };
  return rows;
}

namespace {

// One straight run's distance-0 dependences, vertices its positions: built once from edges
// listed by source and then only read, so compressed rows (an adjacency_list allocates a
// vector per vertex).
using RunGraph = boost::compressed_sparse_row_graph<boost::directedS>;

// Straight runs of instructions: each block split at its nested loops.
void collect_runs(const Kernel& k, const std::vector<Stmt>& block, std::vector<std::vector<InstId>>& runs) {
  std::vector<InstId> run;
  for (const Stmt& s : block) {
    if (s.kind == Stmt::kInst) {
      run.push_back(s.id);
      continue;
    }
    if (!run.empty()) runs.push_back(std::move(run));
    run.clear();
    collect_runs(k, k.loops[s.id].body, runs);
  }
  if (!run.empty()) runs.push_back(std::move(run));
}

}  // namespace

void ListSchedulePass::run(PassContext& ctx) {
  Kernel& k = ctx.kernel;
  const DepGraph& g = ctx.deps;
  ctx.unchanged = true;  // it writes `order` attributes only, which no structural check reads
  std::vector<std::vector<InstId>> runs;
  collect_runs(k, k.body, runs);

  int64_t longest = 0, busiest = 0;
  // Each instruction's position in the run being scheduled, kNotInRun elsewhere: one array
  // for every run, each run's entries cleared after it.
  constexpr size_t kNotInRun = SIZE_MAX;
  std::vector<size_t> index(k.insts.size(), kNotInRun);
  std::vector<std::pair<size_t, size_t>> run_edges;  // one run's, by source; reused
  for (const std::vector<InstId>& run : runs) {
    const size_t n = run.size();
    for (size_t i = 0; i < n; ++i) index[static_cast<size_t>(run[i])] = i;
    std::vector<int> preds(n, 0);
    run_edges.clear();
    for (size_t i = 0; i < n; ++i)
      for (const DepEdgeRef& e : g.outgoing(run[i])) {  // edges read in place: no copy per instruction
        const size_t dst = static_cast<size_t>(e.dst);
        const size_t at = dst < index.size() ? index[dst] : kNotInRun;
        if (e.props.distance != 0 || at == kNotInRun) continue;
        run_edges.emplace_back(i, at);
        ++preds[at];
      }
    for (size_t i = 0; i < n; ++i) index[static_cast<size_t>(run[i])] = kNotInRun;
    const RunGraph run_graph(boost::edges_are_sorted, run_edges.begin(), run_edges.end(), n);
    // Priority: instructions on the longest path from here to the end of the run. Boost's
    // topological sort lists successors before predecessors (edges may point backwards in
    // the text: explicit ones), so each height is final when it is read.
    std::vector<size_t> sinks_first;
    boost::topological_sort(run_graph, std::back_inserter(sinks_first));
    std::vector<int64_t> height(n, 1);
    for (size_t i : sinks_first)
      for (size_t j : boost::make_iterator_range(boost::adjacent_vertices(i, run_graph)))
        height[i] = std::max(height[i], height[j] + 1);
    std::map<std::string, int64_t> per_resource;
    for (InstId id : run) ++per_resource[preferred_engine(k, id)];
    for (const auto& [r, c] : per_resource)
      if (!r.empty()) busiest = std::max(busiest, c);
    const int64_t critical = n ? *std::max_element(height.begin(), height.end()) : 0;
    longest = std::max(longest, critical);

    // Ready list: highest priority first, ties in program order.
    auto worse = [&](size_t a, size_t b) {
      if (!o_.program_order && height[a] != height[b]) return height[a] < height[b];
      return a > b;
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(worse)> ready(worse);
    for (size_t i = 0; i < n; ++i)
      if (preds[i] == 0) ready.push(i);
    std::vector<size_t> order;
    while (!ready.empty()) {
      size_t i = ready.top();
      ready.pop();
      order.push_back(i);
      for (size_t j : boost::make_iterator_range(boost::adjacent_vertices(i, run_graph)))
        if (--preds[j] == 0) ready.push(j);
    }
    bool reordered = false;
    for (size_t pos = 0; pos < order.size(); ++pos) reordered |= order[pos] != pos;
    for (size_t pos = 0; pos < order.size(); ++pos) {
      Instruction& in = k.insts[run[order[pos]]];
      if (reordered)
        in.attrs.set(attr::kOrder, static_cast<int64_t>(pos));
      else
        in.attrs.erase(attr::kOrder);
    }
    if (reordered) {
      ctx.stats.add("runs_reordered");
      ctx.log->debug("reordered a run of {} starting at {}: critical path {}", n, shown(k, run[0]), critical);
    }
    ctx.stats.add("runs_scheduled");
  }
  ctx.stats.add("critical_path", longest);
  ctx.stats.add("resource_bound", busiest);
}

}  // namespace tandem
