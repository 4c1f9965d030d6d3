// The importer (importer.h): the kernel function, its loops, what each line becomes, the .kir.
#include "sched/amdgpu/importer.h"

#include <sstream>

namespace tandem::amdgpu {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

constexpr int64_t kMaxTrip = int64_t{1} << 24;

// Every gfx11 instruction starts with one of these; a line that does not is not assembly.
bool known_prefix(const std::string& m) {
  for (const char* p : {"s_", "v_", "ds_", "global_", "buffer_", "flat_", "scratch_", "image_", "exp"})
    if (starts_with(m, p)) return true;
  return false;
}

[[noreturn]] void fail(const AsmLine& line, const std::string& what) { throw Error(line.loc, what); }

// A modelled instruction must have the operands its IR form names.
void check_operands(const AsmLine& line) {
  const AsmInst& in = line.inst;
  auto need = [&](size_t i, const char* what) {
    if (in.operands.size() <= i || !parse_vgpr(in.operands[i]))
      fail(line, "cannot read '" + in.mnemonic + "': operand " + std::to_string(i + 1) + " must be " + what);
  };
  switch (in.kind) {
    case InstKind::kWmma:
      for (size_t i = 0; i < 4; ++i) need(i, "a VGPR group");
      break;
    case InstKind::kDsLoad:
      need(0, "the destination VGPRs");
      need(1, "the address VGPR");
      break;
    case InstKind::kDsStore:
      need(0, "the address VGPR");
      need(1, "the data VGPRs");
      break;
    case InstKind::kGlobalLoad:
      need(0, "the destination VGPRs");
      need(1, "the address VGPRs");
      break;
    case InstKind::kGlobalStore:
      need(0, "the address VGPRs");
      need(1, "the data VGPRs");
      break;
    default:
      break;
  }
}

// The function: from the first label not starting with '.' to the next such label or the
// end-of-function label LLVM prints (.Lfunc_end0).
void find_function(AsmKernel& k) {
  const int n = static_cast<int>(k.lines.size());
  k.begin = -1;
  for (int i = 0; i < n && k.begin < 0; ++i)
    if (k.lines[i].type == AsmLine::kLabel && k.lines[i].label[0] != '.') k.begin = i;
  if (k.begin < 0)
    throw Error(SourceLoc{intern_file_name(k.file), 1, 1}, "no kernel function: no label that does not start with '.'");
  k.name = k.lines[k.begin].label;
  k.end = n;
  for (int i = k.begin + 1; i < n; ++i) {
    const AsmLine& l = k.lines[i];
    if (l.type == AsmLine::kLabel && (l.label[0] != '.' || starts_with(l.label, ".Lfunc_end"))) {
      k.end = i;
      break;
    }
  }
  for (int i = k.begin; i < k.end; ++i) {
    const AsmLine& l = k.lines[i];
    if (l.type != AsmLine::kInstruction) continue;
    if (!known_prefix(l.inst.mnemonic)) fail(l, "unknown instruction '" + printable(l.inst.mnemonic) + "'");
    check_operands(l);
  }
}

int find_label(const AsmKernel& k, const std::string& name) {
  for (int i = k.begin; i < k.end; ++i)
    if (k.lines[i].type == AsmLine::kLabel && k.lines[i].label == name) return i;
  return -1;
}

// The loop of a back branch: one block, no other label or branch inside.
AsmLoop loop_shape(const AsmKernel& k, int branch, int label) {
  const AsmLine& b = k.lines[branch];
  AsmLoop loop;
  loop.label = label;
  loop.branch = branch;
  loop.name = k.lines[label].label;
  for (int i = label + 1; i < branch; ++i) {
    const AsmLine& l = k.lines[i];
    if (l.type == AsmLine::kLabel)
      fail(l, "unknown loop shape: loop " + loop.name + " holds label " + l.label +
                  "; only single-block loops are imported");
    if (l.type == AsmLine::kInstruction && l.inst.kind == InstKind::kBranch)
      fail(l, "unknown loop shape: loop " + loop.name + " holds a branch; only single-block loops are imported");
  }
  if (b.inst.mnemonic != "s_cbranch_scc0" && b.inst.mnemonic != "s_cbranch_scc1")
    fail(b, "unknown loop shape: the back branch of loop " + loop.name + " is '" + b.inst.mnemonic +
                "'; a counted loop ends in s_cbranch_scc0 or s_cbranch_scc1");
  return loop;
}

bool writes_sgpr(const AsmInst& in, int s) {
  if (in.operands.empty() || in.kind != InstKind::kSalu || starts_with(in.mnemonic, "s_cmp")) return false;
  const std::string& d = in.operands[0];
  if (std::optional<int> r = parse_sgpr(d)) return *r == s;
  if (starts_with(d, "s[")) {
    int lo = 0, hi = 0;
    if (std::sscanf(d.c_str(), "s[%d:%d]", &lo, &hi) == 2) return lo <= s && s <= hi;
  }
  return false;
}

// An immediate as the instruction reads it: s_*k_* take 16 bits, sign- or zero-extended.
std::optional<int64_t> immediate(const AsmInst& in, const std::string& operand) {
  std::optional<int64_t> v = parse_int(operand);
  if (!v || in.mnemonic.find("k_") == std::string::npos) return v;
  const int64_t low = *v & 0xffff;
  const bool is_unsigned = in.mnemonic.size() > 4 && in.mnemonic.compare(in.mnemonic.size() - 4, 4, "_u32") == 0;
  return is_unsigned ? low : static_cast<int64_t>(static_cast<int16_t>(low));
}

int64_t as_32(int64_t v, bool is_signed) {
  const uint32_t u = static_cast<uint32_t>(v);
  return is_signed ? static_cast<int64_t>(static_cast<int32_t>(u)) : static_cast<int64_t>(u);
}

bool compare(const std::string& cond, int64_t a, int64_t b) {
  if (cond == "eq") return a == b;
  if (cond == "lg") return a != b;
  if (cond == "gt") return a > b;
  if (cond == "ge") return a >= b;
  if (cond == "lt") return a < b;
  return a <= b;  // le
}

struct Compare {
  int line = -1;
  int iv = -1;
  int64_t bound = 0;
  std::string cond;
  bool is_signed = true;
};

// The s_cmp that decides the back branch: the last SCC writer before it.
Compare find_compare(const AsmKernel& k, const AsmLoop& loop) {
  const std::string why = "cannot find the trip count of loop " + loop.name + ": ";
  for (int i = loop.branch - 1; i > loop.label; --i) {
    const AsmLine& l = k.lines[i];
    if (l.type != AsmLine::kInstruction || l.inst.kind != InstKind::kSalu) continue;
    const AsmInst& in = l.inst;
    if (!starts_with(in.mnemonic, "s_cmp_") && !starts_with(in.mnemonic, "s_cmpk_"))
      fail(l, why + "'" + in.mnemonic + "' sets SCC after the last s_cmp before the branch");
    Compare c;
    c.line = i;
    const size_t u = in.mnemonic.find('_', 4);
    c.cond = in.mnemonic.substr(u + 1, 2);
    c.is_signed = in.mnemonic.find("_i32") != std::string::npos;
    std::optional<int> s0 = in.operands.size() == 2 ? parse_sgpr(in.operands[0]) : std::nullopt;
    std::optional<int64_t> b1 = in.operands.size() == 2 ? immediate(in, in.operands[1]) : std::nullopt;
    if (!s0 || !b1 || c.cond.size() != 2 || std::string("eqlggtgeltle").find(c.cond) == std::string::npos)
      fail(l, why + "'" + in.mnemonic + "' does not compare an SGPR with a constant");
    c.iv = *s0;
    c.bound = as_32(*b1, c.is_signed);
    return c;
  }
  fail(k.lines[loop.branch], why + "no s_cmp before its branch");
}

// The one step of the induction scalar in the body: s_add/s_sub with a constant.
void find_step(const AsmKernel& k, AsmLoop& loop, int& step_line) {
  const std::string why = "cannot find the trip count of loop " + loop.name + ": ";
  step_line = -1;
  for (int i = loop.label + 1; i < loop.branch; ++i) {
    const AsmLine& l = k.lines[i];
    if (l.type != AsmLine::kInstruction || !writes_sgpr(l.inst, loop.iv)) continue;
    const AsmInst& in = l.inst;
    if (step_line >= 0) fail(l, why + "s" + std::to_string(loop.iv) + " is written twice in the body");
    const std::string sv = "s" + std::to_string(loop.iv);
    std::optional<int64_t> v;
    if (in.mnemonic == "s_addk_i32" && in.operands.size() == 2) v = immediate(in, in.operands[1]);
    const bool add = in.mnemonic == "s_add_i32" || in.mnemonic == "s_add_u32";
    const bool sub = in.mnemonic == "s_sub_i32" || in.mnemonic == "s_sub_u32";
    if ((add || sub) && in.operands.size() == 3) {
      if (in.operands[1] == sv) v = parse_int(in.operands[2]);
      if (add && in.operands[2] == sv && !v) v = parse_int(in.operands[1]);
      if (v && sub) v = -*v;
    }
    if (!v) fail(l, why + "the induction scalar " + sv + " is not stepped by a constant ('" + in.mnemonic + "')");
    loop.iv_step = *v;
    step_line = i;
  }
  if (step_line < 0) fail(k.lines[loop.branch], why + "s" + std::to_string(loop.iv) + " does not change in the body");
}

// The induction scalar's value on entry: its last write before the loop, a constant move.
void find_init(const AsmKernel& k, AsmLoop& loop) {
  const std::string why = "cannot find the trip count of loop " + loop.name + ": the initial value of s" +
                          std::to_string(loop.iv) + " is not a constant";
  for (int i = loop.label - 1; i > k.begin; --i) {
    const AsmLine& l = k.lines[i];
    if (l.type != AsmLine::kInstruction || !writes_sgpr(l.inst, loop.iv)) continue;
    const AsmInst& in = l.inst;
    std::optional<int64_t> v;
    if ((in.mnemonic == "s_mov_b32" || in.mnemonic == "s_movk_i32") && in.operands.size() == 2)
      v = immediate(in, in.operands[1]);
    if (!v) fail(l, why + " ('" + in.mnemonic + "')");
    loop.iv_init = *v;
    return;
  }
  fail(k.lines[loop.label], why + " (nothing before the loop writes it)");
}

// Counts iterations: the body runs, the compare decides, the branch goes back or leaves.
void find_trip_count(AsmKernel& k, AsmLoop& loop) {
  Compare c = find_compare(k, loop);
  loop.iv = c.iv;
  int step_line = -1;
  find_step(k, loop, step_line);
  find_init(k, loop);
  const bool back_on_scc = k.lines[loop.branch].inst.mnemonic == "s_cbranch_scc1";
  const int64_t after = step_line < c.line ? loop.iv_step : 0;
  int64_t v = loop.iv_init;
  for (int64_t n = 1; n <= kMaxTrip; ++n) {
    const bool scc = compare(c.cond, as_32(v + after, c.is_signed), c.bound);
    if (scc != back_on_scc) {
      loop.trip = n;
      return;
    }
    v = as_32(v + loop.iv_step, c.is_signed);
  }
  fail(k.lines[loop.branch], "cannot find the trip count of loop " + loop.name + ": it does not end within " +
                                 std::to_string(kMaxTrip) + " iterations");
}

}  // namespace

uint64_t text_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Defined in importer_body.cpp: the address register and the role of every line.
void find_address_register(AsmKernel& k, AsmLoop& loop);
void assign_roles(AsmKernel& k);

AsmKernel analyse_asm(const std::string& text, const std::string& file) {
  AsmKernel k;
  k.file = file;
  k.hash = text_hash(text);
  k.lines = read_asm(text, file);
  find_function(k);
  int previous_end = k.begin + 1;
  for (int i = k.begin; i < k.end; ++i) {
    const AsmLine& l = k.lines[i];
    if (l.type != AsmLine::kInstruction || l.inst.kind != InstKind::kBranch || l.inst.operands.empty()) continue;
    const int label = find_label(k, l.inst.operands[0]);
    if (label < 0 || label > i) continue;  // a forward branch stays opaque
    if (label < previous_end)
      fail(l, "unknown loop shape: loops overlap or nest at " + l.inst.operands[0] +
                  "; only single-block loops are imported");
    AsmLoop loop = loop_shape(k, i, label);
    loop.preheader = previous_end;
    find_trip_count(k, loop);
    find_address_register(k, loop);
    k.loops.push_back(loop);
    previous_end = i + 1;
  }
  assign_roles(k);
  return k;
}

}  // namespace tandem::amdgpu
