#include "sched/target/cost_formula.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace tandem {

class CostFormulaParser {
 public:
  CostFormulaParser(CostFormula& f, const std::vector<std::string>& vars, SourceLoc loc)
      : f_(f), s_(f.text_), vars_(vars), loc_(loc) {}

  void parse() {
    f_.root_ = expr();
    skip_ws();
    if (i_ < s_.size()) fail("unexpected '" + printable(std::string(1, s_[i_])) + "' in cost formula");
  }

 private:
  using Op = CostFormula::Op;

  [[noreturn]] void fail(const std::string& msg) const {
    SourceLoc at = loc_;
    if (at.col > 0) at.col += static_cast<int>(i_);
    throw Error(at, msg);
  }

  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  int add(CostFormula::Node n) {
    f_.nodes_.push_back(std::move(n));
    return static_cast<int>(f_.nodes_.size() - 1);
  }

  int expr() {
    int lhs = term();
    while (true) {
      if (eat('+'))
        lhs = add({Op::Add, 0, -1, {lhs, term()}});
      else if (eat('-'))
        lhs = add({Op::Sub, 0, -1, {lhs, term()}});
      else
        return lhs;
    }
  }

  int term() {
    int lhs = unary();
    while (true) {
      if (eat('*'))
        lhs = add({Op::Mul, 0, -1, {lhs, unary()}});
      else if (eat('/'))
        lhs = add({Op::Div, 0, -1, {lhs, unary()}});
      else
        return lhs;
    }
  }

  int unary() {
    if (eat('-')) return add({Op::Neg, 0, -1, {unary()}});
    return primary();
  }

  int primary() {
    skip_ws();
    if (i_ >= s_.size()) fail("cost formula ends early");
    if (eat('(')) {
      int e = expr();
      if (!eat(')')) fail("expected ')' in cost formula");
      return e;
    }
    char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      // Decimal numbers only (strtod alone would also take hexadecimal and "inf").
      size_t start = i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        size_t j = i_ + 1;
        if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
        if (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
          i_ = j;
          while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        }
      }
      const std::string text = s_.substr(start, i_ - start);
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() ||
          (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))) {
        i_ = start;
        fail("malformed number in cost formula");
      }
      return add({Op::Const, v, -1, {}});
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      std::string name = s_.substr(start, i_ - start);
      skip_ws();
      if (i_ < s_.size() && s_[i_] == '(') return call(name, start);
      auto it = std::find(vars_.begin(), vars_.end(), name);
      if (it == vars_.end()) {
        i_ = start;
        std::string known;
        for (const auto& v : vars_) known += (known.empty() ? "" : ", ") + v;
        fail("unknown variable '" + printable(name) + "' in cost formula (known: " + known + ")");
      }
      return add({Op::Var, 0, static_cast<int>(it - vars_.begin()), {}});
    }
    fail("unexpected '" + printable(std::string(1, c)) + "' in cost formula");
  }

  int call(const std::string& name, size_t start) {
    Op op;
    size_t min_args = 1, max_args = 1;
    if (name == "min" || name == "max") {
      op = name == "min" ? Op::Min : Op::Max;
      min_args = 2;
      max_args = 64;
    } else if (name == "ceil" || name == "floor") {
      op = name == "ceil" ? Op::Ceil : Op::Floor;
    } else {
      i_ = start;
      fail("unknown function '" + printable(name) + "' in cost formula (use min, max, ceil, floor)");
    }
    eat('(');
    std::vector<int> args{expr()};
    while (eat(',')) args.push_back(expr());
    if (!eat(')')) fail("expected ',' or ')' in " + name + "(...)");
    if (args.size() < min_args || args.size() > max_args) {
      i_ = start;
      fail(name + "() takes " +
           (min_args == max_args ? std::string("1 argument") : "2 to " + std::to_string(max_args) + " arguments"));
    }
    return add({op, 0, -1, args});
  }

  CostFormula& f_;
  const std::string& s_;
  const std::vector<std::string>& vars_;
  SourceLoc loc_;
  size_t i_ = 0;
};

CostFormula CostFormula::parse(const std::string& text, const std::vector<std::string>& variables, SourceLoc loc) {
  CostFormula f;
  f.text_ = text;
  CostFormulaParser(f, variables, loc).parse();
  return f;
}

double CostFormula::eval(const std::vector<double>& values) const { return eval_node(root_, values); }

double CostFormula::eval_node(int n, const std::vector<double>& v) const {
  const Node& node = nodes_[n];
  auto arg = [&](size_t i) { return eval_node(node.args[i], v); };
  switch (node.op) {
    case Op::Const:
      return node.value;
    case Op::Var:
      return v[node.var];
    case Op::Neg:
      return -arg(0);
    case Op::Add:
      return arg(0) + arg(1);
    case Op::Sub:
      return arg(0) - arg(1);
    case Op::Mul:
      return arg(0) * arg(1);
    case Op::Div:
      return arg(0) / arg(1);
    case Op::Ceil:
      return std::ceil(arg(0));
    case Op::Floor:
      return std::floor(arg(0));
    case Op::Min:
    case Op::Max: {
      double r = arg(0);
      for (size_t i = 1; i < node.args.size(); ++i) r = node.op == Op::Min ? std::min(r, arg(i)) : std::max(r, arg(i));
      return r;
    }
  }
  return 0;
}

std::optional<double> CostFormula::constant() const {
  if (root_ < 0 || nodes_[static_cast<size_t>(root_)].op != Op::Const) return std::nullopt;
  return nodes_[static_cast<size_t>(root_)].value;
}

}  // namespace tandem
