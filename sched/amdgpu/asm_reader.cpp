// The line reader of gfx11 assembly (asm_reader.h).
#include "sched/amdgpu/asm_reader.h"

#include <cctype>
#include <cstdlib>

namespace tandem::amdgpu {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The line without its comment: `;` starts one, as `//` does, outside quotes.
std::string strip_comment(const std::string& line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (quoted) continue;
    if (line[i] == ';' || (line[i] == '/' && i + 1 < line.size() && line[i + 1] == '/')) return line.substr(0, i);
  }
  return line;
}

// Splits `s` at the characters `separates` accepts outside brackets and parentheses, dropping
// blanks around each piece and empty pieces.
template <class Separates>
std::vector<std::string> split_outside_brackets(const std::string& s, Separates separates) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  const auto flush = [&] {
    if (!trim(cur).empty()) out.push_back(trim(cur));
    cur.clear();
  };
  for (char c : s) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (depth == 0 && separates(c))
      flush();
    else
      cur += c;
  }
  flush();
  return out;
}

// Splits at commas outside brackets and parentheses.
std::vector<std::string> split_top(const std::string& s) {
  return split_outside_brackets(s, [](char c) { return c == ','; });
}

// Splits at blanks outside brackets and parentheses.
std::vector<std::string> split_blanks(const std::string& s) {
  return split_outside_brackets(s, [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

InstKind classify(const std::string& m) {
  if (starts_with(m, "v_wmma_")) return InstKind::kWmma;
  if (starts_with(m, "ds_load_b")) return InstKind::kDsLoad;
  if (starts_with(m, "ds_store_b")) return InstKind::kDsStore;
  if (starts_with(m, "ds_")) return InstKind::kLds;
  if (starts_with(m, "global_load_b")) return InstKind::kGlobalLoad;
  if (starts_with(m, "global_store_b")) return InstKind::kGlobalStore;
  if (starts_with(m, "global_") || starts_with(m, "buffer_") || starts_with(m, "flat_") || starts_with(m, "scratch_") ||
      starts_with(m, "image_"))
    return InstKind::kVmem;
  if (m == "s_waitcnt") return InstKind::kWaitcnt;
  if (m == "s_barrier") return InstKind::kBarrier;
  if (starts_with(m, "s_load_") || starts_with(m, "s_buffer_load_")) return InstKind::kSmem;
  if (starts_with(m, "s_cbranch_") || m == "s_branch" || starts_with(m, "s_setpc") || starts_with(m, "s_swappc") ||
      starts_with(m, "s_call"))
    return InstKind::kBranch;
  if (m == "s_endpgm" || m == "s_nop" || m == "s_delay_alu" || m == "s_clause" || starts_with(m, "s_sendmsg") ||
      starts_with(m, "s_sleep") || starts_with(m, "s_setprio") || starts_with(m, "s_waitcnt_") ||
      starts_with(m, "s_wait_") || starts_with(m, "s_inst_prefetch") || starts_with(m, "s_code_end"))
    return InstKind::kOther;
  if (starts_with(m, "s_")) return InstKind::kSalu;
  for (const char* t : {"v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"})
    if (starts_with(m, t)) return InstKind::kTrans;
  if (starts_with(m, "v_")) return InstKind::kValu;
  return InstKind::kOther;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool has_modifier(const std::vector<std::string>& modifiers, const char* name) {
  for (const std::string& m : modifiers)
    if (m == name) return true;
  return false;
}

// Memory instructions without a result, branches and v_cmpx (it writes EXEC) name no
// destination first; every other instruction does. An atomic returns its result (a
// destination first) only with glc; an LDS instruction writes a VGPR only when it loads,
// reads, returns (_rtn), permutes, swizzles, appends or consumes; a buffer load into the
// LDS (lds) writes none.
bool first_operand_is_written(InstKind kind, const std::string& mnemonic, const std::vector<std::string>& modifiers) {
  switch (kind) {
    case InstKind::kDsStore:
    case InstKind::kGlobalStore:
    case InstKind::kBranch:
    case InstKind::kWaitcnt:
    case InstKind::kBarrier:
    case InstKind::kOther:
      return false;
    case InstKind::kVmem:
      if (contains(mnemonic, "atomic")) return has_modifier(modifiers, "glc");
      return !contains(mnemonic, "store") && !contains(mnemonic, "write") && !has_modifier(modifiers, "lds");
    case InstKind::kLds:
      for (const char* w : {"load", "read", "_rtn", "permute", "swizzle", "append", "consume"})
        if (contains(mnemonic, w)) return true;
      return false;
    default:
      return !starts_with(mnemonic, "v_cmpx");
  }
}

// Does the instruction leave part of its destination as it was: some lanes (v_writelane, a
// DPP row or bank mask), one half of each register (d16 loads, op_sel)? Its destination is
// then read as well as written.
bool writes_part(const std::string& mnemonic, const std::vector<std::string>& modifiers) {
  if (starts_with(mnemonic, "v_writelane") || contains(mnemonic, "_d16") || contains(mnemonic, "_dpp")) return true;
  for (const std::string& m : modifiers)
    for (const char* p : {"op_sel", "row_", "bank_mask", "quad_perm", "dpp8", "wave_", "bound_ctrl"})
      if (starts_with(m, p)) return true;
  return false;
}

// One half of an instruction (a VOPD line has two): its operands' VGPRs. The indexed moves
// (v_movrel*) reach any VGPR from their operand on (M0 adds to the register number), and a
// call or a jump to a computed address (s_swappc, s_setpc, s_call) may read any VGPR.
void add_vgprs(const std::string& mnemonic, const std::vector<std::string>& operands,
               const std::vector<std::string>& modifiers, InstKind kind, AsmInst& inst) {
  const bool first_written = first_operand_is_written(kind, mnemonic, modifiers);
  const bool indexed = starts_with(mnemonic, "v_movrel");
  for (size_t i = 0; i < operands.size(); ++i) {
    std::optional<VgprRange> r = parse_vgpr(operands[i]);
    if (!r) continue;
    if (indexed) r->hi = 255;
    if (i == 0 && first_written) {
      inst.vgpr_writes.push_back(*r);
      if (indexed || writes_part(mnemonic, modifiers)) inst.vgpr_reads.push_back(*r);
    } else {
      inst.vgpr_reads.push_back(*r);
    }
  }
  if (starts_with(mnemonic, "s_swappc") || starts_with(mnemonic, "s_setpc") || starts_with(mnemonic, "s_call"))
    inst.vgpr_reads.push_back(VgprRange{0, 255});
}

AsmInst parse_instruction(const std::string& code) {
  AsmInst inst;
  std::vector<std::string> halves;
  size_t dual = code.find("::");
  if (dual == std::string::npos) {
    halves.push_back(code);
  } else {
    halves.push_back(code.substr(0, dual));
    halves.push_back(code.substr(dual + 2));
  }
  for (size_t h = 0; h < halves.size(); ++h) {
    const std::string half = trim(halves[h]);
    size_t sp = half.find_first_of(" \t");
    const std::string mnemonic = half.substr(0, sp);
    std::vector<std::string> operands =
        sp == std::string::npos ? std::vector<std::string>{} : split_top(half.substr(sp));
    std::vector<std::string> modifiers;
    if (!operands.empty()) {
      std::vector<std::string> last = split_blanks(operands.back());
      operands.back() = last.empty() ? "" : last[0];
      modifiers.assign(last.begin() + (last.empty() ? 0 : 1), last.end());
    }
    if (h == 0) {
      inst.mnemonic = mnemonic;
      inst.kind = classify(mnemonic);
      inst.operands = operands;
      inst.modifiers = modifiers;
    } else {
      inst.second_mnemonic = mnemonic;
      inst.second_operands = operands;
    }
    add_vgprs(mnemonic, operands, h == 0 ? modifiers : std::vector<std::string>{}, classify(mnemonic), inst);
  }
  for (const std::string& m : inst.modifiers)
    if (starts_with(m, "offset:"))
      if (std::optional<int64_t> v = parse_int(m.substr(7))) inst.offset = *v;
  return inst;
}

}  // namespace

std::string VgprRange::str() const { return "v[" + std::to_string(lo) + ":" + std::to_string(hi) + "]"; }

const char* opaque_opcode(InstKind kind) {
  switch (kind) {
    case InstKind::kValu:
      return "opaque_valu";
    case InstKind::kTrans:
      return "opaque_trans";
    case InstKind::kSalu:
      return "opaque_salu";
    case InstKind::kSmem:
      return "opaque_smem";
    case InstKind::kVmem:
      return "opaque_vmem";
    case InstKind::kLds:
      return "opaque_lds";
    case InstKind::kBranch:
      return "opaque_branch";
    case InstKind::kOther:
      return "opaque_other";
    default:
      return "";
  }
}

const char* control_effect(const AsmInst& inst) {
  if (inst.kind == InstKind::kBranch) return "branch";
  if (contains(inst.mnemonic, "saveexec") || starts_with(inst.mnemonic, "v_cmpx")) return "exec";
  if (!inst.operands.empty() && starts_with(inst.operands[0], "exec") &&
      (inst.kind == InstKind::kSalu || inst.kind == InstKind::kValu))
    return "exec";
  return nullptr;
}

std::optional<int64_t> parse_int(const std::string& operand) {
  std::string s = trim(operand);
  if (s.empty()) return std::nullopt;
  bool neg = s[0] == '-';
  if (neg) s = s.substr(1);
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  const bool hex = starts_with(s, "0x") || starts_with(s, "0X");
  long long v = std::strtoll(hex ? s.c_str() + 2 : s.c_str(), &end, hex ? 16 : 10);
  if (*end != '\0' || (hex && s.size() == 2)) return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

std::optional<VgprRange> parse_vgpr(const std::string& operand) {
  std::string s = trim(operand);
  for (const char* wrap : {"neg(", "abs(", "sext("})
    if (starts_with(s, wrap) && !s.empty() && s.back() == ')')
      s = s.substr(std::string(wrap).size(), s.size() - 1 - std::string(wrap).size());
  while (!s.empty() && (s[0] == '-' || s[0] == '|')) s = s.substr(1);
  while (!s.empty() && s.back() == '|') s.pop_back();
  if (s.size() < 2 || s[0] != 'v') return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(s[1]))) {
    std::optional<int64_t> n = parse_int(s.substr(1));
    if (!n || *n > 255) return std::nullopt;
    return VgprRange{static_cast<int>(*n), static_cast<int>(*n)};
  }
  if (s[1] != '[' || s.back() != ']') return std::nullopt;
  const std::string inner = s.substr(2, s.size() - 3);
  size_t colon = inner.find(':');
  std::optional<int64_t> lo = parse_int(inner.substr(0, colon));
  std::optional<int64_t> hi = colon == std::string::npos ? lo : parse_int(inner.substr(colon + 1));
  if (!lo || !hi || *lo > *hi || *hi > 255) return std::nullopt;
  return VgprRange{static_cast<int>(*lo), static_cast<int>(*hi)};
}

std::optional<int> parse_sgpr(const std::string& operand) {
  const std::string s = trim(operand);
  if (s.size() < 2 || s[0] != 's' || !std::isdigit(static_cast<unsigned char>(s[1]))) return std::nullopt;
  std::optional<int64_t> n = parse_int(s.substr(1));
  if (!n || *n > 105) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<int> waitcnt_field(const AsmInst& inst, const std::string& field) {
  std::vector<std::string> parts = inst.operands;
  parts.insert(parts.end(), inst.modifiers.begin(), inst.modifiers.end());
  for (const std::string& p : parts) {
    for (const std::string& tok : split_blanks(p)) {
      if (!starts_with(tok, (field + "(").c_str()) || tok.back() != ')') continue;
      std::optional<int64_t> v = parse_int(tok.substr(field.size() + 1, tok.size() - field.size() - 2));
      if (v) return static_cast<int>(*v);
    }
  }
  return std::nullopt;
}

std::vector<AsmLine> read_asm(const std::string& text, const std::string& file) {
  std::vector<AsmLine> out;
  const char* interned = intern_file_name(file);
  size_t pos = 0;
  int number = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    AsmLine line;
    line.text = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++number;
    const std::string code = strip_comment(line.text);
    size_t first = code.find_first_not_of(" \t");
    line.loc = SourceLoc{interned, number, first == std::string::npos ? 1 : static_cast<int>(first) + 1};
    const std::string t = trim(code);
    if (t.empty()) {
      line.type = AsmLine::kBlank;
    } else if (t.back() == ':' && t.find_first_of(" \t") == std::string::npos) {
      line.type = AsmLine::kLabel;
      line.label = t.substr(0, t.size() - 1);
    } else if (t[0] == '.') {
      line.type = AsmLine::kDirective;
    } else {
      line.type = AsmLine::kInstruction;
      line.inst = parse_instruction(t);
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace tandem::amdgpu
