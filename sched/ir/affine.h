// Index expressions affine in loop induction variables (`%k*128 + 128`) or in an address
// register (`v10 + 512`, the GPU form: an immediate offset on a register that advances by a
// per-iteration stride).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {

struct AffineTerm {
  std::string symbol;  // "%k" for a loop induction variable, "v10" for an address register
  int64_t coeff = 1;
  int loop = -1;       // resolved LoopId of an induction variable; -1 for a register
};

struct AffineExpr {
  int64_t constant = 0;
  std::vector<AffineTerm> terms;

  bool is_constant() const { return terms.empty(); }
  bool uses_register() const;
  int64_t coeff_of_loop(int loop) const;

  void add_term(const std::string& symbol, int64_t coeff, int loop = -1);  // merges equal symbols
  AffineExpr operator+(int64_t c) const;
  std::string str() const;  // canonical text, parses back to an equal expression
};

bool operator==(const AffineExpr& a, const AffineExpr& b);
AffineExpr operator-(const AffineExpr& a, const AffineExpr& b);
inline bool operator!=(const AffineExpr& a, const AffineExpr& b) { return !(a == b); }

}  // namespace tandem
