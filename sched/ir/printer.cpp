#include "sched/ir/printer.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <tuple>

#include "sched/ir/dep_graph.h"

namespace tandem {

namespace {

// Text appended to a string through a small buffer: each field is copied in place, with no
// temporary string and no out-of-line append per field, and the buffer goes to the string when
// full.
class TextBuffer {
 public:
  explicit TextBuffer(std::string& out) : out_(out) {}
  ~TextBuffer() { flush(); }
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;

  TextBuffer& operator<<(std::string_view s) {
    if (s.size() > kSize - used_) {
      flush();
      if (s.size() > kSize) {
        out_.append(s);
        return *this;
      }
    }
    std::memcpy(buf_ + used_, s.data(), s.size());
    used_ += s.size();
    return *this;
  }
  TextBuffer& operator<<(const char* s) { return *this << std::string_view(s); }
  TextBuffer& operator<<(const std::string& s) { return *this << std::string_view(s); }
  TextBuffer& operator<<(char c) {
    if (used_ == kSize) flush();
    buf_[used_++] = c;
    return *this;
  }
  // Decimal, as std::to_string.
  TextBuffer& operator<<(int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    return *this << std::string_view(digits, static_cast<size_t>(end - digits));
  }
  TextBuffer& operator<<(int v) { return *this << static_cast<int64_t>(v); }

  void pad(int indent) {
    for (int i = 0; i < indent; ++i) *this << "  ";
  }

  void flush() {
    out_.append(buf_, used_);
    used_ = 0;
  }

 private:
  static constexpr size_t kSize = 1 << 14;
  std::string& out_;
  char buf_[kSize];
  size_t used_ = 0;
};

// An expression's text (AffineExpr::str, without its string for a constant).
void put_expr(TextBuffer& out, const AffineExpr& e) {
  if (e.is_constant())
    out << e.constant;
  else
    out << e.str();
}

// A strided range's pattern: `s` when one term of stride s covers [lo, hi), else the pairs.
void put_pattern(TextBuffer& out, const IndexRange& r) {
  const int64_t extent = (r.hi - r.lo).constant;
  const StrideTerm& first = r.pattern[0];
  if (r.pattern.size() == 1 && first.count == (extent + first.stride - 1) / first.stride) {
    out << first.stride;
    return;
  }
  out << '[';
  for (size_t i = 0; i < r.pattern.size(); ++i)
    out << (i ? ", [" : "[") << r.pattern[i].stride << ", " << r.pattern[i].count << ']';
  out << ']';
}

// print_access, written to `out`.
void put_access(TextBuffer& out, const Kernel& k, const Access& a) {
  const Tensor& t = k.tensors[a.tensor_id];
  if (t.register_file) {
    const IndexRange& r = a.dims[0];
    out << t.name << '[' << r.lo.constant;
    if (r.hi.constant - 1 != r.lo.constant) out << ':' << r.hi.constant - 1;
    out << ']';
    return;
  }
  out << '%' << t.name;
  if (a.whole()) return;
  out << '[';
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (d) out << ", ";
    const IndexRange& r = a.dims[d];
    put_expr(out, r.lo);
    if (!r.single) {
      const char* colon = r.lo.is_constant() && r.hi.is_constant() ? ":" : " : ";
      out << colon;
      put_expr(out, r.hi);
      if (r.strided()) {
        out << colon;
        put_pattern(out, r);
      }
    }
  }
  out << ']';
}

// ` {a = 1, b = "x", flag}` after a header or an instruction, nothing when there are no
// attributes; written to `out` in place (an instruction's `{order = N}` is on most lines of a
// scheduled kernel).
void put_attrs(TextBuffer& out, const Attributes& attrs) {
  if (attrs.empty()) return;
  out << " {";
  bool first = true;
  for (const auto& [key, value] : attrs.entries()) {
    if (!first) out << ", ";
    first = false;
    out << key;
    if (std::holds_alternative<std::monostate>(value)) continue;
    out << " = ";
    if (const int64_t* v = std::get_if<int64_t>(&value))
      out << *v;
    else
      out << format_attr_value(value);
  }
  out << '}';
}

// Every live instruction's name as dep lines print it ("%name", or "%<program position>" for an
// unnamed one, as Kernel::display_name), in one buffer: a kernel has several dep lines per
// instruction, each naming two.
class DepNames {
 public:
  DepNames(const Kernel& k, const std::vector<int>& pos) : start_(k.insts.size() + 1, 0) {
    for (size_t id = 0; id < k.insts.size(); ++id) {
      start_[id] = text_.size();
      if (pos[id] < 0) continue;  // erased
      text_ += '%';
      const std::string& name = k.insts[id].name;
      if (!name.empty()) {
        text_ += name;
      } else {
        char digits[16];
        text_.append(digits, static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, pos[id]).ptr - digits));
      }
    }
    start_.back() = text_.size();
  }
  std::string_view operator[](InstId id) const {
    const size_t i = static_cast<size_t>(id);
    return std::string_view(text_).substr(start_[i], start_[i + 1] - start_[i]);
  }

 private:
  std::string text_;
  std::vector<size_t> start_;  // instruction i's name is text_[start_[i], start_[i + 1])
};

// A dep line's sort key: source and destination positions, distance, the stronger kind
// first, then the text. Lines equal up to the kind differ in their text only by the
// ` loop=%iv` that follows a distance when the carrying loop is not the ends' innermost common
// one, so `shown_loop` (kNoId without it) stands for the text.
struct DepLine {
  int src, dst, distance, kind;
  InstId dst_id;
  DepKind dep_kind;
  LoopId shown_loop;
};

// Writes one `dep ...` line per edge (see print_deps), each after `indent`, and `before_first`
// before the first line if there is one. The edges are read in the graph's storage order
// (through each instruction's out-edges instead, each edge would be a cache miss), grouped by
// source position with a counting sort, and each group sorted by the rest of the key.
void put_deps(TextBuffer& out, const Kernel& k, const DepGraph& g, bool explicit_only, std::string_view indent,
              std::string_view before_first = "") {
  const std::vector<InstId> order = k.program_order();
  std::vector<int> pos(k.insts.size(), -1);  // program_positions, from the order this needs too
  for (size_t i = 0; i < order.size(); ++i) pos[static_cast<size_t>(order[i])] = static_cast<int>(i);
  const DepNames names(k, pos);
  const auto before = [&k](const DepLine& a, const DepLine& b) {  // within a source's group
    if (std::tie(a.dst, a.distance, a.kind) != std::tie(b.dst, b.distance, b.kind))
      return std::tie(a.dst, a.distance, a.kind) < std::tie(b.dst, b.distance, b.kind);
    // The texts share everything before the loop suffix; no suffix sorts first.
    if (a.shown_loop == b.shown_loop || b.shown_loop == kNoId) return false;
    if (a.shown_loop == kNoId) return true;
    return k.loops[static_cast<size_t>(a.shown_loop)].iv < k.loops[static_cast<size_t>(b.shown_loop)].iv;
  };
  // Each instruction's loop, in a flat array: Kernel::common_loop reads it from the
  // instruction, a cache miss for each carried edge.
  std::vector<LoopId> loop_of(k.insts.size());
  for (size_t id = 0; id < k.insts.size(); ++id) loop_of[id] = k.insts[id].loop;
  std::vector<DepLine> lines;
  lines.reserve(g.num_edges());
  std::vector<size_t> group(order.size() + 1, 0);  // lines of source position p: [group[p], group[p + 1])
  g.for_each_edge([&](const DepEdgeRef& r) {
    const DepEdge& e = r.props;
    if (explicit_only && !e.is_explicit) return;
    // An erased instruction, or an end beyond the arena (the structural verifier's error).
    if (static_cast<size_t>(std::max(r.src, r.dst)) >= pos.size() || pos[r.src] < 0 || pos[r.dst] < 0) return;
    const LoopId shown =
        e.distance > 0 && e.loop != k.common_loop_of_loops(loop_of[r.src], loop_of[r.dst]) ? e.loop : kNoId;
    lines.push_back({pos[r.src], pos[r.dst], e.distance, -static_cast<int>(e.kind), r.dst, e.kind, shown});
    ++group[static_cast<size_t>(pos[r.src]) + 1];
  });
  if (lines.empty()) return;
  for (size_t p = 1; p < group.size(); ++p) group[p] += group[p - 1];
  // The lines' indices in order (not a sorted copy of the lines: the peak of printing).
  std::vector<uint32_t> sorted(lines.size());
  {
    std::vector<size_t> next(group.begin(), group.end() - 1);
    for (size_t i = 0; i < lines.size(); ++i)
      sorted[next[static_cast<size_t>(lines[i].src)]++] = static_cast<uint32_t>(i);
  }
  out << before_first;
  for (size_t p = 0; p < order.size(); ++p) {
    const auto first = sorted.begin() + static_cast<std::ptrdiff_t>(group[p]);
    const auto last = sorted.begin() + static_cast<std::ptrdiff_t>(group[p + 1]);
    // Often in order already (a barrier's edges are added by destination).
    const auto by_line = [&](uint32_t a, uint32_t b) { return before(lines[a], lines[b]); };
    if (!std::is_sorted(first, last, by_line)) std::sort(first, last, by_line);
    const std::string_view src_name = names[order[p]];
    for (auto i = first; i != last; ++i) {
      const DepLine* l = &lines[*i];
      out << indent << "dep " << src_name << " -> " << names[l->dst_id] << ' ' << dep_kind_name(l->dep_kind);
      if (l->distance > 0) {
        out << " distance=" << l->distance;
        if (l->shown_loop != kNoId) out << " loop=" << k.loops[static_cast<size_t>(l->shown_loop)].iv;
      }
      out << '\n';
    }
  }
}

class Printer {
 public:
  Printer(const Kernel& k, TextBuffer& out) : k_(k), out_(out) {}

  void inst(InstId id, int indent) {
    const Instruction& in = k_.insts[id];
    out_.pad(indent);
    if (!in.name.empty()) out_ << '%' << in.name << " = ";
    out_ << in.opcode;
    list(in.writes);
    if (!in.reads.empty()) {
      out_ << " <-";
      list(in.reads);
    }
    if (!in.engine.empty()) out_ << " on " << in.engine;
    put_attrs(out_, in.attrs);
    out_ << '\n';
  }

  void block(const std::vector<Stmt>& b, int indent) {
    for (const Stmt& s : b) {
      if (s.kind == Stmt::kInst) {
        inst(s.id, indent);
        continue;
      }
      const Loop& l = k_.loops[s.id];
      out_.pad(indent);
      out_ << "loop " << l.iv << " = " << l.lo << " to " << l.hi;
      put_attrs(out_, l.attrs);
      out_ << " {\n";
      block(l.body, indent + 1);
      out_.pad(indent);
      out_ << "}\n";
    }
  }

  void kernel(const DepGraph* g) {
    out_ << "kernel @" << k_.name << " target = \"" << k_.target_name << '"';
    put_attrs(out_, k_.attrs);
    out_ << " {\n";
    bool any_tensor = false;
    for (const Tensor& t : k_.tensors) {
      if (t.register_file) continue;
      any_tensor = true;
      out_.pad(1);
      out_ << "tensor %" << t.name << " : " << t.space << '[';
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (d) out_ << ", ";
        out_ << t.shape[d];
      }
      out_ << "] " << t.dtype;
      put_attrs(out_, t.attrs);
      out_ << '\n';
    }
    if (any_tensor && !k_.body.empty()) out_ << '\n';
    block(k_.body, 1);
    if (g) {
      // A blank line, then the dep lines; no blank line without any.
      put_deps(out_, k_, *g, !k_.deps_listed(), "  ", "\n");
    }
    out_ << "}\n";
  }

 private:
  void list(const std::vector<Access>& as) {
    for (size_t i = 0; i < as.size(); ++i) {
      out_ << (i ? ", " : " ");
      put_access(out_, k_, as[i]);
    }
  }

  const Kernel& k_;
  TextBuffer& out_;
};

}  // namespace

std::string print_access(const Kernel& k, const Access& a) {
  std::string s;
  {
    TextBuffer out(s);
    put_access(out, k, a);
  }
  return s;
}

std::string print_kernel(const Kernel& k, const DepGraph* graph) {
  std::string s;
  // Room for the whole text up front, by a generous estimate per line (pages not written are
  // not resident): growing by doubling would hold the old and the new copy at once, and set
  // the peak memory of `tandem opt`.
  s.reserve(256 + 64 * (k.tensors.size() + k.insts.size() + k.loops.size()) + (graph ? 48 * graph->num_edges() : 0));
  {
    TextBuffer out(s);
    Printer(k, out).kernel(graph);
  }
  return s;
}

std::string print_deps(const Kernel& k, const DepGraph& g, bool explicit_only) {
  std::string s;
  {
    TextBuffer out(s);
    put_deps(out, k, g, explicit_only, "");
  }
  return s;
}

}  // namespace tandem
