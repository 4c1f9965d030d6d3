// s_waitcnt lgkmcnt and vmcnt for an instruction order: the exporter's rule for when a
// register written by an LDS or a vector memory load may be read or written
// (docs/amdgpu.md, "The export contract").
#pragma once

#include <string>
#include <vector>

#include "sched/amdgpu/importer.h"

namespace tandem::amdgpu {

struct WaitcntStats {
  int inserted = 0;     // new s_waitcnt lgkmcnt lines
  int tightened = 0;    // s_waitcnt lines whose lgkmcnt went down (or was added)
  int vm_inserted = 0;  // the same for vmcnt
  int vm_tightened = 0;
};

// Makes the lgkmcnt waits, then the vmcnt waits, of `k`'s function enough for its order,
// line by line: an instruction that reads (or, unless it is itself an in-order operation of
// that counter, writes) a VGPR that an outstanding load writes gets a wait for it, by
// lowering the count of an s_waitcnt just before it or by a new `s_waitcnt lgkmcnt(N)` or
// `s_waitcnt vmcnt(N)` line. Waits that are already enough stay as
// they are; loops are walked until their waits hold for the first and the steady iteration.
// Returns the text of the whole file.
std::string fix_waitcnts(const AsmKernel& k, WaitcntStats& stats);

// Inserts a `v_nop` before each WMMA that reads, as its A or B matrix, registers the WMMA
// just before it writes, with no other VALU instruction between them (gfx11's WMMA hazard).
// A loop body is walked from its preheader and from its own end. Counts the lines inserted
// in `inserted`; returns the text of the whole file.
std::string fix_wmma_hazards(const AsmKernel& k, int& inserted);

}  // namespace tandem::amdgpu
