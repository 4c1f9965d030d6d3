#include "sched/driver/spill.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "sched/analysis/allocator.h"
#include "sched/analysis/translation_validator.h"
#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {
namespace {

// Where the overflow stands, one level per block from the kernel body inward: the block (its
// loop; kNoId for the kernel body) and the index of its statement that holds the point. At a
// loop's start or end the loop's own body is the last level, the point before every statement
// (index -1) or after them all (index = its size).
struct Level {
  LoopId block = kNoId;
  int index = 0;
};

// A reload into a fresh tensor, placed before `before` in `block`; the accesses of the spilled
// tensor in `renamed` (statements of that block) read the fresh tensor instead. Without `load`
// the fresh tensor is only a new name: `before` writes all of it before anything reads it.
struct Reload {
  LoopId block = kNoId;
  Stmt before{};
  std::vector<Stmt> renamed;
  bool load = true;
};

// One way to spill a tensor: the save between `save_after` and `save_before` (statements of
// `save_block`), then the reloads; `bytes` moved by all their executions together. With
// `refill`, the statement that gave the tensor all its value by loading it from DRAM nothing
// writes (refill_source): the reloads load it again and nothing is saved. A load is repeated
// at each reload and goes from its place when nothing reads it there any more; a loop of loads
// is copied to each reload, but moves to the first when nothing reads the tensor between it
// and the point (`fill_moves`).
struct Plan {
  int tensor = kNoId;
  LoopId save_block = kNoId;
  Stmt save_after{};  // the last statement before the point that accesses the tensor
  Stmt save_before{};
  std::vector<Reload> reloads;
  std::optional<Stmt> refill;
  bool fill_moves = false;
  int64_t bytes = 0;
  bool saves() const {
    return !refill && std::any_of(reloads.begin(), reloads.end(), [](const Reload& r) { return r.load; });
  }
};

// Calls f on every instruction of the statement (a loop's, at any depth); `K` is Kernel or const
// Kernel.
template <class K, class F>
void for_each_inst(K& k, const Stmt& s, const F& f) {
  if (s.kind == Stmt::kInst) {
    f(k.insts[static_cast<size_t>(s.id)]);
    return;
  }
  for (const Stmt& c : k.loops[static_cast<size_t>(s.id)].body) for_each_inst(k, c, f);
}

bool accesses(const std::vector<Access>& list, int tensor) {
  return std::any_of(list.begin(), list.end(), [&](const Access& a) { return a.tensor_id == tensor; });
}

bool touches(const Kernel& k, const Stmt& s, int tensor) {
  bool found = false;
  for_each_inst(
      k, s, [&](const Instruction& in) { found = found || accesses(in.writes, tensor) || accesses(in.reads, tensor); });
  return found;
}

bool writes(const Kernel& k, const Stmt& s, int tensor) {
  bool found = false;
  for_each_inst(k, s, [&](const Instruction& in) { found = found || accesses(in.writes, tensor); });
  return found;
}

// Indices of the statements of `block` that access the tensor, ascending.
std::vector<int> users_in(const Kernel& k, const std::vector<Stmt>& block, int tensor) {
  std::vector<int> out;
  for (size_t i = 0; i < block.size(); ++i)
    if (touches(k, block[i], tensor)) out.push_back(static_cast<int>(i));
  return out;
}

// Does the access cover every element of its tensor?
bool covers_whole(const Kernel& k, const Access& a) {
  if (a.whole()) return true;
  const std::vector<int64_t>& shape = k.tensors[static_cast<size_t>(a.tensor_id)].shape;
  if (a.dims.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    const IndexRange& r = a.dims[d];
    if (r.strided() || !r.lo.is_constant() || !r.hi.is_constant() || r.lo.constant != 0 || r.hi.constant != shape[d])
      return false;
  }
  return true;
}

// An instruction statement that writes all of the tensor and reads none of it: the value
// before it is dead there.
bool overwrites(const Kernel& k, const Stmt& s, int tensor) {
  if (s.kind != Stmt::kInst) return false;
  const Instruction& in = k.insts[static_cast<size_t>(s.id)];
  if (accesses(in.reads, tensor) || in.attrs.has(attr::kAccumulate)) return false;
  return std::any_of(in.writes.begin(), in.writes.end(),
                     [&](const Access& a) { return a.tensor_id == tensor && covers_whole(k, a); });
}

// Per tensor, whether an instruction writes it, and whether one accumulates into it: gathered
// once per spill, asked for every tensor that could go.
struct Writers {
  std::vector<char> written, accumulated;
  explicit Writers(const Kernel& k) : written(k.tensors.size(), 0), accumulated(k.tensors.size(), 0) {
    for (const Instruction& in : k.insts) {
      if (in.erased) continue;
      for (const Access& a : in.writes) {
        written[static_cast<size_t>(a.tensor_id)] = 1;
        if (in.attrs.has(attr::kAccumulate)) accumulated[static_cast<size_t>(a.tensor_id)] = 1;
      }
    }
  }
};

// A load of all of the tensor from a DRAM tensor that no instruction writes: loading it again
// anywhere gives the same value.
bool loads_input(const Kernel& k, const Writers& w, const Instruction& in, int tensor) {
  if (in.opcode != "load" || in.writes.size() != 1 || in.reads.size() != 1 || in.writes.front().tensor_id != tensor)
    return false;
  const int from = in.reads.front().tensor_id;
  const auto space = k.target->spaces.find(k.tensors[static_cast<size_t>(from)].space);
  return space != k.target->spaces.end() && space->second.role == SpaceRole::Dram &&
         !w.written[static_cast<size_t>(from)];
}

// A loop whose body is one load of the tensor from DRAM nothing writes, one slice per
// iteration along one dimension (`%t[0:128, %k, 0:512]` for %k over that dimension), the others
// whole: together its iterations load all of the tensor.
bool loop_loads_input(const Kernel& k, const Writers& w, LoopId l, int tensor) {
  const Loop& loop = k.loops[static_cast<size_t>(l)];
  if (loop.body.size() != 1 || loop.body.front().kind != Stmt::kInst) return false;
  const Instruction& in = k.insts[static_cast<size_t>(loop.body.front().id)];
  if (!loads_input(k, w, in, tensor) || in.writes.front().whole()) return false;
  const std::vector<int64_t>& shape = k.tensors[static_cast<size_t>(tensor)].shape;
  const std::vector<IndexRange>& dims = in.writes.front().dims;
  if (dims.size() != shape.size() || loop.lo != 0) return false;
  int sliced = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const IndexRange& r = dims[d];
    if (r.strided()) return false;
    if (r.lo.is_constant() && r.hi.is_constant() && r.lo.constant == 0 && r.hi.constant == shape[d]) continue;
    const bool by_iteration = r.lo.terms.size() == 1 && r.hi.terms.size() == 1 && r.lo.terms[0].loop == l &&
                              r.hi.terms[0].loop == l && r.lo.terms[0].coeff == 1 && r.hi.terms[0].coeff == 1 &&
                              r.lo.constant == 0 && r.hi.constant == 1 && loop.hi == shape[d];
    if (!by_iteration) return false;
    ++sliced;
  }
  return sliced == 1;
}

// The statement of `block` that gave the tensor its value at index `x`, when loading it again
// gives the same: the only statement before `x` that writes the tensor, a load of all of it
// from DRAM nothing writes, or a loop of such loads (loop_loads_input).
std::optional<Stmt> refill_source(const Kernel& k, const Writers& w, const std::vector<Stmt>& block, int x,
                                  int tensor) {
  std::optional<int> fill;
  for (int i = 0; i < x; ++i) {
    if (!writes(k, block[static_cast<size_t>(i)], tensor)) continue;
    if (fill) return std::nullopt;
    fill = i;
  }
  if (!fill) return std::nullopt;
  const Stmt& s = block[static_cast<size_t>(*fill)];
  if (s.kind == Stmt::kInst) {
    const Instruction& in = k.insts[static_cast<size_t>(s.id)];
    if (loads_input(k, w, in, tensor) && covers_whole(k, in.writes.front())) return s;
    return std::nullopt;
  }
  // Its induction variable is the kernel's only one of that name, so that it moves anywhere.
  const std::string& iv = k.loops[static_cast<size_t>(s.id)].iv;
  if (loop_loads_input(k, w, s.id, tensor) &&
      std::count_if(k.loops.begin(), k.loops.end(), [&](const Loop& l) { return l.iv == iv; }) == 1)
    return s;
  return std::nullopt;
}

std::vector<Level> levels_at(const Kernel& k, const Overflow& o) {
  std::vector<Level> out;
  LoopId inner = o.loop;
  if (o.inst != kNoId) {
    inner = k.insts[static_cast<size_t>(o.inst)].loop;
    out.push_back({inner, Kernel::index_in(k.block_of(inner), o.inst)});
  } else {
    out.push_back({o.loop, o.loop_end ? static_cast<int>(k.loops[static_cast<size_t>(o.loop)].body.size()) : -1});
  }
  for (LoopId l = inner; l != kNoId; l = k.loops[static_cast<size_t>(l)].parent) {
    const std::vector<Stmt>& parent = k.block_of(k.loops[static_cast<size_t>(l)].parent);
    const auto it =
        std::find_if(parent.begin(), parent.end(), [&](const Stmt& s) { return s.kind == Stmt::kLoop && s.id == l; });
    out.push_back({k.loops[static_cast<size_t>(l)].parent, static_cast<int>(it - parent.begin())});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// How many times a statement of `block` runs.
int64_t executions(const Kernel& k, LoopId block) {
  int64_t n = 1;
  for (LoopId l = block; l != kNoId; l = k.loops[static_cast<size_t>(l)].parent)
    n = n > INT64_MAX / std::max<int64_t>(1, k.loops[static_cast<size_t>(l)].trip_count())
            ? INT64_MAX
            : n * std::max<int64_t>(1, k.loops[static_cast<size_t>(l)].trip_count());
  return n;
}

// The spill of `tensor` around the overflow, when one keeps the kernel's meaning:
//   - the block B: the innermost one on the way to the point that holds every access of the
//     tensor, which no loop around B carries from one iteration to the next (the allocator
//     does not find it live where B's loop starts);
//   - no instruction accumulates into it;
//   - in B, a statement before the point's accesses it (its value comes from there): the save
//     follows the last such statement;
//   - the statement X of B that holds the point does not access it: the reload goes before
//     the next statement that does, and that statement and the rest of B read the reload; or
//     X is a loop that only reads it, at a point where X's body does not access it: the reload
//     goes before the first statement of X's body that does, all of X's body reads it, and a
//     statement after X that accesses it gets a reload of its own as above.
// A reload before a statement that writes all of the tensor without reading it loads nothing
// (the tensor is only renamed there), and a tensor that one load filled from DRAM nothing
// writes is loaded from there again instead of being saved (refill_source).
std::optional<Plan> plan_spill(const Kernel& k, const Allocator& alloc, const Writers& w,
                               const std::vector<Level>& levels, int tensor) {
  if (w.accumulated[static_cast<size_t>(tensor)]) return std::nullopt;
  size_t b = 0;
  for (; b + 1 < levels.size(); ++b) {
    const std::vector<Stmt>& block = k.block_of(levels[b].block);
    const std::vector<int> users = users_in(k, block, tensor);
    if (users.size() != 1 || users.front() != levels[b].index) break;
  }
  const LoopId owner = levels[b].block;
  if (owner != kNoId && alloc.live_at_loop(tensor, owner, false)) return std::nullopt;
  const std::vector<Stmt>& block = k.block_of(owner);
  const int x = levels[b].index;
  if (x < 0 || x >= static_cast<int>(block.size())) return std::nullopt;
  const std::vector<int> users = users_in(k, block, tensor);
  const auto before_x = std::lower_bound(users.begin(), users.end(), x);
  if (before_x == users.begin()) return std::nullopt;  // nothing before the point gives it a value
  const auto next = std::upper_bound(users.begin(), users.end(), x);
  const bool x_uses = before_x != next;
  const int last_before = *(before_x - 1);

  Plan plan{tensor,
            owner,
            block[static_cast<size_t>(last_before)],
            block[static_cast<size_t>(last_before + 1)],
            {},
            refill_source(k, w, block, x, tensor)};
  if (plan.refill && plan.refill->kind == Stmt::kLoop)
    plan.fill_moves = users.front() == last_before;  // the fill is its only access before x
  auto reload_from = [&](LoopId in, const std::vector<Stmt>& stmts, int first) {
    const Stmt& before = stmts[static_cast<size_t>(first)];
    plan.reloads.push_back({in, before, {stmts.begin() + first, stmts.end()}, !overwrites(k, before, tensor)});
  };
  if (x_uses) {
    const Stmt& X = block[static_cast<size_t>(x)];
    if (X.kind != Stmt::kLoop || writes(k, X, tensor)) return std::nullopt;
    const std::vector<Stmt>& body = k.loops[static_cast<size_t>(X.id)].body;
    const std::vector<int> inner = users_in(k, body, tensor);
    if (std::binary_search(inner.begin(), inner.end(), levels[b + 1].index)) return std::nullopt;
    reload_from(X.id, body, inner.front());
  }
  if (next != users.end())
    reload_from(owner, block, *next);
  else if (!x_uses)
    return std::nullopt;

  const Tensor& t = k.tensors[static_cast<size_t>(tensor)];
  int64_t bytes = static_cast<int64_t>(dtype_bytes(t.dtype));
  for (int64_t d : t.shape) bytes = bytes > INT64_MAX / std::max<int64_t>(1, d) ? INT64_MAX : bytes * d;
  auto moved = [&](LoopId in) {
    const int64_t n = executions(k, in);
    return bytes > INT64_MAX / n ? INT64_MAX : bytes * n;
  };
  plan.bytes = plan.saves() ? moved(owner) : 0;
  for (const Reload& r : plan.reloads)
    if (r.load) plan.bytes = std::min(INT64_MAX - plan.bytes, moved(r.block)) + plan.bytes;
  return plan;
}

void insert_before_stmt(Kernel& k, const Stmt& before, InstId inst) {
  if (before.kind == Stmt::kInst)
    k.insert_before(before.id, inst);
  else
    k.insert_before_loop(before.id, inst);
}

// Places loop `l` just before `before`, in `before`'s block, taking it from its block unless
// it is new (`placed` false).
void place_loop_before(Kernel& k, LoopId l, const Stmt& before, bool placed) {
  Loop& loop = k.loops[static_cast<size_t>(l)];
  if (placed) {
    std::vector<Stmt> from = k.block_of(loop.parent);
    from.erase(
        std::find_if(from.begin(), from.end(), [&](const Stmt& s) { return s.kind == Stmt::kLoop && s.id == l; }));
    k.replace_block(loop.parent, std::move(from));
  }
  const LoopId parent = before.kind == Stmt::kInst ? k.insts[static_cast<size_t>(before.id)].loop
                                                   : k.loops[static_cast<size_t>(before.id)].parent;
  std::vector<Stmt> to = k.block_of(parent);
  to.insert(
      std::find_if(to.begin(), to.end(), [&](const Stmt& s) { return s.kind == before.kind && s.id == before.id; }),
      Stmt{Stmt::kLoop, l});
  k.replace_block(parent, std::move(to));
  loop.parent = parent;
  loop.depth = parent == kNoId ? 1 : k.loops[static_cast<size_t>(parent)].depth + 1;
}

// A copy of loop `l` of loads (loop_loads_input), not placed: its own induction variable, its
// load's accesses indexed by it.
LoopId copy_load_loop(Kernel& k, LoopId l) {
  Loop copy = k.loops[static_cast<size_t>(l)];
  std::string iv = copy.iv;
  for (int n = 1; std::any_of(k.loops.begin(), k.loops.end(), [&](const Loop& o) { return o.iv == iv; }); ++n)
    iv = copy.iv + "." + std::to_string(n);
  copy.iv = iv;
  Instruction load = k.insts[static_cast<size_t>(copy.body.front().id)];
  if (!load.name.empty()) load.name = k.unique_name(load.name);
  const LoopId id = static_cast<LoopId>(k.loops.size());
  for (auto* list : {&load.writes, &load.reads})
    for (Access& a : *list)
      for (IndexRange& r : a.dims)
        for (AffineExpr* e : {&r.lo, &r.hi})
          for (AffineTerm& t : e->terms)
            if (t.loop == l) t.loop = id, t.symbol = iv;
  copy.body = {Stmt{Stmt::kInst, k.add_inst(std::move(load))}};
  k.insts[static_cast<size_t>(copy.body.front().id)].loop = id;
  k.loops.push_back(std::move(copy));
  return id;
}

std::string src_of(const Kernel& k, const Stmt& s) {
  std::optional<std::string> src;
  for_each_inst(k, s, [&](const Instruction& in) {
    if (!src) src = in.attrs.get_string("src");
  });
  return src.value_or("");
}

int add_tensor(Kernel& k, Tensor t) {
  k.tensors.push_back(std::move(t));
  return static_cast<int>(k.tensors.size() - 1);
}

// A transfer of the spill into the whole of tensor `to`: a copy of `like` (its opcode, queue,
// attributes and source line, what it reads), or a whole copy of tensor `from` by `opcode`
// with the source line `src`.
InstId add_transfer(Kernel& k, const std::string& opcode, const std::string& name, int to, int from,
                    const std::string& src, const SourceLoc& loc, const Instruction* like = nullptr) {
  Instruction in;
  if (like) {
    in = *like;
    in.writes.clear();
  } else {
    in.opcode = opcode;
    in.reads.push_back(Access{k.tensors[static_cast<size_t>(from)].name, from, {}, loc});
  }
  in.name = k.unique_name(name);
  in.writes.push_back(Access{k.tensors[static_cast<size_t>(to)].name, to, {}, loc});
  in.attrs.set_flag(attr::kSpill);
  if (!like && !src.empty()) in.attrs.set("src", src);
  in.loc = loc;
  return k.add_inst(std::move(in));
}

// The save of the plan into a DRAM tensor of its own, placed; returns that tensor and says
// where it went in `said`.
int place_save(Kernel& k, const Plan& plan, const std::string& dram, std::string& said) {
  const Tensor& original = k.tensors[static_cast<size_t>(plan.tensor)];
  Tensor spilled = original;
  spilled.name = k.unique_name(original.name + ".spill");
  spilled.space = dram;
  spilled.attrs = Attributes();
  const std::string name = original.name;
  const SourceLoc loc = original.loc;
  const int id = add_tensor(k, spilled);
  const InstId save = add_transfer(k, "save", name + ".save", id, plan.tensor, src_of(k, plan.save_after), loc);
  insert_before_stmt(k, plan.save_before, save);
  said = " to %" + spilled.name + ": saved by " + k.display_name(save) + ",";
  return id;
}

// The reload `r` into tensor `fresh` (from the DRAM copy `from`, or by the plan's refill),
// placed; `first`: no reload that loads was placed before it. Returns what it did.
std::string place_reload(Kernel& k, const Plan& plan, const Reload& r, int fresh, int from, bool first) {
  const Tensor original = k.tensors[static_cast<size_t>(plan.tensor)];
  const std::string where =
      (r.before.kind == Stmt::kInst ? k.display_name(r.before.id)
                                    : "loop " + k.loops[static_cast<size_t>(r.before.id)].iv) +
      (r.block == kNoId ? "" : " in each iteration of " + k.loops[static_cast<size_t>(r.block)].iv);
  if (plan.refill && plan.refill->kind == Stmt::kLoop) {
    const bool move = plan.fill_moves && first;
    const LoopId l = move ? plan.refill->id : copy_load_loop(k, plan.refill->id);
    place_loop_before(k, l, r.before, move);
    Instruction& load = k.insts[static_cast<size_t>(k.loops[static_cast<size_t>(l)].body.front().id)];
    load.writes.front().tensor = k.tensors[static_cast<size_t>(fresh)].name;
    load.writes.front().tensor_id = fresh;
    load.attrs.set_flag(attr::kSpill);
    if (!load.attrs.has(attr::kRefills)) load.attrs.set(attr::kRefills, original.name);
    return (move ? "moved before " : "copied as loop " + k.loops[static_cast<size_t>(l)].iv + " before ") + where;
  }
  const Instruction* like = plan.refill ? &k.insts[static_cast<size_t>(plan.refill->id)] : nullptr;
  // A load again of a load again stands for the tensor the first one stood for.
  const bool names_it = like && !like->attrs.has(attr::kRefills);  // `like` moves with k.insts below
  const InstId load =
      add_transfer(k, "load", original.name + ".load", fresh, from, src_of(k, r.before), original.loc, like);
  if (names_it) k.insts[static_cast<size_t>(load)].attrs.set(attr::kRefills, original.name);
  insert_before_stmt(k, r.before, load);
  return k.display_name(load) + " before " + where;
}

// Carries out the plan; returns the line that says what moved.
std::string apply(Kernel& k, const Plan& plan, const std::string& dram) {
  const std::string name = k.tensors[static_cast<size_t>(plan.tensor)].name;
  std::string saved;
  const int from = plan.saves() ? place_save(k, plan, dram, saved) : kNoId;
  std::string reloaded, renamed;  // renamed: the one reload that loads nothing (after X; plan_spill)
  for (const Reload& r : plan.reloads) {
    Tensor fresh = k.tensors[static_cast<size_t>(plan.tensor)];
    fresh.name = k.unique_name(name + (r.load ? ".reload" : ".next"));
    const int fresh_id = add_tensor(k, fresh);
    for (const Stmt& s : r.renamed) {
      auto rename = [&](Instruction& in) {
        for (auto* list : {&in.writes, &in.reads})
          for (Access& a : *list)
            if (a.tensor_id == plan.tensor) {
              a.tensor = fresh.name;
              a.tensor_id = fresh_id;
            }
      };
      for_each_inst(k, s, rename);
    }
    if (r.load)
      reloaded += (reloaded.empty() ? "" : ", ") + place_reload(k, plan, r, fresh_id, from, reloaded.empty());
    else
      renamed = k.display_name(r.before.id) + ", which writes all of it: %" + fresh.name + " from there";
  }
  std::string line = "%" + name;
  if (plan.refill && plan.refill->kind == Stmt::kLoop) {
    line += " spilled: its loop of loads, loop " + k.loops[static_cast<size_t>(plan.refill->id)].iv + ", " + reloaded;
  } else if (plan.refill) {
    const InstId source = plan.refill->id;
    line +=
        " spilled: loaded again from %" + k.insts[static_cast<size_t>(source)].reads.front().tensor + " by " + reloaded;
    bool read = false;
    for (const Instruction& in : k.insts) read = read || (!in.erased && accesses(in.reads, plan.tensor));
    if (!read) {
      line += "; " + k.display_name(source) + " removed (nothing reads it)";
      k.erase(source);
    }
  } else if (!reloaded.empty()) {
    line += " spilled" + saved + " reloaded by " + reloaded;
  }
  if (!renamed.empty()) line += (reloaded.empty() ? " is dead until " : "; dead until ") + renamed;
  return line + " (" + std::to_string(plan.bytes) + " bytes moved)";
}

}  // namespace

std::vector<std::string> spill_to_fit(Kernel& k) {
  std::vector<std::string> notes;
  std::optional<Kernel> original;  // before the first spill
  std::string dram, onchip;
  for (const auto& [name, space] : k.target->spaces) {
    if (space.role == SpaceRole::Dram && dram.empty()) dram = name;
    if (space.role == SpaceRole::OnChip && onchip.empty()) onchip = name;
  }
  const OpcodeInfo* load = k.target->opcode("load");
  const OpcodeInfo* save = k.target->opcode("save");
  if (dram.empty() || onchip.empty() || !load || load->op_class != OpClass::Load || !save ||
      save->op_class != OpClass::Store)
    return notes;
  // Each spill takes one tensor out of the live set at the overflow point (its reloads are not
  // live there), but a loop of loads moved to a reload may overflow another point: the bound
  // stops spills that only move the overflow about, and then they are undone below.
  const size_t max_spills = k.tensors.size();
  for (size_t n = 0; n < max_spills; ++n) {
    const Allocator alloc(k);
    const std::optional<Overflow> o = alloc.first_overflow();
    if (!o || o->space != onchip) break;
    const std::vector<Level> levels = levels_at(k, *o);
    const Writers writers(k);
    std::vector<Plan> plans;
    for (int t : o->whole_tensors) {
      const bool used_there = o->inst != kNoId && touches(k, Stmt{Stmt::kInst, o->inst}, t);
      if (used_there) continue;
      if (std::optional<Plan> p = plan_spill(k, alloc, writers, levels, t)) plans.push_back(std::move(*p));
    }
    // A spill that alone makes the point fit first, then the least traffic; among equals the
    // larger tensor, then the one declared first.
    const auto size = [&](const Plan& p) { return bytes_per_partition(k, k.tensors[static_cast<size_t>(p.tensor)]); };
    std::stable_sort(plans.begin(), plans.end(), [&](const Plan& a, const Plan& b) {
      const bool a_fits = size(a) >= o->excess, b_fits = size(b) >= o->excess;
      if (a_fits != b_fits) return a_fits;
      if (a.bytes != b.bytes) return a.bytes < b.bytes;
      return size(a) > size(b);
    });
    bool spilled = false;
    for (const Plan& plan : plans) {
      Kernel trial = k;
      const std::string note = apply(trial, plan, dram);
      const Allocator after(trial);
      auto live_there = [&](int t) {
        return o->inst != kNoId ? after.live_at(t, o->inst) : after.live_at_loop(t, o->loop, o->loop_end);
      };
      bool freed = !live_there(plan.tensor);
      for (size_t t = k.tensors.size(); t < trial.tensors.size() && freed; ++t)
        if (trial.tensors[t].space == onchip) freed = !live_there(static_cast<int>(t));
      if (!freed) continue;
      if (!original) original = k;
      k = std::move(trial);
      notes.push_back(o->space + " overflowed at " +
                      (o->inst != kNoId ? k.display_name(o->inst)
                                        : std::string(o->loop_end ? "the end of loop " : "the start of loop ") +
                                              k.loops[static_cast<size_t>(o->loop)].iv) +
                      ": " + note);
      spilled = true;
      break;
    }
    if (!spilled) break;
  }
  // Spills that leave the space overflowing are undone: the capacity check then reports the
  // kernel's own tensors.
  if (original) {
    const std::optional<Overflow> left = Allocator(k).first_overflow();
    if (left && left->space == onchip) {
      k = std::move(*original);
      return {onchip + " overflows with every spill that can be made: " + std::to_string(notes.size()) +
              " spills undone"};
    }
  }
  // The plans keep the kernel's meaning by their conditions; the translation validator checks
  // that they did.
  if (original)
    if (const std::optional<std::string> difference = find_translation_difference(*original, k))
      throw std::logic_error("spilling changed what the kernel computes: " + *difference);
  return notes;
}

}  // namespace tandem
