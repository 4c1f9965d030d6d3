// Static allocation: every tensor is live for the whole kernel, so each space with a capacity
// (SBUF's bytes per partition, PSUM's banks) must hold all its tensors at once, each rotating
// tensor with all its buffers (docs/metrics.md, Capacity). The lowering refuses a kernel that
// does not fit (the user's error); the structural verifier checks that no pass makes a kernel
// that fitted overflow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sched/ir/kernel.h"

namespace tandem {

struct CapacityProblem {
  SourceLoc loc;        // the tensor that no longer fits
  std::string message;  // "tensors in sbuf need ... (%t 256 written by %ld)"
};

// The first space the kernel's tensors overflow, or nullopt when they fit.
std::optional<CapacityProblem> find_capacity_problem(const Kernel& k);

// What the kernel's tensors take of a bounded space, in its capacity unit (saturating).
int64_t space_allocation(const Kernel& k, const std::string& space);

}  // namespace tandem
