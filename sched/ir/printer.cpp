#include "sched/ir/printer.h"

#include <algorithm>
#include <sstream>

#include "sched/ir/dep_graph.h"
#include "sched/ir/kernel_queries.h"

namespace tandem {

std::string print_access(const Kernel& k, const Access& a) {
  const Tensor& t = k.tensors[a.tensor_id];
  if (t.register_file) {
    const IndexRange& r = a.dims[0];
    std::string s = t.name + "[" + std::to_string(r.lo.constant);
    if (r.hi.constant - 1 != r.lo.constant) s += ":" + std::to_string(r.hi.constant - 1);
    return s + "]";
  }
  std::string s = "%" + t.name;
  if (a.whole()) return s;
  s += "[";
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (d) s += ", ";
    const IndexRange& r = a.dims[d];
    s += r.lo.str();
    if (!r.single) s += (r.lo.is_constant() && r.hi.is_constant() ? ":" : " : ") + r.hi.str();
  }
  return s + "]";
}

namespace {

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  void inst(InstId id, int indent) {
    const Instruction& in = k_.insts[id];
    pad(indent);
    if (!in.name.empty()) out_ << "%" << in.name << " = ";
    out_ << in.opcode;
    list(in.writes);
    if (!in.reads.empty()) {
      out_ << " <-";
      list(in.reads);
    }
    if (!in.engine.empty()) out_ << " on " << in.engine;
    if (!in.attrs.empty()) out_ << " " << in.attrs.str();
    out_ << "\n";
  }

  void block(const std::vector<Stmt>& b, int indent) {
    for (const Stmt& s : b) {
      if (s.kind == Stmt::kInst) {
        inst(s.id, indent);
        continue;
      }
      const Loop& l = k_.loops[s.id];
      pad(indent);
      out_ << "loop " << l.iv << " = " << l.lo << " to " << l.hi;
      if (!l.attrs.empty()) out_ << " " << l.attrs.str();
      out_ << " {\n";
      block(l.body, indent + 1);
      pad(indent);
      out_ << "}\n";
    }
  }

  std::string kernel(const DepGraph* g) {
    out_ << "kernel @" << k_.name << " target = \"" << k_.target_name << "\"";
    if (!k_.attrs.empty()) out_ << " " << k_.attrs.str();
    out_ << " {\n";
    bool any_tensor = false;
    for (const Tensor& t : k_.tensors) {
      if (t.register_file) continue;
      any_tensor = true;
      pad(1);
      out_ << "tensor %" << t.name << " : " << t.space << "[";
      for (size_t d = 0; d < t.shape.size(); ++d) out_ << (d ? ", " : "") << t.shape[d];
      out_ << "] " << t.dtype;
      if (!t.attrs.empty()) out_ << " " << t.attrs.str();
      out_ << "\n";
    }
    if (any_tensor && !k_.body.empty()) out_ << "\n";
    block(k_.body, 1);
    if (g) {
      std::string deps = print_deps(k_, *g, !k_.deps_listed());
      if (!deps.empty()) {
        out_ << "\n";
        std::istringstream lines(deps);
        for (std::string line; std::getline(lines, line);) out_ << "  " << line << "\n";
      }
    }
    out_ << "}\n";
    return out_.str();
  }

 private:
  void pad(int indent) { out_ << std::string(2 * indent, ' '); }
  void list(const std::vector<Access>& as) {
    for (size_t i = 0; i < as.size(); ++i) out_ << (i ? ", " : " ") << print_access(k_, as[i]);
  }

  const Kernel& k_;
  std::ostringstream out_;
};

}  // namespace

std::string print_kernel(const Kernel& k, const DepGraph* graph) { return Printer(k).kernel(graph); }

std::string print_deps(const Kernel& k, const DepGraph& g, bool explicit_only) {
  const std::vector<int> pos = program_positions(k);

  struct Line {
    int src, dst, distance, kind;
    std::string text;
  };
  std::vector<Line> lines;
  for (const DepEdgeRef& e : g.edges()) {
    if (explicit_only && !e.props.is_explicit) continue;
    if (pos[e.src] < 0 || pos[e.dst] < 0) continue;  // erased instruction
    std::string t = "dep " + k.display_name(e.src) + " -> " + k.display_name(e.dst) + " " + dep_kind_name(e.props.kind);
    if (e.props.distance > 0) {
      t += " distance=" + std::to_string(e.props.distance);
      if (e.props.loop != k.common_loop(e.src, e.dst)) t += " loop=" + k.loops[e.props.loop].iv;
    }
    lines.push_back({pos[e.src], pos[e.dst], e.props.distance, -static_cast<int>(e.props.kind), t});
  }
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.src, a.dst, a.distance, a.kind, a.text) < std::tie(b.src, b.dst, b.distance, b.kind, b.text);
  });
  std::string out;
  for (const Line& l : lines) out += l.text + "\n";
  return out;
}

}  // namespace tandem
