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
// tensor in `renamed` (statements of that block) read the fresh tensor instead.
struct Reload {
  LoopId block = kNoId;
  Stmt before{};
  std::vector<Stmt> renamed;
};

// One way to spill a tensor: the save between `save_after` and `save_before` (statements of
// `save_block`), then the reloads; `bytes` moved by all their executions together.
struct Plan {
  int tensor = kNoId;
  LoopId save_block = kNoId;
  Stmt save_after{};  // the last statement before the point that accesses the tensor
  Stmt save_before{};
  std::vector<Reload> reloads;
  int64_t bytes = 0;
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
std::optional<Plan> plan_spill(const Kernel& k, const Allocator& alloc, const std::vector<Level>& levels, int tensor) {
  bool accumulates = false;
  for (const Instruction& in : k.insts)
    accumulates = accumulates || (!in.erased && accesses(in.writes, tensor) && in.attrs.has(attr::kAccumulate));
  if (accumulates) return std::nullopt;
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

  Plan plan{tensor, owner, block[static_cast<size_t>(last_before)], block[static_cast<size_t>(last_before + 1)], {}, 0};
  auto reload_from = [&](LoopId in, const std::vector<Stmt>& stmts, int first) {
    plan.reloads.push_back({in, stmts[static_cast<size_t>(first)], {stmts.begin() + first, stmts.end()}});
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
  plan.bytes = moved(owner);
  for (const Reload& r : plan.reloads) plan.bytes = std::min(INT64_MAX - plan.bytes, moved(r.block)) + plan.bytes;
  return plan;
}

void insert_before_stmt(Kernel& k, const Stmt& before, InstId inst) {
  if (before.kind == Stmt::kInst)
    k.insert_before(before.id, inst);
  else
    k.insert_before_loop(before.id, inst);
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

InstId add_transfer(Kernel& k, const std::string& opcode, const std::string& name, int to, int from,
                    const std::string& src, const SourceLoc& loc) {
  Instruction in;
  in.name = k.unique_name(name);
  in.opcode = opcode;
  in.writes.push_back(Access{k.tensors[static_cast<size_t>(to)].name, to, {}, loc});
  in.reads.push_back(Access{k.tensors[static_cast<size_t>(from)].name, from, {}, loc});
  in.attrs.set_flag(attr::kSpill);
  if (!src.empty()) in.attrs.set("src", src);
  in.loc = loc;
  return k.add_inst(std::move(in));
}

// Carries out the plan; returns the line that says what moved.
std::string apply(Kernel& k, const Plan& plan, const std::string& dram) {
  const Tensor original = k.tensors[static_cast<size_t>(plan.tensor)];
  Tensor spilled = original;
  spilled.name = k.unique_name(original.name + ".spill");
  spilled.space = dram;
  spilled.attrs = Attributes();
  const int spill_id = add_tensor(k, spilled);
  const InstId save =
      add_transfer(k, "save", original.name + ".save", spill_id, plan.tensor, src_of(k, plan.save_after), original.loc);
  insert_before_stmt(k, plan.save_before, save);
  std::string reloaded;
  for (const Reload& r : plan.reloads) {
    Tensor fresh = original;
    fresh.name = k.unique_name(original.name + ".reload");
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
    const InstId load =
        add_transfer(k, "load", original.name + ".load", fresh_id, spill_id, src_of(k, r.before), original.loc);
    insert_before_stmt(k, r.before, load);
    reloaded += (reloaded.empty() ? "" : ", ") + k.display_name(load) + " before " +
                (r.before.kind == Stmt::kInst ? k.display_name(r.before.id)
                                              : "loop " + k.loops[static_cast<size_t>(r.before.id)].iv) +
                (r.block == kNoId ? "" : " in each iteration of " + k.loops[static_cast<size_t>(r.block)].iv);
  }
  return "%" + original.name + " spilled to %" + spilled.name + ": saved by " + k.display_name(save) +
         ", reloaded by " + reloaded + " (" + std::to_string(plan.bytes) + " bytes moved)";
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
  // Each spill moves one tensor out of the overflow point for good (its reloads are not live
  // there), so the live set there shrinks; the bound only guards against a plan that fails to.
  const size_t max_spills = k.tensors.size();
  for (size_t n = 0; n < max_spills; ++n) {
    const Allocator alloc(k);
    const std::optional<Overflow> o = alloc.first_overflow();
    if (!o || o->space != onchip) break;
    const std::vector<Level> levels = levels_at(k, *o);
    std::vector<Plan> plans;
    for (int t : o->whole_tensors) {
      const bool used_there = o->inst != kNoId && touches(k, Stmt{Stmt::kInst, o->inst}, t);
      if (used_there) continue;
      if (std::optional<Plan> p = plan_spill(k, alloc, levels, t)) plans.push_back(std::move(*p));
    }
    // The least traffic first; among equals the larger tensor, then the one declared first.
    std::stable_sort(plans.begin(), plans.end(), [&](const Plan& a, const Plan& b) {
      if (a.bytes != b.bytes) return a.bytes < b.bytes;
      return bytes_per_partition(k, k.tensors[static_cast<size_t>(a.tensor)]) >
             bytes_per_partition(k, k.tensors[static_cast<size_t>(b.tensor)]);
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
  // The plans keep the kernel's meaning by their conditions; the translation validator checks
  // that they did.
  if (original)
    if (const std::optional<std::string> difference = find_translation_difference(*original, k))
      throw std::logic_error("spilling changed what the kernel computes: " + *difference);
  return notes;
}

}  // namespace tandem
