// Prints a Kernel in the .kir text format; parse(print(k)) prints identically.
#pragma once

#include <string>

#include "sched/ir/kernel.h"

namespace tandem {

class DepGraph;

// With `graph`, dep lines follow the body: every edge when the kernel's deps are listed
// (`deps_listed`), otherwise only the explicit ones.
std::string print_kernel(const Kernel& k, const DepGraph* graph = nullptr);

std::string print_access(const Kernel& k, const Access& a);

// One `dep %src -> %dst kind [distance=N] [loop=%iv]` line per edge, in a stable order
// (source position, destination position, distance, kind).
std::string print_deps(const Kernel& k, const DepGraph& g, bool explicit_only = false);

}  // namespace tandem
