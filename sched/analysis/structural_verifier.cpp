#include "sched/analysis/structural_verifier.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "sched/analysis/allocator.h"
#include "sched/ir/kernel_queries.h"
#include "sched/support/name_index.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

class Verifier {
 public:
  Verifier(const Kernel& k, const DepGraph& g) : k_(k), g_(g) {}

  std::vector<std::string> run(const StructureChecks& checks) {
    tensors();
    structure();
    instructions();
    edges();
    if (checks.capacity)
      if (auto problem = find_capacity_problem(k_)) problems_.push_back("capacity: " + problem->message);
    return problems_;
  }

 private:
  void problem(const std::string& p) { problems_.push_back(p); }

  bool valid_inst(int64_t id) const { return id >= 0 && id < static_cast<int64_t>(k_.insts.size()); }
  bool valid_loop(int64_t id) const { return id >= 0 && id < static_cast<int64_t>(k_.loops.size()); }

  // "%name", or "%N" by program position when the structure allows numbering, else the id.
  std::string inst_name(InstId id) const {
    if (!valid_inst(id)) return "#" + std::to_string(id);
    const Instruction& in = k_.insts[static_cast<size_t>(id)];
    if (!in.name.empty()) return "%" + in.name;
    if (structure_ok_ && !in.erased) return k_.display_name(id);
    return "unnamed " + in.opcode + " #" + std::to_string(id);
  }
  std::string loop_name(LoopId l) const {
    return valid_loop(l) ? "loop " + k_.loops[static_cast<size_t>(l)].iv
                         : "loop #" + std::to_string(l) + " (no such loop)";
  }
  std::string block_name(LoopId l) const { return l == kNoId ? "the kernel body" : "the body of " + loop_name(l); }

  void tensors() {
    // A tensor repeats a name when an earlier one has it. The index is built here rather
    // than asked of Kernel::find_tensor: the verifier checks the kernel a pass left, so it
    // does not trust an index that pass may have left stale.
    tensor_names_.clear();
    tensor_names_.reserve(k_.tensors.size());
    std::vector<bool> repeated(k_.tensors.size(), false);
    tensor_space_.assign(k_.tensors.size(), nullptr);
    const SpaceInfo* space = nullptr;
    for (size_t i = 0; i < k_.tensors.size(); ++i)
      repeated[i] =
          tensor_names_.insert(k_.tensors[i].name, static_cast<int>(i), TensorName{k_}) != static_cast<int>(i);
    for (size_t i = 0; i < k_.tensors.size(); ++i) {
      const Tensor& t = k_.tensors[i];
      if (repeated[i]) problem("tensor %" + t.name + " is declared twice");
      // Most tensors share a few spaces: look a space up again only when it changes.
      if (i == 0 || t.space != k_.tensors[i - 1].space) space = k_.target->space(t.space);
      tensor_space_[i] = space;
      if (!space) problem("tensor %" + t.name + " is in space '" + t.space + "', which the target does not have");
      for (int64_t d : t.shape)
        if (d <= 0) problem("tensor %" + t.name + " has a dimension of " + std::to_string(d));
    }
  }

  // Placement: every live instruction and every loop exactly once, in the block it records.
  void structure() {
    std::vector<int> inst_seen(k_.insts.size(), 0), loop_seen(k_.loops.size(), 0);
    std::vector<LoopId> placed_in(k_.insts.size(), kNoId);
    const size_t before = problems_.size();
    walk(kNoId, k_.body, inst_seen, loop_seen, placed_in);
    // Per block, what breaks the permutation: an instruction twice, or one it lost.
    std::map<LoopId, std::string> broken;
    for (size_t i = 0; i < k_.insts.size(); ++i) {
      const Instruction& in = k_.insts[i];
      const InstId id = static_cast<InstId>(i);
      if (in.erased) continue;
      if (inst_seen[i] == 0) {
        std::string& s = broken[in.loop];
        s += (s.empty() ? "" : ", ") + inst_name(id) + " is missing";
      } else if (inst_seen[i] > 1) {
        std::string& s = broken[placed_in[i]];
        s += (s.empty() ? "" : ", ") + inst_name(id) + " appears " + std::to_string(inst_seen[i]) + " times";
      }
    }
    for (const auto& [loop, what] : broken)
      problem(block_name(loop) + " is not a permutation of its instructions: " + what);
    for (size_t l = 0; l < k_.loops.size(); ++l) {
      if (loop_seen[l] == 0) problem(loop_name(static_cast<LoopId>(l)) + " is in no block");
      if (loop_seen[l] > 1)
        problem(loop_name(static_cast<LoopId>(l)) + " appears " + std::to_string(loop_seen[l]) + " times");
    }
    structure_ok_ = problems_.size() == before;
  }

  void walk(LoopId loop, const std::vector<Stmt>& block, std::vector<int>& inst_seen, std::vector<int>& loop_seen,
            std::vector<LoopId>& placed_in) {
    for (const Stmt& s : block) {
      if (s.kind == Stmt::kInst) {
        if (!valid_inst(s.id)) {
          problem(block_name(loop) + " holds instruction #" + std::to_string(s.id) + ", which does not exist");
          continue;
        }
        const Instruction& in = k_.insts[static_cast<size_t>(s.id)];
        if (in.erased)
          problem(inst_name(s.id) + " is erased but still in " + block_name(loop));
        else if (in.loop != loop)
          problem(inst_name(s.id) + " is in " + block_name(loop) + " but records " + block_name(in.loop));
        ++inst_seen[static_cast<size_t>(s.id)];
        placed_in[static_cast<size_t>(s.id)] = loop;
        continue;
      }
      if (!valid_loop(s.id)) {
        problem(block_name(loop) + " holds loop #" + std::to_string(s.id) + ", which does not exist");
        continue;
      }
      const Loop& l = k_.loops[static_cast<size_t>(s.id)];
      if (l.parent != loop)
        problem(loop_name(s.id) + " is in " + block_name(loop) + " but records " + block_name(l.parent));
      const int depth = loop == kNoId ? 1 : k_.loops[static_cast<size_t>(loop)].depth + 1;
      if (l.depth != depth)
        problem(loop_name(s.id) + " has depth " + std::to_string(l.depth) + " but is nested " + std::to_string(depth) +
                " deep");
      if (l.hi <= l.lo)
        problem(loop_name(s.id) + " runs no iteration (" + std::to_string(l.lo) + " to " + std::to_string(l.hi) + ")");
      if (l.iv.size() < 2 || l.iv[0] != '%') problem("loop variable '" + l.iv + "' does not start with %");
      for (LoopId p = loop; valid_loop(p); p = k_.loops[static_cast<size_t>(p)].parent)
        if (k_.loops[static_cast<size_t>(p)].iv == l.iv)
          problem(loop_name(s.id) + " shadows an enclosing loop's variable");
      if (loop_seen[static_cast<size_t>(s.id)]++ == 0) walk(s.id, l.body, inst_seen, loop_seen, placed_in);
    }
  }

  // Names, opcodes, engines and every access of every live instruction.
  void instructions() {
    std::map<std::string, InstId> names;
    std::set<std::string> loop_vars;
    for (const Loop& l : k_.loops) loop_vars.insert(l.iv.empty() ? l.iv : l.iv.substr(1));
    for (size_t i = 0; i < k_.insts.size(); ++i) {
      const Instruction& in = k_.insts[i];
      const InstId id = static_cast<InstId>(i);
      if (in.erased) continue;
      if (!in.name.empty()) {
        if (!names.emplace(in.name, id).second) problem("two instructions are named %" + in.name);
        if (is_tensor_name(in.name)) problem("instruction %" + in.name + " has the name of a tensor");
        if (loop_vars.count(in.name)) problem("instruction %" + in.name + " has the name of a loop variable");
      }
      const OpcodeInfo* op = opcode(in.opcode);
      if (!op)
        problem(inst_name(id) + " has opcode '" + in.opcode + "', which target '" + k_.target->name +
                "' does not have");
      if (op && !in.engine.empty() && !k_.target->can_run(*op, in.engine))
        problem(inst_name(id) + " runs on '" + in.engine + "', which cannot run '" + in.opcode + "'");
      if (!valid_loop(in.loop) && in.loop != kNoId)
        problem(inst_name(id) + " records " + loop_name(in.loop));
      else if (structure_ok_)
        if (std::string p = start_problem(k_, id); !p.empty()) problem(inst_name(id) + ": " + p);
      for (const Access& a : in.reads) access(id, a);
      for (const Access& a : in.writes) access(id, a);
    }
  }

  bool encloses(LoopId loop, InstId id) const {
    if (!structure_ok_) {  // follow parents carefully: they may be broken
      int guard = 0;
      for (LoopId l = k_.insts[static_cast<size_t>(id)].loop;
           valid_loop(l) && guard++ <= static_cast<int>(k_.loops.size()); l = k_.loops[static_cast<size_t>(l)].parent)
        if (l == loop) return true;
      return false;
    }
    const LoopId innermost =
        inst_loop_.empty() ? k_.insts[static_cast<size_t>(id)].loop : inst_loop_[static_cast<size_t>(id)];
    for (LoopId l = innermost; l != kNoId; l = k_.loops[static_cast<size_t>(l)].parent)  // as Kernel::in_loop
      if (l == loop) return true;
    return false;
  }

  void access(InstId id, const Access& a) {
    // Messages are built only for a problem (the verifier runs after every pass).
    const auto who = [&] { return inst_name(id); };
    if (a.tensor_id < 0 || a.tensor_id >= static_cast<int>(k_.tensors.size())) {
      problem(who() + " accesses %" + a.tensor + ", which is not declared");
      return;
    }
    const Tensor& t = k_.tensors[static_cast<size_t>(a.tensor_id)];
    const auto tensor = [&] { return (t.register_file ? "" : "%") + t.name; };  // messages only
    if (a.tensor != t.name) problem(who() + " accesses '" + a.tensor + "' resolved to " + tensor());
    if (a.whole()) return;
    const size_t rank = t.register_file ? 1 : t.shape.size();
    if (a.dims.size() != rank) {
      problem(who() + " accesses " + tensor() + " with " + std::to_string(a.dims.size()) + " indices but it has " +
              std::to_string(rank) + " dimensions");
      return;
    }
    bool in_scope = true, uses_register = false;
    std::set<std::string> said;  // once per access, though both ends of a range name the variable
    auto once = [&](const std::string& p) {
      if (said.insert(p).second) problem(p);
    };
    for (const IndexRange& r : a.dims)
      for (const AffineExpr* e : {&r.lo, &r.hi})
        for (const AffineTerm& term : e->terms) {
          if (term.symbol.empty() || term.symbol[0] != '%') {
            uses_register = true;
            if (term.loop != kNoId) once(who() + ": address register " + term.symbol + " is resolved to a loop");
            continue;
          }
          if (!valid_loop(term.loop) || k_.loops[static_cast<size_t>(term.loop)].iv != term.symbol) {
            once(who() + " names " + term.symbol + " in its access to " + tensor() + ", which is no loop's variable");
            in_scope = false;
          } else if (!encloses(term.loop, id)) {
            once(who() + " names loop variable " + term.symbol + " outside its loop (in its access to " + tensor() +
                 ")");
            in_scope = false;
          }
        }
    if (!in_scope || uses_register) return;  // a register's value is known only at run time
    const SpaceInfo* space = tensor_space_[static_cast<size_t>(a.tensor_id)];
    for (size_t d = 0; d < rank; ++d) {
      const int64_t size = t.register_file ? (space ? space->registers : 0) : t.shape[d];
      const int64_t lo = value_range(k_, a.dims[d].lo).first, hi = value_range(k_, a.dims[d].hi).second;
      if (lo < 0 || hi > size)
        problem(who() + " accesses " + tensor() + " out of bounds: dimension " + std::to_string(d) + " reaches [" +
                std::to_string(lo) + ", " + std::to_string(hi) + ") but its size is " + std::to_string(size));
      else if (least_extent(k_, a.dims[d]) <= 0)
        problem(who() + " accesses an empty range of " + tensor() + " in dimension " + std::to_string(d));
    }
  }

  // One edge (of the graph or a dep line): live ends, a kind, a distance, an enclosing loop.
  void edge(const char* what, InstId src, InstId dst, int kind, int distance, LoopId loop) {
    const bool valid_kind = kind >= static_cast<int>(DepKind::Ordered) && kind <= static_cast<int>(DepKind::Flow);
    const auto line = [&] {
      return std::string(what) + " " + inst_name(src) + " -> " + inst_name(dst) + " " +
             (valid_kind ? dep_kind_name(static_cast<DepKind>(kind)) : "?");
    };
    for (InstId end : {src, dst}) {
      if (!valid_inst(end)) {
        problem(line() + ": instruction " + inst_name(end) + " does not exist");
        return;
      }
      if (erased_[static_cast<size_t>(end)]) {
        problem(line() + ": " + inst_name(end) + " is erased");
        return;
      }
    }
    if (!valid_kind) problem(line() + " has no valid kind");
    if (distance < 0) problem(line() + " has distance " + std::to_string(distance));
    if (distance > 0) {
      if (!valid_loop(loop))
        problem(line() + " at distance " + std::to_string(distance) + " has no carrying loop");
      else if (!encloses(loop, src) || !encloses(loop, dst))
        problem(line() + " is carried by " + loop_name(loop) + ", which does not enclose both");
    }
  }

  void edges() {
    if (g_.num_vertices() != k_.insts.size())
      problem("the dependence graph has " + std::to_string(g_.num_vertices()) + " vertices for " +
              std::to_string(k_.insts.size()) + " instructions");
    // Each instruction's erased flag and innermost loop in a flat copy: the edges reach the
    // instructions in no useful order, and a kernel's arena outgrows the caches.
    erased_.resize(k_.insts.size());
    inst_loop_.resize(k_.insts.size());
    for (size_t i = 0; i < k_.insts.size(); ++i) {
      erased_[i] = k_.insts[i].erased;
      inst_loop_[i] = k_.insts[i].loop;
    }
    g_.for_each_edge([&](const DepEdgeRef& e) {
      edge("edge", e.src, e.dst, static_cast<int>(e.props.kind), e.props.distance, e.props.loop);
    });
    for (const ExplicitDep& d : k_.explicit_deps) edge("dep line", d.src, d.dst, d.kind, d.distance, d.loop);
  }

  // Target::opcode, remembered per name: a kernel uses a few opcodes, its instructions many
  // times each, and a scan of those few costs less than the target's hash look-up.
  const OpcodeInfo* opcode(const std::string& name) {
    for (const auto& [n, op] : opcodes_)
      if (n == name) return op;
    return opcodes_.emplace_back(name, k_.target->opcode(name)).second;
  }

  // NameIndex's names: the kernel's tensors'.
  struct TensorName {
    const Kernel& k;
    const std::string& operator()(int i) const { return k.tensors[static_cast<size_t>(i)].name; }
  };
  bool is_tensor_name(std::string_view name) const { return tensor_names_.find(name, TensorName{k_}) >= 0; }

  const Kernel& k_;
  const DepGraph& g_;
  NameIndex tensor_names_;                                          // tensors() fills it
  std::vector<const SpaceInfo*> tensor_space_;                      // and this: each tensor's space, nullptr if none
  std::vector<std::pair<std::string, const OpcodeInfo*>> opcodes_;  // opcode()'s
  std::vector<uint8_t> erased_;                                     // edges() fills them
  std::vector<LoopId> inst_loop_;
  bool structure_ok_ = false;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> find_structural_problems(const Kernel& k, const DepGraph& g, const StructureChecks& checks) {
  return Verifier(k, g).run(checks);
}

std::string describe_structural_problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return "";
  std::string s = problems.front();
  if (problems.size() > 1)
    s += "; and " + std::to_string(problems.size() - 1) + " more problem" + (problems.size() > 2 ? "s" : "");
  return s;
}

}  // namespace tandem
