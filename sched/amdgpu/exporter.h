// `tandem export-amdgpu`: a kernel imported by import-amdgpu (and reordered by wmma-reorder)
// written back into the assembly file it came from (docs/amdgpu.md, "The export contract").
#pragma once

#include <string>

#include "sched/amdgpu/waitcnt.h"
#include "sched/ir/kernel.h"

namespace tandem::amdgpu {

struct ExportStats {
  int loops_changed = 0;
  int lines_moved = 0;        // body lines at another place
  int offsets_changed = 0;    // ds_loads whose offset changed (migrated across the back edge)
  int preheader_added = 0;    // new prefetch lines before a loop
  int preheader_removed = 0;  // prefetch lines removed before a loop
  int hints_dropped = 0;      // s_clause lines of reordered bodies
  int delays_dropped = 0;     // s_delay_alu lines of reordered bodies that would tie other instructions
  int nops_dropped = 0;       // v_nop lines of reordered bodies
  int nops_inserted = 0;      // v_nop lines before WMMAs the new order puts in a hazard
  WaitcntStats waitcnts;
};

// The original file's text with `kernel`'s order: each line kept as written except the
// reordered loop bodies, the migrated ds_loads' offsets, the added and removed preheader
// ds_loads and the lgkmcnt waits. Throws Error when `kernel` was not imported from this text
// (its asm_hash), or changes what the export cannot write back: another instruction than a
// ds_load added or removed, a straight-line order changed, a virtual register, a loop added.
std::string export_amdgpu(const Kernel& kernel, const std::string& asm_text, const std::string& asm_file,
                          ExportStats& stats);

// The difference between two kernels' instruction sequences with names, comments, the
// asm_hash and the straight-line s_waitcnt statements (the export may insert waits) set
// aside, in words; empty when they are equal. The export's round trip check.
std::string structural_difference(const Kernel& a, const Kernel& b);

}  // namespace tandem::amdgpu
