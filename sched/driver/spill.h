// Spills, as a compiler inserts them (the kernel flag `spill`, docs/models.md "Capacity"):
// where the tensors live in the on-chip buffer overflow it, one that is live there but not used
// there is saved to a DRAM tensor of its own after its last access before that point and
// reloaded, into a tensor of its own, before its next access, until the buffer fits or no
// tensor can go.
// The Neuron compiler does this when a kernel's live data outgrows SBUF; the NKI front end sets
// the flag on the kernels it traces.
#pragma once

#include <string>
#include <vector>

#include "sched/ir/kernel.h"

namespace tandem {

// Spills tensors of `k` until its on-chip buffer fits or no live tensor can be spilled (the
// capacity check then reports what is left). Returns one line per spill, saying what moved.
std::vector<std::string> spill_to_fit(Kernel& k);

}  // namespace tandem
