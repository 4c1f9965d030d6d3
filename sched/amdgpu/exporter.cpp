// The exporter (exporter.h): the reordered kernel merged into the original assembly lines.
#include "sched/amdgpu/exporter.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/printer.h"

namespace tandem::amdgpu {

namespace {

// The original line index of an IR name (L<n>), or -1.
int line_of(const std::string& name) {
  if (name.size() < 2 || name[0] != 'L') return -1;
  for (size_t i = 1; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  return std::stoi(name.substr(1)) - 1;
}

// A clone's original: "L153.pre" -> "L153".
std::string origin_of(const std::string& name) { return name.substr(0, name.find('.')); }

// The register and the offset of a single-register LDS access (`%lds[v53 + 2048]`).
std::pair<int, int64_t> lds_address(const Access& a) {
  const AffineExpr& e = a.dims.at(0).lo;
  if (e.terms.size() != 1 || e.terms[0].symbol.size() < 2 || e.terms[0].symbol[0] != 'v' || e.terms[0].coeff != 1)
    throw Error(a.loc, "export-amdgpu writes an LDS address as one VGPR plus a constant");
  return {std::stoi(e.terms[0].symbol.substr(1)), e.constant};
}

std::string with_offset(const std::string& text, int64_t offset) {
  static const std::regex kOffset(R"(\s+offset:-?(0x)?[0-9a-fA-F]+)");
  std::string out = std::regex_replace(text, kOffset, "");
  const size_t comment = out.find(';');
  std::string code = comment == std::string::npos ? out : out.substr(0, comment);
  while (!code.empty() && std::isspace(static_cast<unsigned char>(code.back()))) code.pop_back();
  if (offset != 0) code += " offset:" + std::to_string(offset);
  return code;
}

void check_physical(const Kernel& kernel, const Instruction& in) {
  for (const std::vector<Access>* list : {&in.writes, &in.reads})
    for (const Access& a : *list)
      if (kernel.tensors[a.tensor_id].virtual_number >= 0)
        throw Error(a.loc, "export-amdgpu cannot write %" + in.name + ": it uses virtual register " + a.tensor +
                               " (wmma-reorder left it for register allocation)");
}

struct Merge {
  const Kernel& kernel;
  const AsmKernel& original;
  ExportStats& stats;
  std::map<int, LdsAddress> imported;  // each ds_load line's address as imported
  std::vector<std::string> out;

  const AsmLine& line(int i) const { return original.lines[i]; }

  // The text of an original IR line as the kernel now has it (a ds_load's offset may differ).
  std::string text_of(const Instruction& in, int origin, int loop) {
    const AsmLine& l = line(origin);
    check_physical(kernel, in);
    if (l.inst.kind != InstKind::kDsLoad) return l.text;
    const auto [reg, offset] = lds_address(in.reads.at(0));
    const LdsAddress& was = imported.at(origin);
    if (reg == was.reg && offset == was.offset) return l.text;
    const int64_t asm_offset = l.inst.offset + offset - was.offset;
    if (reg != was.reg || loop < 0 || asm_offset < 0 || asm_offset > 65535)
      throw Error(in.loc, "export-amdgpu cannot write the new address of %" + in.name + " (v" + std::to_string(reg) +
                              " + " + std::to_string(offset) + ")");
    ++stats.offsets_changed;
    return with_offset(l.text, asm_offset);
  }

  // A preheader copy of a body ds_load: through the loop's base register, at the offset the
  // loop's address register has at iteration 0.
  std::string preheader_copy(const Instruction& in, const AsmLoop& loop) {
    check_physical(kernel, in);
    const int origin = line_of(origin_of(in.name));
    const auto [reg, offset] = lds_address(in.reads.at(0));
    if (origin < 0 || line(origin).inst.kind != InstKind::kDsLoad || reg != loop.addr)
      throw Error(in.loc, "export-amdgpu can add only copies of a loop's ds_loads before it, not %" + in.name);
    const int64_t asm_offset = offset + loop.bias;
    if (asm_offset < 0 || asm_offset > 65535)
      throw Error(in.loc, "export-amdgpu cannot write %" + in.name + ": its offset from v" + std::to_string(loop.base) +
                              " would be " + std::to_string(asm_offset) + ", outside 0..65535");
    const AsmLine& l = line(origin);
    const std::string indent = l.text.substr(0, l.text.find_first_not_of(" \t"));
    std::string s = indent + l.inst.mnemonic + " " + l.inst.operands[0] + ", v" + std::to_string(loop.base);
    ++stats.preheader_added;
    return asm_offset ? s + " offset:" + std::to_string(asm_offset) : s;
  }

  std::vector<std::pair<int, int>> delay_targets(const std::vector<int>& seq, size_t pos) const;
  void straight_line(int from, int to, const std::vector<InstId>& insts);
  void body(int loop_index, const std::vector<InstId>& order);
};

// The instructions an s_delay_alu at `pos` of the loop body `seq` (line indices, the body
// repeating) ties together: for each of its two fields, the instruction it delays and the one
// it names (VALU_DEP_N: the N-th VALU instruction before it, TRANS32_DEP_N: the N-th
// transcendental one, SALU_CYCLE_N: the last SALU one), as lines; -1 where there is none.
// s_delay_alu lines do not count as instructions.
std::vector<std::pair<int, int>> Merge::delay_targets(const std::vector<int>& seq, size_t pos) const {
  std::vector<std::pair<int, int>> out;
  const AsmInst& d = line(seq[pos]).inst;
  std::string fields;
  for (const std::string& o : d.operands) fields += o + " ";
  for (const std::string& o : d.modifiers) fields += o + " ";
  auto field = [&](const std::string& name) {
    const size_t at = fields.find(name + "(");
    if (at == std::string::npos) return std::string();
    const size_t open = at + name.size() + 1;
    return fields.substr(open, fields.find(')', open) - open);
  };
  const size_t n = seq.size();
  auto counted = [&](size_t i) { return line(seq[i % n]).inst.mnemonic != "s_delay_alu"; };
  // The k-th instruction after pos (k = 1: the next one).
  auto after = [&](int k) -> size_t {
    size_t i = pos;
    for (size_t steps = 0; steps < 2 * n && k > 0; ++steps) {
      i = (i + 1) % n;
      if (counted(i)) --k;
    }
    return k == 0 ? i : n;
  };
  auto names = [&](size_t at, const std::string& id) -> int {
    int want = 1;
    bool (*kind)(const AsmInst&) = nullptr;
    if (id.rfind("VALU_DEP_", 0) == 0) {
      want = std::atoi(id.c_str() + 9);
      kind = [](const AsmInst& in) {
        return in.kind == InstKind::kValu || in.kind == InstKind::kWmma || in.kind == InstKind::kTrans;
      };
    } else if (id.rfind("TRANS32_DEP_", 0) == 0) {
      want = std::atoi(id.c_str() + 12);
      kind = [](const AsmInst& in) { return in.kind == InstKind::kTrans; };
    } else if (id.rfind("SALU_CYCLE_", 0) == 0) {
      kind = [](const AsmInst& in) { return in.kind == InstKind::kSalu; };
    } else {
      return -1;
    }
    size_t i = at;
    for (size_t steps = 0; steps < n; ++steps) {
      i = (i + n - 1) % n;
      if (kind(line(seq[i]).inst) && --want == 0) return seq[i];
    }
    return -1;
  };
  static const std::map<std::string, int> kSkip = {{"SAME", 0},   {"NEXT", 1},   {"SKIP_1", 2},
                                                   {"SKIP_2", 3}, {"SKIP_3", 4}, {"SKIP_4", 5}};
  const size_t first = after(1);
  if (first == n) return {{-1, -1}};
  out.push_back({seq[first], names(first, field("instid0"))});
  const std::string id1 = field("instid1");
  if (!id1.empty()) {
    auto skip = kSkip.find(field("instskip").empty() ? "SAME" : field("instskip"));
    const size_t second = skip == kSkip.end() ? n : after(1 + skip->second);
    out.push_back(second == n ? std::make_pair(-1, -1) : std::make_pair(seq[second], names(second, id1)));
  }
  return out;
}

// Lines [from, to) outside loops: as written, less the ds_loads the kernel no longer has, plus
// the ones it added (before the loop that follows).
void Merge::straight_line(int from, int to, const std::vector<InstId>& insts) {
  std::vector<int> kept;
  std::vector<InstId> added;
  std::map<int, InstId> by_line;
  for (InstId id : insts) {
    const int l = line_of(kernel.insts[id].name);
    if (l >= from && l < to && original.roles[l].role == Role::kIr)
      by_line[l] = id;
    else
      added.push_back(id);
  }
  for (int i = from; i < to; ++i) {
    if (original.roles[i].role != Role::kIr) {
      out.push_back(line(i).text);
      continue;
    }
    auto it = by_line.find(i);
    if (it == by_line.end()) {
      if (line(i).inst.kind != InstKind::kDsLoad)
        throw Error(line(i).loc, "export-amdgpu: the kernel no longer has %" + AsmKernel::ir_name(i) +
                                     "; only ds_loads may be removed");
      ++stats.preheader_removed;
      continue;
    }
    out.push_back(text_of(kernel.insts[it->second], i, -1));
  }
  const AsmLoop* next = nullptr;
  for (const AsmLoop& l : original.loops)
    if (l.label == to) next = &l;
  // New prefetches go after the segment's last instruction, before the directives that align
  // the loop's label.
  size_t at = out.size();
  for (int i = to - 1; i >= from && line(i).type != AsmLine::kInstruction; --i)
    if (line(i).type == AsmLine::kDirective) at = out.size() - static_cast<size_t>(to - i);
  std::vector<std::string> copies;
  for (InstId id : added) {
    if (!next)
      throw Error(kernel.insts[id].loc, "export-amdgpu: %" + kernel.insts[id].name + " is new and no loop follows it");
    copies.push_back(preheader_copy(kernel.insts[id], *next));
  }
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), copies.begin(), copies.end());
}

// A loop body in the kernel's order. Folded lines travel with the IR line before them (those
// before the first stay at the top); the back branch stays last. A body in its original
// order is written as it was; a reordered one loses its lgkmcnt waits (recomputed) and its
// s_clause hints.
void Merge::body(int loop_index, const std::vector<InstId>& order) {
  const AsmLoop& loop = original.loops[loop_index];
  std::vector<int> original_order;
  std::map<int, std::vector<int>> trailing;  // IR line -> folded lines after it
  int anchor = -1;
  for (int i = loop.label + 1; i < loop.branch; ++i) {
    if (original.roles[i].role == Role::kIr) {
      original_order.push_back(i);
      anchor = i;
    } else {
      trailing[anchor].push_back(i);
    }
  }
  std::vector<int> new_order;
  for (InstId id : order) {
    const int l = line_of(kernel.insts[id].name);
    if (l <= loop.label || l >= loop.branch || original.roles[l].role != Role::kIr)
      throw Error(kernel.insts[id].loc, "export-amdgpu: %" + kernel.insts[id].name + " was not in loop " + loop.name);
    new_order.push_back(l);
  }
  const size_t offsets_before = static_cast<size_t>(stats.offsets_changed);
  std::vector<std::string> texts;
  for (size_t n = 0; n < order.size(); ++n) texts.push_back(text_of(kernel.insts[order[n]], new_order[n], loop_index));
  const bool changed = new_order != original_order || static_cast<size_t>(stats.offsets_changed) != offsets_before;
  if (!changed) {
    for (int i = loop.label + 1; i <= loop.branch; ++i) out.push_back(line(i).text);
    return;
  }
  ++stats.loops_changed;
  // The new body as original lines; -1 stands for the IR line at that place (its text in texts).
  std::vector<int> seq;
  auto put_folded = [&](int after) {
    for (int f : trailing[after]) {
      const AsmInst& in = line(f).inst;
      if (original.roles[f].absorbed == Absorbed::kWaitcnt) continue;
      if (in.mnemonic == "s_clause") {
        ++stats.hints_dropped;
        continue;
      }
      if (original.roles[f].absorbed == Absorbed::kHazard) {
        ++stats.nops_dropped;
        continue;
      }
      seq.push_back(f);
    }
  };
  put_folded(-1);
  for (size_t n = 0; n < new_order.size(); ++n) {
    if (n >= original_order.size() || new_order[n] != original_order[n]) ++stats.lines_moved;
    seq.push_back(new_order[n]);
    put_folded(new_order[n]);
  }
  std::vector<int> old_seq;
  for (int i = loop.label + 1; i < loop.branch; ++i)
    if (line(i).type == AsmLine::kInstruction) old_seq.push_back(i);
  std::map<int, std::string> text_at;
  for (size_t n = 0; n < new_order.size(); ++n) text_at[new_order[n]] = texts[n];
  for (size_t p = 0; p < seq.size(); ++p) {
    const int l = seq[p];
    if (line(l).inst.mnemonic == "s_delay_alu") {
      const size_t was = static_cast<size_t>(std::find(old_seq.begin(), old_seq.end(), l) - old_seq.begin());
      if (delay_targets(old_seq, was) != delay_targets(seq, p)) {
        ++stats.delays_dropped;
        continue;
      }
    }
    out.push_back(text_at.count(l) ? text_at[l] : line(l).text);
  }
  out.push_back(line(loop.branch).text);
}

// The kernel's top-level statements split at its loops: the instructions before each loop,
// and each loop's body order.
void split_kernel(const Kernel& k, std::vector<std::vector<InstId>>& segments, std::vector<LoopId>& loops) {
  segments.assign(1, {});
  for (const Stmt& s : k.body) {
    if (s.kind == Stmt::kInst) {
      segments.back().push_back(s.id);
      continue;
    }
    loops.push_back(s.id);
    segments.emplace_back();
  }
}

std::vector<InstId> body_order(const Kernel& k, LoopId loop) {
  std::vector<InstId> out;
  for (const Stmt& s : k.loops[loop].body) {
    if (s.kind != Stmt::kInst) throw Error(k.loops[loop].loc, "export-amdgpu writes back loops without nested loops");
    out.push_back(s.id);
  }
  return out;
}

}  // namespace

std::string export_amdgpu(const Kernel& kernel, const std::string& asm_text, const std::string& asm_file,
                          ExportStats& stats) {
  std::optional<std::string> hash = kernel.attrs.get_string(attr::kAsmHash);
  std::ostringstream want;
  want << std::hex << text_hash(asm_text);
  if (!hash || *hash != want.str())
    throw Error(kernel.loc, "@" + kernel.name + " was not imported from " + asm_file +
                                " (its asm_hash differs from the file's; import it again)");
  AsmKernel original = analyse_asm(asm_text, asm_file);
  std::vector<std::vector<InstId>> segments;
  std::vector<LoopId> loops;
  split_kernel(kernel, segments, loops);
  if (loops.size() != original.loops.size())
    throw Error(kernel.loc, "@" + kernel.name + " has " + std::to_string(loops.size()) + " loops; " + asm_file +
                                " has " + std::to_string(original.loops.size()));
  Merge m{kernel, original, stats, lds_addresses(original), {}};
  for (int i = 0; i < original.begin; ++i) m.out.push_back(original.lines[i].text);
  int pos = original.begin;
  for (size_t li = 0; li < loops.size(); ++li) {
    const AsmLoop& loop = original.loops[li];
    std::optional<std::string> label = kernel.loops[loops[li]].attrs.get_string(attr::kAsmLabel);
    if (label != loop.name)
      throw Error(kernel.loops[loops[li]].loc, "loop " + std::to_string(li) + " of @" + kernel.name + " is not loop " +
                                                   loop.name + " of " + asm_file);
    m.straight_line(pos, loop.label, segments[li]);
    m.out.push_back(original.lines[loop.label].text);
    m.body(static_cast<int>(li), body_order(kernel, loops[li]));
    pos = loop.branch + 1;
  }
  m.straight_line(pos, original.end, segments.back());
  for (size_t i = original.end; i < original.lines.size(); ++i) m.out.push_back(original.lines[i].text);
  std::string merged;
  for (const std::string& l : m.out) merged += l + "\n";
  const std::string waited = fix_waitcnts(analyse_asm(merged, asm_file), stats.waitcnts);
  return fix_wmma_hazards(analyse_asm(waited, asm_file), stats.nops_inserted);
}

std::string structural_difference(const Kernel& a, const Kernel& b) {
  static const std::regex kName(R"(%L[0-9]+(\.[A-Za-z0-9_.]+)? = )");
  static const std::regex kHash(R"(asm_hash = "[0-9a-f]+")");
  static const std::string kWait = "s_waitcnt {" + std::string(attr::kMnemonic) + " = \"s_waitcnt\"}";
  auto lines = [&](const Kernel& k) {
    std::vector<std::string> out;
    std::string text = std::regex_replace(std::regex_replace(print_kernel(k), kName, ""), kHash, "");
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string l = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      const size_t first = l.find_first_not_of(' ');
      if (first == std::string::npos || l[first] == '#' || l.compare(first, std::string::npos, kWait) == 0) continue;
      out.push_back(l);
    }
    return out;
  };
  const std::vector<std::string> la = lines(a), lb = lines(b);
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const std::string x = i < la.size() ? la[i] : "(end)", y = i < lb.size() ? lb[i] : "(end)";
    if (x != y) return "statement " + std::to_string(i + 1) + " differs: '" + x + "' against '" + y + "'";
  }
  return "";
}

}  // namespace tandem::amdgpu
