#include "sched/ir/printer.h"

#include <algorithm>
#include <tuple>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel_queries.h"

namespace tandem {

namespace {

// An expression's text appended (AffineExpr::str, without its string for a constant).
void append_expr(std::string& s, const AffineExpr& e) {
  if (e.is_constant()) s += std::to_string(e.constant);
  else s += e.str();
}

// print_access appended to `s` (the printer writes 100k instructions into one string).
void append_access(std::string& s, const Kernel& k, const Access& a) {
  const Tensor& t = k.tensors[a.tensor_id];
  if (t.register_file) {
    const IndexRange& r = a.dims[0];
    s += t.name;
    s += '[';
    s += std::to_string(r.lo.constant);
    if (r.hi.constant - 1 != r.lo.constant) {
      s += ':';
      s += std::to_string(r.hi.constant - 1);
    }
    s += ']';
    return;
  }
  s += '%';
  s += t.name;
  if (a.whole()) return;
  s += '[';
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (d) s += ", ";
    const IndexRange& r = a.dims[d];
    append_expr(s, r.lo);
    if (!r.single) {
      s += r.lo.is_constant() && r.hi.is_constant() ? ":" : " : ";
      append_expr(s, r.hi);
    }
  }
  s += ']';
}

}  // namespace

std::string print_access(const Kernel& k, const Access& a) {
  std::string s;
  append_access(s, k, a);
  return s;
}

namespace {

// A dep line's sort key: source and destination positions, distance, the stronger kind first,
// then the text. Lines equal up to the kind differ in their text only by the ` loop=%iv` that
// follows a distance when the carrying loop is not the ends' innermost common one, so
// `shown_loop` (kNoId without it) stands for the text. The text is built only when printed:
// a kernel of 100k instructions has ~330k edges.
struct DepLine {
  int src, dst, distance, kind;
  InstId src_id, dst_id;
  DepKind dep_kind;
  LoopId shown_loop;
};

void append_name(std::string& out, const Kernel& k, InstId id, const std::vector<int>& pos) {
  out += '%';
  const std::string& name = k.insts[static_cast<size_t>(id)].name;
  if (!name.empty()) out += name;
  else out += std::to_string(pos[static_cast<size_t>(id)]);  // as Kernel::display_name
}

// Appends one `dep ...` line per edge (see print_deps), each after `indent`.
void append_deps(std::string& out, const Kernel& k, const DepGraph& g, bool explicit_only, const char* indent) {
  const std::vector<int> pos = program_positions(k);
  std::vector<DepLine> lines;
  lines.reserve(g.num_edges());
  g.for_each_edge([&](const DepEdgeRef& r) {
    const DepEdge& e = r.props;
    const InstId src = r.src, dst = r.dst;
    if (explicit_only && !e.is_explicit) return;
    if (pos[src] < 0 || pos[dst] < 0) return;  // erased instruction
    const LoopId shown = e.distance > 0 && e.loop != k.common_loop(src, dst) ? e.loop : kNoId;
    lines.push_back({pos[src], pos[dst], e.distance, -static_cast<int>(e.kind), src, dst, e.kind, shown});
  });
  std::sort(lines.begin(), lines.end(), [&k](const DepLine& a, const DepLine& b) {
    if (std::tie(a.src, a.dst, a.distance, a.kind) != std::tie(b.src, b.dst, b.distance, b.kind))
      return std::tie(a.src, a.dst, a.distance, a.kind) < std::tie(b.src, b.dst, b.distance, b.kind);
    // The texts share everything before the loop suffix; no suffix sorts first.
    if (a.shown_loop == b.shown_loop || b.shown_loop == kNoId) return false;
    if (a.shown_loop == kNoId) return true;
    return k.loops[static_cast<size_t>(a.shown_loop)].iv < k.loops[static_cast<size_t>(b.shown_loop)].iv;
  });
  for (const DepLine& l : lines) {
    out += indent;
    out += "dep ";
    append_name(out, k, l.src_id, pos);
    out += " -> ";
    append_name(out, k, l.dst_id, pos);
    out += ' ';
    out += dep_kind_name(l.dep_kind);
    if (l.distance > 0) {
      out += " distance=";
      out += std::to_string(l.distance);
      if (l.shown_loop != kNoId) {
        out += " loop=";
        out += k.loops[static_cast<size_t>(l.shown_loop)].iv;
      }
    }
    out += '\n';
  }
}

// Appends to one string (an ostringstream's str() would copy the whole text once more).
class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  void inst(InstId id, int indent) {
    const Instruction& in = k_.insts[id];
    pad(indent);
    if (!in.name.empty()) {
      out_ += '%';
      out_ += in.name;
      out_ += " = ";
    }
    out_ += in.opcode;
    list(in.writes);
    if (!in.reads.empty()) {
      out_ += " <-";
      list(in.reads);
    }
    if (!in.engine.empty()) {
      out_ += " on ";
      out_ += in.engine;
    }
    if (!in.attrs.empty()) {
      out_ += ' ';
      out_ += in.attrs.str();
    }
    out_ += '\n';
  }

  void block(const std::vector<Stmt>& b, int indent) {
    for (const Stmt& s : b) {
      if (s.kind == Stmt::kInst) {
        inst(s.id, indent);
        continue;
      }
      const Loop& l = k_.loops[s.id];
      pad(indent);
      out_ += "loop " + l.iv + " = " + std::to_string(l.lo) + " to " + std::to_string(l.hi);
      if (!l.attrs.empty()) out_ += " " + l.attrs.str();
      out_ += " {\n";
      block(l.body, indent + 1);
      pad(indent);
      out_ += "}\n";
    }
  }

  std::string kernel(const DepGraph* g) {
    // Room for the whole text up front, by a generous estimate per line (pages not written are
    // not resident): growing by doubling held the old and the new copy at once, the peak of
    // `tandem opt` at 100k instructions.
    out_.reserve(256 + 64 * (k_.tensors.size() + k_.insts.size() + k_.loops.size()) + (g ? 48 * g->num_edges() : 0));
    out_ += "kernel @" + k_.name + " target = \"" + k_.target_name + "\"";
    if (!k_.attrs.empty()) out_ += " " + k_.attrs.str();
    out_ += " {\n";
    bool any_tensor = false;
    for (const Tensor& t : k_.tensors) {
      if (t.register_file) continue;
      any_tensor = true;
      pad(1);
      out_ += "tensor %";
      out_ += t.name;
      out_ += " : ";
      out_ += t.space;
      out_ += '[';
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (d) out_ += ", ";
        out_ += std::to_string(t.shape[d]);
      }
      out_ += "] ";
      out_ += t.dtype;
      if (!t.attrs.empty()) out_ += " " + t.attrs.str();
      out_ += '\n';
    }
    if (any_tensor && !k_.body.empty()) out_ += '\n';
    block(k_.body, 1);
    if (g) {
      // A blank line, then the dep lines; no blank line without any.
      const size_t mark = out_.size();
      out_ += '\n';
      append_deps(out_, k_, *g, !k_.deps_listed(), "  ");
      if (out_.size() == mark + 1) out_.pop_back();
    }
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void pad(int indent) { out_.append(static_cast<size_t>(2 * indent), ' '); }
  void list(const std::vector<Access>& as) {
    for (size_t i = 0; i < as.size(); ++i) {
      out_ += i ? ", " : " ";
      append_access(out_, k_, as[i]);
    }
  }

  const Kernel& k_;
  std::string out_;
};

}  // namespace

std::string print_kernel(const Kernel& k, const DepGraph* graph) { return Printer(k).kernel(graph); }

std::string print_deps(const Kernel& k, const DepGraph& g, bool explicit_only) {
  std::string out;
  append_deps(out, k, g, explicit_only, "");
  return out;
}

}  // namespace tandem
