// Derives the dependence graph of a kernel from its accesses (docs/ir.md, Dependences):
// Flow (read after write), Anti (write after read), Output (write after write), Ordered
// (consecutive instructions on one DMA queue, or written explicitly). Edges that cross
// iterations of a loop carry the smallest distance at which the accesses can overlap.
#pragma once

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace tandem {

// Analysis edges plus the kernel's explicit ones; for a kernel whose deps are listed
// (`deps_listed`), only the explicit ones. Throws Error for a dependence cycle at distance 0.
DepGraph build_dep_graph(const Kernel& k);

// Only the edges analysis derives from the accesses and queues.
DepGraph analyze_dependences(const Kernel& k);

// Throws Error naming the dep line that closes a cycle of distance-0 edges, if any.
void check_acyclic(const Kernel& k, const DepGraph& g);

}  // namespace tandem
