// Spills, as a compiler inserts them (the kernel flag `spill`, docs/models.md "Capacity"):
// where the tensors live in the on-chip buffer overflow it, one that is live there but not used
// there is saved to a DRAM tensor of its own after its last access before that point and
// reloaded, into a tensor of its own, before its next access, until the buffer fits or no
// tensor can go. A tensor loaded whole from DRAM that nothing writes is loaded from there again
// instead, and one whose next access writes all of it is only renamed.
// The Neuron compiler does this when a kernel's live data outgrows SBUF; the NKI front end sets
// the flag on the kernels it traces.
#pragma once

#include <string>
#include <vector>

#include "sched/ir/kernel.h"

namespace tandem {

// Spills tensors of `k` until its on-chip buffer fits; when no spill can make it fit, `k` is
// left as it was (the capacity check then reports it). Returns one line per spill, saying what
// moved, or the one line that says they were undone.
std::vector<std::string> spill_to_fit(Kernel& k);

}  // namespace tandem
