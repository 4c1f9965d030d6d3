// The kernel IR: tensors, accesses, instructions and counted loops. Instructions and loops
// live in arenas indexed by InstId/LoopId; blocks (the kernel body, loop bodies) hold the
// program order as a list of statements. An erased instruction stays in the arena as a
// tombstone so that ids, and the dependence graph's vertices, stay stable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sched/ir/affine.h"
#include "sched/ir/attribute_keys.h"
#include "sched/ir/attributes.h"
#include "sched/support/error.h"
#include "sched/support/name_index.h"

namespace tandem {

struct Target;

using InstId = int32_t;
using LoopId = int32_t;
constexpr int32_t kNoId = -1;

// Limits of a kernel, checked when it is read (docs/ir.md, Limits): loops nest at most
// kMaxLoopDepth deep, and a kernel runs at most kMaxDynamicCount dynamic instructions and loop
// iterations (each instruction once per iteration of its enclosing loops, plus each loop
// iteration), so that counts of instances never overflow 64 bits downstream.
constexpr int kMaxLoopDepth = 256;
constexpr int kMaxDynamicCountLog2 = 48;
constexpr int64_t kMaxDynamicCount = int64_t{1} << kMaxDynamicCountLog2;

struct Tensor {
  std::string name;            // without the %; a register file's implicit tensor is named by its prefix ("v")
  std::string space;           // a memory space of the target
  std::vector<int64_t> shape;  // SBUF/PSUM: shape[0] is the partition dimension
  std::string dtype;
  Attributes attrs;  // `address = N` fixes the tensor's address
  SourceLoc loc;
  bool register_file = false;  // implicit, never printed as a declaration
  int virtual_number = -1;     // a virtual register file (vreg<N>): N
};

// One term of a strided index pattern: `count` indices, `stride` apart.
struct StrideTerm {
  int64_t stride = 1;
  int64_t count = 1;
};

// One dimension of an access: [lo, hi). `single` means the text wrote one index (hi = lo+1).
// `pattern` empty: every index of [lo, hi). Otherwise the indices lo + sum(i_j * stride_j) for
// 0 <= i_j < count_j, outer term first (NKI's access-pattern [step, count] pairs), all inside
// [lo, hi); a pattern that visits exactly [lo, hi) once each is stored empty.
struct IndexRange {
  AffineExpr lo;
  AffineExpr hi;
  bool single = false;
  std::vector<StrideTerm> pattern;

  bool strided() const { return !pattern.empty(); }
};

// A tensor and the index ranges it touches. `dims` empty means the whole tensor. Register
// groups `v[20:23]` are accesses to the register file's tensor with an inclusive range in the
// text and a half-open one here.
struct Access {
  std::string tensor;
  int tensor_id = kNoId;
  std::vector<IndexRange> dims;
  SourceLoc loc;

  bool whole() const { return dims.empty(); }
};

struct Instruction {
  std::string name;  // without '%'; empty when unnamed
  std::string opcode;
  std::string engine;  // engine or DMA queue; empty = the scheduler assigns one
  std::vector<Access> writes;
  std::vector<Access> reads;
  Attributes attrs;
  SourceLoc loc;
  LoopId loop = kNoId;  // innermost enclosing loop
  bool erased = false;
};

struct Stmt {
  enum Kind { kInst, kLoop } kind;
  int32_t id;
};

struct Loop {
  std::string iv;  // "%k"
  int64_t lo = 0;
  int64_t hi = 0;
  Attributes attrs;
  std::vector<Stmt> body;
  LoopId parent = kNoId;
  int depth = 1;  // 1 for a loop in the kernel body
  SourceLoc loc;

  int64_t trip_count() const { return hi - lo; }
  // `advance = "v10 += 512"`: the address register that moves after every iteration, and by
  // how much; nullopt without the attribute, an Error when it is malformed.
  std::optional<std::pair<std::string, int64_t>> advance() const;
};

// A dependence written in the text (`dep %a -> %b anti distance=1`).
struct ExplicitDep {
  InstId src = kNoId;
  InstId dst = kNoId;
  int kind = 0;  // DepKind, kept as int so that this header does not need the graph
  int distance = 0;
  LoopId loop = kNoId;  // carrying loop when distance > 0
  SourceLoc loc;
};

class Kernel {
 public:
  std::string name;  // without '@'
  std::string target_name;
  std::shared_ptr<const Target> target;
  Attributes attrs;  // `deps_listed`: the dep lines are the whole graph, no analysis
  std::string file;
  SourceLoc loc;

  // Only ever appended to: a tensor is never renamed or removed in place (find_tensor's index
  // extends itself over new tensors and would miss a renamed one).
  std::vector<Tensor> tensors;
  std::vector<Instruction> insts;
  std::vector<Loop> loops;
  std::vector<Stmt> body;
  std::vector<ExplicitDep> explicit_deps;

  int find_tensor(std::string_view name) const;  // the first of that name; kNoId when absent
  // The first live instruction of that name; kNoId when absent. An instruction's name is set
  // before it is added and never changed (find_inst's index extends itself over new ones).
  InstId find_inst(const std::string& name) const;

  // Live instructions in program order (nested loop bodies flattened in place).
  std::vector<InstId> program_order() const;
  // The same for the instructions inside `loop` (its nested loops' included).
  std::vector<InstId> program_order(LoopId loop) const;

  // The instructions immediately before `loop` in its parent block (its preheader).
  std::vector<InstId> preheader(LoopId loop) const;

  std::vector<Stmt>& block_of(LoopId loop) { return loop == kNoId ? body : loops[loop].body; }
  const std::vector<Stmt>& block_of(LoopId loop) const { return loop == kNoId ? body : loops[loop].body; }

  // Enclosing loops of `inst`, outermost first.
  std::vector<LoopId> loop_nest(InstId inst) const;
  // Innermost loop enclosing both (kNoId when only the kernel body does).
  LoopId common_loop(InstId a, InstId b) const;
  LoopId common_loop_of_loops(LoopId a, LoopId b) const;  // the same for two loops (kNoId: the body)

  // Appends an instruction to the arena (not yet placed in any block).
  InstId add_inst(Instruction inst);
  // Places `inst` in the block that holds `before`, immediately before it.
  void insert_before(InstId before, InstId inst);
  // Removes `inst` from its block and marks it erased.
  void erase(InstId inst);
  // Moves `inst` (already placed) to just before `before`, in `before`'s block.
  void move_before(InstId inst, InstId before);
  // move_before of each of `moved` in turn (they end up before `before` in that order), in one
  // pass over the block: all of them are in `before`'s block.
  void move_all_before(const std::vector<InstId>& moved, InstId before);
  // Places `inst` immediately before `loop`, in its parent block (the end of its preheader).
  void insert_before_loop(LoopId loop, InstId inst);
  // Sets the block of `loop` (the kernel body for kNoId) to `block`, the same statements in
  // another order.
  void replace_block(LoopId loop, std::vector<Stmt> block) {
    edited();
    block_of(loop) = std::move(block);
  }
  // Rewrites the body of `loop` (instructions only) to `order`, a permutation of it.
  void reorder_block(LoopId loop, const std::vector<InstId>& order);
  // Places `inst` first in the body of `loop`.
  void insert_at_top(LoopId loop, InstId inst);
  // Is `inst` inside `loop`, at any depth?
  bool in_loop(InstId inst, LoopId loop) const;
  // `base` if no instruction or tensor uses it, else base.1, base.2, ...
  std::string unique_name(const std::string& base) const;
  // Position of `inst` in `block`, or -1.
  static int index_in(const std::vector<Stmt>& block, InstId inst);

  // The register groups of the `live_out` attribute ("v[100:107], v[108:115]"): registers
  // whose final contents are the kernel's result. Error when it names something else.
  std::vector<Access> live_out_registers() const;

  // The file of virtual register `number` of register file `physical` ("vreg0" for "v"): a
  // placeholder left for register allocation, indexed like the physical file. Created on
  // first use; returns its tensor id.
  int virtual_register_file(int physical, int number);

  // Display name for messages and dep lines: "%name", or "%<program position>" if unnamed.
  std::string display_name(InstId inst) const;

  bool deps_listed() const { return attrs.has(attr::kDepsListed); }

 private:
  // Program positions for display_name, rebuilt after an edit through the methods above.
  mutable std::vector<int> positions_;
  void edited() { positions_.clear(); }
  // find_tensor's index: name -> first tensor of that name, over tensors[0, tensors_indexed_).
  // Tensors are only ever appended, so the index is extended on the next look-up (and built
  // again if the list shrank); a tensor renamed in place is found under neither name.
  mutable NameIndex tensor_index_;
  mutable size_t tensors_indexed_ = 0;
  // find_inst's index, the same way over insts[0, insts_indexed_) (an erased instruction's
  // name may be reused: a hit on one falls back to a scan).
  mutable NameIndex inst_index_;
  mutable size_t insts_indexed_ = 0;
  // unique_name's memory, per base: every suffix below it was taken when last asked. Names
  // are only added, so it holds until an instruction is erased (erase() forgets it); without
  // it, naming one barrier per loop would try every earlier suffix, each by a scan of the
  // program: quadratic in the number of loops.
  mutable std::unordered_map<std::string, int> next_suffix_;
};

}  // namespace tandem
