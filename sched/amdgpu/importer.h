// `tandem import-amdgpu`: gfx11 assembly as LLVM emits it, read into the kernel IR for the
// gfx1100 model (docs/amdgpu.md). The analysis (`analyse_asm`) is shared with the exporter,
// which re-reads the original file to put the reordered kernel back into it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/amdgpu/asm_reader.h"

namespace tandem::amdgpu {

// What one line of the kernel function became.
enum class Role {
  kNone,      // not an instruction: a label, a directive, a blank line, or outside the function
  kIr,        // an IR instruction named %L<line>
  kAbsorbed,  // folded into its loop: see Absorbed
};

enum class Absorbed {
  kNone,
  kLoopControl,  // the induction scalar's step, its s_cmp and the back branch: the loop's bounds
  kAddress,      // v_add_nc_u32 vA, sIV, vB: the loop's address register (its `advance`)
  kWaitcnt,      // s_waitcnt lgkmcnt(N) in a loop body: recomputed by the exporter
  kHint,         // s_delay_alu and s_clause in a loop body: scheduling hints
  kHazard,       // v_nop in a loop body: WMMA hazard padding, recomputed by the exporter
};

// A single-block counted loop: label, body, s_cmp + s_cbranch_scc back to the label.
struct AsmLoop {
  int label = -1;      // index (in AsmKernel::lines) of the label line
  int branch = -1;     // index of the back branch
  int preheader = -1;  // index of the first line of its preheader (the previous loop's end or the function's start)
  std::string name;    // the label, ".LBB0_1"
  int iv = -1;         // the induction SGPR
  int64_t iv_init = 0;
  int64_t iv_step = 0;
  int64_t trip = 0;
  int addr = -1;     // the address VGPR vA (v_add_nc_u32 vA, sIV, vB), -1 when there is none
  int base = -1;     // vB
  int64_t bias = 0;  // vA at iteration 0 is vB + bias
  int addr_line = -1;
};

struct LineRole {
  Role role = Role::kNone;
  Absorbed absorbed = Absorbed::kNone;
  int loop = -1;  // the loop whose body holds the line
};

struct AsmKernel {
  std::string file;
  std::string name;  // the kernel function's label
  std::vector<AsmLine> lines;
  std::vector<LineRole> roles;
  std::vector<AsmLoop> loops;
  int begin = 0;  // the function's label line
  int end = 0;    // one past its last line
  uint64_t hash = 0;

  // The IR name of an instruction line: "L<line number>".
  static std::string ir_name(int index) { return "L" + std::to_string(index + 1); }
};

// Reads the kernel function (the first label that does not start with '.') and its loops.
// Throws Error, located at the line, for what it cannot read: an unknown instruction, a
// modelled instruction with operands it cannot read, a loop of another shape, a trip count
// it cannot find.
AsmKernel analyse_asm(const std::string& text, const std::string& file);

// Each ds_load's address as the IR writes it (by line index): a VGPR and an offset. In a
// loop's preheader, a load through a register holding the loop's base plus a constant is
// written through the loop's address register, so that it pairs with the body's copies.
struct LdsAddress {
  int reg = -1;
  int64_t offset = 0;
  bool operator==(const LdsAddress& o) const { return reg == o.reg && offset == o.offset; }
};
std::map<int, LdsAddress> lds_addresses(const AsmKernel& k);

// The kernel in the .kir text format, for the gfx1100 model.
std::string kir_text(const AsmKernel& k);

// Counts of what became of every instruction line (`--stats`): modelled by opcode, folded
// into loops by reason, opaque by latency class. They add up to `instructions`.
struct ImportStats {
  int instructions = 0;
  int loops = 0;
  std::map<std::string, int> modelled;
  std::map<std::string, int> absorbed;
  std::map<std::string, int> opaque;
};
ImportStats import_stats(const AsmKernel& k);
std::string describe(const ImportStats& s);

// FNV-1a of the file's text: the kernel's `asm_hash`, which the exporter checks.
uint64_t text_hash(const std::string& text);

}  // namespace tandem::amdgpu
