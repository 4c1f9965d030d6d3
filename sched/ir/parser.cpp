#include "sched/ir/parser.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "sched/ir/attribute_keys.h"
#include "sched/ir/kernel_queries.h"
#include "sched/ir/lexer.h"
#include "sched/support/output.h"
#include "sched/support/suggest.h"
#include "sched/target/target.h"

namespace tandem {

namespace {

const char* kDepKindNames[] = {"invalid", "ordered", "anti", "output", "flow"};

// A run of decimal digits (an Int token's text) as an int64_t; false when out of range.
bool decimal_value(std::string_view digits, int64_t& value) {
  const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return err == std::errc() && end == digits.data() + digits.size();
}

// Index arithmetic is exact: every expression's terms together stay below 2^62 in magnitude
// over the iteration space (so sums and differences of two of them fit in 64 bits), and a
// kernel's dynamic instructions and loop iterations stay below kMaxDynamicCount, so that the
// passes, the lowering and the simulator count them without overflow (docs/ir.md, Limits).
using Wide = __int128;
constexpr Wide kIndexLimit = Wide{1} << 62;
constexpr int kMaxTensorBytesLog2 = 62;

std::string wide_str(Wide v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  std::string digits;
  for (; v != 0; v /= 10) digits += static_cast<char>('0' + static_cast<int>(neg ? -(v % 10) : v % 10));
  if (neg) digits += '-';
  return {digits.rbegin(), digits.rend()};
}

class Parser {
 public:
  Parser(Lexer& lexer, const ParseOptions& opts) : lexer_(lexer), opts_(opts) {}

  Kernel parse() {
    expect_keyword("kernel");
    k_.loc = peek().loc;
    k_.name = expect(Tok::At, "kernel name (@name)").text;
    expect_keyword("target");
    expect(Tok::Equal, "'='");
    const Token tgt = expect(Tok::String, "target name string");
    k_.target_name = tgt.text;
    k_.target = opts_.target_override ? opts_.target_override : find_target(std::string(tgt.text), tgt.loc);
    add_register_files();
    if (attrs_before_block()) k_.attrs = parse_attrs();
    (void)k_.live_out_registers();  // a malformed live_out is the kernel header's error
    expect(Tok::LBrace, "'{' to open the kernel body");
    // Room for a statement per line up front: growing by doubling would move every
    // instruction and tensor read so far; pages never written are not resident.
    const size_t lines = lexer_.lines();
    k_.insts.reserve(lines);
    k_.tensors.reserve(k_.tensors.size() + lines);
    parse_block(kNoId, k_.body);
    expect(Tok::RBrace, "'}'");
    if (peek().kind != Tok::End) fail(peek().loc, "unexpected " + describe(peek()) + " after the kernel");
    resolve_deps();
    return std::move(k_);
  }

 private:
  // A declared tensor or instruction: the names behind names_ (NameIndex holds none).
  struct Declared {
    std::string_view name;
    SourceLoc loc;
    InstId inst = kNoId;  // the instruction of that name, once added; kNoId for a tensor
  };
  auto declared_name() const {
    return [this](int id) { return declared_[static_cast<size_t>(id)].name; };
  }

  // ---- token helpers ----
  // The tokens read ahead are ahead_[head_, end). A token the parser keeps is a copy (a
  // reference from peek() lasts until the next call).
  const Token& peek(size_t ahead = 0) {
    if (head_ == ahead_.size()) ahead_.clear(), head_ = 0;
    while (ahead_.size() - head_ <= ahead) ahead_.push_back(lexer_.next());
    return ahead_[head_ + ahead];
  }
  Token next() {
    const Token t = peek();
    if (t.kind != Tok::End) ++head_;
    return t;
  }
  bool at(Tok k) { return peek().kind == k; }
  bool at_keyword(const char* kw) { return at(Tok::Ident) && peek().text == kw; }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End:
        return "end of file";
      case Tok::Ident:
        return "'" + printable(t.text) + "'";
      case Tok::Percent:
        return "'%" + printable(t.text) + "'";
      case Tok::At:
        return "'@" + printable(t.text) + "'";
      case Tok::String:
        return "string \"" + printable(t.text) + "\"";
      default:
        return "'" + printable(t.text) + "'";
    }
  }

  [[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) const { throw Error(loc, msg); }

  Token expect(Tok k, const char* what) {
    if (!at(k)) fail(peek().loc, std::string("expected ") + what + ", found " + describe(peek()));
    return next();
  }
  void expect_keyword(const char* kw) {
    if (!at_keyword(kw)) fail(peek().loc, std::string("expected '") + kw + "', found " + describe(peek()));
    next();
  }

  int64_t parse_int(const char* what) {
    bool neg = false;
    if (at(Tok::Minus)) {
      next();
      neg = true;
    }
    const Token t = peek();
    if (t.kind == Tok::Real) fail(t.loc, std::string(what) + " must be an integer, found '" + printable(t.text) + "'");
    if (t.kind != Tok::Int) fail(t.loc, std::string("expected ") + what + " (an integer), found " + describe(t));
    next();
    int64_t v = 0;
    if (!decimal_value(t.text, v)) fail(t.loc, "integer '" + printable(t.text) + "' is out of range");
    return neg ? -v : v;
  }

  // Checked arithmetic for index expressions and counts: an overflow is the input's error.
  int64_t checked_add(int64_t a, int64_t b, const SourceLoc& loc) const {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) fail(loc, "integer overflow in index arithmetic");
    return r;
  }
  int64_t checked_mul(int64_t a, int64_t b, const SourceLoc& loc) const {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail(loc, "integer overflow in index arithmetic");
    return r;
  }

  // ---- names ----
  // Tensors, instructions and loop variables share one namespace; sibling loops may reuse a
  // loop variable. Names are the tokens' views into the source.
  // Returns the declaration's index in declared_.
  int declare(std::string_view name, const SourceLoc& loc, const char* what) {
    auto clash = [&](const SourceLoc& other) {
      fail(loc, std::string("duplicate name '%") + printable(name) + "': " + what +
                    " clashes with the one declared at " + other.str());
    };
    if (auto iv = loop_vars_.find(name); iv != loop_vars_.end()) clash(iv->second);
    const int id = static_cast<int>(declared_.size());
    const int found = names_.insert(name, id, declared_name());
    if (found != id) clash(declared_[static_cast<size_t>(found)].loc);
    declared_.push_back({name, loc});
    return id;
  }

  void declare_loop_var(std::string_view name, const SourceLoc& loc) {
    if (const int found = names_.find(name, declared_name()); found >= 0)
      fail(loc, "duplicate name '%" + printable(name) + "': loop variable clashes with the one declared at " +
                    declared_[static_cast<size_t>(found)].loc.str());
    loop_vars_[name] = loc;  // the latest declaration, for messages
  }

  void add_register_files() {
    for (const auto& [space_name, s] : k_.target->spaces) {
      if (!s.is_register_file()) continue;
      Tensor t;
      t.name = s.register_prefix;
      t.space = space_name;
      t.shape = {s.registers};
      t.dtype = "b32";
      t.register_file = true;
      k_.tensors.push_back(t);
    }
  }

  // ---- attributes ----
  // A `{` right after a kernel or loop header is its attribute dictionary only when another `{`
  // (the body) follows the matching `}`.
  bool attrs_before_block() {
    if (!at(Tok::LBrace)) return false;
    // The tokens read ahead first, then the lexer's look-ahead: the brace may close a loop
    // body of 100k lines, whose tokens are not kept.
    for (size_t i = 1; head_ + i < ahead_.size(); ++i) {
      const Tok k = ahead_[head_ + i].kind;
      if (k == Tok::RBrace || k == Tok::LBrace || k == Tok::End)
        return k == Tok::RBrace && peek(i + 1).kind == Tok::LBrace;
    }
    const auto [brace, brace_follows] = lexer_.next_brace();
    return brace == Tok::RBrace && brace_follows;
  }

  // `key_locs`, when given, receives where each key is written (for errors found later).
  Attributes parse_attrs(std::map<std::string, SourceLoc>* key_locs = nullptr) {
    Attributes attrs;
    expect(Tok::LBrace, "'{'");
    while (!at(Tok::RBrace)) {
      const Token key = expect(Tok::Ident, "attribute name");
      std::string key_text(key.text);
      if (attrs.has(key_text)) fail(key.loc, "duplicate attribute '" + printable(key_text) + "'");
      if (key_locs) (*key_locs)[key_text] = key.loc;
      if (at(Tok::Equal)) {
        next();
        attrs.set(key_text, parse_attr_value());
      } else {
        attrs.set_flag(key_text);
      }
      if (!at(Tok::Comma)) break;
      next();
    }
    expect(Tok::RBrace, "',' or '}' in attributes");
    return attrs;
  }

  AttrValue parse_attr_value() {
    bool neg = false;
    if (at(Tok::Minus)) {
      next();
      neg = true;
    }
    const Token t = next();
    switch (t.kind) {
      case Tok::Int: {
        int64_t v = 0;
        if (!decimal_value(t.text, v)) fail(t.loc, "integer '" + printable(t.text) + "' is out of range");
        return neg ? -v : v;
      }
      case Tok::Real: {
        double v = std::strtod(std::string(t.text).c_str(), nullptr);
        if (!std::isfinite(v)) fail(t.loc, "number '" + printable(t.text) + "' is out of range");
        return neg ? -v : v;
      }
      case Tok::String:
        if (neg) fail(t.loc, "'-' before a string");
        return std::string(t.text);
      default:
        fail(t.loc, "expected an attribute value (integer, number or string), found " + describe(t));
    }
  }

  // ---- body ----
  void parse_block(LoopId loop, std::vector<Stmt>& block) {
    while (!at(Tok::RBrace) && !at(Tok::End)) {
      if (at_keyword("tensor")) {
        if (loop != kNoId) fail(peek().loc, "tensors are declared in the kernel body, not inside a loop");
        parse_tensor();
      } else if (at_keyword("loop")) {
        LoopId id = parse_loop(loop);
        block.push_back({Stmt::kLoop, id});
      } else if (at_keyword("dep")) {
        parse_dep(loop);
      } else if (at(Tok::Percent) || at(Tok::Ident)) {
        InstId id = parse_inst(loop);
        block.push_back({Stmt::kInst, id});
      } else {
        fail(peek().loc, "expected an instruction, 'loop', 'tensor' or 'dep', found " + describe(peek()));
      }
    }
  }

  void parse_tensor() {
    next();  // tensor
    Tensor t;
    const Token name = expect(Tok::Percent, "tensor name (%name)");
    t.name = name.text;
    t.loc = name.loc;
    declare(name.text, name.loc, "tensor");
    if (k_.target->register_file(t.name))
      fail(name.loc,
           "tensor %" + t.name + " has the name of register file '" + t.name + "' of target '" + k_.target->name + "'");
    expect(Tok::Colon, "':' after the tensor name");
    const Token space = expect(Tok::Ident, "memory space");
    t.space = space.text;
    const SpaceInfo* s = k_.target->space(t.space);
    if (!s || s->is_register_file())
      fail(space.loc, "tensor %" + printable(t.name) + " is in space '" + printable(space.text) + "', which target '" +
                          k_.target->name + "' does not have" + space_list());
    expect(Tok::LBracket, "'[' and the tensor's shape");
    // Gathered in a reused vector, then allocated once at its size.
    shape_.clear();
    do {
      const Token d = peek();
      int64_t v = parse_int("tensor dimension");
      if (v <= 0) fail(d.loc, "tensor dimensions must be positive, found " + std::to_string(v));
      shape_.push_back(v);
      if (!at(Tok::Comma)) break;
      next();
    } while (true);
    t.shape.assign(shape_.begin(), shape_.end());
    expect(Tok::RBracket, "',' or ']' in the shape");
    if (s->partitions > 0 && t.shape[0] > s->partitions)
      fail(space.loc, "tensor %" + printable(t.name) + " has " + std::to_string(t.shape[0]) + " partitions but " +
                          t.space + " has " + std::to_string(s->partitions));
    const Token dt = expect(Tok::Ident, "element type");
    t.dtype = dt.text;
    const size_t element_bytes = dtype_bytes(t.dtype);
    if (element_bytes == 0) fail(dt.loc, "unknown element type '" + printable(dt.text) + "'");
    // Byte sizes are 64-bit everywhere after this (capacity, DMA bytes, traces).
    Wide bytes = static_cast<Wide>(element_bytes);
    for (int64_t d : t.shape) {
      bytes *= d;
      if (bytes >= (Wide{1} << kMaxTensorBytesLog2))
        fail(name.loc, "tensor %" + printable(t.name) + " is too large: 2^" + std::to_string(kMaxTensorBytesLog2) +
                           " bytes or more (a tensor holds less than 2^" + std::to_string(kMaxTensorBytesLog2) + ")");
    }
    if (at(Tok::LBrace)) t.attrs = parse_attrs();
    k_.tensors.push_back(std::move(t));
  }

  std::string space_list() const {
    std::string s;
    for (const auto& [n, sp] : k_.target->spaces)
      if (!sp.is_register_file()) s += (s.empty() ? " (it has " : ", ") + n;
    return s.empty() ? s : s + ")";
  }

  LoopId parse_loop(LoopId parent) {
    const SourceLoc loc = peek().loc;
    next();  // loop
    Loop l;
    l.loc = loc;
    l.parent = parent;
    l.depth = parent == kNoId ? 1 : k_.loops[parent].depth + 1;
    if (l.depth > kMaxLoopDepth)
      fail(loc, "loops nest " + std::to_string(l.depth) + " deep here; at most " + std::to_string(kMaxLoopDepth) +
                    " are allowed");
    const Token iv = expect(Tok::Percent, "induction variable (%name)");
    l.iv = "%";
    l.iv += iv.text;
    for (LoopId p = parent; p != kNoId; p = k_.loops[p].parent)
      if (k_.loops[p].iv == l.iv) fail(iv.loc, "loop variable " + printable(l.iv) + " shadows an enclosing loop's");
    declare_loop_var(iv.text, iv.loc);
    expect(Tok::Equal, "'=' after the induction variable");
    l.lo = parse_int("loop lower bound");
    expect_keyword("to");
    const Token hi_tok = peek();
    l.hi = parse_int("loop upper bound");
    if (l.hi <= l.lo)
      fail(hi_tok.loc, "empty loop: " + printable(l.iv) + " = " + std::to_string(l.lo) + " to " + std::to_string(l.hi) +
                           " runs no iteration");
    if (static_cast<Wide>(l.hi) - l.lo > kMaxDynamicCount)
      fail(hi_tok.loc, "loop " + printable(l.iv) + " runs " + wide_str(static_cast<Wide>(l.hi) - l.lo) +
                           " iterations; a kernel runs at most 2^" + std::to_string(kMaxDynamicCountLog2) +
                           " dynamic instructions and loop iterations");
    if (attrs_before_block()) l.attrs = parse_attrs();
    expect(Tok::LBrace, "'{' to open the loop body");
    LoopId id = static_cast<LoopId>(k_.loops.size());
    k_.loops.push_back(l);
    std::vector<Stmt> body;
    const int64_t outer_count = count_;
    count_ = 0;
    parse_block(id, body);
    expect(Tok::RBrace, "'}' to close the loop");
    k_.loops[id].body = std::move(body);
    // Dynamic instructions and loop iterations: each iteration counts once, plus its body.
    const Wide loop_count = static_cast<Wide>(k_.loops[id].trip_count()) * (static_cast<Wide>(count_) + 1);
    if (loop_count + outer_count > kMaxDynamicCount)
      fail(loc, "loop " + printable(k_.loops[id].iv) + " makes the kernel run more than 2^" +
                    std::to_string(kMaxDynamicCountLog2) + " dynamic instructions and loop iterations (the limit)");
    count_ = outer_count + static_cast<int64_t>(loop_count);
    return id;
  }

  struct PendingDep {
    std::string src, dst;
    SourceLoc src_loc, dst_loc;
    ExplicitDep dep;
    std::string loop_iv;
    SourceLoc loop_loc;
  };

  void parse_dep(LoopId /*scope*/) {
    PendingDep p;
    p.dep.loc = peek().loc;
    next();  // dep
    const Token a = expect(Tok::Percent, "source instruction (%name)");
    p.src = a.text;
    p.src_loc = a.loc;
    expect(Tok::RArrow, "'->'");
    const Token b = expect(Tok::Percent, "destination instruction (%name)");
    p.dst = b.text;
    p.dst_loc = b.loc;
    const Token kind = expect(Tok::Ident, "dependence kind (flow, anti, output, ordered)");
    int kind_index = -1;
    for (int i = 1; i < 5; ++i)
      if (kind.text == kDepKindNames[i]) kind_index = i;
    if (kind_index < 0)
      fail(kind.loc, "unknown dependence kind '" + printable(kind.text) + "' (use flow, anti, output, ordered)");
    p.dep.kind = kind_index;
    while (at(Tok::Ident) && (peek().text == "distance" || peek().text == "loop") && peek(1).kind == Tok::Equal) {
      const std::string_view key = next().text;
      next();  // =
      if (key == "distance") {
        const Token d = peek();
        int64_t dist = parse_int("dependence distance");
        if (dist < 0) fail(d.loc, "dependence distance must not be negative");
        if (dist > INT_MAX) fail(d.loc, "dependence distance " + std::to_string(dist) + " is out of range");
        p.dep.distance = static_cast<int>(dist);
      } else {
        const Token l = expect(Tok::Percent, "loop variable (%name)");
        p.loop_iv = "%";
        p.loop_iv += l.text;
        p.loop_loc = l.loc;
      }
    }
    pending_deps_.push_back(p);
  }

  InstId resolve_inst_ref(const std::string& ref, const SourceLoc& loc, const std::vector<InstId>& order) {
    if (!ref.empty() && std::isdigit(static_cast<unsigned char>(ref[0]))) {
      bool digits = ref.size() < 10 && std::all_of(ref.begin(), ref.end(), ::isdigit);
      size_t idx = digits ? std::stoul(ref) : order.size();
      if (idx < order.size() && k_.insts[order[idx]].name.empty()) return order[idx];
    } else if (const int found = names_.find(ref, declared_name()); found >= 0) {
      if (const InstId id = declared_[static_cast<size_t>(found)].inst; id != kNoId) return id;
    }
    fail(loc, "dependence names a missing instruction '%" + printable(ref) + "'");
  }

  void resolve_deps() {
    std::vector<InstId> order = k_.program_order();
    for (PendingDep& p : pending_deps_) {
      p.dep.src = resolve_inst_ref(p.src, p.src_loc, order);
      p.dep.dst = resolve_inst_ref(p.dst, p.dst_loc, order);
      LoopId common = k_.common_loop(p.dep.src, p.dep.dst);
      if (!p.loop_iv.empty()) {
        LoopId found = kNoId;
        for (LoopId l = common; l != kNoId; l = k_.loops[l].parent)
          if (k_.loops[l].iv == p.loop_iv) found = l;
        if (found == kNoId) fail(p.loop_loc, "loop " + printable(p.loop_iv) + " does not enclose both instructions");
        p.dep.loop = found;
      } else {
        p.dep.loop = common;
      }
      if (p.dep.distance > 0 && p.dep.loop == kNoId)
        fail(p.dep.loc, "a loop-carried dependence needs a loop enclosing both %" + printable(p.src) + " and %" +
                            printable(p.dst));
      if (p.dep.distance == 0) p.dep.loop = kNoId;
      k_.explicit_deps.push_back(p.dep);
    }
  }

  // ---- instructions ----
  InstId parse_inst(LoopId loop) {
    Instruction inst;
    inst.loop = loop;
    inst.loc = peek().loc;
    int declared = -1;  // its name's index in declared_, if it has one
    if (at(Tok::Percent)) {
      const Token n = next();
      if (std::isdigit(static_cast<unsigned char>(n.text[0])))
        fail(n.loc, "instruction names must start with a letter or '_': '%" + printable(n.text) + "'");
      inst.name = n.text;
      declared = declare(n.text, n.loc, "instruction");
      expect(Tok::Equal, "'=' after the instruction name");
    }
    const Token op = expect(Tok::Ident, "opcode");
    if (op.text == "tensor" || op.text == "loop" || op.text == "dep" || op.text == "kernel")
      fail(op.loc, "expected an opcode, found keyword '" + std::string(op.text) + "'");
    inst.opcode = op.text;
    const OpcodeInfo* info = k_.target->opcode(inst.opcode);
    if (!info) {
      std::vector<std::string> known;
      for (const auto& [name, o] : k_.target->opcodes) known.push_back(name);
      fail(op.loc, "unknown opcode '" + printable(op.text) + "' for target '" + k_.target->name + "'" +
                       did_you_mean(inst.opcode, known));
    }
    if (at_access_start()) parse_access_list(inst.writes, loop);
    // `%x = load %a %A[...]`: without the arrow the read would start the next instruction.
    if (!inst.writes.empty() && at_access_start() && peek(1).kind != Tok::Equal)
      fail(peek().loc, "expected '<-' between what '" + printable(op.text) + "' writes and what it reads, found " +
                           describe(peek()));
    if (at(Tok::LArrow)) {
      next();
      if (!at_access_start()) fail(peek().loc, "expected an access after '<-', found " + describe(peek()));
      parse_access_list(inst.reads, loop);
    }
    // A transfer moves what it reads into what it writes; without either it would move nothing
    // and still be charged to a DMA queue.
    if (is_dma_class(info->op_class) && (inst.writes.empty() || inst.reads.empty()))
      fail(op.loc, "'" + inst.opcode + "' is a transfer: it needs what it writes and, after '<-', what it reads (" +
                       (inst.writes.empty() ? "it writes nothing" : "it reads nothing") + ")");
    if (at_keyword("on")) {
      next();
      const Token e = expect(Tok::Ident, "engine or DMA queue name");
      inst.engine = e.text;
      if (!k_.target->can_run(*info, inst.engine))
        fail(e.loc, "'" + inst.opcode + "' cannot run on '" + printable(e.text) + "' (" + engines_for(*info) + ")");
    }
    std::map<std::string, SourceLoc> attr_locs;
    if (at(Tok::LBrace)) inst.attrs = parse_attrs(&attr_locs);
    InstId id = k_.add_inst(std::move(inst));
    if (std::string problem = start_problem(k_, id); !problem.empty()) fail(attr_locs.at(attr::kStart), problem);
    if (declared >= 0) declared_[static_cast<size_t>(declared)].inst = id;
    ++count_;
    return id;
  }

  std::string engines_for(const OpcodeInfo& info) const {
    if (info.engines.empty()) return "it takes no engine";
    std::string s = "it runs on ";
    for (size_t i = 0; i < info.engines.size(); ++i) {
      if (i) s += ", ";
      s += info.engines[i] == "dma" ? "a DMA queue q0..q" + std::to_string(k_.target->dma_queues.size() - 1)
                                    : info.engines[i];
    }
    return s;
  }

  bool at_access_start() {
    if (at(Tok::Percent)) return true;
    return at(Tok::Ident) && peek(1).kind == Tok::LBracket && register_group_file(peek().text) != kNoId;
  }

  // The tensor a register group's prefix names: the register file (`v`) or one of its virtual
  // registers (`vreg0`, left by wmma-reorder for register allocation); kNoId for neither.
  int register_group_file(std::string_view text) {
    for (const auto& [n, s] : k_.target->spaces) {
      if (!s.is_register_file() || text.rfind(s.register_prefix, 0) != 0) continue;
      const int physical = k_.find_tensor(s.register_prefix);
      if (text == s.register_prefix) return physical;
      const std::string virt = s.register_prefix + "reg";
      if (text.rfind(virt, 0) != 0) continue;
      const std::string_view num = text.substr(virt.size());
      int64_t number = 0;
      if (!num.empty() && num.size() < 7 && std::all_of(num.begin(), num.end(), ::isdigit) &&
          (num[0] != '0' || num.size() == 1) && decimal_value(num, number))
        return k_.virtual_register_file(physical, static_cast<int>(number));
    }
    return kNoId;
  }

  void parse_access_list(std::vector<Access>& out, LoopId loop) {
    out.push_back(parse_access(loop));
    while (at(Tok::Comma)) {
      next();
      out.push_back(parse_access(loop));
    }
  }

  Access parse_access(LoopId loop) {
    Access a;
    a.loc = peek().loc;
    if (at(Tok::Ident)) {
      if (register_group_file(peek().text) != kNoId) return parse_register_group(loop);
      // `matmul %acc <- %a, b`: a tensor written without its '%'.
      const int t = k_.find_tensor(peek().text);
      const bool tensor = t != kNoId && !k_.tensors[static_cast<size_t>(t)].register_file;
      fail(peek().loc, "expected a tensor (%name) or a register group, found " + describe(peek()) +
                           (tensor ? " (did you mean '%" + printable(peek().text) + "'?)" : ""));
    }
    const Token name = expect(Tok::Percent, "tensor (%name)");
    a.tensor = name.text;
    a.tensor_id = k_.find_tensor(name.text);
    if (a.tensor_id == kNoId || k_.tensors[a.tensor_id].register_file)
      fail(name.loc, "unknown tensor '%" + printable(name.text) + "'");
    const Tensor& t = k_.tensors[a.tensor_id];
    if (at(Tok::LBracket)) {
      next();
      dim_locs_.clear();
      a.dims.reserve(t.shape.size());
      do {
        dim_locs_.push_back(peek().loc);
        IndexRange r;
        r.lo = parse_expr(loop);
        if (at(Tok::Colon)) {
          next();
          r.hi = parse_expr(loop);
          if (at(Tok::Colon)) parse_pattern(r);
        } else {
          r.single = true;
          r.hi = r.lo;
          r.hi.constant = checked_add(r.lo.constant, 1, dim_locs_.back());
        }
        a.dims.push_back(std::move(r));
        if (!at(Tok::Comma)) break;
        next();
      } while (true);
      expect(Tok::RBracket, "',' or ']' in the access");
      if (a.dims.size() != t.shape.size())
        fail(a.loc, "access to %" + printable(t.name) + " has " + std::to_string(a.dims.size()) +
                        " indices but the tensor has " + std::to_string(t.shape.size()) + " dimensions");
      for (size_t d = 0; d < a.dims.size(); ++d) check_bounds(t, a.dims[d], d, dim_locs_[d]);
    }
    return a;
  }

  // pattern := ':' INT | ':' '[' '[' INT ',' INT ']' { ',' '[' INT ',' INT ']' } ']'  after lo : hi.
  // `:s` is one term of stride s covering [lo, hi). A pattern visits indices inside [lo, hi),
  // whose length must not depend on the loops; a dense one is stored as no pattern.
  void parse_pattern(IndexRange& r) {
    const SourceLoc loc = next().loc;
    if (!(r.hi - r.lo).is_constant()) fail(loc, "a strided range needs lo and hi that differ by a constant");
    const int64_t extent = (r.hi - r.lo).constant;
    if (extent <= 0) fail(loc, "empty index range before the stride");
    if (at(Tok::LBracket)) {
      next();
      do {
        expect(Tok::LBracket, "'[' opening a [stride, count] pair");
        StrideTerm t;
        t.stride = parse_int("stride");
        expect(Tok::Comma, "',' between stride and count");
        t.count = parse_int("count");
        expect(Tok::RBracket, "']' closing a [stride, count] pair");
        if (t.stride < 1 || t.count < 1) fail(loc, "a [stride, count] pair needs stride >= 1 and count >= 1");
        r.pattern.push_back(t);
        if (!at(Tok::Comma)) break;
        next();
      } while (true);
      expect(Tok::RBracket, "',' or ']' after the [stride, count] pairs");
    } else {
      const int64_t stride = parse_int("stride");
      if (stride < 1) fail(loc, "stride " + std::to_string(stride) + " must be at least 1");
      r.pattern.push_back({stride, (extent + stride - 1) / stride});
    }
    Wide reach = 1, count = 1;
    for (const StrideTerm& t : r.pattern) {
      reach += static_cast<Wide>(t.count - 1) * static_cast<Wide>(t.stride);
      count *= static_cast<Wide>(t.count);
      if (reach > extent) break;
      if (count >= kIndexLimit) fail(loc, "the pattern visits 2^62 indices or more");
    }
    if (reach > extent)
      fail(loc, "the pattern reaches " + std::to_string(static_cast<int64_t>(std::min<Wide>(reach, kIndexLimit))) +
                    " indices but the range has " + std::to_string(extent));
    if (pattern_dense(r.pattern, extent)) r.pattern.clear();
  }

  Access parse_register_group(LoopId /*loop*/) {
    Access a;
    a.loc = peek().loc;
    const Token prefix = next();
    a.tensor = prefix.text;
    a.tensor_id = register_group_file(prefix.text);
    if (a.tensor_id == kNoId) fail(prefix.loc, "unknown register file '" + printable(prefix.text) + "'");
    const SpaceInfo* rf = k_.target->space(k_.tensors[a.tensor_id].space);
    expect(Tok::LBracket, "'['");
    int64_t first = parse_int("register number");
    int64_t last = first;
    if (at(Tok::Colon)) {
      next();
      last = parse_int("register number");
    }
    expect(Tok::RBracket, "']' after the register group");
    if (first > last)
      fail(a.loc, "register group " + printable(prefix.text) + "[" + std::to_string(first) + ":" +
                      std::to_string(last) + "] is reversed");
    if (first < 0 || last >= rf->registers)
      fail(a.loc, "register group " + printable(prefix.text) + "[" + std::to_string(first) + ":" +
                      std::to_string(last) + "] is outside the register file (" + std::to_string(rf->registers) +
                      " registers)");
    IndexRange r;
    r.lo.constant = first;
    r.hi.constant = last + 1;
    r.single = first == last;
    a.dims.push_back(r);
    return a;
  }

  // expr := ['-'] term (('+'|'-') term)*   term := INT ['*' sym] | sym ['*' INT]
  AffineExpr parse_expr(LoopId loop) {
    AffineExpr e;
    int64_t sign = 1;
    if (at(Tok::Minus)) {
      next();
      sign = -1;
    }
    parse_term(e, sign, loop);
    while (at(Tok::Plus) || at(Tok::Minus)) {
      sign = next().kind == Tok::Plus ? 1 : -1;
      parse_term(e, sign, loop);
    }
    return e;
  }

  void parse_term(AffineExpr& e, int64_t sign, LoopId loop) {
    const SourceLoc loc = peek().loc;
    if (at(Tok::Real)) fail(loc, "indices must be integers, found '" + printable(peek().text) + "'");
    int64_t coeff = sign;
    if (at(Tok::Int)) {
      int64_t c = parse_int("index");
      if (!at(Tok::Star)) {
        e.constant = checked_add(e.constant, checked_mul(sign, c, loc), loc);
        return;
      }
      next();
      coeff = checked_mul(coeff, c, loc);
    }
    auto [symbol, sym_loop] = parse_symbol(loop);
    if (at(Tok::Star) && coeff == sign) {
      next();
      coeff = checked_mul(coeff, parse_int("coefficient"), loc);
    }
    for (const AffineTerm& t : e.terms)
      if (t.symbol == symbol) (void)checked_add(t.coeff, coeff, loc);  // add_term merges them
    e.add_term(symbol, coeff, sym_loop);
  }

  LoopId symbol_loop(const std::string& sym, LoopId loop, const SourceLoc& loc) const {
    if (sym[0] != '%') return kNoId;
    for (LoopId l = loop; l != kNoId; l = k_.loops[l].parent)
      if (k_.loops[l].iv == sym) return l;
    fail(loc, "'" + printable(sym) + "' is not the induction variable of an enclosing loop");
  }

  // A loop variable (%k) or an address register (v10: a register-file prefix and a number).
  std::pair<std::string, LoopId> parse_symbol(LoopId loop) {
    const Token t = peek();
    std::string sym;
    if (t.kind == Tok::Percent) {
      sym = "%";
      sym += t.text;
    } else if (t.kind == Tok::Ident && is_register_name(t.text)) {
      sym = t.text;
    } else {
      fail(t.loc, "expected an index (integer, loop variable or address register), found " + describe(t));
    }
    LoopId l = symbol_loop(sym, loop, t.loc);
    next();
    return {sym, l};
  }

  bool is_register_name(std::string_view text) const {
    for (const auto& [n, s] : k_.target->spaces) {
      if (!s.is_register_file() || text.rfind(s.register_prefix, 0) != 0) continue;
      const std::string_view num = text.substr(s.register_prefix.size());
      int64_t number = 0;
      if (!num.empty() && num.size() < 10 && std::all_of(num.begin(), num.end(), ::isdigit) &&
          decimal_value(num, number) && number < s.registers)
        return true;
    }
    return false;
  }

  // The largest magnitude the terms of `e` reach together over the iteration space (address
  // registers count by their coefficient); stops counting once past kIndexLimit.
  Wide reach(const AffineExpr& e) const {
    Wide sum = e.constant < 0 ? -static_cast<Wide>(e.constant) : static_cast<Wide>(e.constant);
    for (const auto& t : e.terms) {
      Wide v = 1;
      if (t.loop != kNoId) {
        const Loop& l = k_.loops[static_cast<size_t>(t.loop)];
        v = std::max(l.lo < 0 ? -static_cast<Wide>(l.lo) : static_cast<Wide>(l.lo),
                     l.hi < 0 ? -static_cast<Wide>(l.hi) : static_cast<Wide>(l.hi));
      }
      sum += (t.coeff < 0 ? -static_cast<Wide>(t.coeff) : static_cast<Wide>(t.coeff)) * v;
      if (sum >= kIndexLimit) return sum;
    }
    return sum;
  }

  void check_bounds(const Tensor& t, const IndexRange& r, size_t d, const SourceLoc& loc) const {
    const auto dim = [&] { return "dimension " + std::to_string(d) + " of %" + printable(t.name); };  // for a message
    if (reach(r.lo) >= kIndexLimit || reach(r.hi) >= kIndexLimit)
      fail(loc, "access out of bounds: " + dim() +
                    " reaches beyond 2^62, where index arithmetic would overflow, but its size is " +
                    std::to_string(t.shape[d]));
    if (r.lo.uses_register() || r.hi.uses_register()) return;  // register value known only at run time
    const int64_t lo_min = value_range(k_, r.lo).first;
    const int64_t hi_max = value_range(k_, r.hi).second;
    if (lo_min < 0 || hi_max > t.shape[d])
      fail(loc, "access out of bounds: " + dim() + " reaches [" + std::to_string(lo_min) + ", " +
                    std::to_string(hi_max) + ") but its size is " + std::to_string(t.shape[d]));
    if (least_extent(k_, r) <= 0) fail(loc, "empty index range in " + dim());
  }

  Lexer& lexer_;
  std::vector<Token> ahead_;
  size_t head_ = 0;
  ParseOptions opts_;
  Kernel k_;
  // Tensor and instruction names, each declared once: indices of declared_.
  NameIndex names_;
  std::vector<Declared> declared_;
  std::unordered_map<std::string_view, SourceLoc> loop_vars_;
  std::vector<PendingDep> pending_deps_;
  std::vector<int64_t> shape_;       // parse_tensor's dimensions
  std::vector<SourceLoc> dim_locs_;  // parse_access's index positions
  int64_t count_ = 0;                // dynamic instructions and loop iterations of the block being read
};

}  // namespace

Kernel parse_kernel(const std::string& source, const std::string& file_name, const ParseOptions& opts) {
  Lexer lexer(source, intern_file_name(file_name));
  try {
    Kernel k = Parser(lexer, opts).parse();
    k.file = file_name;
    return k;
  } catch (const Error&) {
    lexer.check_rest();  // a lexical error later in the text is the one reported
    throw;
  }
}

Kernel parse_kernel_file(const std::string& path, const ParseOptions& opts) {
  return parse_kernel(read_input_file(path, "kernel file"), path, opts);
}

}  // namespace tandem
