// gfx11 assembly as LLVM prints it, read line by line: labels, directives and instructions
// with their operands, the VGPRs each instruction reads and writes, and its latency class.
// Shared by the importer and the exporter (docs/amdgpu.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/support/error.h"

namespace tandem::amdgpu {

// v[lo:hi], inclusive.
struct VgprRange {
  int lo = 0;
  int hi = 0;
  bool overlaps(const VgprRange& o) const { return lo <= o.hi && o.lo <= hi; }
  bool operator==(const VgprRange& o) const { return lo == o.lo && hi == o.hi; }
  std::string str() const;  // "v[20:23]"
};

// What an instruction is to the importer: a kind Tandem models, or an opaque latency class.
enum class InstKind {
  kWmma,         // v_wmma_*
  kDsLoad,       // ds_load_bN vdst, vaddr [offset:N]
  kDsStore,      // ds_store_bN vaddr, vdata [offset:N]
  kGlobalLoad,   // global_load_bN vdst, vaddr, saddr|off [offset:N]
  kGlobalStore,  // global_store_bN vaddr, vdata, saddr|off [offset:N]
  kWaitcnt,      // s_waitcnt
  kBarrier,      // s_barrier
  kValu,         // opaque: other vector ALU
  kTrans,        // opaque: transcendental vector ALU
  kSalu,         // opaque: scalar ALU
  kSmem,         // opaque: scalar memory (s_load_*, s_buffer_load_*)
  kVmem,         // opaque: other vector memory (global_*, buffer_*, flat_*, scratch_*, image_*)
  kLds,          // opaque: other LDS instructions
  kBranch,       // opaque: branches and calls
  kOther,        // opaque: program control, hints, messages
};

// The class name an opaque kind prints as (`opaque_valu`), or "" for a modelled kind.
const char* opaque_opcode(InstKind kind);

struct AsmInst {
  std::string mnemonic;
  std::vector<std::string> operands;   // top level, without the trailing modifiers
  std::vector<std::string> modifiers;  // offset:16, glc, ...
  std::vector<VgprRange> vgpr_writes;
  std::vector<VgprRange> vgpr_reads;
  InstKind kind = InstKind::kOther;
  int64_t offset = 0;  // the offset modifier (memory instructions), 0 when absent
  // A VOPD line's second half (`:: v_dual_mov_b32 v1, 0`); empty mnemonic otherwise.
  std::string second_mnemonic;
  std::vector<std::string> second_operands;
};

struct AsmLine {
  enum Type { kBlank, kDirective, kLabel, kInstruction };
  Type type = kBlank;
  std::string text;   // the line as written, without its end of line
  std::string label;  // kLabel: the name before ':'
  AsmInst inst;       // kInstruction
  SourceLoc loc;      // file:line:col of the first character that is not blank
};

// Reads every line of `text`; `file` names it in locations.
std::vector<AsmLine> read_asm(const std::string& text, const std::string& file);

// How the instruction changes what runs after it: "branch" (a branch, a call or a jump),
// "exec" (it writes EXEC, so later vector instructions run on other lanes), or nothing.
const char* control_effect(const AsmInst& inst);

// v12, v[12:15] or v[12] (with -, |..| or neg()/abs() around it); nothing for anything else.
std::optional<VgprRange> parse_vgpr(const std::string& operand);

// s12 (a single SGPR); nothing for anything else.
std::optional<int> parse_sgpr(const std::string& operand);

// An integer literal: decimal, 0x hexadecimal, negative; nothing for anything else.
std::optional<int64_t> parse_int(const std::string& operand);

// The count of one s_waitcnt field (vmcnt, expcnt, lgkmcnt), nothing when the instruction
// does not name it.
std::optional<int> waitcnt_field(const AsmInst& inst, const std::string& field);

}  // namespace tandem::amdgpu
