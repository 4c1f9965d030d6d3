// Helpers shared by the unit tests.
#pragma once

#include <string>

#include "sched/analysis/dependence_analysis.h"
#include "sched/ir/parser.h"

namespace tandem::test {

inline Kernel parse(const std::string& body, const std::string& target = "trn2") {
  return parse_kernel("kernel @t target = \"" + target + "\" {\n" + body + "}\n", "test.kir");
}

inline const DepEdge* edge(const Kernel& k, const DepGraph& g, const std::string& src, const std::string& dst,
                           int distance = 0, LoopId loop = kNoId) {
  if (distance > 0 && loop == kNoId) loop = k.common_loop(k.find_inst(src), k.find_inst(dst));
  return g.find(k.find_inst(src), k.find_inst(dst), distance, loop);
}

}  // namespace tandem::test
