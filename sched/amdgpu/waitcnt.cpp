// The wait rules of the exporter (waitcnt.h). lgkmcnt: LDS operations complete in order,
// scalar memory operations and messages in any order, so after `s_waitcnt lgkmcnt(N)` the
// LDS operations older than the newest N are done, and the scalar ones only when N is 0.
// vmcnt: vector memory loads (and atomics that return) complete in order, image operations
// in any order.
#include "sched/amdgpu/waitcnt.h"

#include <algorithm>

namespace tandem::amdgpu {

namespace {

// One outstanding operation of a counter, oldest first.
struct Pending {
  bool in_order = true;  // false: it may complete before older ones (scalar memory, a message, an image)
  std::vector<VgprRange> writes;
  bool operator==(const Pending& o) const { return in_order == o.in_order && writes == o.writes; }
};
using State = std::vector<Pending>;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

void retire(State& s, int n) {
  if (n == 0) {
    s.clear();
    return;
  }
  int keep = n;
  State out;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (!it->in_order) {
      out.push_back(*it);
    } else if (keep > 0) {
      out.push_back(*it);
      --keep;
    }
  }
  std::reverse(out.begin(), out.end());
  s = out;
}

// A wait counter: its s_waitcnt field and what it counts.
struct Counter {
  const char* field;
  // Does `in` add to the counter, and does it complete in order with the others?
  bool (*counts)(const AsmInst& in, bool& in_order);
};

bool counts_lgkm(const AsmInst& in, bool& in_order) {
  in_order = in.kind == InstKind::kDsLoad || in.kind == InstKind::kDsStore || in.kind == InstKind::kLds;
  return in_order || in.kind == InstKind::kSmem || starts_with(in.mnemonic, "s_sendmsg") ||
         starts_with(in.mnemonic, "flat_");
}

// Vector memory operations that write a VGPR: loads and atomics that return (stores count
// in vscnt).
bool counts_vm(const AsmInst& in, bool& in_order) {
  in_order = !starts_with(in.mnemonic, "image_");
  return in.kind == InstKind::kGlobalLoad || (in.kind == InstKind::kVmem && !in.vgpr_writes.empty());
}

const Counter kLgkm{"lgkmcnt", counts_lgkm};
const Counter kVm{"vmcnt", counts_vm};

// What the instruction adds to the outstanding operations.
void issue(const Counter& c, State& s, const AsmInst& in) {
  if (in.kind == InstKind::kWaitcnt) {
    if (std::optional<int> n = waitcnt_field(in, c.field)) retire(s, *n);
    return;
  }
  bool in_order = true;
  if (c.counts(in, in_order)) s.push_back(Pending{in_order, in.vgpr_writes});
}

// The count the instruction needs before it issues, or -1 when it needs none. It waits for
// the VGPRs it reads, and for those it writes unless it is itself an in-order operation of
// the counter (its write lands after theirs).
int needed(const Counter& c, const State& s, const AsmInst& in) {
  std::vector<VgprRange> regs = in.vgpr_reads;
  bool in_order = false;
  if (!(c.counts(in, in_order) && in_order)) regs.insert(regs.end(), in.vgpr_writes.begin(), in.vgpr_writes.end());
  int after = 0;  // in-order operations younger than the one looked at
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    bool hit = false;
    for (const VgprRange& w : it->writes)
      for (const VgprRange& r : regs) hit = hit || w.overlaps(r);
    if (hit) return it->in_order ? after : 0;
    if (it->in_order) ++after;
  }
  return -1;
}

struct Walker {
  const Counter* counter = nullptr;
  std::vector<std::string> text;  // the lines, edited in place
  std::vector<AsmInst> insts;     // parsed instruction of each line (kind kOther for others)
  std::vector<bool> is_inst;
  int* inserted = nullptr;
  int* tightened = nullptr;

  // Makes instruction `i` wait to `n`: lowers the s_waitcnt just before it or inserts one.
  // Returns how many lines were inserted (0 or 1).
  int make_wait(int i, int n) {
    int prev = i - 1;
    while (prev >= 0 && !is_inst[prev]) --prev;
    if (prev >= 0 && insts[prev].kind == InstKind::kWaitcnt) {
      const std::string field = counter->field;
      std::optional<int> old = waitcnt_field(insts[prev], field);
      std::string& t = text[prev];
      if (old) {
        const std::string from = field + "(" + std::to_string(*old) + ")";
        t.replace(t.find(from), from.size(), field + "(" + std::to_string(n) + ")");
      } else {
        t += " " + field + "(" + std::to_string(n) + ")";
      }
      insts[prev] = read_asm(t, "").at(0).inst;
      ++*tightened;
      return 0;
    }
    const std::string line = "\ts_waitcnt " + std::string(counter->field) + "(" + std::to_string(n) + ")";
    text.insert(text.begin() + i, line);
    insts.insert(insts.begin() + i, read_asm(line, "").at(0).inst);
    is_inst.insert(is_inst.begin() + i, true);
    ++*inserted;
    return 1;
  }

  // Walks lines [from, to) from `s`; returns the lines inserted and leaves the exit state in `s`.
  int walk(int from, int& to, State& s) {
    int added = 0;
    for (int i = from; i < to; ++i) {
      if (!is_inst[i]) continue;
      const int n = needed(*counter, s, insts[i]);
      if (n >= 0) {
        const int ins = make_wait(i, n);
        added += ins;
        to += ins;
        i += ins;
        retire(s, n);
      }
      issue(*counter, s, insts[i]);
    }
    return added;
  }
};

}  // namespace

namespace {

// One counter's waits over the whole function (waitcnt.h).
std::string fix_counter(const AsmKernel& k, const Counter& counter, int& inserted, int& tightened) {
  Walker w;
  w.counter = &counter;
  w.inserted = &inserted;
  w.tightened = &tightened;
  for (const AsmLine& l : k.lines) {
    w.text.push_back(l.text);
    w.insts.push_back(l.inst);
    w.is_inst.push_back(l.type == AsmLine::kInstruction);
  }
  int shift = 0;  // lines inserted so far
  State s;
  int pos = k.begin;
  for (const AsmLoop& loop : k.loops) {
    int label = loop.label + shift;
    shift += w.walk(pos, label, s);
    int branch_end = loop.branch + 1 + shift;
    State first = s, steady = s;
    for (int round = 0; round < 16; ++round) {
      State a = first, b = steady;
      const int added = w.walk(label + 1, branch_end, a) + w.walk(label + 1, branch_end, b);
      shift += added;
      if (added == 0 && b == steady && round > 0) break;
      if (round == 15)
        throw Error(k.lines[loop.label].loc,
                    std::string("cannot bound the outstanding ") + counter.field + " operations of loop " + loop.name);
      steady = b;
    }
    State exit = loop.trip >= 2 ? steady : first;
    w.walk(label + 1, branch_end, exit);
    s = exit;
    pos = branch_end;
  }
  int end = k.end + shift;
  w.walk(pos, end, s);
  std::string out;
  for (size_t i = 0; i < w.text.size(); ++i) out += w.text[i] + "\n";
  return out;
}

}  // namespace

std::string fix_waitcnts(const AsmKernel& k, WaitcntStats& stats) {
  const std::string lgkm = fix_counter(k, kLgkm, stats.inserted, stats.tightened);
  const AsmKernel again = analyse_asm(lgkm, k.file);
  return fix_counter(again, kVm, stats.vm_inserted, stats.vm_tightened);
}

}  // namespace tandem::amdgpu

namespace tandem::amdgpu {

namespace {

bool is_valu(const AsmInst& in) {
  return in.kind == InstKind::kWmma || in.kind == InstKind::kValu || in.kind == InstKind::kTrans;
}

// The gfx11 WMMA hazard: a WMMA reading, as its A or B matrix, registers that the VALU
// instruction just before it (a WMMA) writes. Any VALU instruction between them (a v_nop)
// clears it.
bool wmma_hazard(const AsmInst* previous_valu, const AsmInst& in) {
  if (!previous_valu || previous_valu->kind != InstKind::kWmma || in.kind != InstKind::kWmma) return false;
  const std::optional<VgprRange> d = parse_vgpr(previous_valu->operands.at(0));
  for (size_t operand : {1, 2})
    if (const std::optional<VgprRange> r = parse_vgpr(in.operands.at(operand)); r && d && r->overlaps(*d)) return true;
  return false;
}

struct NopWalker {
  std::vector<std::string> text;
  std::vector<AsmInst> insts;
  std::vector<bool> is_inst;
  int* inserted = nullptr;

  // Walks lines [from, to) after `last` (the VALU instruction before them, or none), inserting
  // a v_nop before each WMMA that would read what the WMMA before it writes.
  int walk(int from, int& to, std::optional<AsmInst>& last) {
    int added = 0;
    for (int i = from; i < to; ++i) {
      if (!is_inst[i] || !is_valu(insts[i])) continue;
      if (wmma_hazard(last ? &*last : nullptr, insts[i])) {
        const std::string line = "\tv_nop";
        text.insert(text.begin() + i, line);
        insts.insert(insts.begin() + i, read_asm(line, "").at(0).inst);
        is_inst.insert(is_inst.begin() + i, true);
        ++*inserted;
        ++added;
        ++to;
        ++i;
      }
      last = insts[i];
    }
    return added;
  }
};

}  // namespace

std::string fix_wmma_hazards(const AsmKernel& k, int& inserted) {
  NopWalker w;
  w.inserted = &inserted;
  for (const AsmLine& l : k.lines) {
    w.text.push_back(l.text);
    w.insts.push_back(l.inst);
    w.is_inst.push_back(l.type == AsmLine::kInstruction);
  }
  int shift = 0;
  std::optional<AsmInst> last;
  int pos = k.begin;
  for (const AsmLoop& loop : k.loops) {
    int label = loop.label + shift;
    shift += w.walk(pos, label, last);
    int branch_end = loop.branch + 1 + shift;
    // From the preheader, then from the body's own end: a v_nop inserted on either walk is
    // there for both, so the second round inserts nothing.
    for (int round = 0; round < 3; ++round) shift += w.walk(label + 1, branch_end, last);
    pos = branch_end;
  }
  int end = k.end + shift;
  w.walk(pos, end, last);
  std::string out;
  for (size_t i = 0; i < w.text.size(); ++i) out += w.text[i] + "\n";
  return out;
}

}  // namespace tandem::amdgpu
