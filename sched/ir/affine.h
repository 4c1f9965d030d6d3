// Index expressions affine in loop induction variables (`%k*128 + 128`) or in an address
// register (`v10 + 512`, the GPU form: an immediate offset on a register that advances by a
// per-iteration stride).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

struct AffineTerm {
  std::string symbol;  // "%k" for a loop induction variable, "v10" for an address register
  int64_t coeff = 1;
  int loop = -1;  // resolved LoopId of an induction variable; -1 for a register
};

struct AffineExpr {
  int64_t constant = 0;
  std::vector<AffineTerm> terms;

  bool is_constant() const { return terms.empty(); }
  bool uses_register() const;
  int64_t coeff_of_loop(int loop) const;

  // The one evaluation of an expression: its value when `value(term)` gives each term's
  // variable (an optional: nullopt when one is not known, and then neither is the value).
  template <class TermValue>
  std::optional<int64_t> eval(TermValue value) const {
    int64_t v = constant;
    for (const AffineTerm& t : terms) {
      const std::optional<int64_t> x = value(t);
      if (!x) return std::nullopt;
      v += t.coeff * *x;
    }
    return v;
  }
  // Smallest and largest value when each term's variable ranges over the inclusive interval
  // `bounds(term)` gives (a pair).
  template <class TermBounds>
  std::pair<int64_t, int64_t> range(TermBounds bounds) const {
    int64_t lo = constant, hi = constant;
    for (const AffineTerm& t : terms) {
      const auto [from, to] = bounds(t);
      const int64_t a = t.coeff * from, b = t.coeff * to;
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
    return {lo, hi};
  }

  void add_term(const std::string& symbol, int64_t coeff, int loop = -1);  // merges equal symbols
  AffineExpr operator+(int64_t c) const;
  std::string str() const;  // canonical text, parses back to an equal expression
};

bool operator==(const AffineExpr& a, const AffineExpr& b);
AffineExpr operator-(const AffineExpr& a, const AffineExpr& b);
inline bool operator!=(const AffineExpr& a, const AffineExpr& b) { return !(a == b); }

}  // namespace tandem
