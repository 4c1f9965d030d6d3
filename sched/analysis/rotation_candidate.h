// Which tensors address-rotation can ring over N buffers for a loop, and why not. One query
// for the pass that rings them and for separate-load-compute, which may only cut an order
// that rotation (or something else) will restore.
#pragma once

#include <string>
#include <vector>

#include "sched/ir/kernel.h"

namespace tandem {

// The spaces address-rotation rings (its `space` option).
const std::vector<std::string>& rotatable_spaces();

// A tensor of `loop` as address-rotation sees it: the loop's own body rewrites it every
// iteration at the same address, its first touch in the body is a plain write (no value
// flows from one iteration to the next), and nothing outside the loop touches it. Then
// iteration i may use buffer i mod N, and reuse of a buffer is N iterations apart.
struct RotationCandidate {
  std::vector<InstId> readers, writers;  // the loop's instructions touching it, in program order
  std::string blocker;                   // why it cannot be ringed ("%t is also used outside ..."); empty: it can
  bool ringable() const { return blocker.empty(); }
};

// `order` holds the kernel's instructions in program order, or only those touching `tensor`
// (users_by_tensor: callers ask about many tensors, and a walk of the whole program per
// tensor is quadratic). A write in a loop nested in `loop` blocks the tensor (it belongs to
// that loop), except an accumulation group's begun in `loop`'s body, and, with
// `nested_rewrites`, plain writes that nested loops make before any read of the tensor and
// that cover it exactly once per iteration of `loop` (a strip loaded tile by tile).
RotationCandidate rotation_candidate(const Kernel& k, LoopId loop, int tensor, const std::vector<InstId>& order,
                                     bool nested_rewrites = false);

// For each tensor, the instructions that read or write it, in program order.
std::vector<std::vector<InstId>> users_by_tensor(const Kernel& k);

}  // namespace tandem
