// The lgkmcnt rule of the exporter (waitcnt.h). Counting: LDS operations complete in order,
// scalar memory operations and messages in any order, so after `s_waitcnt lgkmcnt(N)` the
// LDS operations older than the newest N are done, and the scalar ones only when N is 0.
#include "sched/amdgpu/waitcnt.h"

#include <algorithm>

namespace tandem::amdgpu {

namespace {

// One outstanding operation counted by lgkmcnt, oldest first.
struct Pending {
  bool in_order = true;  // an LDS operation (false: scalar memory, a message, a flat access)
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

// What the instruction adds to the outstanding operations.
void issue(State& s, const AsmInst& in) {
  if (in.kind == InstKind::kWaitcnt) {
    if (std::optional<int> n = waitcnt_field(in, "lgkmcnt")) retire(s, *n);
    return;
  }
  const bool lds = in.kind == InstKind::kDsLoad || in.kind == InstKind::kDsStore || in.kind == InstKind::kLds;
  const bool unordered =
      in.kind == InstKind::kSmem || starts_with(in.mnemonic, "s_sendmsg") || starts_with(in.mnemonic, "flat_");
  if (lds || unordered) s.push_back(Pending{lds, in.vgpr_writes});
}

// The lgkmcnt the instruction needs before it issues, or -1 when it needs none.
int needed(const State& s, const AsmInst& in) {
  std::vector<VgprRange> regs = in.vgpr_reads;
  if (in.kind != InstKind::kDsLoad) regs.insert(regs.end(), in.vgpr_writes.begin(), in.vgpr_writes.end());
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
  std::vector<std::string> text;  // the lines, edited in place
  std::vector<AsmInst> insts;     // parsed instruction of each line (kind kOther for others)
  std::vector<bool> is_inst;
  WaitcntStats* stats = nullptr;

  // Makes instruction `i` wait to `n`: lowers the s_waitcnt just before it or inserts one.
  // Returns how many lines were inserted (0 or 1).
  int make_wait(int i, int n) {
    int prev = i - 1;
    while (prev >= 0 && !is_inst[prev]) --prev;
    if (prev >= 0 && insts[prev].kind == InstKind::kWaitcnt) {
      std::optional<int> old = waitcnt_field(insts[prev], "lgkmcnt");
      std::string& t = text[prev];
      if (old) {
        const std::string from = "lgkmcnt(" + std::to_string(*old) + ")";
        t.replace(t.find(from), from.size(), "lgkmcnt(" + std::to_string(n) + ")");
      } else {
        t += " lgkmcnt(" + std::to_string(n) + ")";
      }
      insts[prev] = read_asm(t, "").at(0).inst;
      ++stats->tightened;
      return 0;
    }
    const std::string line = "\ts_waitcnt lgkmcnt(" + std::to_string(n) + ")";
    text.insert(text.begin() + i, line);
    insts.insert(insts.begin() + i, read_asm(line, "").at(0).inst);
    is_inst.insert(is_inst.begin() + i, true);
    ++stats->inserted;
    return 1;
  }

  // Walks lines [from, to) from `s`; returns the lines inserted and leaves the exit state in `s`.
  int walk(int from, int& to, State& s) {
    int added = 0;
    for (int i = from; i < to; ++i) {
      if (!is_inst[i]) continue;
      const int n = needed(s, insts[i]);
      if (n >= 0) {
        const int ins = make_wait(i, n);
        added += ins;
        to += ins;
        i += ins;
        retire(s, n);
      }
      issue(s, insts[i]);
    }
    return added;
  }
};

}  // namespace

std::string fix_waitcnts(const AsmKernel& k, WaitcntStats& stats) {
  Walker w;
  w.stats = &stats;
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
        throw Error(k.lines[loop.label].loc, "cannot bound the outstanding LDS loads of loop " + loop.name);
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

}  // namespace tandem::amdgpu
