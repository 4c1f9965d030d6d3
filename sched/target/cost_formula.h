// Cost formulas of the hardware model: arithmetic over named shape variables, as the NKI ISA
// documents them ("max(min(64, N_stationary), N_moving)"). Parsed once when the model loads,
// with unknown variables and syntax errors located in the model file; evaluated per static
// instruction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/support/error.h"

namespace tandem {

class CostFormula {
 public:
  // `variables` names the inputs eval() takes, in order. `loc` is where the formula's text
  // starts; errors point at the offending column within it.
  static CostFormula parse(const std::string& text, const std::vector<std::string>& variables, SourceLoc loc);

  double eval(const std::vector<double>& values) const;
  // The value of a formula that is a plain number ("16"), else nothing.
  std::optional<double> constant() const;
  const std::string& text() const { return text_; }

 private:
  enum class Op { Const, Var, Neg, Add, Sub, Mul, Div, Min, Max, Ceil, Floor };
  struct Node {
    Op op;
    double value = 0;  // Const
    int var = -1;      // Var
    std::vector<int> args;
  };
  double eval_node(int node, const std::vector<double>& values) const;
  friend class CostFormulaParser;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace tandem
