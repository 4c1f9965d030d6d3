// The importer's second half (importer.h): the loops' address registers, what each line
// becomes, the .kir text and the counts.
#include <map>
#include <sstream>

#include "sched/amdgpu/importer.h"
#include "sched/ir/attribute_keys.h"

namespace tandem::amdgpu {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_add_nc(const std::string& m) { return starts_with(m, "v_add_nc_u32"); }

bool writes_vgpr(const AsmInst& in, int v) {
  for (const VgprRange& r : in.vgpr_writes)
    if (r.lo <= v && v <= r.hi) return true;
  return false;
}

bool reads_vgpr(const AsmInst& in, int v) {
  for (const VgprRange& r : in.vgpr_reads)
    if (r.lo <= v && v <= r.hi) return true;
  return false;
}

int single_vgpr(const std::string& operand) {
  std::optional<VgprRange> r = parse_vgpr(operand);
  return r && r->lo == r->hi ? r->lo : -1;
}

// A VGPR's value as a symbol plus a constant, as far as the straight-line code says.
struct Sym {
  std::string sym;
  int64_t c = 0;
  bool operator==(const Sym& o) const { return sym == o.sym && c == o.c; }
};

// The value one instruction (or one half of a VOPD) leaves in its destination, when it is a
// known move, shift or add; VOPD halves are named as the instructions they pair.
std::optional<Sym> linear_result(std::string m, const std::vector<std::string>& o, const std::map<int, Sym>& state) {
  auto value = [&](const std::string& op) -> std::optional<Sym> {
    int v = single_vgpr(op);
    if (v >= 0) {
      auto it = state.find(v);
      return it != state.end() ? it->second : Sym{"v" + std::to_string(v) + "@entry", 0};
    }
    if (std::optional<int64_t> c = parse_int(op)) return Sym{"", *c};
    return std::nullopt;
  };
  if (starts_with(m, "v_dual_")) m = "v_" + m.substr(7);
  if (starts_with(m, "v_mov_b32") && o.size() == 2) return value(o[1]);
  if (is_add_nc(m) && o.size() == 3) {
    std::optional<Sym> a = value(o[1]), b = value(o[2]);
    if (a && b && (a->sym.empty() || b->sym.empty())) return Sym{a->sym + b->sym, a->c + b->c};
  }
  if (starts_with(m, "v_lshlrev_b32") && o.size() == 3) {
    std::optional<int64_t> n = parse_int(o[1]);
    std::optional<Sym> s = value(o[2]);
    if (n && s && *n >= 0 && *n < 32) return Sym{"(" + s->sym + ")<<" + std::to_string(*n), s->c << *n};
  }
  if (m == "v_lshl_add_u32" && o.size() == 4) {
    std::optional<Sym> s = value(o[1]);
    std::optional<int64_t> n = parse_int(o[2]), a = parse_int(o[3]);
    if (s && n && a && *n >= 0 && *n < 32) return Sym{"(" + s->sym + ")<<" + std::to_string(*n), (s->c << *n) + *a};
  }
  return std::nullopt;
}

// The new state of the VGPRs an instruction writes: known values where linear_result knows
// them, a fresh symbol for every other register written.
void step_symbols(const AsmInst& in, int line, bool in_loop, std::map<int, Sym>& state) {
  std::vector<std::pair<int, Sym>> known;
  auto half = [&](const std::string& m, const std::vector<std::string>& o) {
    if (in_loop || !in.modifiers.empty() || o.empty() || single_vgpr(o[0]) < 0) return;
    if (std::optional<Sym> r = linear_result(m, o, state)) known.emplace_back(single_vgpr(o[0]), *r);
  };
  half(in.mnemonic, in.operands);
  if (!in.second_mnemonic.empty()) half(in.second_mnemonic, in.second_operands);
  for (const VgprRange& w : in.vgpr_writes)
    for (int v = w.lo; v <= w.hi; ++v) state[v] = Sym{"@" + std::to_string(line + 1) + ":" + std::to_string(v), 0};
  for (const auto& [v, sym] : known) state[v] = sym;
}

// Each ds_load's address register value (by line), and each loop's base at its label.
struct SymbolicAddresses {
  std::map<int, Sym> at_line;  // line index -> the value of its address VGPR
  std::map<int, Sym> base;     // loop index -> the value of vB at the label
};

SymbolicAddresses symbolic_addresses(const AsmKernel& k) {
  SymbolicAddresses out;
  std::map<int, Sym> state;
  auto value = [&](int v) {
    auto it = state.find(v);
    return it != state.end() ? it->second : Sym{"v" + std::to_string(v) + "@entry", 0};
  };
  for (int i = k.begin; i < k.end; ++i) {
    const AsmLine& l = k.lines[i];
    for (size_t li = 0; li < k.loops.size(); ++li)
      if (k.loops[li].label == i && k.loops[li].base >= 0) out.base[static_cast<int>(li)] = value(k.loops[li].base);
    if (l.type != AsmLine::kInstruction) continue;
    if (l.inst.kind == InstKind::kDsLoad) out.at_line[i] = value(single_vgpr(l.inst.operands[1]));
    step_symbols(l.inst, i, k.roles[i].loop >= 0, state);
  }
  return out;
}

}  // namespace

// v_add_nc_u32 vA, sIV, vB (either order) in the body: vA is the loop's address register
// when nothing else in the body writes vB, nothing reads vA before it, and nothing else
// writes vA but a ds_load through vA, after which no memory instruction addresses through
// vA (a load may overwrite its own address: the add recomputes vA at the top of every
// iteration; what reads vA after the load reads the loaded value, as the IR says).
void find_address_register(AsmKernel& k, AsmLoop& loop) {
  const std::string iv = "s" + std::to_string(loop.iv);
  for (int i = loop.label + 1; i < loop.branch; ++i) {
    const AsmInst& in = k.lines[i].inst;
    if (k.lines[i].type != AsmLine::kInstruction || !is_add_nc(in.mnemonic) || in.operands.size() != 3) continue;
    const int a = single_vgpr(in.operands[0]);
    const int b = in.operands[1] == iv   ? single_vgpr(in.operands[2])
                  : in.operands[2] == iv ? single_vgpr(in.operands[1])
                                         : -1;
    if (a < 0 || b < 0 || !in.modifiers.empty()) continue;
    bool ok = true, overwritten = false;
    for (int j = loop.label + 1; j < loop.branch && ok; ++j) {
      const AsmLine& l = k.lines[j];
      if (j == i || l.type != AsmLine::kInstruction) continue;
      const bool memory = l.inst.kind == InstKind::kDsLoad || l.inst.kind == InstKind::kDsStore ||
                          l.inst.kind == InstKind::kGlobalLoad || l.inst.kind == InstKind::kGlobalStore ||
                          l.inst.kind == InstKind::kVmem || l.inst.kind == InstKind::kLds;
      if ((j < i || (overwritten && memory)) && reads_vgpr(l.inst, a)) ok = false;
      if (writes_vgpr(l.inst, b)) ok = false;
      if (writes_vgpr(l.inst, a)) {
        if (j < i || l.inst.kind != InstKind::kDsLoad || single_vgpr(l.inst.operands[1]) != a) ok = false;
        overwritten = true;
      }
    }
    if (!ok) continue;
    int step_line = -1;
    for (int j = loop.label + 1; j < loop.branch; ++j)
      if (k.lines[j].type == AsmLine::kInstruction && !k.lines[j].inst.operands.empty() &&
          k.lines[j].inst.operands[0] == iv && k.lines[j].inst.kind == InstKind::kSalu &&
          !starts_with(k.lines[j].inst.mnemonic, "s_cmp"))
        step_line = j;
    loop.addr = a;
    loop.base = b;
    loop.addr_line = i;
    loop.bias = loop.iv_init + (step_line >= 0 && step_line < i ? loop.iv_step : 0);
    return;
  }
}

// What each line of the function becomes: IR, folded into its loop, or nothing.
void assign_roles(AsmKernel& k) {
  k.roles.assign(k.lines.size(), LineRole{});
  for (int i = k.begin; i < k.end; ++i)
    if (k.lines[i].type == AsmLine::kInstruction) k.roles[i].role = Role::kIr;
  for (size_t li = 0; li < k.loops.size(); ++li) {
    const AsmLoop& loop = k.loops[li];
    const std::string iv = "s" + std::to_string(loop.iv);
    for (int i = loop.label + 1; i <= loop.branch; ++i) {
      LineRole& r = k.roles[i];
      r.loop = static_cast<int>(li);
      if (r.role != Role::kIr) continue;
      const AsmInst& in = k.lines[i].inst;
      Absorbed a = Absorbed::kNone;
      const bool iv_line = in.kind == InstKind::kSalu && !in.operands.empty() && in.operands[0] == iv;
      if (i == loop.branch || iv_line) a = Absorbed::kLoopControl;
      if (i == loop.addr_line) a = Absorbed::kAddress;
      if (in.kind == InstKind::kWaitcnt && waitcnt_field(in, "lgkmcnt") && !waitcnt_field(in, "vmcnt") &&
          !waitcnt_field(in, "expcnt"))
        a = Absorbed::kWaitcnt;
      if (in.mnemonic == "s_delay_alu" || in.mnemonic == "s_clause") a = Absorbed::kHint;
      if (in.mnemonic == "v_nop") a = Absorbed::kHazard;
      if (a != Absorbed::kNone) r = LineRole{Role::kAbsorbed, a, static_cast<int>(li)};
    }
  }
}

namespace {

std::string group(const VgprRange& r) { return r.lo == r.hi ? "v[" + std::to_string(r.lo) + "]" : r.str(); }

std::string address(int reg, int64_t offset) {
  return "v" + std::to_string(reg) + (offset < 0 ? " - " : " + ") + std::to_string(offset < 0 ? -offset : offset);
}

std::string list(const std::vector<VgprRange>& regs) {
  std::string s;
  for (const VgprRange& r : regs) s += (s.empty() ? "" : ", ") + group(r);
  return s;
}

std::string ir_instruction(const AsmKernel& k, int i, const std::map<int, LdsAddress>& lds) {
  const AsmInst& in = k.lines[i].inst;
  const std::string name = "%" + AsmKernel::ir_name(i) + " = ";
  auto v = [&](size_t n) { return group(*parse_vgpr(in.operands[n])); };
  auto lo = [&](size_t n) { return parse_vgpr(in.operands[n])->lo; };
  switch (in.kind) {
    case InstKind::kWmma:  // an operand tile is the register group it is read from
      return name + in.mnemonic + " " + v(0) + " <- " + v(1) + ", " + v(2) + ", " + v(3) + " {" + attr::kATile +
             " = \"" + v(1) + "\", " + attr::kBTile + " = \"" + v(2) + "\"}";
    case InstKind::kDsLoad:
      return name + in.mnemonic + " " + v(0) + " <- %lds[" + address(lds.at(i).reg, lds.at(i).offset) + "]";
    case InstKind::kDsStore:
      return name + in.mnemonic + " %lds[" + address(lo(0), in.offset) + "] <- " + v(1);
    case InstKind::kGlobalLoad:
      return name + in.mnemonic + " " + v(0) + " <- %global[" + address(lo(1), in.offset) + "]";
    case InstKind::kGlobalStore:
      return name + in.mnemonic + " %global[" + address(lo(0), in.offset) + "] <- " + v(1);
    case InstKind::kWaitcnt:
    case InstKind::kBarrier:  // the attributes end an instruction without operands
      return name + in.mnemonic + " {" + attr::kMnemonic + " = \"" + in.mnemonic + "\"}";
    default:
      break;
  }
  std::string s = name + opaque_opcode(in.kind);
  if (!in.vgpr_writes.empty()) s += " " + list(in.vgpr_writes);
  if (!in.vgpr_reads.empty()) s += " <- " + list(in.vgpr_reads);
  s += " {" + std::string(attr::kMnemonic) + " = \"" + in.mnemonic + "\"";
  if (const char* effect = control_effect(in)) s += std::string(", ") + attr::kControl + " = \"" + effect + "\"";
  return s + "}";
}

}  // namespace

std::map<int, LdsAddress> lds_addresses(const AsmKernel& k) {
  const SymbolicAddresses syms = symbolic_addresses(k);
  std::map<int, LdsAddress> out;
  for (int i = k.begin; i < k.end; ++i) {
    const AsmLine& l = k.lines[i];
    if (l.type != AsmLine::kInstruction || l.inst.kind != InstKind::kDsLoad) continue;
    LdsAddress a{single_vgpr(l.inst.operands[1]), l.inst.offset};
    for (size_t li = 0; li < k.loops.size() && k.roles[i].loop < 0; ++li) {
      const AsmLoop& loop = k.loops[li];
      if (i < loop.preheader || i >= loop.label || loop.addr < 0) continue;
      const Sym& base = syms.base.at(static_cast<int>(li));
      const Sym& mine = syms.at_line.at(i);
      if (mine.sym == base.sym) a = LdsAddress{loop.addr, l.inst.offset + mine.c - base.c - loop.bias};
    }
    out[i] = a;
  }
  return out;
}

std::string kir_text(const AsmKernel& k) {
  const std::map<int, LdsAddress> lds = lds_addresses(k);
  std::ostringstream os;
  os << "# Imported by tandem import-amdgpu from " << k.file << " (docs/amdgpu.md): instruction %L<n> is line n.\n";
  os << "kernel @" << k.name << " target = \"gfx1100\" {" << attr::kAsmHash << " = \"" << std::hex << k.hash << std::dec
     << "\"} {\n";
  os << "  tensor %lds : lds[65536] u8\n";
  os << "  tensor %global : global[4294967296] u8\n\n";
  int open = -1;
  for (int i = k.begin; i < k.end; ++i) {
    const LineRole& r = k.roles[i];
    if (open >= 0 && r.loop != open) {
      os << "  }\n";
      open = -1;
    }
    if (r.loop >= 0 && open < 0) {
      const AsmLoop& loop = k.loops[r.loop];
      open = r.loop;
      os << "  loop %k" << r.loop << " = 0 to " << loop.trip << " {";
      if (loop.addr >= 0) os << attr::kAdvance << " = \"v" << loop.addr << " += " << loop.iv_step << "\", ";
      os << attr::kAsmLabel << " = \"" << loop.name << "\"} {\n";
    }
    if (r.role != Role::kIr) continue;
    os << (open >= 0 ? "    " : "  ") << ir_instruction(k, i, lds) << "\n";
  }
  if (open >= 0) os << "  }\n";
  os << "}\n";
  return os.str();
}

ImportStats import_stats(const AsmKernel& k) {
  static const char* kAbsorbedNames[] = {"", "loop_control", "address", "waitcnt", "hint", "hazard"};
  ImportStats s;
  s.loops = static_cast<int>(k.loops.size());
  for (int i = k.begin; i < k.end; ++i) {
    const LineRole& r = k.roles[i];
    if (r.role == Role::kNone) continue;
    ++s.instructions;
    const AsmInst& in = k.lines[i].inst;
    if (r.role == Role::kAbsorbed)
      ++s.absorbed[kAbsorbedNames[static_cast<int>(r.absorbed)]];
    else if (*opaque_opcode(in.kind) != '\0')
      ++s.opaque[opaque_opcode(in.kind)];
    else
      ++s.modelled[in.mnemonic];
  }
  return s;
}

std::string describe(const ImportStats& s) {
  std::ostringstream os;
  auto section = [&](const char* title, const std::map<std::string, int>& m) {
    int total = 0;
    for (const auto& [name, n] : m) total += n;
    os << title << ": " << total << "\n";
    for (const auto& [name, n] : m) os << "  " << name << ": " << n << "\n";
  };
  os << "instructions: " << s.instructions << "\n";
  os << "loops: " << s.loops << "\n";
  section("modelled", s.modelled);
  section("folded_into_loops", s.absorbed);
  section("opaque", s.opaque);
  return os.str();
}

}  // namespace tandem::amdgpu
