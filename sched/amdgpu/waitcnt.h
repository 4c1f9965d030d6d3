// s_waitcnt lgkmcnt for an instruction order: the exporter's one rule for when a register
// written by an LDS load may be read (docs/amdgpu.md, "The export contract").
#pragma once

#include <string>
#include <vector>

#include "sched/amdgpu/importer.h"

namespace tandem::amdgpu {

struct WaitcntStats {
  int inserted = 0;   // new s_waitcnt lines
  int tightened = 0;  // s_waitcnt lines whose lgkmcnt went down
};

// Makes the lgkmcnt waits of `k`'s function enough for its order, line by line: an
// instruction that reads (or, unless it is itself an LDS load, writes) a VGPR that an
// outstanding LDS load writes gets a wait for it, by lowering the lgkmcnt of an s_waitcnt just
// before it or by a new `s_waitcnt lgkmcnt(N)` line. Waits that are already enough stay as
// they are; loops are walked until their waits hold for the first and the steady iteration.
// Returns the text of the whole file.
std::string fix_waitcnts(const AsmKernel& k, WaitcntStats& stats);

}  // namespace tandem::amdgpu
