// The structural verifier (LLVM's verifier habit): is a kernel and its dependence graph well
// formed, whatever a pass did to them? The pass manager runs it after every pass, always; a
// pass that breaks it is an internal error naming the pass, before anything is simulated
// (docs/checker.md). It checks what must hold for the kernel to print, parse back and lower:
//
//   names      every access names a declared tensor, every opcode and engine is the target's,
//              instruction names are unique and clash with no tensor or loop variable;
//   scope      every loop variable an index uses belongs to a loop enclosing the instruction
//              (no access names a loop variable outside its loop), and indices stay inside
//              their tensor (as the parser checks them);
//   structure  every live instruction and every loop sits exactly once in the block its
//              `loop`/`parent` says, no erased instruction is placed: each loop body (a
//              reordered one too) is a permutation of its statements;
//   edges      every dependence edge and dep line joins live instructions, with a valid kind,
//              a distance of at least 0 and, when above 0, a carrying loop enclosing both;
//   capacity   the kernel's tensors fit their spaces (static allocation, sched/analysis/allocator.h),
//              when asked: whether the input fits is the user's business.
//
// It does not check meaning (the translation validator, `--verify`) or timing (the race
// checker); a dependence cycle is check_acyclic's.
#pragma once

#include <string>
#include <vector>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel.h"

namespace tandem {

struct StructureChecks {
  bool capacity = true;
};

// Every problem found, each in words naming the instruction, loop or tensor; empty when the
// kernel is well formed.
std::vector<std::string> find_structural_problems(const Kernel& k, const DepGraph& g,
                                                  const StructureChecks& checks = {});

// The first problem, and how many more there are ("...; and 2 more problems").
std::string describe_structural_problems(const std::vector<std::string>& problems);

}  // namespace tandem
