#include "sched/ir/kernel.h"

#include <algorithm>
#include <cassert>
#include <sstream>
#include <stdexcept>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/target/target.h"

namespace tandem {

std::optional<std::pair<std::string, int64_t>> Loop::advance() const {
  auto adv = attrs.get_string(attr::kAdvance);
  if (!adv) return std::nullopt;
  std::istringstream in(*adv);
  std::string reg, op;
  int64_t step = 0;
  in >> reg >> op >> step;
  std::string rest;
  if (op != "+=" || reg.empty() || in.fail() || in >> rest)  // a step that overflows fails the read
    throw Error(loc, "advance must read 'REGISTER += N', not '" + printable(*adv) + "'");
  return std::make_pair(reg, step);
}

int Kernel::find_tensor(std::string_view n) const {
  const auto name_of = [this](int id) -> const std::string& { return tensors[static_cast<size_t>(id)].name; };
  if (tensors_indexed_ > tensors.size()) tensor_index_.clear(), tensors_indexed_ = 0;
  for (; tensors_indexed_ < tensors.size(); ++tensors_indexed_)
    tensor_index_.insert(tensors[tensors_indexed_].name, static_cast<int>(tensors_indexed_), name_of);
  const int found = tensor_index_.find(n, name_of);
  return found < 0 ? kNoId : found;
}

InstId Kernel::find_inst(const std::string& n) const {
  const auto name_of = [this](int id) -> const std::string& { return insts[static_cast<size_t>(id)].name; };
  if (insts_indexed_ > insts.size()) inst_index_.clear(), insts_indexed_ = 0;
  for (; insts_indexed_ < insts.size(); ++insts_indexed_)
    inst_index_.insert(insts[insts_indexed_].name, static_cast<int>(insts_indexed_), name_of);
  const int found = inst_index_.find(n, name_of);
  if (found < 0) return kNoId;
  if (!insts[static_cast<size_t>(found)].erased) return found;
  for (size_t i = static_cast<size_t>(found) + 1; i < insts.size(); ++i)  // a later one of that name
    if (!insts[i].erased && insts[i].name == n) return static_cast<InstId>(i);
  return kNoId;
}

static void flatten(const Kernel& k, const std::vector<Stmt>& block, std::vector<InstId>& out) {
  for (const Stmt& s : block) {
    if (s.kind == Stmt::kInst)
      out.push_back(s.id);
    else
      flatten(k, k.loops[s.id].body, out);
  }
}

std::vector<InstId> Kernel::program_order() const {
  std::vector<InstId> out;
  out.reserve(insts.size());
  flatten(*this, body, out);
  return out;
}

std::vector<InstId> Kernel::program_order(LoopId loop) const {
  std::vector<InstId> out;
  flatten(*this, loops[loop].body, out);
  return out;
}

std::vector<InstId> Kernel::preheader(LoopId loop) const {
  const std::vector<Stmt>& block = block_of(loops[loop].parent);
  std::vector<InstId> out;
  for (size_t i = 0; i < block.size(); ++i) {
    if (block[i].kind == Stmt::kLoop && block[i].id == loop) {
      size_t j = i;
      while (j > 0 && block[j - 1].kind == Stmt::kInst) --j;
      for (; j < i; ++j) out.push_back(block[j].id);
      break;
    }
  }
  return out;
}

std::vector<LoopId> Kernel::loop_nest(InstId inst) const {
  std::vector<LoopId> nest;
  for (LoopId l = insts[inst].loop; l != kNoId; l = loops[l].parent) nest.push_back(l);
  std::reverse(nest.begin(), nest.end());
  return nest;
}

LoopId Kernel::common_loop(InstId a, InstId b) const { return common_loop_of_loops(insts[a].loop, insts[b].loop); }

LoopId Kernel::common_loop_of_loops(LoopId la, LoopId lb) const {
  // The last loop the two nests share from the outermost: their chains of parents brought to
  // the same length, then walked up together until they meet (no nest vectors: the printer
  // asks this for every carried dep line).
  if (la == lb) return la;
  const auto depth = [this](LoopId l) {
    int d = 0;
    for (; l != kNoId; l = loops[l].parent) ++d;
    return d;
  };
  int da = depth(la), db = depth(lb);
  for (; da > db; --da) la = loops[la].parent;
  for (; db > da; --db) lb = loops[lb].parent;
  while (la != lb) la = loops[la].parent, lb = loops[lb].parent;
  return la;
}

InstId Kernel::add_inst(Instruction inst) {
  edited();
  insts.push_back(std::move(inst));
  return static_cast<InstId>(insts.size() - 1);
}

int Kernel::index_in(const std::vector<Stmt>& block, InstId inst) {
  for (size_t i = 0; i < block.size(); ++i)
    if (block[i].kind == Stmt::kInst && block[i].id == inst) return static_cast<int>(i);
  return -1;
}

void Kernel::insert_before(InstId before, InstId inst) {
  edited();
  LoopId loop = insts[before].loop;
  std::vector<Stmt>& block = block_of(loop);
  int pos = index_in(block, before);
  assert(pos >= 0 && "insert_before: anchor is not in its block");
  block.insert(block.begin() + pos, Stmt{Stmt::kInst, inst});
  insts[inst].loop = loop;
}

void Kernel::erase(InstId inst) {
  edited();
  next_suffix_.clear();  // its name is free again
  std::vector<Stmt>& block = block_of(insts[inst].loop);
  int pos = index_in(block, inst);
  assert(pos >= 0 && "erase: instruction is not in its block");
  block.erase(block.begin() + pos);
  insts[inst].erased = true;
}

void Kernel::move_before(InstId inst, InstId before) {
  edited();
  std::vector<Stmt>& from = block_of(insts[inst].loop);
  int pos = index_in(from, inst);
  assert(pos >= 0 && "move_before: instruction is not in its block");
  from.erase(from.begin() + pos);
  insert_before(before, inst);
}

void Kernel::move_all_before(const std::vector<InstId>& moved, InstId before) {
  if (moved.empty()) return;
  edited();
  std::vector<Stmt>& block = block_of(insts[before].loop);
  std::vector<char> is_moved(insts.size(), 0);
  for (InstId id : moved) {
    assert(insts[id].loop == insts[before].loop && "move_all_before: an instruction is not in the block");
    is_moved[static_cast<size_t>(id)] = 1;
  }
  std::vector<Stmt> out;
  out.reserve(block.size());
  for (const Stmt& s : block) {
    if (s.kind == Stmt::kInst && is_moved[static_cast<size_t>(s.id)]) continue;
    if (s.kind == Stmt::kInst && s.id == before)
      for (InstId id : moved) out.push_back(Stmt{Stmt::kInst, id});
    out.push_back(s);
  }
  block = std::move(out);
}

void Kernel::insert_before_loop(LoopId loop, InstId inst) {
  edited();
  std::vector<Stmt>& block = block_of(loops[loop].parent);
  auto it =
      std::find_if(block.begin(), block.end(), [&](const Stmt& s) { return s.kind == Stmt::kLoop && s.id == loop; });
  assert(it != block.end() && "insert_before_loop: loop is not in its parent block");
  block.insert(it, Stmt{Stmt::kInst, inst});
  insts[inst].loop = loops[loop].parent;
}

void Kernel::reorder_block(LoopId loop, const std::vector<InstId>& order) {
  edited();
  std::vector<Stmt>& block = block_of(loop);
  std::vector<InstId> before, after = order;
  for (const Stmt& s : block) {
    if (s.kind != Stmt::kInst) throw std::logic_error("reorder_block: the block holds a loop");
    before.push_back(s.id);
  }
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  if (before != after) throw std::logic_error("reorder_block: the new order is not a permutation of the block");
  block.clear();
  for (InstId id : order) block.push_back(Stmt{Stmt::kInst, id});
}

void Kernel::insert_at_top(LoopId loop, InstId inst) {
  edited();
  std::vector<Stmt>& block = block_of(loop);
  block.insert(block.begin(), Stmt{Stmt::kInst, inst});
  insts[inst].loop = loop;
}

bool Kernel::in_loop(InstId inst, LoopId loop) const {
  for (LoopId l = insts[inst].loop; l != kNoId; l = loops[l].parent)
    if (l == loop) return true;
  return false;
}

std::string Kernel::unique_name(const std::string& base) const {
  auto taken = [&](const std::string& n) { return find_inst(n) != kNoId || find_tensor(n) != kNoId; };
  if (!taken(base)) return base;
  int& next = next_suffix_[base];
  for (int i = std::max(next, 1);; ++i)
    if (!taken(base + "." + std::to_string(i))) {
      next = i;  // not i + 1: the caller may not take it
      return base + "." + std::to_string(i);
    }
}

std::vector<Access> Kernel::live_out_registers() const {
  std::vector<Access> out;
  auto live = attrs.get_string(attr::kLiveOut);
  if (!live) return out;
  std::istringstream in(*live);
  for (std::string group; std::getline(in, group, ',');) {
    group.erase(std::remove(group.begin(), group.end(), ' '), group.end());
    const size_t open = group.find('['), colon = group.find(':'), close = group.find(']');
    const int t = open == std::string::npos ? kNoId : find_tensor(group.substr(0, open));
    auto number = [&](size_t from, size_t to) -> int64_t {  // digits only, else -1
      const std::string digits = group.substr(from, to - from);
      if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
      return std::stoll(digits);
    };
    const bool ranged = colon != std::string::npos && colon < close;
    const int64_t first = close == std::string::npos ? -1 : number(open + 1, ranged ? colon : close);
    const int64_t last = !ranged ? first : number(colon + 1, close);
    const SpaceInfo* rf = t == kNoId ? nullptr : target->space(tensors[static_cast<size_t>(t)].space);
    if (!rf || !tensors[static_cast<size_t>(t)].register_file || close + 1 != group.size() || first < 0 ||
        last < first || last >= rf->registers)
      throw Error(loc, "live_out names '" + printable(group) +
                           "', not a register group of the register file such as v[100:107]");
    Access a;
    a.tensor = tensors[static_cast<size_t>(t)].name;
    a.tensor_id = t;
    IndexRange r;
    r.lo.constant = first;
    r.hi.constant = last + 1;
    a.dims.push_back(r);
    out.push_back(a);
  }
  return out;
}

int Kernel::virtual_register_file(int physical, int number) {
  Tensor t = tensors[static_cast<size_t>(physical)];
  t.name += "reg" + std::to_string(number);
  t.virtual_number = number;
  if (int existing = find_tensor(t.name); existing != kNoId) return existing;
  tensors.push_back(t);
  return static_cast<int>(tensors.size() - 1);
}

std::string Kernel::display_name(InstId inst) const {
  if (!insts[inst].name.empty()) return "%" + insts[inst].name;
  if (positions_.size() != insts.size()) positions_ = program_positions(*this);
  return "%" + std::to_string(positions_[static_cast<size_t>(inst)]);
}

}  // namespace tandem
